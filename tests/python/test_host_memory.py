"""int32 tensors of the PDK device live in host memory, as TensorFlow's own
DEVICE_DEFAULT and GPU int32 kernels have them (src/kernels/int32_on_host.h).

A PDK int32 kernel that wanted device memory where TensorFlow's control-flow
kernels use host memory made TensorFlow copy the loop counter and the time
step between the two memories in every iteration of a tf.while_loop (a
_HostSend/_Recv pair per edge)."""
import json

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.framework import kernels

import tensorflow_pdk

from child_process import run_python


def _constraints(k):
    return tuple(sorted((c.name, tuple(sorted(c.allowed_values.list.type)))
                        for c in k.constraint))


def _compatible(a, b):
    """Whether two kernels' type constraints can match the same node: every
    attribute constrained by both allows a common dtype."""
    da, db = dict(a), dict(b)
    return all(set(da[n]) & set(db[n]) for n in da.keys() & db.keys())


def test_int32_kernels_use_the_host_memory_of_tensorflows_device_default_kernels():
    registered = kernels.get_all_registered_kernels().kernel
    default = [k for k in registered if k.device_type == "DEFAULT"]
    pdk = [k for k in registered if k.device_type == "PDK"]
    int32 = tf.int32.as_datatype_enum
    checked, mismatches = 0, []
    for k in pdk:
        ck = _constraints(k)
        # The int32 instantiations: the op's main type attribute is int32.
        main = [types for name, types in ck if name in ("T", "Tidx", "dtype")]
        if not main or main[0] != (int32,):
            continue
        for d in default:
            if d.op == k.op and _constraints(d) and _compatible(ck, _constraints(d)):
                checked += 1
                if sorted(k.host_memory_arg) != sorted(d.host_memory_arg):
                    mismatches.append((k.op, ck, sorted(k.host_memory_arg),
                                       sorted(d.host_memory_arg)))
    assert checked >= 40, checked
    assert not mismatches, mismatches


@pytest.mark.parametrize("op", ["Pack", "StridedSlice", "Cast", "LogicalAnd", "LogicalOr",
                                "LogicalNot"])
def test_ops_without_a_device_default_int32_kernel_keep_int32_and_bool_on_host(op):
    """Pack and StridedSlice follow TensorFlow's GPU kernels; Cast keeps its
    int32 side on the host; the logical ops join a while loop's int32
    comparisons and feed LoopCond."""
    regs = [k for k in kernels.get_all_registered_kernels().kernel
            if k.device_type == "PDK" and k.op == op]
    int32 = tf.int32.as_datatype_enum
    if op.startswith("Logical"):
        chosen = regs
    elif op == "Cast":
        chosen = [k for k in regs if [int32] in [list(c.allowed_values.list.type)
                                                 for c in k.constraint]]
    else:
        chosen = [k for k in regs
                  if [c for c in k.constraint if c.name == "T"][0].allowed_values.list.type
                  == [int32]]
    assert chosen
    for k in chosen:
        if op == "Pack":
            assert {"values", "output"} <= set(k.host_memory_arg), k
        elif op == "Cast":
            src, dst = ([c for c in k.constraint if c.name == n][0].allowed_values.list.type
                        for n in ("SrcT", "DstT"))
            want = ({"x"} if src == [int32] else set()) | ({"y"} if dst == [int32] else set())
            assert set(k.host_memory_arg) == want, k
        elif op == "StridedSlice":
            assert {"input", "begin", "end", "strides", "output"} <= set(k.host_memory_arg), k
        else:
            assert {"x", "y"} <= set(k.host_memory_arg), k


def test_int32_ops_on_pdk_match_the_cpu_and_run_pdk_kernels():
    a = np.array([[3, -7, 5], [0, 2, -1]], np.int32)
    b = np.array([[2, 3, -5], [1, 2, 4]], np.int32)
    # x + y alone is int32 AddV2, TensorFlow's DEVICE_DEFAULT kernel on PDK
    # (src/kernels/tensorflow_default_kernels.h): no PDK launch, still on PDK.
    fns = [lambda x, y: x - y, lambda x, y: x * y - y, tf.math.floordiv, tf.math.floormod,
           lambda x, y: tf.cast(x < y, tf.int32), lambda x, y: tf.reduce_sum(x, 1),
           lambda x, y: tf.reduce_max(y, 0),
           lambda x, y: tf.concat([x, y], 0), lambda x, y: tf.stack([x, y]),
           lambda x, y: tf.reshape(x, [-1])[1:4], lambda x, y: tf.abs(-x),
           lambda x, y: tf.shape(x)[0] + tf.size(y)]
    for fn in fns:
        with tf.device("/CPU:0"):
            want = fn(tf.constant(a), tf.constant(b))
        tensorflow_pdk.reset_launch_counts()
        with tf.device("/PDK:0"):
            x, y = tf.identity(tf.constant(a)), tf.identity(tf.constant(b))
            got = fn(x, y)
        assert got.device.endswith("PDK:0"), got.device
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        assert sum(tensorflow_pdk.launch_counts().values()) > 0


LOOP = """
    import glob, os, tempfile
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    @tf.function
    def loop(x, n):
        def body(i, t, acc):
            return i + 1, t + 2, tf.tanh(acc * 0.5 + tf.cast(t, tf.float32))
        return tf.while_loop(lambda i, t, acc: tf.logical_and(i < n, t < 2 * n), body,
                             (tf.constant(0), tf.constant(0), x))[2]

    x = np.random.default_rng(0).standard_normal((16, 16)).astype("float32")
    with tf.device("/CPU:0"):
        want = loop(tf.constant(x), tf.constant(60)).numpy()
    with tf.device("/PDK:0"):
        xd, n = tf.identity(tf.constant(x)), tf.constant(60)
        loop(xd, n)
        logdir = tempfile.mkdtemp()
        tf.profiler.experimental.start(logdir)
        got = loop(xd, n).numpy()
        tf.profiler.experimental.stop()
    space = xplane_pb2.XSpace.FromString(open(glob.glob(os.path.join(
        logdir, "plugins", "profile", "*", "*.xplane.pb"))[0], "rb").read())
    copies, kernels = 0, 0
    for p in space.planes:
        if p.name.startswith("/device:CUSTOM:PDK"):
            for line in p.lines:
                for e in line.events:
                    name = p.event_metadata[e.metadata_id].display_name
                    copies += name.startswith("Memcpy")
                    # The body's Mul, AddV2, Cast and Tanh, fused into one
                    # kernel by PDK's graph optimizer (or not, with it off).
                    kernels += name in ("Tanh", "_PdkFusedElementwise")
    print("REPORT " + json.dumps({"copies": copies, "tanh": kernels,
                                  "max_err": float(np.abs(got - want).max())}))
"""


def test_while_loop_on_pdk_copies_nothing_per_iteration():
    r = run_python(LOOP, prelude="import json, tensorflow as tf, numpy as np, tensorflow_pdk\n")
    assert r.returncode == 0, r.stderr[-3000:]
    rep = json.loads(next(ln for ln in r.stdout.splitlines()
                          if ln.startswith("REPORT "))[len("REPORT "):])
    assert rep["tanh"] == 60, rep          # the body ran on PDK, once per iteration
    assert rep["max_err"] < 1e-5, rep
    # With int32 in device memory: 786 copies for the 60 iterations.
    assert rep["copies"] < 5, rep


def test_argmax_and_bitcast_keep_their_int32_side_on_host():
    """ArgMax/ArgMin with output_type=int32 and Bitcast to or from int32 hand
    their int32 tensor to PDK's int32 kernels, which read host memory."""
    regs = [k for k in kernels.get_all_registered_kernels().kernel if k.device_type == "PDK"]
    int32 = tf.int32.as_datatype_enum

    def allowed(k, attr):
        return list([c for c in k.constraint if c.name == attr][0].allowed_values.list.type)

    arg = [k for k in regs if k.op in ("ArgMax", "ArgMin")]
    bitcast = [k for k in regs if k.op == "Bitcast"]
    assert len(arg) >= 20 and len(bitcast) >= 100
    for k in arg:
        want = {"dimension"} | ({"output"} if allowed(k, "output_type") == [int32] else set()) \
            | ({"input"} if allowed(k, "T") == [int32] else set())
        assert set(k.host_memory_arg) == want, k
    for k in bitcast:
        want = ({"input"} if allowed(k, "T") == [int32] else set()) \
            | ({"output"} if allowed(k, "type") == [int32] else set())
        assert set(k.host_memory_arg) == want, k


def _copies_between_memories(md):
    """(producer op, consumer ops) of every tensor copied between the two
    memories of one device (a _Send/_HostSend whose send and receive device
    are the same) in the partition graphs of run metadata `md`."""
    copies = []
    for fg in md.function_graphs:
        for pg in fg.partition_graphs:
            ops = {n.name: n for n in pg.node}
            recv = {n.attr["tensor_name"].s: n.name for n in pg.node
                    if n.op in ("_Recv", "_HostRecv")}
            for n in pg.node:
                if n.op in ("_Send", "_HostSend") and \
                        n.attr["send_device"].s == n.attr["recv_device"].s:
                    src = ops.get(n.input[0].split(":")[0])
                    r = recv.get(n.attr["tensor_name"].s)
                    readers = sorted(m.op for m in pg.node
                                     if any(i.split(":")[0] == r for i in m.input))
                    copies.append((src.op if src is not None else n.input[0], readers))
    return copies


def test_keras_argmax_copies_nothing_between_memories():
    """keras.ops.argmax (every Keras accuracy metric) bitcasts its float input
    to int32 for the sign bit, joins `x == 0` with it in a LogicalAnd, selects
    with the result and casts ArgMax's int32 result: on PDK no tensor crosses
    between device and host memory (a _Send/_HostRecv pair in the partition
    graph, a copy through TensorFlow's EventMgr each step): the int32 tensors
    stay on the host, and so do the bools around LogicalAnd
    (src/graph/rewrites/logical_bool_host_memory.cc)."""
    import keras
    from tensorflow.python.eager import context

    logits = np.random.default_rng(0).standard_normal((32, 10)).astype(np.float32)
    labels = np.arange(32) % 10

    @tf.function
    def accuracy(x, y):
        pred = tf.cast(keras.ops.argmax(x * 2.0, axis=-1), tf.float32)
        return tf.reduce_mean(tf.cast(tf.equal(pred, y), tf.float32))

    with tf.device("/CPU:0"):
        want = accuracy(tf.constant(logits), tf.constant(labels, tf.float32)).numpy()
    ctx = context.context()
    ctx.export_run_metadata()
    ctx.enable_run_metadata()
    try:
        with tf.device("/PDK:0"):
            got = accuracy(tf.identity(tf.constant(logits)),
                           tf.identity(tf.constant(labels, tf.float32))).numpy()
    finally:
        md = ctx.export_run_metadata()
        ctx.disable_run_metadata()
    assert got == want
    nodes = [n for fg in md.function_graphs for pg in fg.partition_graphs for n in pg.node]
    ops = {n.name: n.op for n in nodes}
    for op in ("ArgMax", "Bitcast", "LogicalAnd", "SelectV2"):
        assert op in ops.values(), sorted(set(ops.values()))
    assert _copies_between_memories(md) == [], _copies_between_memories(md)


def _run_with_metadata(fn, *args):
    from tensorflow.python.eager import context

    ctx = context.context()
    ctx.export_run_metadata()
    ctx.enable_run_metadata()
    try:
        out = fn(*args)
    finally:
        md = ctx.export_run_metadata()
        ctx.disable_run_metadata()
    return out, md


def test_bools_between_comparisons_logical_ops_and_selects_stay_in_host_memory():
    """Float comparisons joined by the logical ops, a select and a cast of
    the result, a select fused with float ops, and two tf.cond, on a logical
    op and on a comparison straight: each bool edge keeps one memory on PDK
    (no _Send in the partition graphs) and the results match the CPU's."""
    x = np.random.default_rng(3).standard_normal((64, 33)).astype(np.float32)
    x[0, :5] = [0.0, -0.0, np.nan, np.inf, -np.inf]

    @tf.function
    def fn(x):
        finite = tf.math.is_finite(x)
        mask = tf.logical_and(finite, tf.logical_or(x > 0.5, tf.logical_not(x >= -0.5)))
        picked = tf.where(mask, x * 2.0, tf.zeros_like(x))
        fused = tf.tanh(tf.where(mask, x, -x) * 3.0 + 1.0)
        counted = tf.reduce_sum(tf.cast(mask, tf.float32))
        both = tf.logical_and(counted > 3.0, tf.reduce_max(picked) > 0.0)
        branch = tf.cond(both, lambda: picked + 1.0, lambda: picked - 1.0)
        branch2 = tf.cond(tf.reduce_min(x[1:]) < -10.0, lambda: branch * 2.0,
                          lambda: branch * 3.0)
        return tf.where(both, picked + 1.0, picked - 1.0), fused, counted, branch2

    with tf.device("/CPU:0"):
        want = [t.numpy() for t in fn(tf.constant(x))]
    tensorflow_pdk.reset_launch_counts()
    with tf.device("/PDK:0"):
        xd = tf.identity(tf.constant(x))
        got, md = _run_with_metadata(fn, xd)
    counts = tensorflow_pdk.launch_counts()
    assert counts.get("LogicalAnd", 0) >= 2 and counts.get("IsFinite", 0) == 1, counts
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-6, atol=1e-7)
    assert _copies_between_memories(md) == [], _copies_between_memories(md)


def test_keras_accuracy_step_copies_nothing_and_matches_the_cpu():
    """A Keras classifier compiled with metrics=["accuracy"], two
    train_on_batch calls: no tensor crosses between memories in the second
    step's partition graphs, and loss, accuracy and weights match the
    CPU's."""
    import keras

    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 20)).astype(np.float32)
    y = rng.integers(0, 5, 32)

    def step(device):
        keras.utils.set_random_seed(1)
        with tf.device(device):
            m = keras.Sequential([keras.Input((20,)), keras.layers.Dense(16, activation="relu"),
                                  keras.layers.Dense(5)])
            m.compile(optimizer="adam", metrics=["accuracy"],
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
            m.train_on_batch(x, y)  # builds the model and its variables
            logs, md = _run_with_metadata(m.train_on_batch, x, y)
        return logs, m.get_weights(), md

    want, want_w, _ = step("/CPU:0")
    tensorflow_pdk.reset_launch_counts()
    got, got_w, md = step("/PDK:0")
    assert tensorflow_pdk.launch_counts().get("LogicalAnd", 0) == 2  # one per step
    np.testing.assert_allclose(got, want, rtol=1e-5)
    for a, b in zip(got_w, want_w):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    assert _copies_between_memories(md) == [], _copies_between_memories(md)


def test_keras_lstm_step_copies_no_tensor_list_element_between_memories():
    """A Keras LSTM's gradient keeps its int32 loop intermediates (the time
    index, a list's length and element shape) in int32 TensorLists:
    TensorListPushBack per forward iteration, TensorListPopBack per gradient
    iteration feeding TensorListGetItem/SetItem's index. TensorFlow's
    DEVICE_DEFAULT list kernels take elements in device memory; PDK's graph
    optimizer puts int32 elements in host memory with the rest of PDK's int32
    (src/graph/rewrites/tensor_list_host_memory.cc), so no iteration copies
    (before: 4 _Send/_Recv pairs per iteration, each through TensorFlow's
    EventMgr), and the step still matches the CPU's."""
    import keras
    from tensorflow.python.eager import context

    rng = np.random.default_rng(0)
    x = rng.integers(1, 50, (4, 6)).astype(np.int64)
    y = rng.integers(0, 3, 4).astype(np.int64)

    def step(device, collect):
        keras.utils.set_random_seed(5)
        with tf.device(device):
            m = keras.Sequential([keras.Input((6,), dtype="int64"), keras.layers.Embedding(50, 8),
                                  keras.layers.LSTM(8), keras.layers.Dense(3)])
            m.compile(optimizer="sgd",
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
            ctx = context.context()
            if collect:
                ctx.export_run_metadata()
                ctx.enable_run_metadata()
            try:
                loss = float(m.train_on_batch(x, y))
            finally:
                md = ctx.export_run_metadata() if collect else None
                if collect:
                    ctx.disable_run_metadata()
        return loss, [np.asarray(w) for w in m.get_weights()], md

    want_loss, want_w, _ = step("/CPU:0", False)
    tensorflow_pdk.reset_launch_counts()
    loss, w, md = step("/PDK:0", True)
    assert tensorflow_pdk.launch_counts().get("MatMul", 0) > 0
    np.testing.assert_allclose(loss, want_loss, rtol=1e-5)
    for a, b in zip(w, want_w):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    list_ops = 0
    sent = []
    for fg in md.function_graphs:
        for pg in fg.partition_graphs:
            ops = {n.name: n for n in pg.node}
            list_ops += sum(n.op.startswith("TensorList") for n in pg.node)
            for n in pg.node:
                if n.op in ("_Send", "_HostSend"):
                    src = ops.get(n.input[0].split(":")[0])
                    if src is not None:
                        sent.append((src.op, n.attr["send_device"].s, n.attr["recv_device"].s))
    assert list_ops > 0
    assert not [s for s in sent if s[0].startswith("TensorList")], sent
    # The int32 producers pushed into the lists (an Identity of the time
    # index) send nothing either.
    assert not [s for s in sent if s[0] == "Identity"], sent


def test_loop_bounded_by_an_int32_argument_stays_on_pdk():
    """A function's int32 argument is placed on the CPU, and with it the loop
    nodes carrying it (Enter/Merge/Switch/NextIteration of `n` in `i < n`):
    the loop then spanned both devices, with sends between the CPU and PDK
    every iteration. PDK's graph optimizer moves that int32 loop state to the
    loop's device (src/graph/rewrites/loop_int32_state.cc): no loop node is
    left on the CPU, and the results (the loop's value, the bound read after
    the loop, a nested loop) match the CPU's."""
    from tensorflow.python.eager import context

    x = np.random.default_rng(1).standard_normal((8, 8)).astype(np.float32)

    @tf.function
    def loops(x, n, m):
        def outer(i, acc, k):
            inner = tf.while_loop(lambda j, a: j < m, lambda j, a: (j + 1, tf.tanh(a * 0.5)),
                                  (tf.constant(0), acc))[1]
            return i + 1, inner + 1.0, k + i
        i, acc, k = tf.while_loop(lambda i, acc, k: i < n, outer, (tf.constant(0), x, n))
        return acc, k, n * 2

    with tf.device("/CPU:0"):
        want = [t.numpy() for t in loops(tf.constant(x), tf.constant(5), tf.constant(3))]
    ctx = context.context()
    ctx.export_run_metadata()
    ctx.enable_run_metadata()
    try:
        with tf.device("/PDK:0"):
            got = [t.numpy() for t in loops(tf.identity(tf.constant(x)), tf.constant(5),
                                            tf.constant(3))]
    finally:
        md = ctx.export_run_metadata()
        ctx.disable_run_metadata()
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=1e-6)
    assert got[1] == want[1] and got[2] == want[2]
    loop_ops = ("Enter", "Merge", "Switch", "NextIteration", "LoopCond", "Exit")
    nodes = [n for fg in md.function_graphs for pg in fg.partition_graphs for n in pg.node]
    assert sum(n.op == "LoopCond" and n.device.endswith("PDK:0") for n in nodes) == 2
    assert not [(n.op, n.name) for n in nodes if n.op in loop_ops and "CPU" in n.device]


def _receives_from_the_cpu(md):
    """(op, tensor dtype, reader ops) of every receive in a PDK partition graph
    of run metadata `md` whose tensor was sent from the CPU: `_HostRecv` takes
    it in host memory (the rendezvous shares the buffer), `_Recv` copies it
    into device memory through TensorFlow's EventMgr."""
    found = []
    for fg in md.function_graphs:
        for pg in fg.partition_graphs:
            for n in pg.node:
                if n.op in ("_Recv", "_HostRecv") and n.device.endswith("PDK:0") and \
                        b"CPU" in n.attr["send_device"].s:
                    readers = sorted(m.op for m in pg.node
                                     if any(i.split(":")[0] == n.name for i in m.input))
                    found.append((n.op, tf.as_dtype(n.attr["tensor_type"].type).name, readers))
    return found


def test_function_arguments_on_the_cpu_are_read_in_host_memory():
    """A tf.function on PDK called with host tensors (a custom training loop's
    batches): PDK's kernels read them in host memory
    (src/graph/rewrites/cpu_inputs_host_memory.cc), so each is received by a
    `_HostRecv` that shares the buffer instead of a `_Recv` that copies it;
    the results match the CPU's, the work ran on PDK, and the caller's host
    tensors are unchanged (no kernel wrote into them)."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((32, 64)).astype(np.float32)
    w = rng.standard_normal((64, 16)).astype(np.float32)
    y = rng.integers(0, 16, 32).astype(np.int64)

    @tf.function
    def fn(x, y, w):
        logits = tf.nn.relu(tf.matmul(x, w))
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
        return loss, tf.cast(y, tf.float32) * 2.0 + x[:, 0], tf.exp(x) - 1.0

    with tf.device("/CPU:0"):
        xh, yh, wh = tf.constant(x), tf.constant(y), tf.constant(w)
        want = [t.numpy() for t in fn(xh, yh, wh)]
    tensorflow_pdk.reset_launch_counts()
    with tf.device("/PDK:0"):
        got, md = _run_with_metadata(fn, xh, yh, wh)
    counts = tensorflow_pdk.launch_counts()
    assert counts.get("MatMul", 0) + counts.get("_PdkFusedMatMul", 0) == 1, counts
    for g, wnt in zip(got, want):
        np.testing.assert_allclose(g.numpy(), wnt, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(xh.numpy(), x)
    np.testing.assert_array_equal(yh.numpy(), y)
    received = sorted(r[:2] for r in _receives_from_the_cpu(md))
    assert received == [("_HostRecv", "float32"), ("_HostRecv", "float32"),
                        ("_HostRecv", "int64")], received


def test_keras_fit_on_a_dataset_reads_its_batches_in_host_memory():
    """Keras fit on a tf.data pipeline: IteratorGetNext runs on the CPU inside
    the train function and PDK's kernels read its batches in host memory (a
    `_HostRecv` for each batch tensor); two epochs end with the CPU's loss and
    weights. Not covered: the dummy tensor of a control edge from
    IteratorGetNext (Grappler's folded shape of the convolution's gradient,
    an Identity on PDK its only reader) and the step's outputs returned as a
    variant Optional, which the partitioner still receives in device
    memory."""
    import keras

    rng = np.random.default_rng(5)
    x = rng.standard_normal((96, 8, 8, 3)).astype(np.float32)
    y = rng.integers(0, 4, 96)

    def fit(device):
        keras.utils.set_random_seed(2)
        ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(32)
        with tf.device(device):
            m = keras.Sequential([keras.Input((8, 8, 3)),
                                  keras.layers.Conv2D(4, 3, activation="relu"),
                                  keras.layers.Flatten(), keras.layers.Dense(4)])
            m.compile(optimizer="adam",
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
            # The train function's graphs enter the run metadata when it is
            # instantiated: on the first call.
            hist, md = _run_with_metadata(lambda: m.fit(ds, epochs=2, verbose=0))
        return hist.history["loss"], m.get_weights(), md

    want, want_w, _ = fit("/CPU:0")
    tensorflow_pdk.reset_launch_counts()
    got, got_w, md = fit("/PDK:0")
    counts = tensorflow_pdk.launch_counts()
    assert counts.get("_PdkFusedConv2D", 0) + counts.get("Conv2D", 0) >= 6, counts
    np.testing.assert_allclose(got, want, rtol=1e-4)
    for a, b in zip(got_w, want_w):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    batches = [r for r in _receives_from_the_cpu(md)
               if r[1] in ("float32", "int64") and r[2] != ["Identity"]]
    assert sorted(r[1] for r in batches) == ["float32", "int64"], batches
    assert all(op == "_HostRecv" for op, _, _ in batches), batches
    assert {"Cast", "_PdkFusedConv2D"} <= {op for r in batches for op in r[2]}, batches
