"""PDK's MaxPoolGrad + ReluGrad rewrite (src/graph/rewrites/maxpool_grad_relu_grad.cc)
inside the real TensorFlow: the gradient of max_pool(relu(x)) runs as one
_PdkMaxPoolGradReluGrad node (src/kernels/nn/pooling.cc).

Each case takes a gradient in a tf.function on PDK, reads its PDK partition
graph (tensorflow_pdk.placement.record()) for the fused node and the absence
of the replaced ops, checks that the fused kernel launched, and compares the
result bit for bit with the same function run with the rewrite switched off
(PDK's MaxPoolGrad and ReluGrad, each checked against TensorFlow's CPU kernels
elsewhere) and with the CPU device.
"""
import numpy as np
import pytest
import tensorflow as tf
import keras

import tensorflow_pdk as tp
from tensorflow_pdk import placement
from tensorflow_pdk.testing import keras_compile_args

FUSED = "_PdkMaxPoolGradReluGrad"
DTYPES = {"float32": tf.float32, "float64": tf.float64, "float16": tf.float16,
          "bfloat16": tf.bfloat16}


def _grad_fn(device, ksize, strides, padding, return_pool_grad=False):
    @tf.function
    def f(x, w):
        with tf.device(device):
            with tf.GradientTape() as tape:
                tape.watch(x)
                r = tf.nn.relu(x)
                with tf.GradientTape() as inner:
                    inner.watch(r)
                    p = tf.nn.max_pool2d(r, ksize, strides, padding)
                    loss = tf.reduce_sum(p * w)
            dr = inner.gradient(loss, r)
            dx = tape.gradient(r, x, output_gradients=dr)
            return (dx, dr) if return_pool_grad else dx
    return f


def _inputs(rng, dtype, shape, pooled):
    # Many windows whose maximum is 0 (every relu'd value there was negative):
    # the arg max then takes the gradient and ReluGrad zeroes it (-0 for a
    # negative gradient, NaN for a NaN or infinite one).
    x = rng.uniform(-1, 1, shape)
    x[:, ::3] = -np.abs(x[:, ::3])
    w = rng.uniform(-2, 2, pooled)
    w.flat[::7] = np.nan
    w.flat[3::11] = np.inf
    w.flat[5::13] = -np.inf
    return tf.constant(x, DTYPES[dtype]), tf.constant(w, DTYPES[dtype])


def _bits(t):
    a = np.asarray(t.numpy() if hasattr(t, "numpy") else t)
    return a.view({8: np.uint64, 4: np.uint32, 2: np.uint16}[a.dtype.itemsize])


def _assert_same_bits(got, want):
    """Equal bits, NaN compared by position: the sign of a NaN made from 0 * inf
    is not the same in TensorFlow's own kernels (x86's default NaN has the
    sign bit set; Eigen's packet conversion float32 -> bfloat16/float16
    writes every NaN as +NaN, its scalar one keeps the sign)."""
    g, w = np.asarray(got.numpy()).astype(np.float64), np.asarray(want.numpy()).astype(np.float64)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
    keep = ~np.isnan(g)
    np.testing.assert_array_equal(_bits(got)[keep], _bits(want)[keep])


WINDOWS = [  # (ksize, strides, padding): windows that tile the input, overlap,
    (2, 2, "VALID"),  # leave rows uncovered, and pad
    (3, 2, "SAME"),
    (2, 3, "VALID"),
    (3, 1, "SAME"),
]


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("window", WINDOWS, ids=lambda w: f"k{w[0]}s{w[1]}{w[2]}")
def test_max_pool_relu_gradient_fuses_with_the_same_bits(rng, monkeypatch, dtype, window):
    ksize, strides, padding = window
    shape = (2, 9, 8, 67)  # 67 channels: full packets and a scalar tail
    pooled = tf.nn.max_pool2d(tf.zeros(shape), ksize, strides, padding).shape
    x, w = _inputs(rng, dtype, shape, pooled)

    tp.reset_launch_counts()
    with placement.record() as p:
        got = _grad_fn("/PDK:0", ksize, strides, padding)(x, w)
    ops = p.ops_on("PDK")
    assert ops.get(FUSED) == 1 and "MaxPoolGrad" not in ops and "ReluGrad" not in ops, ops
    assert tp.launch_counts().get(FUSED, 0) >= 1

    monkeypatch.setenv("PDK_GRAPH_DISABLE", "maxpool_grad_fusion")
    with placement.record() as p:
        unfused = _grad_fn("/PDK:0", ksize, strides, padding)(x, w)
    ops = p.ops_on("PDK")
    assert FUSED not in ops and ops.get("MaxPoolGrad") == 1, ops
    _assert_same_bits(got, unfused)

    _assert_same_bits(got, _grad_fn("/CPU:0", ksize, strides, padding)(x, w))


def test_pool_gradient_read_elsewhere_is_not_fused(rng):
    x, w = _inputs(rng, "float32", (1, 6, 6, 4), (1, 3, 3, 4))
    with placement.record() as p:
        dx, dr = _grad_fn("/PDK:0", 2, 2, "VALID", return_pool_grad=True)(x, w)
    ops = p.ops_on("PDK")
    assert FUSED not in ops and ops.get("MaxPoolGrad") == 1, ops
    want = _grad_fn("/CPU:0", 2, 2, "VALID", return_pool_grad=True)(x, w)
    np.testing.assert_array_equal(dx.numpy(), want[0].numpy())
    np.testing.assert_array_equal(dr.numpy(), want[1].numpy())


def _fused(orig_input, orig_output, grad, ksize=2, strides=2, padding="VALID"):
    from tensorflow.python.eager import context, execute
    attrs = ("T", tf.float32.as_datatype_enum, "ksize", [1, ksize, ksize, 1],
             "strides", [1, strides, strides, 1], "padding", padding)
    with tf.device("/PDK:0"):
        return execute.execute(FUSED.encode(), 1, inputs=[orig_input, orig_output, grad],
                               attrs=attrs, ctx=context.context())[0]


def test_fused_op_direct_call_and_bad_shapes():
    x = tf.constant([[[[1.0], [-2.0]], [[0.0], [-1.0]]]])  # [1,2,2,1], window max 1 at (0,0)
    y = tf.nn.max_pool2d(x, 2, 2, "VALID")
    got = _fused(x, y, tf.constant([[[[5.0]]]]))
    np.testing.assert_array_equal(got.numpy().ravel(), [5.0, 0.0, 0.0, 0.0])
    # The maximum is 0: MaxPoolGrad gives its position -3, ReluGrad -3 * 0 = -0.
    x0 = tf.constant([[[[0.0], [-2.0]], [[-1.0], [-1.0]]]])
    got = _fused(x0, tf.nn.max_pool2d(x0, 2, 2, "VALID"), tf.constant([[[[-3.0]]]]))
    assert np.signbit(got.numpy().ravel()[0]) and got.numpy().ravel()[0] == 0
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Expected grad shape to be \[1,1,1,1\], but got \[1,2,1,1\]"):
        _fused(x, y, tf.ones((1, 2, 1, 1)))
    with pytest.raises(tf.errors.InvalidArgumentError, match="orig_output shape"):
        _fused(x, tf.ones((1, 3, 1, 1)), tf.ones((1, 1, 1, 1)))


def test_keras_cnn_train_step_fuses(rng):
    """Conv2D(activation="relu") + MaxPooling2D in a Keras model trained with
    model.train_on_batch: the fused node runs in the step and the weights
    after two steps match the CPU's."""
    x = rng.uniform(-1, 1, (8, 12, 12, 3)).astype(np.float32)
    y = rng.integers(0, 4, 8)

    def make(device):
        with tf.device(device):
            keras.utils.set_random_seed(3)
            m = keras.Sequential([keras.Input((12, 12, 3)),
                                  keras.layers.Conv2D(6, 3, padding="same", activation="relu"),
                                  keras.layers.MaxPooling2D(),
                                  keras.layers.Flatten(), keras.layers.Dense(4)])
            m.compile(optimizer=keras.optimizers.SGD(0.1),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      **keras_compile_args(device))
            return m

    pdk, cpu = make("/PDK:0"), make("/CPU:0")
    tp.reset_graph_rewrite_counts()
    tp.reset_launch_counts()
    for _ in range(2):
        with tf.device("/PDK:0"):
            pdk.train_on_batch(x, y)
        with tf.device("/CPU:0"):
            cpu.train_on_batch(x, y)
    assert tp.graph_rewrite_counts().get("MaxPoolGrad+ReluGrad", 0) >= 1
    assert tp.launch_counts().get(FUSED, 0) == 2
    for a, b in zip(pdk.get_weights(), cpu.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
