"""PDK's neural-network kernels against TensorFlow's own CPU kernels.

Covers src/kernels/nn/{relu,bias_add,softmax,xent}.cc: every test runs the
same function on /CPU:0 and /PDK:0, compares the results and checks that the
named ops launched PDK kernels (so a silent CPU fallback fails).
"""
import numpy as np
import pytest
import tensorflow as tf

from tensorflow_pdk.testing import assert_matches_cpu, launches, random_array

DTYPES = [np.float32, np.float64]
SHAPES_2D = [(1, 1), (4, 10), (64, 10), (0, 10)]
SHAPES = SHAPES_2D + [(3, 5, 7)]
# Big enough that the device pool splits rows / shards (with PDK_NUM_THREADS > 1).
LARGE = [(512, 257)]



def sum_atol(dtype, n):
    """Absolute tolerance for a sum of n values of magnitude <= 2: PDK adds in a
    different order from TF's kernel, and either's rounding error grows with n."""
    eps = np.finfo(dtype).eps
    return max(n * eps, 100 * eps) * 4.0


def ids(shape):
    return "x".join(map(str, shape))


# ----------------------------------------------------------------- activations

def _activation_input(shape, dtype, rng):
    """Random values over [-8, 8] (both Relu6 clamps), with the kinks 0 and 6."""
    x = random_array(shape, dtype, rng, low=-8.0, high=8.0)
    flat = x.reshape(-1)
    if flat.size >= 4:
        flat[:4] = [0.0, 6.0, -0.0, 1e-4]
    return x


ACTIVATIONS = {
    "Relu": lambda x: tf.raw_ops.Relu(features=x),
    "Relu6": lambda x: tf.raw_ops.Relu6(features=x),
    "Elu": lambda x: tf.raw_ops.Elu(features=x),
    "LeakyRelu": lambda x: tf.raw_ops.LeakyRelu(features=x),  # default alpha 0.2
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES + LARGE, ids=ids)
@pytest.mark.parametrize("op", sorted(ACTIVATIONS))
def test_activation(op, shape, dtype, rng):
    x = _activation_input(shape, dtype, rng)
    out = assert_matches_cpu(ACTIVATIONS[op], x, ops=[op])[0]
    assert out.shape == shape


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("alpha", [0.01, 1.5, -0.5])
def test_leaky_relu_alpha(alpha, dtype, rng):
    x = _activation_input((4, 10), dtype, rng)
    assert_matches_cpu(lambda t: tf.raw_ops.LeakyRelu(features=t, alpha=alpha), x,
                       ops=["LeakyRelu"])


@pytest.mark.parametrize("op", ["Relu", "Relu6"])
def test_relu_propagates_nan(op):
    x = np.array([np.nan, -1.0, 3.0, 7.0], np.float32)
    out = assert_matches_cpu(ACTIVATIONS[op], x, ops=[op])[0]
    assert np.isnan(out[0])


GRADS = {
    "ReluGrad": lambda g, x: tf.raw_ops.ReluGrad(gradients=g, features=x),
    "Relu6Grad": lambda g, x: tf.raw_ops.Relu6Grad(gradients=g, features=x),
    "EluGrad": lambda g, y: tf.raw_ops.EluGrad(gradients=g, outputs=y),
    "LeakyReluGrad": lambda g, x: tf.raw_ops.LeakyReluGrad(gradients=g, features=x, alpha=0.3),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES + LARGE, ids=ids)
@pytest.mark.parametrize("op", sorted(GRADS))
def test_activation_grad_op(op, shape, dtype, rng):
    g = random_array(shape, dtype, rng)
    x = _activation_input(shape, dtype, rng)
    if op == "EluGrad":  # its second input is Elu's output, > -1
        x = np.where(x < 0, np.exp(x) - 1, x).astype(dtype)
    assert_matches_cpu(GRADS[op], g, x, ops=[op])


@pytest.mark.parametrize("dtype", [tf.float16, tf.bfloat16], ids=lambda d: d.name)
def test_relu_grad_16bit_bits_equal_cpu(dtype):
    """ReluGrad for half and bfloat16 multiplies in float32 (relu_functors.h):
    the bits must equal TensorFlow's (its 16-bit operator*), including -0.0
    from a negative gradient, NaN from inf * 0 and NaN gradients, on a shape
    the pool splits. NaNs are compared by position: the x86-64-v2 core
    (PDK_MAX_CPU_ISA=x86-64-v2) gives a NaN gradient's NaN with the sign bit
    set, as it did before the float32 path."""
    specials = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30,
                         65504.0, -3.5], np.float32)
    rng = np.random.default_rng(7)
    g = rng.standard_normal((512, 257)).astype(np.float32)
    x = rng.standard_normal((512, 257)).astype(np.float32)
    g.flat[:100] = np.repeat(specials, 10)
    x.flat[:100] = np.tile(specials, 10)
    x.flat[100:200] = np.repeat(specials, 10)
    g.flat[100:200] = np.tile(specials, 10)
    out = {}
    for d in ("/CPU:0", "/PDK:0"):
        with tf.device(d):
            gt, xt = tf.cast(g, dtype), tf.cast(x, dtype)
            with launches() as n:
                out[d] = tf.raw_ops.ReluGrad(gradients=gt, features=xt).numpy()
        if d == "/PDK:0":
            assert n.get("ReluGrad", 0) == 1, n
    a, b = out["/PDK:0"], out["/CPU:0"]
    nan = np.isnan(b.astype(np.float32))
    np.testing.assert_array_equal(np.isnan(a.astype(np.float32)), nan)
    np.testing.assert_array_equal(a.view(np.uint16)[~nan], b.view(np.uint16)[~nan])


def test_activation_grad_shape_mismatch():
    with tf.device("/PDK:0"):
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[2,3\].*\[3,2\]"):
            tf.raw_ops.ReluGrad(gradients=tf.ones([2, 3]), features=tf.ones([3, 2]))


# -------------------------------------------------------------------- BiasAdd

BIAS_CASES = [  # (value shape, data_format)
    ((1, 1), "NHWC"), ((4, 10), "NHWC"), ((64, 10), "NHWC"), ((0, 10), "NHWC"),
    ((3, 5, 7), "NHWC"), ((3, 5, 7), "NCHW"), ((4, 10), "NCHW"),
    ((2, 4, 4, 3), "NHWC"), ((2, 4, 4, 3), "NCHW"), ((2, 3, 0, 4), "NCHW"),
    ((2, 3, 2, 2, 2), "NCHW"),
    ((256, 256), "NHWC"), ((8, 16, 32, 32), "NCHW"), ((8, 32, 32, 16), "NHWC"),
    ((333, 10), "NHWC"),  # narrow: summed as wide rows, plus 27 leftover rows
]


def _channels(shape, fmt):
    return shape[1] if fmt == "NCHW" else shape[-1]


def _case_id(case):
    return f"{ids(case[0])}-{case[1]}"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", BIAS_CASES, ids=_case_id)
def test_bias_add(case, dtype, rng):
    shape, fmt = case
    x = random_array(shape, dtype, rng)
    b = random_array((_channels(shape, fmt),), dtype, rng)
    assert_matches_cpu(lambda v, c: tf.raw_ops.BiasAdd(value=v, bias=c, data_format=fmt), x, b,
                       ops=["BiasAdd"])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 10), (3, 5, 7), (2, 4, 4, 3)], ids=ids)
def test_bias_add_v1(shape, dtype, rng):
    x = random_array(shape, dtype, rng)
    b = random_array((shape[-1],), dtype, rng)
    assert_matches_cpu(lambda v, c: tf.raw_ops.BiasAddV1(value=v, bias=c), x, b,
                       ops=["BiasAddV1"])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", BIAS_CASES, ids=_case_id)
def test_bias_add_grad(case, dtype, rng):
    shape, fmt = case
    dy = random_array(shape, dtype, rng)
    channels = _channels(shape, fmt)
    n = int(np.prod(shape)) // channels if channels else 0
    out = assert_matches_cpu(
        lambda t: tf.raw_ops.BiasAddGrad(out_backprop=t, data_format=fmt), dy,
        ops=["BiasAddGrad"], atol=sum_atol(dtype, n))[0]
    # Independent of TF: the exact sum over every axis but the channel axis.
    axis = 1 if fmt == "NCHW" else len(shape) - 1
    expected = dy.astype(np.float64).sum(axis=tuple(i for i in range(len(shape)) if i != axis))
    np.testing.assert_allclose(out, expected, rtol=0, atol=sum_atol(dtype, n))


@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
def test_bias_add_wrong_bias_length(fmt):
    with tf.device("/PDK:0"):
        x = tf.ones([4, 10])
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[4\].*\[4,10\]"):
            tf.raw_ops.BiasAdd(value=x, bias=tf.ones([4]), data_format=fmt)


def test_bias_add_bad_ranks():
    with tf.device("/PDK:0"):
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"value.*rank 2.*\[4\]"):
            tf.raw_ops.BiasAdd(value=tf.ones([4]), bias=tf.ones([4]))
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"bias.*rank 1.*\[1,10\]"):
            tf.raw_ops.BiasAdd(value=tf.ones([4, 10]), bias=tf.ones([1, 10]))
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"rank 2.*\[4\]"):
            tf.raw_ops.BiasAddGrad(out_backprop=tf.ones([4]))


# -------------------------------------------------------------------- Softmax

SOFTMAX = {
    "Softmax": lambda x: tf.raw_ops.Softmax(logits=x),
    "LogSoftmax": lambda x: tf.raw_ops.LogSoftmax(logits=x),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES + LARGE + [(7,), (3, 0)], ids=ids)
@pytest.mark.parametrize("op", sorted(SOFTMAX))
def test_softmax(op, shape, dtype, rng):
    x = random_array(shape, dtype, rng, low=-5.0, high=5.0)
    out = assert_matches_cpu(SOFTMAX[op], x, ops=[op])[0]
    if op == "Softmax" and out.size:
        np.testing.assert_allclose(out.sum(axis=-1), 1.0, rtol=1e-5)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", sorted(SOFTMAX))
def test_softmax_large_logits_stay_finite(op, dtype, rng):
    x = random_array((4, 10), dtype, rng, low=-1000.0, high=1000.0)
    x[0, :] = 1000.0
    x[1, :] = -1000.0
    x[2, :3] = [1000.0, -1000.0, 999.0]
    out = assert_matches_cpu(SOFTMAX[op], x, ops=[op])[0]
    assert np.all(np.isfinite(out))
    if op == "Softmax":
        np.testing.assert_allclose(out[0], 0.1, rtol=1e-6)


@pytest.mark.parametrize("op", sorted(SOFTMAX))
def test_softmax_attention_scores_and_special_values(op, rng):
    # MultiHeadAttention's scores (batch 32, 4 heads, 64 positions): float32
    # rows split over the pool, each piece on oneDNN (compute/dnnl_softmax.h).
    x = random_array((32, 4, 64, 64), np.float32, rng, low=-8.0, high=8.0)
    x[0, 0, 0, 5] = -np.inf  # a masked position
    x[0, 0, 1, :] = -1e9     # a fully masked row, as Keras's masks write it
    x[1, 2, 3, 7] = np.inf
    x[2, 1, 0, 9] = np.nan
    out = assert_matches_cpu(SOFTMAX[op], x, ops=[op])[0]
    finite_rows = np.isfinite(x).all(axis=-1)
    assert np.all(np.isfinite(out[finite_rows]))


def test_softmax_scalar_is_invalid():
    with tf.device("/PDK:0"):
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"logits.*rank 1"):
            tf.raw_ops.Softmax(logits=tf.constant(1.0))


# ------------------------------------------------------- cross-entropy losses

def _xent_sparse(x, k):
    return tf.raw_ops.SparseSoftmaxCrossEntropyWithLogits(features=x, labels=k)


@pytest.mark.parametrize("label_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES_2D + LARGE + [(3, 1000)], ids=ids)
def test_sparse_xent(shape, dtype, label_dtype, rng):
    x = random_array(shape, dtype, rng, low=-5.0, high=5.0)
    k = rng.integers(0, shape[1], size=shape[0]).astype(label_dtype)
    loss, backprop = assert_matches_cpu(_xent_sparse, x, k,
                                        ops=["SparseSoftmaxCrossEntropyWithLogits"])
    assert loss.shape == shape[:1] and backprop.shape == shape


@pytest.mark.parametrize("label_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("bad", [10, -1, 1 << 20])
def test_sparse_xent_label_out_of_range(bad, label_dtype):
    x = np.zeros((3, 10), np.float32)
    k = np.array([0, bad, 9], label_dtype)
    with tf.device("/PDK:0"):
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=rf"label value of {bad}\b.*\[0, 10\)"):
            _xent_sparse(tf.constant(x), tf.constant(k))


def test_sparse_xent_bad_shapes():
    with tf.device("/PDK:0"):
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"features\.shape\[0\] \(3\) != labels\.shape\[0\] \(2\)"):
            _xent_sparse(tf.ones([3, 4]), tf.constant([0, 0]))
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"at least one class"):
            _xent_sparse(tf.ones([3, 0]), tf.constant([0, 0, 0]))


def _xent(x, l):
    return tf.raw_ops.SoftmaxCrossEntropyWithLogits(features=x, labels=l)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", [
    ((1, 1), (1, 1)), ((4, 10), (4, 10)), ((64, 10), (64, 10)), ((0, 10), (0, 10)),
    ((512, 257), (512, 257)), ((3, 0), (3, 0)),
    # broadcasting, as TF's BCast
    ((4, 10), (10,)), ((4, 10), (1, 10)), ((1, 10), (4, 10)), ((10,), (4, 10)),
    ((4, 10), (4, 1)), ((4, 1), (1, 10)), ((4, 10), ()),
], ids=lambda s: f"{ids(s[0])}_{ids(s[1])}")
def test_softmax_xent(shapes, dtype, rng):
    xs, ls = shapes
    x = random_array(xs, dtype, rng, low=-5.0, high=5.0)
    labels = rng.random(ls).astype(dtype)  # non-negative weights, not normalized
    loss, backprop = assert_matches_cpu(_xent, x, labels, ops=["SoftmaxCrossEntropyWithLogits"])
    out_shape = np.broadcast_shapes(xs, ls)
    assert loss.shape == out_shape[:1] and backprop.shape == out_shape


def test_softmax_xent_bad_shapes():
    with tf.device("/PDK:0"):
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[3,4\].*\[3,5\]"):
            _xent(tf.ones([3, 4]), tf.ones([3, 5]))
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"rank 2"):
            _xent(tf.ones([2, 3, 4]), tf.ones([2, 3, 4]))


# ------------------------------------------------------ gradients (GradientTape)

def _grad_of(f, n_inputs=1):
    """fn(*inputs, w) -> (f(inputs), d sum(w * f(inputs)) / d inputs). Random
    upstream weights w make the gradients non-trivial (sum(softmax) == 1)."""
    def fn(*args):
        inputs, w = list(args[:n_inputs]), args[n_inputs]
        with tf.GradientTape() as tape:
            for t in inputs:
                tape.watch(t)
            y = f(*inputs)
            loss = tf.reduce_sum(y * w)
        return [y] + tape.gradient(loss, inputs)
    return fn


GRADIENT_CASES = {
    # name: (function, ops that must launch on PDK, input shape)
    "relu": (tf.nn.relu, ["Relu", "ReluGrad"], (64, 10)),
    "relu6": (tf.nn.relu6, ["Relu6", "Relu6Grad"], (64, 10)),
    "elu": (tf.nn.elu, ["Elu", "EluGrad"], (64, 10)),
    "leaky_relu": (lambda x: tf.nn.leaky_relu(x, alpha=0.1), ["LeakyRelu", "LeakyReluGrad"],
                   (64, 10)),
    "softmax": (tf.nn.softmax, ["Softmax"], (64, 10)),
    "log_softmax": (tf.nn.log_softmax, ["LogSoftmax"], (64, 10)),
    "softmax_rank3": (tf.nn.softmax, ["Softmax"], (3, 5, 7)),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_gradient(name, dtype, rng):
    f, ops, shape = GRADIENT_CASES[name]
    x = _activation_input(shape, dtype, rng)
    w = random_array(shape, dtype, rng)
    assert_matches_cpu(_grad_of(f), x, w, ops=ops)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", [((64, 10), "NHWC"), ((2, 4, 4, 3), "NHWC"),
                                  ((2, 4, 4, 3), "NCHW")], ids=_case_id)
def test_bias_add_gradient(case, dtype, rng):
    shape, fmt = case
    x = random_array(shape, dtype, rng)
    b = random_array((_channels(shape, fmt),), dtype, rng)
    w = random_array(shape, dtype, rng)
    f = _grad_of(lambda v, c: tf.nn.bias_add(v, c, data_format=fmt), n_inputs=2)
    assert_matches_cpu(f, x, b, w, ops=["BiasAdd", "BiasAddGrad"],
                       atol=sum_atol(dtype, int(np.prod(shape)) // b.size))


@pytest.mark.parametrize("dtype", DTYPES)
def test_sparse_xent_gradient(dtype, rng):
    x = random_array((64, 10), dtype, rng, low=-5.0, high=5.0)
    k = rng.integers(0, 10, size=64).astype(np.int64)
    w = random_array((64,), dtype, rng)

    def fn(logits, labels, weights):
        with tf.GradientTape() as tape:
            tape.watch(logits)
            loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
            total = tf.reduce_sum(loss * weights)
        return loss, tape.gradient(total, logits)

    loss, grad = assert_matches_cpu(fn, x, k, w, ops=["SparseSoftmaxCrossEntropyWithLogits"])
    # Independent of TF: d/dx = w * (softmax(x) - onehot(k)).
    x64 = x.astype(np.float64)
    p = np.exp(x64 - x64.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    expected = (p - np.eye(10)[k]) * w[:, None].astype(np.float64)
    np.testing.assert_allclose(grad, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", DTYPES)
def test_softmax_xent_gradient(dtype, rng):
    x = random_array((64, 10), dtype, rng, low=-5.0, high=5.0)
    labels = rng.random((64, 10)).astype(dtype)
    labels /= labels.sum(axis=1, keepdims=True)
    w = random_array((64,), dtype, rng)

    def fn(logits, lab, weights):
        with tf.GradientTape() as tape:
            tape.watch(logits)
            loss = tf.nn.softmax_cross_entropy_with_logits(labels=lab, logits=logits)
            total = tf.reduce_sum(loss * weights)
        return loss, tape.gradient(total, logits)

    assert_matches_cpu(fn, x, labels, w, ops=["SoftmaxCrossEntropyWithLogits"])


def test_registered_dtypes():
    import tensorflow_pdk

    regs = {(k.op, k.type_constraints) for k in tensorflow_pdk.registered_kernels()}
    for dt in ("float32", "float64"):
        for op in ["Relu", "ReluGrad", "Relu6", "Relu6Grad", "Elu", "EluGrad", "LeakyRelu",
                   "LeakyReluGrad", "Softmax", "LogSoftmax", "BiasAdd", "BiasAddV1",
                   "BiasAddGrad", "SoftmaxCrossEntropyWithLogits"]:
            assert (op, (("T", dt),)) in regs, (op, dt)
        for lt in ("int32", "int64"):
            assert ("SparseSoftmaxCrossEntropyWithLogits",
                    (("T", dt), ("Tlabels", lt))) in regs, (dt, lt)
