"""PDK's convolution rewrites (src/graph/rewrites/conv_fusion.cc) inside the real
TensorFlow.

- Conv2D | DepthwiseConv2dNative + BiasAdd | FusedBatchNormV3(inference)
  [+ Add/AddV2] [+ activation] on PDK -> one _PdkFusedConv2D node;
- Pad (zero, H/W only) + convolution -> the convolution with padding EXPLICIT.

Each case runs a tf.function on PDK, reads its PDK partition graph
(tensorflow_pdk.placement.record()) for the fused node and the absence of the
replaced ops, and compares outputs (and gradients) with the same function on
/CPU:0. The negative cases check the rewrite leaves the graph alone.
"""
import numpy as np
import pytest
import tensorflow as tf
import keras

import tensorflow_pdk as tp
from tensorflow_pdk import placement

# These tests look at the elementwise nodes around the rewrites they test; the
# generic elementwise fusion would take those nodes over (conftest.py).
pytestmark = pytest.mark.usefixtures("without_elementwise_fusion")

FUSED = "_PdkFusedConv2D"
TOL = dict(rtol=1e-4, atol=1e-4)  # im2col + OpenBLAS vs TF's oneDNN/Eigen summation order


def _run(fn, *args, eager_reference=False):
    """Runs fn on PDK (recording placement) and on /CPU:0 (a tf.function too, or
    eagerly: no Grappler); returns both results and the op counts of the PDK
    partition graph."""
    def on(device):
        @tf.function
        def f(*a):
            with tf.device(device):
                return fn(*a)
        return f

    with placement.record() as p:
        got = on("/PDK:0")(*args)
    if eager_reference:
        with tf.device("/CPU:0"):
            want = fn(*args)
    else:
        want = on("/CPU:0")(*args)
    return got, want, p.ops_on("PDK")


def _close(got, want, **tol):
    for g, w in zip(tf.nest.flatten(got), tf.nest.flatten(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), **(tol or TOL))


def _conv(x, w, depthwise=False, padding="SAME", strides=1):
    if depthwise:
        return tf.nn.depthwise_conv2d(x, w, [1, strides, strides, 1], padding)
    return tf.nn.conv2d(x, w, strides, padding)


ACTS = {"Relu": tf.nn.relu, "Relu6": tf.nn.relu6, "Elu": tf.nn.elu,
        "LeakyRelu": lambda v: tf.nn.leaky_relu(v, 0.3), "Tanh": tf.tanh,
        "Sigmoid": tf.sigmoid, None: lambda v: v}


@pytest.mark.parametrize("depthwise", [False, True], ids=["conv", "depthwise"])
@pytest.mark.parametrize("act", list(ACTS), ids=lambda a: a or "none")
def test_conv_bias_activation_fuses(rng, depthwise, act):
    x = tf.constant(rng.uniform(-1, 1, (2, 9, 8, 4)), tf.float32)
    w = tf.constant(rng.uniform(-1, 1, (3, 3, 4, 2 if depthwise else 6)), tf.float32)
    b = tf.constant(rng.uniform(-1, 1, (8 if depthwise else 6,)), tf.float32)

    def f(x):
        return ACTS[act](tf.nn.bias_add(_conv(x, w, depthwise), b))

    tp.reset_graph_rewrite_counts()
    got, want, ops = _run(f, x)
    assert ops[FUSED] == 1, ops
    replaced = {"Conv2D", "DepthwiseConv2dNative", "BiasAdd"} | ({act} if act else set())
    assert not (replaced & set(ops)), ops
    pattern = ("DepthwiseConv2dNative" if depthwise else "Conv2D") + "+BiasAdd" + (
        "+" + act if act else "")
    assert tp.graph_rewrite_counts().get(pattern, 0) >= 1, tp.graph_rewrite_counts()
    _close(got, want)


@pytest.mark.parametrize("side_shape", ["same", "channel", "broadcast_up"])
def test_residual_add_fuses(rng, side_shape):
    """conv + bias + Add(shortcut) + Relu, as in a ResNet block; the side input
    may broadcast (AddV2's rule), even up to a larger output."""
    x = tf.constant(rng.uniform(-1, 1, (2, 6, 6, 4)), tf.float32)
    w = tf.constant(rng.uniform(-1, 1, (3, 3, 4, 4)), tf.float32)
    b = tf.constant(rng.uniform(-1, 1, (4,)), tf.float32)
    side = {"same": x, "channel": tf.constant(rng.uniform(-1, 1, (1, 1, 1, 4)), tf.float32),
            "broadcast_up": tf.constant(rng.uniform(-1, 1, (3, 2, 6, 6, 4)), tf.float32)}[side_shape]

    def f(x, s):
        return tf.nn.relu(s + tf.nn.bias_add(_conv(x, w), b))  # side input first: either order

    got, want, ops = _run(f, x, side)
    assert ops[FUSED] == 1, ops
    assert not ({"Conv2D", "BiasAdd", "AddV2", "Relu"} & set(ops)), ops
    assert got.shape == want.shape
    _close(got, want)


@pytest.mark.parametrize("act", ["Relu6", "Relu"])  # Relu: through TF's _FusedBatchNormEx
def test_conv_batchnorm_inference_folds(rng, act):
    x = tf.constant(rng.uniform(-1, 1, (2, 7, 7, 3)), tf.float32)
    w = tf.constant(rng.uniform(-1, 1, (3, 3, 3, 5)), tf.float32)
    scale, offset, mean = (tf.constant(rng.uniform(-1, 1, (5,)), tf.float32) for _ in range(3))
    var = tf.Variable(rng.uniform(0.1, 2, (5,)).astype(np.float32))  # a variable, as in TF2

    def f(x):
        y = tf.raw_ops.FusedBatchNormV3(x=_conv(x, w), scale=scale, offset=offset, mean=mean,
                                        variance=var.read_value(), epsilon=1e-3,
                                        is_training=False)[0]
        return ACTS[act](y)

    got, want, ops = _run(f, x)
    assert ops[FUSED] == 1, ops
    assert not ({"Conv2D", "FusedBatchNormV3", "_FusedBatchNormEx", act} & set(ops)), ops
    _close(got, want)
    var.assign(var * 2.0)  # folded at run time: a new variance takes effect
    got2, want2, _ = _run(f, x)
    _close(got2, want2)
    assert not np.allclose(got2.numpy(), got.numpy())


def test_pad_folds_into_conv(rng):
    x = tf.constant(rng.uniform(-1, 1, (2, 8, 7, 3)), tf.float32)
    w = tf.constant(rng.uniform(-1, 1, (3, 3, 3, 4)), tf.float32)
    b = tf.constant(rng.uniform(-1, 1, (4,)), tf.float32)

    def f(x):
        p = tf.pad(x, [[0, 0], [1, 2], [2, 0], [0, 0]])
        return tf.nn.relu(tf.nn.bias_add(_conv(p, w, padding="VALID", strides=2), b))

    tp.reset_graph_rewrite_counts()
    got, want, ops = _run(f, x)
    assert ops[FUSED] == 1 and "Pad" not in ops, ops
    assert tp.graph_rewrite_counts().get("Pad+Conv2D", 0) >= 1
    _close(got, want)


def test_pad_folds_into_plain_conv(rng):
    x = tf.constant(rng.uniform(-1, 1, (1, 5, 5, 2)), tf.float32)
    w = tf.constant(rng.uniform(-1, 1, (2, 2, 2, 3)), tf.float32)

    def f(x):
        return _conv(tf.pad(x, [[0, 0], [1, 1], [0, 3], [0, 0]]), w, padding="VALID")

    got, want, ops = _run(f, x)
    assert ops["Conv2D"] == 1 and "Pad" not in ops, ops
    _close(got, want)


def test_training_gradients_match_cpu(rng):
    """ReluGrad reads Relu's output, which the fused node keeps (same name);
    the residual Add and Pad stay correct in the gradient graph."""
    x = rng.uniform(-1, 1, (2, 8, 8, 3)).astype(np.float32)

    def make(device):
        with tf.device(device):
            keras.utils.set_random_seed(7)
            w1 = tf.Variable(tf.random.uniform((3, 3, 3, 3), -1, 1))
            b1 = tf.Variable(tf.random.uniform((3,), -1, 1))
            wd = tf.Variable(tf.random.uniform((3, 3, 3, 1), -1, 1))
            bd = tf.Variable(tf.random.uniform((3,), -1, 1))
        variables = [w1, b1, wd, bd]

        @tf.function
        def step(x):
            with tf.device(device):
                with tf.GradientTape() as tape:
                    h = tf.nn.relu(x + tf.nn.bias_add(tf.nn.conv2d(x, w1, 1, "SAME"), b1))
                    p = tf.pad(h, [[0, 0], [1, 1], [1, 1], [0, 0]])
                    y = tf.nn.relu6(tf.nn.bias_add(
                        tf.nn.depthwise_conv2d(p, wd, [1, 1, 1, 1], "VALID"), bd))
                    loss = tf.reduce_sum(y * y)
                return loss, tape.gradient(loss, variables)
        return step

    with placement.record() as p:
        loss, grads = make("/PDK:0")(x)
    closs, cgrads = make("/CPU:0")(x)
    ops = p.ops_on("PDK")
    assert ops[FUSED] == 2, ops
    assert "ReluGrad" in ops and "Relu6Grad" in ops, ops
    np.testing.assert_allclose(loss.numpy(), closs.numpy(), rtol=1e-4)
    for g, c in zip(grads, cgrads):
        np.testing.assert_allclose(g.numpy(), c.numpy(), rtol=1e-3, atol=1e-3)


# ------------------------------------------------------------ must not fire


def test_intermediate_used_twice_is_not_fused(rng):
    x = tf.constant(rng.uniform(-1, 1, (1, 6, 6, 2)), tf.float32)
    w = tf.constant(rng.uniform(-1, 1, (3, 3, 2, 3)), tf.float32)
    b = tf.constant(rng.uniform(-1, 1, (3,)), tf.float32)

    def conv_twice(x):
        c = _conv(x, w)
        return tf.nn.relu(tf.nn.bias_add(c, b)), c  # Conv2D's output is fetched too

    got, want, ops = _run(conv_twice, x)
    assert FUSED not in ops and ops["Conv2D"] == 1 and ops["BiasAdd"] == 1, ops
    _close(got, want)

    def bias_twice(x):
        z = tf.nn.bias_add(_conv(x, w), b)
        return tf.nn.relu(z) * tf.reduce_sum(z)  # BiasAdd read twice: activation stays

    got, want, ops = _run(bias_twice, x)
    assert ops[FUSED] == 1 and ops["Relu"] == 1 and "Conv2D" not in ops, ops
    _close(got, want)


def test_nonzero_pad_and_channel_pad_are_not_folded(rng):
    x = tf.constant(rng.uniform(-1, 1, (1, 5, 5, 2)), tf.float32)
    w = tf.constant(rng.uniform(-1, 1, (3, 3, 2, 3)), tf.float32)
    w3 = tf.constant(rng.uniform(-1, 1, (3, 3, 3, 3)), tf.float32)

    def nonzero(x):
        return _conv(tf.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]], constant_values=1.5), w,
                     padding="VALID")

    got, want, ops = _run(nonzero, x)
    assert "PadV2" in ops and ops["Conv2D"] == 1, ops
    _close(got, want)

    def channel(x):
        return _conv(tf.pad(x, [[0, 0], [1, 1], [1, 1], [0, 1]]), w3, padding="VALID")

    # The reference runs eagerly: stock TF 2.21's own CPU graph rewrite of this
    # Pad + Conv2D (oneDNN) drops the channel padding and fails ("input depth
    # must be evenly divisible by filter depth: 2 vs 3").
    got, want, ops = _run(channel, x, eager_reference=True)
    assert "Pad" in ops and ops["Conv2D"] == 1, ops
    _close(got, want)


def test_training_batchnorm_is_not_folded(rng):
    x = tf.constant(rng.uniform(-1, 1, (2, 5, 5, 3)), tf.float32)
    w = tf.constant(rng.uniform(-1, 1, (3, 3, 3, 4)), tf.float32)
    scale, offset = tf.ones((4,)), tf.zeros((4,))

    # TensorFlow's own remapper turns FusedBatchNormV3 + Relu into
    # _FusedBatchNormEx even on PDK, which has no kernel for it; PDK's optimizer
    # splits it again (src/graph/rewrites/fused_batch_norm_ex.cc).
    def f(x):
        return tf.nn.relu(tf.raw_ops.FusedBatchNormV3(
            x=_conv(x, w), scale=scale, offset=offset, mean=tf.zeros((0,)),
            variance=tf.zeros((0,)), epsilon=1e-3, is_training=True)[0])

    got, want, ops = _run(f, x)
    assert FUSED not in ops and ops["Conv2D"] == 1 and ops["FusedBatchNormV3"] == 1, ops
    assert "_FusedBatchNormEx" not in ops, ops
    _close(got, want, rtol=1e-3, atol=1e-3)


def test_rewrites_can_be_switched_off(rng, monkeypatch):
    x = tf.constant(rng.uniform(-1, 1, (1, 6, 6, 2)), tf.float32)
    w = tf.constant(rng.uniform(-1, 1, (3, 3, 2, 3)), tf.float32)
    b = tf.constant(rng.uniform(-1, 1, (3,)), tf.float32)

    def f(x):
        return tf.nn.relu(tf.nn.bias_add(_conv(tf.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]]), w,
                                               padding="VALID"), b))

    monkeypatch.setenv("PDK_GRAPH_DISABLE", "conv_fusion")
    _, _, ops = _run(f, x)
    assert FUSED not in ops and "Pad" not in ops and ops["Conv2D"] == 1, ops
    monkeypatch.setenv("PDK_GRAPH_REWRITES", "0")
    got, want, ops = _run(f, x)
    assert FUSED not in ops and ops["Pad"] == 1 and ops["BiasAdd"] == 1, ops
    _close(got, want)


# ------------------------------------------------------------------- Keras


def _cnn(device):
    with tf.device(device):
        keras.utils.set_random_seed(11)
        inp = keras.Input((12, 12, 3))
        h = keras.layers.Conv2D(8, 3, padding="same", activation="relu")(inp)
        r = keras.layers.Conv2D(8, 3, padding="same")(h)
        h = keras.layers.ReLU()(keras.layers.Add()([h, r]))                  # residual block
        h = keras.layers.DepthwiseConv2D(3, padding="valid", activation="relu6")(h)
        h = keras.layers.ZeroPadding2D(1)(h)
        h = keras.layers.Conv2D(4, 3, strides=2, activation="elu")(h)
        out = keras.layers.Dense(5)(keras.layers.Flatten()(h))
        return keras.Model(inp, out)


def test_keras_cnn_inference_fuses(rng):
    x = rng.uniform(-1, 1, (4, 12, 12, 3)).astype(np.float32)
    pdk_model, cpu_model = _cnn("/PDK:0"), _cnn("/CPU:0")

    @tf.function
    def on_pdk(x):
        with tf.device("/PDK:0"):
            return pdk_model(x, training=False)

    @tf.function
    def on_cpu(x):
        with tf.device("/CPU:0"):
            return cpu_model(x, training=False)

    tp.reset_graph_rewrite_counts()
    with placement.record() as p:
        y = on_pdk(x)
    ops = p.ops_on("PDK")
    assert ops[FUSED] == 4, ops
    assert not ({"Conv2D", "DepthwiseConv2dNative", "BiasAdd", "Relu", "Relu6", "Elu", "Pad",
                 "AddV2"} & set(ops)), ops
    counts = tp.graph_rewrite_counts()
    assert counts.get("Conv2D+BiasAdd+AddV2+Relu", 0) >= 1, counts
    assert counts.get("Pad+Conv2D", 0) >= 1, counts
    np.testing.assert_allclose(y.numpy(), on_cpu(x).numpy(), **TOL)


# ---------------------------------------------------------- bad input


def _fused(input, filter, args, **attrs):
    from tensorflow.python.eager import context, execute
    flat = ["T", tf.float32.as_datatype_enum, "num_args", len(args), "strides", [1, 1, 1, 1],
            "padding", "VALID"]
    for k, v in attrs.items():
        flat += [k, v]
    with tf.device("/PDK:0"):
        return execute.execute(b"_PdkFusedConv2D", 1, inputs=[input, filter] + list(args),
                               attrs=tuple(flat), ctx=context.context())[0]


def test_fused_op_rejects_bad_operands():
    x, w = tf.ones((1, 4, 4, 2)), tf.ones((3, 3, 2, 5))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"bias\.shape \[4\] must be \[5\]"):
        _fused(x, w, [tf.ones((4,))])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"variance\.shape \[1\]"):
        _fused(x, w, [tf.ones((5,))] * 3 + [tf.ones((1,))], normalization="FusedBatchNorm")
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_args = 2"):
        _fused(x, w, [tf.ones((5,))] * 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="side_input"):
        _fused(x, w, [tf.ones((5,)), tf.ones((1, 2, 2, 4))], has_side_input=True)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"filter\.shape \[3,3,3,5\]"):
        _fused(x, tf.ones((3, 3, 3, 5)), [tf.ones((5,))])
    y = _fused(x, w, [tf.ones((5,)), tf.ones((3, 1, 1, 1, 1))], has_side_input=True)
    assert y.shape == (3, 1, 2, 2, 5)  # the side input broadcasts the output up, as AddV2
    np.testing.assert_allclose(y.numpy(), np.full((3, 1, 2, 2, 5), 20.0))
