"""The generic elementwise fusion (src/graph/rewrites/elementwise_fusion.cc)
and its kernel _PdkFusedElementwise (src/kernels/math/fused_elementwise.cc),
inside the real TensorFlow.

Each case runs the same computation three times from fresh tf.functions: on
PDK with the fusion (it must fire: graph_rewrite_counts, and the fused kernel
must run: launch counts), on PDK with PDK_GRAPH_DISABLE=elementwise_fusion
(the unfused PDK kernels; the fused kernel promises their bits, so the
comparison is exact), and on /CPU:0 (TensorFlow's kernels: close).
"""
import contextlib
import os

import keras
import numpy as np
import pytest
import tensorflow as tf

import tensorflow_pdk as tp
from tensorflow_pdk import testing as tpt

FUSED = "_PdkFusedElementwise"
DISABLE = "elementwise_fusion"


@contextlib.contextmanager
def _env(name, value):
    old = os.environ.get(name)
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


def _disabled_with(extra):
    """PDK_GRAPH_DISABLE with `extra` added to what the environment has."""
    have = os.environ.get("PDK_GRAPH_DISABLE", "")
    return ",".join(x for x in (have, extra) if x)


def _three_ways(run):
    """run(device) -> list of numpy arrays, from fresh tf.functions each call.
    Returns (fused, unfused, cpu, counts, launches) for the fused PDK run."""
    tp.reset_graph_rewrite_counts()
    with tpt.launches() as launches:
        fused = run("/PDK:0")
    counts = tp.graph_rewrite_counts()
    with _env("PDK_GRAPH_DISABLE", _disabled_with(DISABLE)):
        tp.reset_graph_rewrite_counts()
        with tpt.launches() as unfused_launches:
            unfused = run("/PDK:0")
        assert tp.graph_rewrite_counts().get("ElementwiseFusion", 0) == 0
        assert unfused_launches.get(FUSED, 0) == 0
    cpu = run("/CPU:0")
    return fused, unfused, cpu, counts, launches


def _call_with_peak(fn, arg, device, peaks):
    """fn(arg) on `device` after a first call that traces and optimizes it;
    on PDK, appends the measured call's peak bytes above what was in use."""
    fn(arg)
    if device == "/PDK:0":
        tf.config.experimental.reset_memory_stats("PDK:0")
        base = tf.config.experimental.get_memory_info("PDK:0")["current"]
    y = fn(arg)
    if device == "/PDK:0":
        peaks.append(tf.config.experimental.get_memory_info("PDK:0")["peak"] - base)
    return y


def _check(run, min_groups=1, rtol=1e-5, atol=1e-6):
    fused, unfused, cpu, counts, launches = _three_ways(run)
    if "elementwise_fusion" in os.environ.get("PDK_GRAPH_DISABLE", ""):
        pytest.skip("elementwise_fusion disabled by the environment")
    assert counts.get("ElementwiseFusion", 0) >= min_groups, counts
    assert counts.get("ElementwiseFusion nodes", 0) >= 2 * min_groups, counts
    assert launches.get(FUSED, 0) >= 1, launches
    assert len(fused) == len(unfused) == len(cpu)
    for i, (f, u, c) in enumerate(zip(fused, unfused, cpu)):
        np.testing.assert_array_equal(f, u, err_msg=f"output {i}: fused != unfused PDK")
        tpt.assert_close(f, c, rtol=rtol, atol=atol, what=f"output {i} vs CPU")
    return counts, launches


def _chain(x, k, m, mask):
    """A hand-written chain: unary, binary, scalar operands, Cast, SelectV2."""
    a = tf.tanh(x * 2.0 + 1.0) - tf.exp(-tf.abs(x)) * 0.5
    b = tf.sigmoid(a) / (1.0 + tf.square(x)) + tf.cast(k, x.dtype)
    c = tf.where(mask, tf.sqrt(tf.abs(b)) * tf.math.rsqrt(1.0 + tf.square(a)), -b)
    d = tf.maximum(c, 0.1) - tf.minimum(c, -0.1) + tf.math.squared_difference(a, b)
    e = tf.nn.relu(d) + tf.nn.relu6(x * 4.0) + tf.nn.elu(-d) + tf.math.erf(a) + tf.math.erfc(b)
    f = tf.pow(tf.abs(e) + 1.0, 0.75) + tf.math.log(tf.abs(e) + 1.0) + tf.math.log1p(tf.abs(a))
    g = tf.math.divide_no_nan(f, m) + tf.sign(a) * tf.round(b) + tf.floor(c) - tf.math.ceil(d)
    return g, a  # a is also read outside: two outputs


@pytest.mark.parametrize("shape", [(37, 19), (4096,), (3, 1031), (5,)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_hand_written_chain(shape, dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(dtype) * 2
    k = rng.integers(-3, 3, shape).astype("int32")
    m = np.where(rng.random(shape) < 0.2, 0, rng.standard_normal(shape)).astype(dtype)
    mask = rng.random(shape) < 0.5

    def run(device):
        with tf.device(device):
            args = [tf.constant(v) for v in (x, k, m, mask)]
            fn = tf.function(lambda *a: list(_chain(*a)))
            return [t.numpy() for t in fn(*args)]

    counts, launches = _check(run, atol=1e-5 if dtype == "float32" else 1e-12)
    assert counts["ElementwiseFusion nodes"] >= 40, counts
    for op in ("Tanh", "Sigmoid", "Erfc", "SelectV2", "Cast", "Pow"):
        assert launches.get(op, 0) == 0, (op, launches)


def test_gradients_of_activations():
    """The backward pass: TanhGrad, SigmoidGrad, ReluGrad, EluGrad, SqrtGrad,
    RsqrtGrad, ReciprocalGrad and the chain rule's elementwise arithmetic."""
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((64, 33)) * 2).astype("float32")

    def run(device):
        with tf.device(device):
            xt = tf.constant(x)

            @tf.function
            def grad(x):
                with tf.GradientTape() as tape:
                    tape.watch(x)
                    y = (tf.tanh(x) * tf.sigmoid(x) + tf.nn.relu(x) * tf.nn.elu(x)
                         + tf.sqrt(tf.abs(x) + 1.0) + tf.math.rsqrt(tf.abs(x) + 2.0)
                         + tf.math.reciprocal(tf.abs(x) + 3.0) + tf.nn.relu6(x * 3.0))
                    loss = tf.reduce_sum(y * y)
                return tape.gradient(loss, x)

            return [grad(xt).numpy()]

    _counts, launches = _check(run)
    for op in ("TanhGrad", "SigmoidGrad", "ReluGrad", "EluGrad"):
        assert launches.get(op, 0) == 0, (op, launches)


def test_broadcasting_inside_a_group_is_exact():
    """Row and column broadcasting ([B, N] op [N], [B, 1]) take the kernel's
    op-by-op path with the unfused broadcasting code: still bit-identical."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((50, 40)).astype("float32")
    row = rng.standard_normal((40,)).astype("float32")
    col = rng.standard_normal((50, 1)).astype("float32")

    def run(device):
        with tf.device(device):
            args = [tf.constant(v) for v in (x, row, col)]
            fn = tf.function(lambda x, r, c: tf.tanh(x * r + c) * 0.5 - tf.exp(c) / (r + 3.0))
            return [fn(*args).numpy()]

    _check(run)


@pytest.mark.parametrize("with_pow", [False, True], ids=["expanded", "pow_op_by_op"])
def test_row_and_column_values_in_the_blocked_pass_are_exact(with_pow):
    """3-D row ([B, T, 1]: a per-row statistic) and column ([C], [1, C]: a
    per-channel vector) values, computed in the group (a row-shaped output
    too), a bool row condition of SelectV2 and an int32 row source of a Cast:
    the kernel's blocked pass expands them per block, bit-identical to the
    unfused kernels; shapes whose last dimension does not split evenly into
    1024-element blocks."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((6, 37, 29)).astype("float32")
    mean = x.mean(axis=-1, keepdims=True)
    gamma = rng.standard_normal((29,)).astype("float32")
    beta = rng.standard_normal((1, 29)).astype("float32")
    cond = rng.random((6, 37, 1)) > 0.5
    k = rng.integers(-3, 4, (6, 37, 1)).astype("int32")

    def run(device):
        with tf.device(device):
            args = [tf.constant(v) for v in (x, mean, gamma, beta, cond, k)]

            def fn(x, m, g, b, c, k):
                inv = tf.math.rsqrt(m * m + 1e-3)  # a row value computed in the group
                y = (x - m) * inv * g + b
                z = tf.where(c, tf.tanh(y), y * 0.5) + tf.cast(k, tf.float32)
                if not with_pow:
                    return z, inv * 2.0
                # Pow and Maximum of a row value: the op-by-op path, still exact.
                w = tf.pow(tf.abs(z) * 0.1 + 1.0, inv * 0.05) + tf.maximum(z, m)
                return z, inv * 2.0, w
            return [t.numpy() for t in tf.function(fn)(*args)]

    _check(run)


@pytest.mark.parametrize("make_opt", [
    lambda: keras.optimizers.SGD(learning_rate=0.05, momentum=0.9),
    lambda: keras.optimizers.SGD(learning_rate=0.05, momentum=0.9, nesterov=True),
    lambda: keras.optimizers.RMSprop(learning_rate=0.01),
    lambda: keras.optimizers.RMSprop(learning_rate=0.01, momentum=0.5, centered=True),
    lambda: keras.optimizers.Adagrad(learning_rate=0.1),
    lambda: keras.optimizers.AdamW(learning_rate=0.01, weight_decay=0.1),
    lambda: keras.optimizers.Lion(learning_rate=0.01),
], ids=["sgd_momentum", "sgd_nesterov", "rmsprop", "rmsprop_centered", "adagrad", "adamw",
        "lion"])
def test_optimizers(make_opt):
    shapes = [(37, 19), (19,), (5, 3, 7), ()]
    rng = np.random.default_rng(3)
    init = [rng.standard_normal(s).astype("float32") for s in shapes]
    grads = [[rng.standard_normal(s).astype("float32") for s in shapes] for _ in range(3)]

    def run(device):
        with tf.device(device):
            vs = [tf.Variable(v) for v in init]
            opt = make_opt()
            opt.build(vs)

            @tf.function
            def apply(g):
                opt.apply_gradients(zip(g, vs))

            for step in grads:
                apply([tf.constant(g) for g in step])
        return [v.numpy() for v in vs] + [v.numpy() for v in opt.variables]

    _check(run)


def _layer_step(layer_fn, x, seed=0, training=True):
    """Forward and backward of a layer on `x`, in one tf.function."""
    def run(device):
        with tf.device(device):
            keras.utils.set_random_seed(seed)
            layer = layer_fn()
            layer.build(x.shape)
            xt = tf.constant(x)

            @tf.function
            def step(x):
                with tf.GradientTape() as tape:
                    tape.watch(x)
                    y = layer(x, training=training)
                    loss = tf.reduce_mean(tf.square(y))
                gs = tape.gradient(loss, [x] + layer.trainable_variables)
                return [y] + gs

            return [t.numpy() for t in step(xt)]
    return run


def test_layer_normalization():
    x = np.random.default_rng(4).standard_normal((32, 48)).astype("float32")
    _check(_layer_step(lambda: keras.layers.LayerNormalization(), x), atol=1e-5)


def test_batch_normalization_gradient_fuses_across_its_control_edges():
    """TensorFlow's SquaredDifference gradient computes 2 * g * (x - mean)
    under control_dependencies([g]): the Const 2 and the Sub carry a control
    input on the variance's gradient (a Mul). The fusion takes all three
    into one group (the Const's control input moves to the Mul's inputs), so
    no Sub runs on its own."""
    x = np.random.default_rng(8).standard_normal((16, 6, 6, 8)).astype("float32")
    counts, launches = _check(_layer_step(lambda: keras.layers.BatchNormalization(), x),
                              atol=1e-5)
    assert counts.get("ElementwiseFusion const control inputs", 0) >= 1, counts
    assert launches.get("Sub", 0) == 0, launches


@pytest.mark.parametrize("case", ["row", "column", "one", "general", "pow"])
def test_tile_read_by_the_group_is_absorbed(case):
    """A Tile with a Const multiples that only fused nodes read goes: the
    fused node reads its input with the multiples (attribute tiles). Row
    ([B, T, 1] -> [B, T, C]) and column ([1, 1, C] -> [B, T, C]) inputs are
    expanded per block (the tile is never written); a one-element input, a
    tile of a full tensor ("general") and a row tile read by Pow (not exact
    expanded) are materialized. Bits equal the unfused Tile + ops."""
    rng = np.random.default_rng(13)
    x = rng.standard_normal((4, 6, 40)).astype("float32")
    small = {"row": (4, 6, 1), "column": (1, 1, 40), "one": (1, 1, 1),
             "general": (2, 3, 40), "pow": (4, 6, 1)}[case]
    mult = [a // b for a, b in zip(x.shape, small)]
    g = rng.standard_normal(small).astype("float32")

    def fn(x, g):
        t = tf.tile(tf.abs(g) + 0.5, mult)  # the Tile reads a fused value: a group on each side
        y = t * (1.0 / 40.0) + tf.tanh(x)
        if case == "pow":
            y = tf.pow(t, 0.75) * y
        return y * x, tf.sigmoid(y)

    def run(device):
        with tf.device(device):
            return [v.numpy() for v in tf.function(fn)(tf.constant(x), tf.constant(g))]

    counts, launches = _check(run)
    assert counts.get("ElementwiseFusion tiles", 0) == 1, counts
    assert launches.get("Tile", 0) == 0, launches


def test_absorbed_tile_gives_tiles_error():
    """The fused node checks the absorbed Tile's multiples against the
    input's rank at run time, with Tile's message."""
    x = np.ones((3, 4), np.float32)

    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)] * 2)
    def f(x, g):
        return tf.tile(g * 2.0, [1, 4]) * x + 1.0

    tp.reset_graph_rewrite_counts()
    with tf.device("/PDK:0"):
        with tpt.launches() as launches:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"Tile \(fused into _PdkFusedElementwise .*multiples"):
                f(tf.constant(x), tf.constant(np.ones((3, 1, 1), np.float32))).numpy()
    if "elementwise_fusion" not in os.environ.get("PDK_GRAPH_DISABLE", ""):
        assert tp.graph_rewrite_counts().get("ElementwiseFusion tiles", 0) == 1
        assert launches.get(FUSED, 0) >= 1 and launches.get("Tile", 0) == 0, launches


def test_control_edges_on_members():
    """Control inputs between members are dropped, from outside kept on the
    fused node, and a control input on a member (an assignment ordered after
    it) waits for the fused node: the assignment still sees its value."""
    x = np.random.default_rng(9).standard_normal((8, 5)).astype("float32")

    def run(device):
        with tf.device(device):
            v = tf.Variable(tf.zeros((8, 5)))
            w = tf.Variable(tf.ones((8, 5)))

            @tf.function
            def f(x):
                r = w.read_value()
                with tf.control_dependencies([r]):  # from outside the group
                    a = x * 2.0
                with tf.control_dependencies([a]):  # between members; on a Const
                    b = (x + 1.0) * tf.constant(3.0)
                d = tf.tanh(a * b)
                with tf.control_dependencies([d]):  # on a member
                    v.assign(w * 0.5)
                return d + 1.0

            y = f(tf.constant(x))
            return [y.numpy(), v.numpy()]

    counts, launches = _check(run)
    assert counts.get("ElementwiseFusion nodes", 0) >= 6, counts
    for op in ("AddV2", "Tanh"):
        assert launches.get(op, 0) == 0, (op, launches)
    assert launches.get("Mul", 0) == 1, launches  # w * 0.5 alone, outside the group


@pytest.mark.parametrize("approximate", [False, True])
def test_gelu(approximate):
    x = np.random.default_rng(5).standard_normal((64, 40)).astype("float32") * 3
    _check(_layer_step(lambda: keras.layers.Activation(
        lambda t: keras.activations.gelu(t, approximate=approximate)), x), atol=1e-5)


def test_dropout():
    x = np.random.default_rng(6).standard_normal((64, 40)).astype("float32")

    def run(device):
        with tf.device(device):
            xt = tf.constant(x)
            # One mask for every run: the random kernels differ between
            # devices; the fused part is the mask arithmetic.
            noise = tf.constant(np.random.default_rng(7).random((64, 40)).astype("float32"))

            @tf.function
            def step(x, u):
                with tf.GradientTape() as tape:
                    tape.watch(x)
                    keep = u >= 0.3
                    y = tf.where(keep, x / 0.7, tf.zeros_like(x))
                    y = y * tf.cast(keep, x.dtype) + tf.nn.relu(x) * 0.1
                    loss = tf.reduce_sum(tf.tanh(y))
                return [y, tape.gradient(loss, x)]

            return [t.numpy() for t in step(xt, noise)]

    _check(run)


def test_softmax_like_group_is_split_not_cyclic():
    """exp(x - max) / sum(exp(...)): the reductions read the group and the
    group reads them back; fusing it whole would make a cycle. The rewrite
    splits it and the graph still runs, with the unfused bits."""
    x = np.random.default_rng(8).standard_normal((16, 50)).astype("float32")

    def run(device):
        with tf.device(device):
            fn = tf.function(lambda x: (lambda e: tf.tanh(e / tf.reduce_sum(e, -1, keepdims=True))
                                        * 2.0)(tf.exp(tf.abs(x) * 0.5 - 1.0)))
            return [fn(tf.constant(x)).numpy()]

    _check(run)


def test_bad_shapes_give_the_ops_error():
    """Shapes unknown when traced; at run time they don't broadcast: the
    error of the op that fails, fused or not, never a crash."""
    spec = [tf.TensorSpec(None, tf.float32)] * 2
    for disable in (None, _disabled_with(DISABLE)):
        with _env("PDK_GRAPH_DISABLE", disable):
            with tf.device("/PDK:0"):
                fn = tf.function(lambda a, b: tf.tanh(a) * 2.0 + tf.exp(b), input_signature=spec)
                with pytest.raises(tf.errors.InvalidArgumentError, match="Incompatible shapes"):
                    fn(tf.zeros((3, 4)), tf.zeros((5,)))
                # The same function still works with shapes that broadcast.
                out = fn(tf.ones((3, 4)), tf.zeros((4,))).numpy()
            np.testing.assert_allclose(out, np.tanh(1.0) * 2 + 1, rtol=1e-6)


def test_fetched_node_is_not_swallowed():
    """A fetched intermediate (TF1 session fetch: preserved) stays a node of
    its own; the nodes before and after it fuse into two groups."""
    x = np.random.default_rng(9).standard_normal((8, 8)).astype("float32")
    results = {}
    for device in ("/PDK:0", "/CPU:0"):
        g = tf.Graph()
        with g.as_default(), tf.device(device):
            xp = tf.compat.v1.placeholder(tf.float32, (8, 8))
            a = tf.exp(tf.tanh(xp) * 2.0)
            b = a * 3.0  # fetched below: preserved
            d = tf.square(tf.sigmoid(b) + 1.0) - b
        tp.reset_graph_rewrite_counts()
        with tf.compat.v1.Session(graph=g) as s:
            results[device] = s.run([b, d], {xp: x})
        if device == "/PDK:0" and DISABLE not in os.environ.get("PDK_GRAPH_DISABLE", ""):
            counts = tp.graph_rewrite_counts()
            # One group before the fetched Mul, one after it (swallowed, it
            # would join them into one).
            assert counts.get("ElementwiseFusion", 0) == 2, counts
            assert counts.get("ElementwiseFusion nodes", 0) >= 5, counts
    for p, c in zip(results["/PDK:0"], results["/CPU:0"]):
        tpt.assert_close(p, c, rtol=1e-5, atol=1e-6, what="session fetch")


def test_output_takes_the_buffer_of_an_input_only_the_group_reads():
    """A full-size input that only the fused node reads, and that no later
    instruction of the group needs, gives its buffer to the output
    (TF_ForwardInputOrAllocateOutput): the call's peak on PDK is one 4 MiB
    buffer, not two. The input is made inside the function, so no one else
    holds it (a function argument is held by its caller and never forwarded)."""
    if DISABLE in os.environ.get("PDK_GRAPH_DISABLE", ""):
        pytest.skip("elementwise_fusion disabled by the environment")
    n = 1 << 20  # float32: 4 MiB
    peaks = []  # per PDK run: fused first, then unfused (_three_ways)

    def run(device):
        with tf.device(device):
            fn = tf.function(lambda s: tf.exp(tf.random.stateless_uniform([n], s)) * 2.0 + 1.0)
            return [_call_with_peak(fn, tf.constant([1, 2]), device, peaks).numpy()]

    _, launches = _check(run)
    assert launches.get(FUSED, 0) >= 2, launches
    assert peaks[0] < 1.5 * 4 * n, f"peak {peaks}: the fused output did not reuse the input"


def test_chain_with_a_reduction_per_step_is_cut_after_eight_outputs():
    """x = x * 1.0001 + 0.5, 48 times, each x also summed: one connected group
    of 96 nodes whose 48 values are all read outside it. Fused whole, its
    kernel would write all 48 outputs (1 MiB each) before any Sum reads one
    (a peak near 49 MiB where the unfused ops need 3); the rewrite cuts such
    a group after every 8th output (kMaxOutputs), so the call's peak stays
    near two parts' outputs, and the results keep the unfused bits."""
    if DISABLE in os.environ.get("PDK_GRAPH_DISABLE", ""):
        pytest.skip("elementwise_fusion disabled by the environment")
    steps, n = 48, 1 << 18  # float32: 1 MiB per value
    peaks = []  # per PDK run: fused first, then unfused (_three_ways)

    def body(x):
        sums = []
        for _ in range(steps):
            x = x * 1.0001 + 0.5
            sums.append(tf.reduce_sum(x))
        return tf.stack(sums)

    def run(device):
        with tf.device(device):
            x = tf.constant(np.linspace(-1.0, 1.0, n, dtype=np.float32))
            return [_call_with_peak(tf.function(body), x, device, peaks).numpy()]

    counts, launches = _check(run, min_groups=steps // 8)
    assert counts["ElementwiseFusion nodes"] >= 2 * steps, counts
    assert launches.get(FUSED, 0) >= 2 * (steps // 8), launches  # two calls
    assert peaks[0] <= 24 * 4 * n, f"peak {peaks}: the group's outputs were not cut"


def _cell(z, c, axis):
    """An LSTM cell's elementwise part after z = x W + h U + b: its four gates
    are a Split of z."""
    i, f, g, o = tf.split(z, 4, axis=axis)
    c = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(g)
    return tf.sigmoid(o) * tf.tanh(c), c


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_split_and_concat_absorbed_keras_lstm(dtype):
    """Keras's LSTM layer, forward and gradient (two while loops): in the
    forward loop the Split of z into the four gates becomes pieces of the
    fused cell's input, and in the gradient loop the ConcatV2 that joins the
    gates' gradients into dz becomes an output of the fused gradient node;
    neither runs as a kernel. Bit-identical to the unfused PDK kernels."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((8, 6, 5)).astype(dtype)

    def run(device):
        with tf.device(device):
            keras.utils.set_random_seed(0)
            layer = keras.layers.LSTM(16, dtype=dtype)
            xt = tf.constant(x)
            layer.build(xt.shape)  # no eager call: every launch is the step's

            @tf.function
            def step(xt):
                with tf.GradientTape() as tape:
                    tape.watch(xt)
                    y = layer(xt)
                    loss = tf.reduce_sum(y * y)
                return [y] + tape.gradient(loss, [xt] + layer.trainable_variables)

            return [t.numpy() for t in step(xt)]

    counts, launches = _check(run, atol=1e-5 if dtype == "float32" else 1e-12)
    assert counts.get("ElementwiseFusion splits", 0) >= 1, counts
    assert counts.get("ElementwiseFusion concats", 0) >= 1, counts
    # One Split and one ConcatV2 per time step unfused; the ConcatV2 left is
    # outside the loops (not an elementwise group's).
    assert launches.get("Split", 0) == 0 and launches.get("ConcatV2", 0) <= 1, launches


@pytest.mark.parametrize("axis", [0, 1, 2, -2])
def test_split_and_concat_along_any_axis(axis):
    """Pieces and concatenations along the first, a middle and the last axis
    of a 3-D tensor, with a column vector broadcast in the group (the blocked
    pass with expanded values) and one-element pieces."""
    rng = np.random.default_rng(12)
    x = rng.standard_normal((4, 6, 8)).astype("float32")
    col = rng.standard_normal((4 if axis == 2 else 8,)).astype("float32")
    tiny = rng.standard_normal((1, 1, 2)).astype("float32")

    def fn(x, col, tiny):
        a, b = tf.split(tf.abs(x) + 0.5, 2, axis=axis)
        t0, t1 = tf.split(tiny * 2.0, 2, axis=2)
        u = a * 0.5 + b  # every part below reads u: one group
        v = tf.sigmoid(u) * (a + t0)  # a part also read outside: stays an output
        return tf.concat([tf.tanh(u + col), v, tf.exp(-u) + t1], axis), v

    def run(device):
        with tf.device(device):
            f = tf.function(fn)
            return [t.numpy() for t in f(tf.constant(x), tf.constant(col), tf.constant(tiny))]

    counts, launches = _check(run)
    assert counts.get("ElementwiseFusion splits", 0) >= 1, counts
    assert counts.get("ElementwiseFusion concats", 0) == 1, counts
    assert launches.get("ConcatV2", 0) == 0, launches


def test_pieces_and_concat_off_the_blocked_pass():
    """A piece that broadcasts as a row value ([B, 1] pieces against [B, N])
    and a concatenation of parts of different shapes take the kernel's
    op-by-op path: the same bits as the unfused kernels."""
    rng = np.random.default_rng(13)
    x = rng.standard_normal((16, 4)).astype("float32")
    y = rng.standard_normal((16, 10)).astype("float32")

    def fn(x, y):
        p, q, r, s = tf.split(x * 2.0, 4, axis=1)  # [16, 1] each
        b = tf.sigmoid(r - s)                       # [16, 1]
        a = tf.tanh(y * p + q + b)                  # [16, 10]
        return tf.concat([a, b * 3.0], axis=1)      # [16, 11]

    def run(device):
        with tf.device(device):
            return [tf.function(fn)(tf.constant(x), tf.constant(y)).numpy()]

    counts, launches = _check(run)
    assert counts.get("ElementwiseFusion splits", 0) >= 1, counts
    assert counts.get("ElementwiseFusion concats", 0) == 1, counts
    assert launches.get("ConcatV2", 0) == 0 and launches.get("Split", 0) == 0, launches


def test_absorbed_split_and_concat_give_their_ops_errors():
    """Shapes unknown when traced: at run time the split dimension does not
    divide, or the concatenated values differ off the axis — Split's and
    ConcatV2's own errors, fused or not, and the function still runs with
    good shapes."""
    spec = [tf.TensorSpec(None, tf.float32)] * 2
    for disable in (None, _disabled_with(DISABLE)):
        with _env("PDK_GRAPH_DISABLE", disable):
            with tf.device("/PDK:0"):
                split_fn = tf.function(
                    lambda z, c: _cell(z * 2.0, c, 1)[0], input_signature=spec)
                with pytest.raises(tf.errors.InvalidArgumentError,
                                   match="Number of ways to split should evenly divide"):
                    split_fn(tf.zeros((3, 10)), tf.zeros((3, 2)))
                out = split_fn(tf.zeros((3, 8)), tf.zeros((3, 2))).numpy()
                np.testing.assert_array_equal(out, np.zeros((3, 2), np.float32))

                concat_fn = tf.function(
                    lambda a, b: tf.concat([tf.tanh(a) * tf.sigmoid(b), tf.sigmoid(b) + 1.0], 0),
                    input_signature=spec)
                with pytest.raises(tf.errors.InvalidArgumentError, match="only axis 0 may differ"):
                    concat_fn(tf.zeros((3, 4)), tf.zeros((3, 1)))
                out = concat_fn(tf.zeros((3, 4)), tf.zeros((3, 4))).numpy()
                np.testing.assert_allclose(out[3:], 1.5, rtol=1e-6)


@pytest.mark.parametrize("shape", [(32, 24), (2, 5, 7, 24)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bias_add_joins_the_group(shape, dtype):
    """BiasAdd (NHWC: along the last dimension) fuses with the ops around it,
    as in an LSTM cell's z = x W + h U + b: bit-identical to the unfused
    BiasAdd kernel."""
    rng = np.random.default_rng(14)
    x = rng.standard_normal(shape).astype(dtype)
    y = rng.standard_normal(shape).astype(dtype)
    b = rng.standard_normal(shape[-1:]).astype(dtype)

    def run(device):
        with tf.device(device):
            fn = tf.function(lambda x, y, b: tf.tanh(tf.nn.bias_add(x + y, b)) * 0.5)
            return [fn(tf.constant(x), tf.constant(y), tf.constant(b)).numpy()]

    counts, launches = _check(run, atol=1e-6 if dtype == "float32" else 1e-12)
    assert launches.get("BiasAdd", 0) == 0, launches


def test_bias_add_nchw_stays_out_and_bad_bias_gives_its_error():
    """BiasAdd with data_format NCHW adds along dimension 1: not fused. A bias
    that does not match the last dimension (shapes unknown when traced): the
    BiasAdd kernel's error, fused or not."""
    x = np.ones((2, 3, 4, 4), np.float32)
    with tf.device("/PDK:0"):
        tp.reset_graph_rewrite_counts()
        fn = tf.function(lambda x, b: tf.tanh(tf.nn.bias_add(x * 2.0, b, data_format="NCHW")))
        out = fn(tf.constant(x), tf.constant(np.full(3, 0.5, np.float32))).numpy()
    np.testing.assert_allclose(out, np.tanh(2.5), rtol=1e-6)
    if DISABLE not in os.environ.get("PDK_GRAPH_DISABLE", ""):
        assert tp.graph_rewrite_counts().get("ElementwiseFusion nodes", 0) <= 1
    spec = [tf.TensorSpec(None, tf.float32)] * 2
    for disable in (None, _disabled_with(DISABLE)):
        with _env("PDK_GRAPH_DISABLE", disable):
            with tf.device("/PDK:0"):
                bad = tf.function(lambda x, b: tf.tanh(tf.nn.bias_add(x * 2.0, b)),
                                  input_signature=spec)
                with pytest.raises(tf.errors.InvalidArgumentError,
                                   match="must provide as many biases"):
                    bad(tf.zeros((3, 4)), tf.zeros((5,)))
                np.testing.assert_allclose(bad(tf.zeros((3, 4)), tf.zeros((4,))).numpy(), 0.0)
