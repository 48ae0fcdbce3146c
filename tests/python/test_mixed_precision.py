"""Keras mixed precision on PDK: float16 / bfloat16 kernels and training.

Part 1 checks every (op, dtype) pair PDK registers for float16 and bfloat16
against TensorFlow's own CPU kernels (tensorflow_pdk.testing.TOLERANCES:
float16 rtol 1e-2 / atol 1e-3, bfloat16 2e-2 / 2e-2), and that the op launched
on PDK. PDK computes the 16-bit floats in float32 and rounds once; TF's CPU
kernels mostly do the same per operation, so results agree within a few units
in the last place.

Part 2 trains small Keras models under the "mixed_float16" and
"mixed_bfloat16" policies (Dense(relu) MLP, Conv2D + MaxPooling2D CNN,
LayerNormalization; softmax outputs; Adam, and for float16 Keras's loss-scale
optimizer) for 3 steps with model.fit on /PDK:0, and checks that no compute op
of the training step fell back to the CPU and that losses and weights match the
same training on /CPU:0 (MODEL_RTOL / MODEL_ATOL below: float16 losses 1e-4
relative, weights 3e-4 absolute; bfloat16 1e-3 and 2e-3).
"""
import numpy as np
import pytest
import tensorflow as tf

from tensorflow_pdk import placement
from tensorflow_pdk.testing import (TOLERANCES, assert_matches_cpu, keras_compile_args, launches,
                                    random_array, run_on)

HALF_TYPES = ["float16", "bfloat16"]


def np_dtype(name):
    return np.dtype(tf.dtypes.as_dtype(name).as_numpy_dtype)


def rand(shape, name, rng, low=-2.0, high=2.0):
    return random_array(shape, np_dtype(name), rng, low=low, high=high)


def assert_matches_exact(fn, *arrays, ops, dt, cpu_atol):
    """For ops whose TF CPU kernel accumulates in the 16-bit type (its error
    grows with the number of terms, PDK's does not): PDK must match the float64
    result of the same inputs within the plain 16-bit tolerance, and TF's own
    16-bit CPU result within `cpu_atol`."""
    out = assert_matches_cpu(fn, *arrays, ops=ops, atol=cpu_atol)
    wide = [a.astype(np.float64) if a.dtype == np_dtype(dt) else a for a in arrays]
    exact = run_on("/CPU:0", fn, *wide)
    rtol, atol = TOLERANCES[dt]
    for i, (o, e) in enumerate(zip(out, exact)):
        np.testing.assert_allclose(o.astype(np.float64), e, rtol=rtol, atol=atol,
                                   err_msg=f"output {i} vs float64")
    return out


@pytest.fixture(params=HALF_TYPES)
def dt(request):
    return request.param


# ------------------------------------------------------------------------ Cast

CAST_PARTNERS = ["float32", "float64", "int32", "int64", "bool"]


@pytest.mark.parametrize("other", CAST_PARTNERS)
def test_cast_to_and_from(dt, other, rng):
    x16 = rand((7, 33), dt, rng, low=-100, high=100)
    assert_matches_cpu(lambda x: tf.cast(x, other), x16, ops=["Cast"])
    if other == "bool":
        xo = rng.random((7, 33)) < 0.5
    else:
        xo = random_array((7, 33), np_dtype(other), rng, low=-100, high=100)
    assert_matches_cpu(lambda x: tf.cast(x, dt), xo, ops=["Cast"])


def test_cast_rounds_to_nearest_even(dt, rng):
    # float32 values between representable 16-bit floats, incl. overflow and NaN.
    x = np.concatenate([rng.uniform(-4, 4, 1000), [1e6, -1e6, np.inf, np.nan, 1e-9]])
    assert_matches_cpu(lambda t: tf.cast(t, dt), x.astype(np.float32), ops=["Cast"],
                       rtol=0, atol=0)


def test_cast_between_16_bit_floats(rng):
    x = rand((5, 40), "float16", rng)
    assert_matches_cpu(lambda t: tf.cast(t, tf.bfloat16), x, ops=["Cast"])
    y = rand((5, 40), "bfloat16", rng)
    assert_matches_cpu(lambda t: tf.cast(t, tf.float16), y, ops=["Cast"])


# -------------------------------------------------------------- elementwise

BINARY = {
    "AddV2": tf.raw_ops.AddV2, "Sub": tf.raw_ops.Sub, "Mul": tf.raw_ops.Mul,
    "RealDiv": tf.raw_ops.RealDiv, "DivNoNan": tf.raw_ops.DivNoNan,
    "Maximum": tf.raw_ops.Maximum, "Minimum": tf.raw_ops.Minimum,
    "SquaredDifference": tf.raw_ops.SquaredDifference, "Pow": tf.raw_ops.Pow,
    "Less": tf.raw_ops.Less, "LessEqual": tf.raw_ops.LessEqual,
    "Greater": tf.raw_ops.Greater, "GreaterEqual": tf.raw_ops.GreaterEqual,
}
# same shape, one-element operand (both sides), general broadcast (scratch path).
BINARY_SHAPES = [((4, 9), (4, 9)), ((), (4, 9)), ((4, 9), (1,)), ((3, 1, 5), (4, 1)),
                 ((2, 1, 3, 1), (1, 4, 1, 6))]


@pytest.mark.parametrize("shapes", BINARY_SHAPES, ids=lambda s: f"{s[0]}-{s[1]}")
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary(op, shapes, dt, rng):
    low = 0.5 if op == "Pow" else -2.0
    x = rand(shapes[0], dt, rng, low=low)
    y = rand(shapes[1], dt, rng)
    if op == "DivNoNan" and y.size:
        y.reshape(-1)[0] = 0
    if op.startswith(("Less", "Greater")) and x.size and y.size:
        x.reshape(-1)[0] = y.reshape(-1)[0]  # a tie
    assert_matches_cpu(lambda a, b: BINARY[op](x=a, y=b), x, y, ops=[op])


GRADS = ["SigmoidGrad", "TanhGrad", "SqrtGrad", "RsqrtGrad", "ReciprocalGrad"]


@pytest.mark.parametrize("op", GRADS)
def test_cwise_grad(op, dt, rng):
    y = rand((6, 21), dt, rng, low=0.25, high=1.0)
    dy = rand((6, 21), dt, rng)
    dy.reshape(-1)[0] = 0
    assert_matches_cpu(lambda a, b: getattr(tf.raw_ops, op)(y=a, dy=b), y, dy, ops=[op])


UNARY = {  # op: (low, high) of the inputs
    "Neg": (-4, 4), "Square": (-4, 4), "Abs": (-4, 4), "Sign": (-4, 4), "Round": (-4, 4),
    "Sqrt": (0, 9), "Rsqrt": (0.1, 9), "Exp": (-4, 4), "Log": (0.01, 9), "Log1p": (-0.9, 9),
    "Expm1": (-4, 4),
    "Reciprocal": (0.1, 4), "Floor": (-4, 4), "Ceil": (-4, 4), "Sigmoid": (-6, 6),
    "Tanh": (-3, 3),
}


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary(op, dt, rng):
    x = rand((5, 37), dt, rng, *UNARY[op])
    if op in ("Sign", "Round"):
        x.reshape(-1)[:3] = [0, 0.5, -1.5]
    assert_matches_cpu(lambda a: getattr(tf.raw_ops, op)(x=a), x, ops=[op])


@pytest.mark.parametrize("shapes", [((4, 9), (4, 9), (4, 9)), ((4, 1), (1, 9), ()),
                                    ((2, 1, 3), (4, 1), (1, 3))], ids=str)
def test_select_v2(shapes, dt, rng):
    c = rng.random(shapes[0]) < 0.5
    t = rand(shapes[1], dt, rng)
    e = rand(shapes[2], dt, rng)
    assert_matches_cpu(lambda a, b, d: tf.raw_ops.SelectV2(condition=a, t=b, e=d), c, t, e,
                       ops=["SelectV2"], rtol=0, atol=0)


@pytest.mark.parametrize("name", ["float32", "float64", "float16", "bfloat16"])
def test_is_finite_inf_nan(name, rng):
    x = rand((3, 20), name, rng)
    x.reshape(-1)[:4] = np.array([np.inf, -np.inf, np.nan, 0.0]).astype(x.dtype)
    for op in ("IsFinite", "IsInf", "IsNan"):
        assert_matches_cpu(lambda a: getattr(tf.raw_ops, op)(x=a), x, ops=[op])


# ------------------------------------------------------------------ reductions

NP_REDUCE = {"Sum": np.sum, "Mean": np.mean, "Max": np.max, "Min": np.min, "Prod": np.prod}


@pytest.mark.parametrize("op", ["Sum", "Mean", "Max", "Min", "Prod"])
@pytest.mark.parametrize("axes", [[1], [0, 2], [-1], []], ids=str)
def test_reduction(op, axes, dt, rng):
    low, high = (0.8, 1.2) if op == "Prod" else (-2, 2)
    shape = (4, 16, 5)
    x = rand(shape, dt, rng, low, high)
    fn = getattr(tf.raw_ops, op)
    n = int(np.prod([shape[a] for a in axes])) if axes else 1
    rtol, atol = TOLERANCES[dt]
    if op in ("Sum", "Mean", "Prod"):
        # TF's CPU kernel accumulates float16 in float16 (bfloat16 in float32):
        # its error grows with the n terms. PDK accumulates in float32, so it is
        # checked against the exact float64 reduction with the plain tolerance.
        atol = max(atol, n * 2 * float(np.finfo(np.float16).eps if dt == "float16" else 0))
    reduce = lambda a: fn(input=a, axis=tf.constant(axes, tf.int32), keep_dims=False)  # noqa
    out = assert_matches_cpu(reduce, x, ops=[op], rtol=rtol, atol=atol)[0]
    exact = NP_REDUCE[op](x.astype(np.float64), axis=tuple(axes)) if axes else x
    np.testing.assert_allclose(out.astype(np.float64), np.asarray(exact, np.float64),
                               rtol=TOLERANCES[dt][0], atol=TOLERANCES[dt][1])
    assert_matches_cpu(lambda a: fn(input=a, axis=tf.constant([1], tf.int64), keep_dims=True),
                       x, ops=[op], rtol=rtol, atol=max(atol, 16 * 2 * 1e-3))


@pytest.mark.parametrize("op", ["All", "Any"])
@pytest.mark.parametrize("axes", [[0], [1], [0, 1], [-1]], ids=str)
def test_all_any(op, axes, rng):
    x = rng.random((6, 7)) < 0.8
    x[2, :] = True
    x[:, 3] = False
    fn = getattr(tf.raw_ops, op)
    assert_matches_cpu(lambda a: fn(input=a, axis=tf.constant(axes), keep_dims=False), x,
                       ops=[op])
    empty = np.zeros((0, 3), bool)
    assert_matches_cpu(lambda a: fn(input=a, axis=tf.constant([0]), keep_dims=True), empty,
                       ops=[op])


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
def test_argminmax(op, dt, rng):
    x = rand((6, 50), dt, rng)
    fn = getattr(tf.raw_ops, op)
    for axis in (0, 1):
        assert_matches_cpu(lambda a: fn(input=a, dimension=axis, output_type=tf.int64), x,
                           ops=[op])


# --------------------------------------------------------------------- matmul
#
# bfloat16 GEMMs are checked against the float64 product of the same
# (bf16-valued) inputs, not against TensorFlow's bf16 CPU kernel, whose
# accuracy depends on the machine (oneDNN's bf16 GEMM where TF enables oneDNN,
# Eigen's contraction elsewhere: measured on an AVX2-only EPYC, TF 2.21, up to
# ~1 bf16 ulp from the exact product, twice the bound below). PDK's contract
# (src/kernels/math/matmul.cc): float32 sums of the exact bf16 x bf16 products,
# rounded once to bfloat16. So element-wise, with s the exact sum and
# S = sum |a_ik b_kj|:
#   |pdk - s| <= 2^-8 |s| + (1 + 2^-8) * k * 2^-24 * S
# (half a bf16 ulp for the rounding to nearest, plus the worst-case float32
# summation error of k terms, which the rounding can carry). A bf16
# accumulator (error ~ sqrt(k) bf16 ulps) or a second rounding fails it.
# float16 keeps TensorFlow's CPU kernel as the reference.


def assert_bf16_gemm_exact(out, a, b):
    """out (bfloat16) against np.matmul of a, b in float64 (see above)."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    exact = np.matmul(a64, b64)
    k = a64.shape[-1]
    bound = 2.0**-8 * np.abs(exact) + (1 + 2.0**-8) * k * 2.0**-24 * np.matmul(
        np.abs(a64), np.abs(b64))
    assert out.shape == exact.shape and out.dtype == a.dtype
    err = np.abs(out.astype(np.float64) - exact)
    bad = err > bound
    assert not bad.any(), (
        f"{bad.sum()} of {bad.size} elements beyond one bf16 rounding of the float32 sum: "
        f"max error {err.max():.3g} (bound there {bound.flat[np.argmax(err)]:.3g}), "
        f"max error/bound {(err / bound).max():.3g}")


def _swap_last(x, t):
    return np.swapaxes(x, -1, -2) if t else x


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("mnk", [(3, 5, 7), (64, 48, 80), (200, 150, 100)], ids=str)
def test_matmul(mnk, ta, tb, dt, rng):
    m, n, k = mnk
    a = rand((k, m) if ta else (m, k), dt, rng, -1, 1)
    b = rand((n, k) if tb else (k, n), dt, rng, -1, 1)
    fn = lambda x, y: tf.raw_ops.MatMul(a=x, b=y, transpose_a=ta, transpose_b=tb)  # noqa: E731
    if dt == "bfloat16":
        with launches() as delta:
            out = run_on("/PDK:0", fn, a, b)[0]
        assert delta.get("MatMul", 0) > 0, delta
        assert_bf16_gemm_exact(out, _swap_last(a, ta), _swap_last(b, tb))
        return
    # float16: both accumulate in float32 and round once; the sums' order differs.
    assert_matches_cpu(fn, a, b, ops=["MatMul"])


def test_batch_matmul(dt, rng):
    x = rand((2, 3, 4, 6), dt, rng, -1, 1)
    y = rand((3, 6, 5), dt, rng, -1, 1)
    fn = lambda a, b: tf.raw_ops.BatchMatMulV2(x=a, y=b)  # noqa: E731
    if dt == "bfloat16":
        with launches() as delta:
            out = run_on("/PDK:0", fn, x, y)[0]
        assert delta.get("BatchMatMulV2", 0) > 0, delta
        assert_bf16_gemm_exact(out, x, y)
        return
    assert_matches_cpu(fn, x, y, ops=["BatchMatMulV2"])


# ------------------------------------------------------------------------- nn

@pytest.mark.parametrize("fmt,shape", [("NHWC", (8, 6)), ("NHWC", (2, 3, 4, 5)),
                                       ("NCHW", (2, 5, 3, 4))])
def test_bias_add_and_grad(fmt, shape, dt, rng):
    c = shape[1] if fmt == "NCHW" else shape[-1]
    v = rand(shape, dt, rng)
    b = rand((c,), dt, rng)
    assert_matches_cpu(lambda x, y: tf.raw_ops.BiasAdd(value=x, bias=y, data_format=fmt), v, b,
                       ops=["BiasAdd"])
    n = int(np.prod(shape)) // c
    assert_matches_exact(lambda x: tf.raw_ops.BiasAddGrad(out_backprop=x, data_format=fmt), v,
                         ops=["BiasAddGrad"], dt=dt, cpu_atol=n * 4 * 1e-3)


def test_bias_add_grad_accumulates_in_float(dt, rng):
    # 4096 rows of ~1: a 16-bit accumulator stalls far below the sum (TF's CPU
    # kernel does, for bfloat16: 512); PDK accumulates in float32.
    g = rand((4096, 3), dt, rng, 0.9, 1.1)
    out = run_on("/PDK:0", lambda x: tf.raw_ops.BiasAddGrad(out_backprop=x), g)[0]
    exact = g.astype(np.float64).sum(axis=0)
    np.testing.assert_allclose(out.astype(np.float64), exact, rtol=TOLERANCES[dt][0])


ACTS = ["Relu", "Relu6", "Elu", "LeakyRelu"]


@pytest.mark.parametrize("op", ACTS)
def test_activation_and_grad(op, dt, rng):
    x = rand((7, 19), dt, rng, -8, 8)
    x.reshape(-1)[:2] = [0, 6]
    g = rand((7, 19), dt, rng)
    assert_matches_cpu(lambda a: getattr(tf.raw_ops, op)(features=a), x, ops=[op])
    grad = getattr(tf.raw_ops, op + "Grad")
    if op == "Elu":
        fn = lambda a, b: grad(gradients=a, outputs=tf.raw_ops.Elu(features=b))  # noqa: E731
    else:
        fn = lambda a, b: grad(gradients=a, features=b)  # noqa: E731
    assert_matches_cpu(fn, g, x, ops=[op + "Grad"])


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("shape", [(4, 10), (2, 3, 33), (1, 1)], ids=str)
def test_softmax(op, shape, dt, rng):
    x = rand(shape, dt, rng, -5, 5)
    assert_matches_cpu(lambda a: getattr(tf.raw_ops, op)(logits=a), x, ops=[op])


def test_softmax_xent(dt, rng):
    x = rand((8, 10), dt, rng, -4, 4)
    p = rng.random((8, 10))
    labels = (p / p.sum(axis=1, keepdims=True)).astype(np_dtype(dt))
    assert_matches_cpu(
        lambda a, b: tf.raw_ops.SoftmaxCrossEntropyWithLogits(features=a, labels=b), x, labels,
        ops=["SoftmaxCrossEntropyWithLogits"])
    assert_matches_cpu(  # labels broadcast over the batch
        lambda a, b: tf.raw_ops.SoftmaxCrossEntropyWithLogits(features=a, labels=b[:1]), x,
        labels, ops=["SoftmaxCrossEntropyWithLogits"])
    k = rng.integers(0, 10, 8)
    assert_matches_cpu(
        lambda a, b: tf.raw_ops.SparseSoftmaxCrossEntropyWithLogits(features=a, labels=b), x, k,
        ops=["SparseSoftmaxCrossEntropyWithLogits"])


@pytest.mark.parametrize("stride,padding,ksize", [(1, "SAME", 3), (2, "VALID", 3),
                                                  (1, "VALID", 1)])
def test_conv2d_and_backprops(stride, padding, ksize, dt, rng):
    x = rand((2, 7, 6, 3), dt, rng, -1, 1)
    w = rand((ksize, ksize, 3, 4), dt, rng, -1, 1)
    strides = [1, stride, stride, 1]
    conv = lambda a, b: tf.raw_ops.Conv2D(input=a, filter=b, strides=strides,  # noqa: E731
                                          padding=padding)
    # TF's CPU convolutions accumulate float16 in float16 (error ~ terms * eps).
    kw = dict(dt=dt, cpu_atol=0.05)
    y = assert_matches_exact(conv, x, w, ops=["Conv2D"], **kw)[0]
    dy = rand(y.shape, dt, rng, -1, 1)
    assert_matches_exact(
        lambda b, d: tf.raw_ops.Conv2DBackpropInput(input_sizes=tf.constant(x.shape, tf.int32),
                                                    filter=b, out_backprop=d, strides=strides,
                                                    padding=padding),
        w, dy, ops=["Conv2DBackpropInput"], **kw)
    assert_matches_exact(
        lambda a, d: tf.raw_ops.Conv2DBackpropFilter(input=a,
                                                     filter_sizes=tf.constant(w.shape, tf.int32),
                                                     out_backprop=d, strides=strides,
                                                     padding=padding),
        x, dy, ops=["Conv2DBackpropFilter"], **kw)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_pooling_and_grads(padding, dt, rng):
    x = rand((2, 6, 7, 3), dt, rng)
    kw = dict(ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding=padding)
    y = assert_matches_cpu(lambda a: tf.raw_ops.MaxPool(input=a, **kw), x, ops=["MaxPool"])[0]
    g = rand(y.shape, dt, rng)
    assert_matches_cpu(
        lambda a, d: tf.raw_ops.MaxPoolGrad(orig_input=a, orig_output=tf.raw_ops.MaxPool(
            input=a, **kw), grad=d, **kw), x, g, ops=["MaxPoolGrad"])
    assert_matches_cpu(lambda a: tf.raw_ops.AvgPool(value=a, **kw), x, ops=["AvgPool"])
    assert_matches_cpu(
        lambda d: tf.raw_ops.AvgPoolGrad(orig_input_shape=tf.constant(x.shape, tf.int32),
                                         grad=d, **kw), g, ops=["AvgPoolGrad"])


# ------------------------------------------------------------- Keras training

# PDK and TF's CPU kernels round the 16-bit floats at different points (PDK
# computes softmax, bias gradients, convolutions and GEMMs in float32 and rounds
# once; TF's CPU does some of these in the 16-bit type), so results agree to a
# few 16-bit ulps, not bit for bit. Measured on the development machine over the
# 2 epochs x 3 steps (Adam, lr 1e-3; weights move by ~6e-3): float16 losses
# within 3e-5 relative, weights within 7e-5; bfloat16 losses 2.2e-4, weights
# 5.4e-4. The tolerances leave a 3-5x margin.
# mixed_bfloat16 losses: on an AVX2-only CPU (no oneDNN in TF's CPU kernels)
# TF's own bfloat16 LayerNormalization step lands 1.5e-3 (relative) from the
# float32 step and PDK's 1.2e-3, so the two may differ by up to ~2.7e-3.
MODEL_RTOL = {"mixed_float16": 1e-4, "mixed_bfloat16": 3e-3}
MODEL_ATOL = {"mixed_float16": 3e-4, "mixed_bfloat16": 2e-3}
STEPS, BATCH = 3, 16


def _build(kind):
    import keras
    L = keras.layers
    if kind == "mlp":
        layers = [keras.Input((16,)), L.Dense(32, activation="relu"),
                  L.Dense(16, activation="relu"), L.Dense(10, activation="softmax")]
    elif kind == "cnn":
        layers = [keras.Input((8, 8, 1)), L.Conv2D(4, 3, padding="same", activation="relu"),
                  L.MaxPooling2D(2), L.Flatten(), L.Dense(10, activation="softmax")]
    else:  # LayerNormalization between Dense layers
        layers = [keras.Input((16,)), L.Dense(32, activation="relu"), L.LayerNormalization(),
                  L.Dense(10, activation="softmax")]
    return keras.Sequential(layers)


def _train(kind, policy, device):
    import keras

    keras.mixed_precision.set_global_policy(policy)
    try:
        rng = np.random.default_rng(7)
        shape = (8, 8, 1) if kind == "cnn" else (16,)
        x = rng.random((STEPS * BATCH,) + shape).astype(np.float32)
        y = rng.integers(0, 10, STEPS * BATCH)
        with tf.device(device):
            keras.utils.set_random_seed(0)
            model = _build(kind)
            model.compile(optimizer=keras.optimizers.Adam(1e-3),
                          loss="sparse_categorical_crossentropy", **keras_compile_args(device))
            with placement.record() as placed:
                hist = model.fit(x, y, batch_size=BATCH, epochs=1, shuffle=False, verbose=0)
            # the per-step losses of a second epoch, to compare more than one number
            hist2 = model.fit(x, y, batch_size=BATCH, epochs=1, shuffle=False, verbose=0)
        return dict(loss=[hist.history["loss"][0], hist2.history["loss"][0]],
                    weights=[np.asarray(w, np.float64) for w in model.get_weights()],
                    cpu_ops=dict(placed.compute_ops_on_cpu()),
                    pdk_ops=dict(placed.compute_ops_on("PDK")),
                    optimizer=type(model.optimizer).__name__)
    finally:
        keras.mixed_precision.set_global_policy("float32")


POLICIES = ["mixed_float16", "mixed_bfloat16"]
KINDS = ["mlp", "cnn", "layernorm"]


@pytest.fixture(scope="module")
def trained():
    # Every /PDK:0 training runs before any /CPU:0 one: a /PDK:0 fit that follows
    # a /CPU:0 fit in the same process reads its variables once through eager
    # single-op ReadVariableOp functions placed on the CPU (outside the train
    # step; a TensorFlow/Keras caching effect, also without mixed precision).
    runs = {}
    for device in ("/PDK:0", "/CPU:0"):
        for policy in POLICIES:
            for kind in KINDS:
                runs[device, policy, kind] = _train(kind, policy, device)
    return runs


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("policy", POLICIES)
def test_keras_mixed_precision_trains_on_pdk(trained, policy, kind):
    pdk, cpu = trained["/PDK:0", policy, kind], trained["/CPU:0", policy, kind]
    assert pdk["cpu_ops"] == {}, f"compute ops fell back to the CPU: {pdk['cpu_ops']}"
    assert pdk["pdk_ops"].get("MatMul", 0) > 0, pdk["pdk_ops"]
    if policy == "mixed_float16":
        assert pdk["optimizer"] == "LossScaleOptimizer"
        assert pdk["pdk_ops"].get("IsFinite", 0) > 0 and pdk["pdk_ops"].get("All", 0) > 0
    np.testing.assert_allclose(pdk["loss"], cpu["loss"], rtol=MODEL_RTOL[policy])
    assert len(pdk["weights"]) == len(cpu["weights"])
    for i, (wp, wc) in enumerate(zip(pdk["weights"], cpu["weights"])):
        np.testing.assert_allclose(wp, wc, rtol=MODEL_RTOL[policy], atol=MODEL_ATOL[policy],
                                   err_msg=f"weight {i}")
