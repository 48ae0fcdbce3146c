"""Keras recurrent layers (LSTM, GRU, Bidirectional) on PDK.

On the TensorFlow backend (no cuDNN path on CPU) Keras runs
an RNN as a While loop over TensorLists: TensorListFromTensor / GetItem for the
input sequence, Reserve / SetItem / Stack for the outputs, the cell's MatMul,
BiasAdd, Split, Sigmoid, Tanh, Mul, AddV2 inside the body; the gradient loop
adds PushBack/PopBack accumulators and, for the input sequence's gradient, a
variant AddN and ZerosLike that PDK's graph optimizer rewrites
(src/graph/rewrites/tensor_list_gradients.cc). These tests compare with
TensorFlow's CPU kernels and check that nothing computes on the CPU.
"""
import numpy as np
import pytest
import tensorflow as tf

import tensorflow_pdk
from tensorflow_pdk import placement
from tensorflow_pdk.testing import keras_compile_args

keras = pytest.importorskip("keras")

SEQ, FEAT, BATCH = 7, 5, 4
VOCAB, LEN, N = 40, 10, 96


def _layers():
    return {
        "lstm": lambda: keras.layers.LSTM(6, return_sequences=True, return_state=True),
        "gru": lambda: keras.layers.GRU(6, return_sequences=True, return_state=True),
        "bilstm": lambda: keras.layers.Bidirectional(keras.layers.LSTM(6, return_sequences=True)),
    }


def _run_layer(make, device, x, weights=None):
    """Builds the layer on `device`, optionally loads `weights`, and runs it eagerly and
    as a tf.function (forward and input/weight gradients) inside placement.record()."""
    keras.utils.set_random_seed(3)
    with tf.device(device):
        layer = make()
        xt = tf.constant(x)
        layer(xt)
        if weights is not None:
            layer.set_weights(weights)

        @tf.function
        def step(xt):
            with tf.GradientTape() as tape:
                tape.watch(xt)
                out = tf.nest.flatten(layer(xt))
                loss = tf.add_n([tf.reduce_sum(o * o) for o in out])
            return out, tape.gradient(loss, [xt] + layer.trainable_variables)

        eager = [np.asarray(o) for o in tf.nest.flatten(layer(xt))]
        with placement.record() as placed:
            out, grads = step(xt)
    return (layer.get_weights(), eager, [np.asarray(o) for o in out],
            [np.asarray(g) for g in grads], placed)


@pytest.mark.parametrize("name", ["lstm", "gru", "bilstm"])
def test_layer_forward_and_gradients_match_cpu(name, rng):
    make = _layers()[name]
    x = rng.standard_normal((BATCH, SEQ, FEAT)).astype(np.float32)
    weights, cpu_eager, cpu_out, cpu_grads, _ = _run_layer(make, "/CPU:0", x)
    tensorflow_pdk.reset_launch_counts()
    _, pdk_eager, pdk_out, pdk_grads, placed = _run_layer(make, "/PDK:0", x, weights)
    launches = tensorflow_pdk.launch_counts()

    for a, b in zip(pdk_eager, cpu_eager):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    for a, b in zip(pdk_out, cpu_out):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    assert len(pdk_grads) == len(cpu_grads)
    for a, b in zip(pdk_grads, cpu_grads):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)
    # The cell math ran in PDK kernels, once per time step at least: the
    # eager call's ops one by one; in the tf.function, PDK's graph optimizer
    # fuses each loop body's elementwise ops (the gradient cell's SigmoidGrad,
    # TanhGrad, Mul, AddN) into a _PdkFusedElementwise per iteration.
    for op in ("MatMul", "Sigmoid", "Tanh"):
        assert launches.get(op, 0) >= SEQ, (op, launches.get(op))
    for op in ("SigmoidGrad", "TanhGrad"):
        assert launches.get(op, 0) + launches.get("_PdkFusedElementwise", 0) >= 2 * SEQ, \
            (op, launches.get(op), launches.get("_PdkFusedElementwise"))
    assert placed.compute_ops_on_cpu() == {}, placed.report()
    # The loop really is in the report: lowered to Switch/Merge with the
    # TensorList ops and the cell math on PDK.
    on_pdk = placed.compute_ops_on("PDK")
    for op in ("Merge", "Switch", "NextIteration", "TensorListGetItem", "TensorListSetItem",
               "MatMul", "_PdkFusedElementwise"):
        assert on_pdk.get(op, 0) > 0, (op, placed.report())


def test_tensorflow_registers_tensor_list_and_control_flow_for_device_default():
    """The TensorList and control-flow kernels PDK relies on are TensorFlow's own
    DEVICE_DEFAULT kernels; variant AddN/ZerosLike are CPU/GPU only, hence the rewrite."""
    from tensorflow.python.framework import kernels

    def device_types(op, **types):
        out = set()
        for k in kernels.get_registered_kernels_for_op(op).kernel:
            ok = all(any(tf.dtypes.as_dtype(v) == dt for v in c.allowed_values.list.type)
                     for c in k.constraint for name, dt in types.items() if c.name == name)
            if ok:
                out.add(k.device_type)
        return out

    for op in ("While", "StatelessWhile", "If", "StatelessIf", "TensorListReserve",
               "TensorListElementShape", "TensorListLength", "TensorListPushBack",
               "TensorListResize", "EmptyTensorList"):
        assert "DEFAULT" in device_types(op), op
    for op in ("TensorListFromTensor", "TensorListGetItem", "TensorListSetItem",
               "TensorListStack", "TensorListPopBack", "TensorListGather"):
        assert "DEFAULT" in device_types(op, element_dtype=tf.float32), op
    for op in ("Enter", "Exit", "Merge", "Switch", "NextIteration"):
        assert "DEFAULT" in device_types(op, T=tf.variant), op
    assert "DEFAULT" not in device_types("AddN", T=tf.variant)
    assert "DEFAULT" not in device_types("ZerosLike", T=tf.variant)


# ------------------------------------------------------------ text classifier

def _data():
    r = np.random.default_rng(7)
    x = r.integers(1, VOCAB, size=(N, LEN)).astype(np.int32)
    y = ((x < VOCAB // 2).sum(axis=1) > LEN // 2).astype(np.int32)  # majority of "low" tokens
    return x, y


def _train(device, data=_data, seed=11, mask_zero=False,
           recurrent=lambda: keras.layers.Bidirectional(
               keras.layers.LSTM(16, return_sequences=True))):
    """Embedding -> `recurrent` -> GRU(8) -> Dense(2) on `data()`, two epochs
    on `device`: (losses, weights, placement, launch counts, rewrite counts)."""
    x, y = data()
    keras.utils.set_random_seed(seed)
    with tf.device(device):
        model = keras.Sequential([
            keras.Input(shape=(LEN,), dtype="int32"),
            keras.layers.Embedding(VOCAB, 8, mask_zero=mask_zero),
            recurrent(),
            keras.layers.GRU(8),
            keras.layers.Dense(2),
        ])
        model.compile(optimizer=keras.optimizers.Adam(1e-2),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      **keras_compile_args(device))
        tensorflow_pdk.reset_launch_counts()
        tensorflow_pdk.reset_graph_rewrite_counts()
        with placement.record() as placed:
            hist = model.fit(x, y, epochs=2, batch_size=32, shuffle=False, verbose=0)
        launches = tensorflow_pdk.launch_counts()
        rewrites = tensorflow_pdk.graph_rewrite_counts()
    return (hist.history["loss"], [np.asarray(w) for w in model.get_weights()], placed,
            launches, rewrites)


@pytest.fixture(scope="module")
def trained():
    return _train("/PDK:0"), _train("/CPU:0")


def test_text_classifier_trains_entirely_on_pdk(trained):
    (losses, _, placed, launches, rewrites), _ = trained
    assert placed.compute_ops_on_cpu() == {}, placed.report()
    # The gradient of the input sequences' TensorLists (variant AddN and
    # ZerosLike, CPU-only in TensorFlow) was rewritten for each of the 3 loops.
    assert rewrites.get("AddN(TensorList)", 0) >= 3, rewrites
    assert rewrites.get("ZerosLike(TensorList)", 0) >= 3, rewrites
    steps = 2 * (N // 32)
    for op in ("MatMul", "Split", "ReverseV2", "UnsortedSegmentSum"):
        assert launches.get(op, 0) >= steps, (op, launches.get(op))
    # Each loop body's cell math (Sigmoid, Tanh, Mul, AddV2; their gradients)
    # runs fused, at least one _PdkFusedElementwise per body and iteration:
    # 3 loops (both directions of the Bidirectional LSTM, the GRU), forward
    # and gradient, LEN iterations each, per training step.
    assert launches.get("_PdkFusedElementwise", 0) >= steps * 3 * 2 * LEN, launches
    assert rewrites.get("ElementwiseFusion", 0) >= 6, rewrites
    assert all(np.isfinite(losses))


def test_text_classifier_matches_cpu(trained):
    (pdk_losses, pdk_w, *_), (cpu_losses, cpu_w, *_) = trained
    np.testing.assert_allclose(pdk_losses, cpu_losses, rtol=1e-4)
    assert len(pdk_w) == len(cpu_w)
    for a, b in zip(pdk_w, cpu_w):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-4)


# ------------------------------------------------- masked sequences

def _masked_data():
    """Token rows padded with 0 at the end (2 to 9 tokens of LEN), labels by
    the majority of "low" tokens among the real ones."""
    r = np.random.default_rng(9)
    x = r.integers(1, VOCAB, size=(N, LEN)).astype(np.int32)
    lengths = r.integers(2, LEN, size=N)
    x[np.arange(LEN)[None, :] >= lengths[:, None]] = 0
    y = (((x > 0) & (x < VOCAB // 2)).sum(axis=1) * 2 > lengths).astype(np.int32)
    return x, y


def _train_masked(device):
    return _train(device, _masked_data, 13, True,
                  lambda: keras.layers.LSTM(16, return_sequences=True))


def test_masked_text_classifier_keeps_its_mask_lists_on_pdk_and_matches_cpu():
    """Embedding(mask_zero=True) gives the LSTM and GRU a mask, which Keras
    unstacks into a TensorList of bool read every time step, and the
    gradient loops pop the forward loops' masks from bool accumulator lists.
    TensorFlow has no DEVICE_DEFAULT TensorList kernel for bool, so these
    list ops went to the CPU and every iteration copied a list between the
    CPU and PDK (5x slower than the CPU for an LSTM(64) on 80 steps). PDK's
    graph optimizer holds such lists as float32 on PDK
    (src/graph/rewrites/bool_tensor_lists.cc): no compute op on the CPU, and
    the losses and weights match the CPU's."""
    pdk_losses, pdk_w, placed, _, rewrites = _train_masked("/PDK:0")
    cpu_losses, cpu_w, *_ = _train_masked("/CPU:0")
    assert placed.compute_ops_on_cpu() == {}, placed.report()
    # One rewrite per list component: the mask list both loops read, the
    # accumulators the gradient loops pop (Grappler merges the identical
    # FromTensor / EmptyTensorList nodes of the two layers).
    assert rewrites.get("bool TensorList held as float32 on the device", 0) >= 2, rewrites
    on_pdk = placed.compute_ops_on("PDK")
    for op in ("TensorListFromTensor", "TensorListGetItem", "TensorListPopBack"):
        assert on_pdk.get(op, 0) > 0, (op, placed.report())
    np.testing.assert_allclose(pdk_losses, cpu_losses, rtol=1e-4)
    for a, b in zip(pdk_w, cpu_w):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-4)


def test_bool_tensor_array_in_a_loop_on_pdk_matches_cpu(rng):
    """A tf.function filling a bool TensorArray in a tf.while_loop (SetItem per
    iteration, then Stack and Gather) and reading a bool sequence (FromTensor,
    GetItem): the lists are held as float32 on PDK, no list op runs on the
    CPU, and the results equal the CPU's."""
    x = rng.standard_normal((6, 4, 3)).astype(np.float32)

    @tf.function
    def f(x):
        seq = tf.TensorArray(tf.bool, size=6).unstack(x > 0.0)
        out = tf.TensorArray(tf.bool, size=6)

        def body(t, out, acc):
            m = seq.read(t)
            acc = tf.where(m, acc + 1.0, acc)
            return t + 1, out.write(t, tf.logical_not(m)), acc

        _, out, acc = tf.while_loop(lambda t, *_: t < 6, body,
                                    (tf.constant(0), out, tf.zeros((4, 3))))
        return out.stack(), out.gather([1, 4]), acc

    with tf.device("/CPU:0"):
        want = [np.asarray(t) for t in f(tf.constant(x))]
    tensorflow_pdk.reset_graph_rewrite_counts()
    with tf.device("/PDK:0"), placement.record() as placed:
        got = [np.asarray(t) for t in f(tf.identity(tf.constant(x)))]
    assert tensorflow_pdk.graph_rewrite_counts().get(
        "bool TensorList held as float32 on the device", 0) >= 2
    assert placed.compute_ops_on_cpu() == {}, placed.report()
    for a, b in zip(got, want):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


# ------------------------------------------- placement report: loop bodies

@pytest.fixture
def unlowered_control_flow():
    """While/If stay functional ops (their bodies instantiated separately), as
    under the single-threaded executor or when lowering is switched off."""
    from tensorflow.python.ops import control_flow_util_v2
    saved = control_flow_util_v2._DISABLE_LOWER_USING_SWITCH_MERGE
    control_flow_util_v2._DISABLE_LOWER_USING_SWITCH_MERGE = True
    yield
    control_flow_util_v2._DISABLE_LOWER_USING_SWITCH_MERGE = saved


def test_report_covers_unlowered_loop_bodies(unlowered_control_flow, rng):
    x = tf.constant(rng.standard_normal((BATCH, SEQ, FEAT)).astype(np.float32))
    with tf.device("/PDK:0"):
        layer = keras.layers.LSTM(6)
        layer(x)
        step = tf.function(lambda x: layer(x))
        with placement.record() as placed:
            step(x)
    on_pdk = placed.compute_ops_on("PDK")
    assert on_pdk.get("While", 0) + on_pdk.get("StatelessWhile", 0) >= 1, placed.report()
    assert any(d == "PDK" for _, d in placed.function_bodies), placed.function_bodies
    # The cell math of the body is in the report, on PDK.
    for op in ("MatMul", "Sigmoid", "Tanh", "TensorListGetItem", "TensorListSetItem"):
        assert on_pdk.get(op, 0) >= 1, (op, placed.report())
    assert placed.compute_ops_on_cpu() == {}, placed.report()


def test_report_finds_cpu_op_inside_unlowered_loop_body(unlowered_control_flow):
    @tf.function
    def f(v):
        def body(i, v):
            with tf.device("/CPU:0"):
                v = tf.math.cumprod(v)  # pinned to the CPU inside the body
            return i + 1, v * 0.5
        return tf.while_loop(lambda i, v: i < 3, body, (0, v))[1]

    with tf.device("/PDK:0"):
        with placement.record() as placed:
            f(tf.ones([4]))
    assert placed.compute_ops_on_cpu().get("Cumprod", 0) == 1, placed.report()
    assert placed.compute_ops_on("PDK").get("Mul", 0) >= 1, placed.report()
