"""The cwise kernels (src/kernels/cwise_*.cc) against TensorFlow's CPU kernels."""
import numpy as np
import pytest
import tensorflow as tf

from conftest import DEVICE, assert_matches_cpu, run

R = tf.raw_ops

SHAPE_PAIRS = [
    ((), ()),
    ((0,), (0,)),
    ((5,), ()),
    ((), (5,)),
    ((7, 3), (7, 3)),
    ((7, 3), (3,)),
    ((7, 1), (1, 3)),
    ((2, 3, 4), (3, 1)),
    ((0, 3), (1, 3)),
    ((2, 1, 4, 1, 3), (1, 5, 1, 2, 3)),
    ((2, 1, 2, 1, 2), (1, 2, 1, 2, 1)),
    ((3, 1, 1, 2, 2, 1, 1, 2), (1, 1, 1, 2, 1, 2, 2, 2)),
    ((1000, 33), (1000, 33)),
    ((3, 130), (130,)),
    ((130, 1), (1, 200)),
    ((2, 1, 129), (1, 3, 1)),
]


def _data(rng, shape, dtype, positive=False):
    if dtype == np.int64:
        return rng.integers(-50, 50, size=shape).astype(np.int64)
    x = rng.standard_normal(shape).astype(np.float32)
    if positive:
        x = np.abs(x) + np.float32(0.1)
    return x


def _cpu_error(fn, *args):
    with pytest.raises(Exception) as cpu:
        run(fn, *args, device="/CPU:0")
    return cpu.value


def _assert_same_error(fn, *args):
    want = _cpu_error(fn, *args)
    with pytest.raises(type(want)) as got:
        run(fn, *args)
    msg = want.message.split(" [Op:")[0].split("}} ")[-1]
    assert msg in got.value.message, (got.value.message, msg)


ARITH = {
    "AddV2": (R.AddV2, (np.float32, np.int64)),
    "Sub": (R.Sub, (np.float32, np.int64)),
    "Mul": (R.Mul, (np.float32, np.int64)),
    "Maximum": (R.Maximum, (np.float32, np.int64)),
    "Minimum": (R.Minimum, (np.float32, np.int64)),
    "RealDiv": (R.RealDiv, (np.float32,)),
    "DivNoNan": (R.DivNoNan, (np.float32,)),
    "SquaredDifference": (R.SquaredDifference, (np.float32,)),
    "Pow": (R.Pow, (np.float32,)),
    "Add": (R.Add, (np.float32, np.int64)),
    "Div": (R.Div, (np.float32,)),
    "Equal": (R.Equal, (np.float32, np.int64)),
    "NotEqual": (R.NotEqual, (np.float32, np.int64)),
    "Less": (R.Less, (np.float32, np.int64)),
    "LessEqual": (R.LessEqual, (np.float32, np.int64)),
    "Greater": (R.Greater, (np.float32, np.int64)),
    "GreaterEqual": (R.GreaterEqual, (np.float32, np.int64)),
}
ARITH_CASES = [(name, dt) for name, (_, dts) in ARITH.items() for dt in dts]


@pytest.mark.parametrize("name,dtype", ARITH_CASES)
@pytest.mark.parametrize("sx,sy", SHAPE_PAIRS)
def test_binary_matches_cpu(name, dtype, sx, sy, rng):
    op = ARITH[name][0]
    x = _data(rng, sx, dtype, positive=name == "Pow")
    y = _data(rng, sy, dtype)
    if name in ("Equal", "NotEqual", "LessEqual", "GreaterEqual") and x.size and y.size:
        # some equal pairs
        y = np.broadcast_to(x.reshape(x.shape + (1,) * 0), np.broadcast_shapes(x.shape, y.shape))
        y = y.reshape(np.broadcast_shapes(x.shape, y.shape)).copy()
        y.flat[::2] = 0
        x = np.broadcast_to(x, y.shape).copy()
    if name == "DivNoNan" and y.size:
        y.flat[::3] = 0
    exact = name not in ("Pow", "RealDiv", "DivNoNan", "Div")
    assert_matches_cpu(lambda a, b: op(x=a, y=b), x, y, rtol=0 if exact else 1e-6,
                       atol=0 if exact else 1e-7)


@pytest.mark.parametrize("name", ["Maximum", "Minimum", "Equal", "NotEqual", "Less", "Greater"])
def test_binary_nan(name):
    x = np.array([np.nan, 1.0, np.nan, -2.0], np.float32)
    y = np.array([1.0, np.nan, np.nan, 3.0], np.float32)
    assert_matches_cpu(lambda a, b: ARITH[name][0](x=a, y=b), x, y, rtol=0, atol=0)


def test_real_div_exact_and_special(rng):
    x = np.array([1.0, -1.0, 0.0, 3.0, 1e-30, 7.0], np.float32)
    y = np.array([0.0, 0.0, 0.0, 3.0, 1e30, 3.0], np.float32)
    assert_matches_cpu(lambda a, b: R.RealDiv(x=a, y=b), x, y, rtol=1e-6, atol=0)
    assert_matches_cpu(lambda a, b: R.DivNoNan(x=a, y=b), x, y, rtol=1e-6, atol=0)


@pytest.mark.parametrize("sx,sy", [((2, 3), (4,)), ((3, 2), (2, 3)), ((0,), (2,))])
@pytest.mark.parametrize("name", ["AddV2", "Mul", "Less", "Equal"])
def test_binary_incompatible_shapes(name, sx, sy):
    x = np.ones(sx, np.float32)
    y = np.ones(sy, np.float32)
    _assert_same_error(lambda a, b: ARITH[name][0](x=a, y=b), x, y)


def test_binary_rank6_unimplemented():
    x = np.ones((2, 1, 2, 1, 2, 1), np.float32)
    y = np.ones((1, 2, 1, 2, 1, 2), np.float32)
    _assert_same_error(lambda a, b: R.AddV2(x=a, y=b), x, y)


@pytest.mark.parametrize("op", [R.Equal, R.NotEqual])
def test_equal_without_incompatible_shape_error(op):
    x = np.ones((2, 3), np.float32)
    y = np.ones((4,), np.float32)
    fn = lambda a, b: op(x=a, y=b, incompatible_shape_error=False)
    assert_matches_cpu(fn, x, y)
    assert_matches_cpu(fn, x, np.ones((3,), np.float32))


@pytest.mark.parametrize("op", [R.LogicalAnd, R.LogicalOr])
@pytest.mark.parametrize("sx,sy", [((6,), (6,)), ((3, 2), (2,)), ((), (4,)), ((0,), ())])
def test_logical_binary(op, sx, sy, rng):
    x = rng.integers(0, 2, size=sx).astype(bool)
    y = rng.integers(0, 2, size=sy).astype(bool)
    assert_matches_cpu(lambda a, b: op(x=a, y=b), x, y)


def test_int64_add_counter():
    # The optimizer's iterations counter.
    assert_matches_cpu(lambda a, b: a + b, np.array(41, np.int64), np.array(1, np.int64))


UNARY_SHAPES = [(), (0,), (7,), (13, 5), (1000, 33)]
# name -> (op, domain, rtol, atol); domain: "any", "pos" (> 0), "gtm1" (> -1)
UNARY = {
    "Neg": (R.Neg, "any", 0, 0),
    "Square": (R.Square, "any", 0, 0),
    "Abs": (R.Abs, "any", 0, 0),
    "Sign": (R.Sign, "any", 0, 0),
    "Floor": (R.Floor, "any", 0, 0),
    "Ceil": (R.Ceil, "any", 0, 0),
    "Round": (R.Round, "any", 0, 0),
    "Relu6": (R.Relu6, "any", 0, 0),
    "Sqrt": (R.Sqrt, "pos", 1e-6, 0),
    "Rsqrt": (R.Rsqrt, "pos", 1e-5, 0),
    "Reciprocal": (R.Reciprocal, "any", 1e-6, 0),
    "Inv": (R.Inv, "any", 1e-6, 0),
    "Exp": (R.Exp, "any", 1e-5, 0),
    "Log": (R.Log, "pos", 1e-5, 1e-6),
    "Log1p": (R.Log1p, "gtm1", 1e-5, 1e-6),
    "Tanh": (R.Tanh, "any", 1e-5, 1e-6),
    "Sigmoid": (R.Sigmoid, "any", 1e-5, 1e-6),
    "Softplus": (R.Softplus, "any", 1e-5, 1e-6),
    "Erf": (R.Erf, "any", 1e-5, 1e-6),
    "Elu": (R.Elu, "any", 1e-5, 1e-6),
    "Selu": (R.Selu, "any", 1e-5, 1e-6),
    "Rint": (R.Rint, "any", 0, 0),
    "Expm1": (R.Expm1, "any", 1e-5, 1e-6),
    "Sin": (R.Sin, "any", 1e-5, 1e-6),
    "Cos": (R.Cos, "any", 1e-5, 1e-6),
}


def _unary_input(rng, shape, domain):
    x = (rng.standard_normal(shape) * 4).astype(np.float32)
    if domain == "pos":
        x = np.abs(x) + np.float32(1e-3)
    elif domain == "gtm1":
        x = np.abs(x) - np.float32(0.99)
    return x


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("shape", UNARY_SHAPES)
def test_unary_matches_cpu(name, shape, rng):
    op, domain, rtol, atol = UNARY[name]
    x = _unary_input(rng, shape, domain)
    assert_matches_cpu(lambda a: op(x=a) if name not in ("Relu6", "Elu", "Selu", "Softplus")
                       else op(features=a), x, rtol=rtol, atol=atol)


def test_unary_special_values():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.0, -0.0, 6.0, 7.0, -20.0, 20.0, 100.0,
                  -100.0, np.inf, -np.inf], np.float32)
    for name in ["Round", "Rint", "Sign", "Floor", "Ceil", "Relu6", "Abs", "Neg"]:
        op = UNARY[name][0]
        assert_matches_cpu(lambda a: op(features=a) if name == "Relu6" else op(x=a), x,
                           rtol=0, atol=0)
    for name in ["Sigmoid", "Tanh", "Softplus", "Elu", "Selu", "Exp", "Erf"]:
        op = UNARY[name][0]
        assert_matches_cpu(lambda a: op(features=a) if name in ("Softplus", "Elu", "Selu")
                           else op(x=a), x, rtol=1e-5, atol=1e-6)
    nan = np.array([np.nan], np.float32)
    assert_matches_cpu(lambda a: R.Sign(x=a), nan)


@pytest.mark.parametrize("op", [R.Neg, R.Square, R.Abs, R.Sign])
@pytest.mark.parametrize("shape", [(), (0,), (9, 4)])
def test_unary_int64(op, shape, rng):
    x = rng.integers(-1000, 1000, size=shape).astype(np.int64)
    assert_matches_cpu(lambda a: op(x=a), x, rtol=0, atol=0)


def test_logical_not(rng):
    x = rng.integers(0, 2, size=(5, 3)).astype(bool)
    assert_matches_cpu(lambda a: R.LogicalNot(x=a), x)


# name -> (op, first input's domain)
GRADS = {
    "TanhGrad": (lambda a, b: R.TanhGrad(y=a, dy=b), "tanh"),
    "SigmoidGrad": (lambda a, b: R.SigmoidGrad(y=a, dy=b), "sig"),
    "SqrtGrad": (lambda a, b: R.SqrtGrad(y=a, dy=b), "pos"),
    "RsqrtGrad": (lambda a, b: R.RsqrtGrad(y=a, dy=b), "pos"),
    "ReciprocalGrad": (lambda a, b: R.ReciprocalGrad(y=a, dy=b), "any"),
    "InvGrad": (lambda a, b: R.InvGrad(y=a, dy=b), "any"),
    "SoftplusGrad": (lambda a, b: R.SoftplusGrad(gradients=b, features=a), "any"),
    "Relu6Grad": (lambda a, b: R.Relu6Grad(gradients=b, features=a), "any"),
    "EluGrad": (lambda a, b: R.EluGrad(gradients=b, outputs=a), "elu"),
    "SeluGrad": (lambda a, b: R.SeluGrad(gradients=b, outputs=a), "elu"),
}


@pytest.mark.parametrize("name", sorted(GRADS))
@pytest.mark.parametrize("shape", [(), (0,), (7,), (31, 9)])
def test_grad_matches_cpu(name, shape, rng):
    op, domain = GRADS[name]
    a = (rng.standard_normal(shape) * 4).astype(np.float32)
    if domain == "tanh":
        a = np.tanh(a)
    elif domain == "sig":
        a = (1 / (1 + np.exp(-a))).astype(np.float32)
    elif domain == "pos":
        a = np.abs(a) + np.float32(0.01)
    elif domain == "elu":
        a = np.where(a < 0, np.expm1(a), a).astype(np.float32)
    if name == "Relu6Grad" and a.size:
        a.flat[::4] = 0.0
        a.flat[1::4] = 6.0
    b = rng.standard_normal(shape).astype(np.float32)
    if b.size:
        b.flat[::5] = 0.0
    assert_matches_cpu(op, a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(GRADS))
def test_grad_bad_shapes(name):
    op = GRADS[name][0]
    _assert_same_error(op, np.ones((2,), np.float32), np.ones((3,), np.float32))


def test_grad_same_count_other_shape():
    # TanhGrad & co. only need equal element counts; the output has y's shape.
    assert_matches_cpu(GRADS["TanhGrad"][0], np.full((2, 3), 0.5, np.float32),
                       np.ones((3, 2), np.float32))


CAST_TYPES = [tf.float32, tf.int64, tf.bool]


@pytest.mark.parametrize("src", CAST_TYPES, ids=lambda t: t.name)
@pytest.mark.parametrize("dst", CAST_TYPES, ids=lambda t: t.name)
@pytest.mark.parametrize("shape", [(), (0,), (17,), (40, 30)])
def test_cast_matches_cpu(src, dst, shape, rng):
    if src == tf.float32:
        x = (rng.standard_normal(shape) * 1000).astype(np.float32)
        if x.size:
            x.flat[::3] = 0.0
            x.flat[1::7] = 0.5
    elif src == tf.int64:
        x = rng.integers(-(2 ** 40), 2 ** 40, size=shape).astype(np.int64)
        if x.size:
            x.flat[::3] = 0
    else:
        x = rng.integers(0, 2, size=shape).astype(bool)
    assert_matches_cpu(lambda a: tf.cast(a, dst), x, rtol=0, atol=0)


def test_cast_float_to_int64_edges():
    x = np.array([2.7, -2.7, 1e20, -1e20, np.nan, np.inf, -np.inf, 9.2e18, -9.2e18, -0.0],
                 np.float32)
    assert_matches_cpu(lambda a: tf.cast(a, tf.int64), x, rtol=0, atol=0)
    assert_matches_cpu(lambda a: tf.cast(a, tf.bool), x, rtol=0, atol=0)


def test_cast_int64_to_float_rounding():
    x = np.array([2 ** 53 + 1, 2 ** 62 + 2 ** 38 + 1, -(2 ** 63), 16777217, -16777217], np.int64)
    assert_matches_cpu(lambda a: tf.cast(a, tf.float32), x, rtol=0, atol=0)


def _values(rng, shape, dtype):
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    return _data(rng, shape, dtype)


SELECT_TYPES = [np.float32, np.int64, np.bool_]


@pytest.mark.parametrize("dtype", SELECT_TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("sc,st", [((), (4, 3)), ((4,), (4, 3)), ((4,), (4,)), ((4, 3), (4, 3)),
                                   ((), ()), ((0,), (0, 2)), ((2,), (2, 3, 5)),
                                   ((300, 7), (300, 7))])
def test_select_matches_cpu(dtype, sc, st, rng):
    c = rng.integers(0, 2, size=sc).astype(bool)
    t = _values(rng, st, dtype)
    e = _values(rng, st, dtype)
    assert_matches_cpu(lambda a, b, d: R.Select(condition=a, x=b, y=d), c, t, e, rtol=0, atol=0)


@pytest.mark.parametrize("sc,st,se", [((3,), (2, 3), (2, 3)), ((3,), (3,), (2,)),
                                      ((), (3, 2), (2, 2)), ((1, 2), (3, 2), (3, 2)),
                                      ((3,), (), ())])
def test_select_bad_shapes(sc, st, se):
    c = np.ones(sc, bool)
    _assert_same_error(lambda a, b, d: R.Select(condition=a, x=b, y=d), c,
                       np.ones(st, np.float32), np.ones(se, np.float32))


@pytest.mark.parametrize("dtype", SELECT_TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("sc,st,se", [((), (4, 3), (4, 3)), ((4, 1), (1, 3), ()),
                                      ((3,), (2, 3), (2, 1)), ((0, 3), (1, 3), (3,)),
                                      ((2, 1, 3, 1, 2), (1, 4, 1, 5, 1), (2, 4, 3, 5, 2)),
                                      ((50, 40), (50, 40), (50, 40))])
def test_select_v2_matches_cpu(dtype, sc, st, se, rng):
    c = rng.integers(0, 2, size=sc).astype(bool)
    t = _values(rng, st, dtype)
    e = _values(rng, se, dtype)
    assert_matches_cpu(lambda a, b, d: R.SelectV2(condition=a, t=b, e=d), c, t, e, rtol=0,
                       atol=0)


def test_select_v2_bad_shapes():
    _assert_same_error(lambda a, b, d: R.SelectV2(condition=a, t=b, e=d), np.ones((3,), bool),
                       np.ones((3, 2), np.float32), np.ones((2, 2), np.float32))


def test_where_keras_style(rng):
    x = rng.standard_normal((10, 4)).astype(np.float32)
    assert_matches_cpu(lambda a: tf.where(a > 0, a, tf.zeros_like(a)), x, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", SELECT_TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("dims", [[], [0], [5], [3, 4], [2, 0, 3], [70, 80]])
@pytest.mark.parametrize("index_type", [np.int32, np.int64])
def test_fill_matches_cpu(dtype, dims, index_type, rng):
    value = _values(rng, (), dtype)
    d = np.array(dims, index_type)
    assert_matches_cpu(lambda v: R.Fill(dims=d, value=v), value, rtol=0, atol=0)


def test_fill_bad_args():
    _assert_same_error(lambda v: R.Fill(dims=np.array([[2, 3]], np.int32), value=v),
                       np.float32(1))
    _assert_same_error(lambda v: R.Fill(dims=np.array([2, -3], np.int32), value=v),
                       np.float32(1))
    _assert_same_error(lambda v: R.Fill(dims=np.array([2, 3], np.int32), value=v),
                       np.ones((2,), np.float32))


@pytest.mark.parametrize("dtype", SELECT_TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("shape", [(), (0,), (7, 5)])
def test_zeros_ones_like(dtype, shape, rng):
    x = _values(rng, shape, dtype)
    assert_matches_cpu(lambda a: R.ZerosLike(x=a), x, rtol=0, atol=0)
    if dtype != np.bool_:
        assert_matches_cpu(lambda a: R.OnesLike(x=a), x, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [np.float32, np.int64], ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("num", [1, 2, 3, 6])
@pytest.mark.parametrize("shape", [(), (0,), (9, 7)])
def test_add_n_matches_cpu(dtype, num, shape, rng):
    xs = [_data(rng, shape, dtype) for _ in range(num)]
    assert_matches_cpu(lambda *a: R.AddN(inputs=list(a)), *xs, rtol=1e-6, atol=1e-6)


def test_add_n_bad_shapes():
    _assert_same_error(lambda a, b: R.AddN(inputs=[a, b]), np.ones((2,), np.float32),
                       np.ones((3,), np.float32))


BIAS_SHAPES = [(3, 4), (0, 4), (2, 3, 5), (2, 4, 3, 5), (2, 3, 2, 2, 4), (500, 33), (4, 0, 3)]


@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
@pytest.mark.parametrize("shape", BIAS_SHAPES)
def test_bias_add_matches_cpu(fmt, shape, rng):
    c = shape[1] if fmt == "NCHW" else shape[-1]
    x = rng.standard_normal(shape).astype(np.float32)
    b = rng.standard_normal((c,)).astype(np.float32)
    # TensorFlow's CPU BiasAdd computes NCHW too.
    assert_matches_cpu(lambda a, d: R.BiasAdd(value=a, bias=d, data_format=fmt), x, b, rtol=0,
                       atol=0)
    if fmt == "NHWC":
        assert_matches_cpu(lambda a, d: R.BiasAddV1(value=a, bias=d), x, b, rtol=0, atol=0)


@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
@pytest.mark.parametrize("shape", BIAS_SHAPES + [(64, 8, 9, 9)])
def test_bias_add_grad_matches_cpu(fmt, shape, rng):
    x = rng.standard_normal(shape).astype(np.float32)
    assert_matches_cpu(lambda a: R.BiasAddGrad(out_backprop=a, data_format=fmt), x, rtol=1e-5,
                       atol=1e-4)


def test_bias_add_bad_shapes():
    f = lambda a, d: R.BiasAdd(value=a, bias=d)
    _assert_same_error(f, np.ones((2,), np.float32), np.ones((1,), np.float32))
    _assert_same_error(f, np.ones((1, 2), np.float32), np.ones((1, 1), np.float32))
    _assert_same_error(f, np.ones((1, 2), np.float32), np.ones((3,), np.float32))
    _assert_same_error(lambda a: R.BiasAddGrad(out_backprop=a), np.ones((2,), np.float32))


def test_dense_layer_gradients(rng):
    # A Dense-like layer's forward and backward: BiasAdd, Sigmoid,
    # SquaredDifference and their gradients (SigmoidGrad, BiasAddGrad, ...).
    x = rng.standard_normal((16, 3)).astype(np.float32)
    b = rng.standard_normal((3,)).astype(np.float32)

    def fn(x, b):
        with tf.GradientTape() as tape:
            tape.watch(b)
            y = tf.nn.bias_add(x * 2.0, b)
            z = tf.math.squared_difference(tf.sigmoid(y), tf.ones_like(y) * 0.5)
        return tape.gradient(z, b, output_gradients=tf.ones_like(z))

    assert_matches_cpu(fn, x, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", [R.FloorDiv, R.FloorMod])
@pytest.mark.parametrize("dtype", [np.float32, np.int64], ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("sx,sy", [((), ()), ((0,), ()), ((6, 5), (6, 5)), ((6, 5), (5,)),
                                   ((4, 1), (1, 3))])
def test_floor_div_mod(op, dtype, sx, sy, rng):
    x = _data(rng, sx, dtype) * (7 if dtype == np.int64 else 1)
    y = _data(rng, sy, dtype)
    y = np.where(y == 0, 3, y).astype(dtype)
    if dtype == np.int64 and y.size:
        y.flat[::4] = -1
    exact = dtype == np.int64 or op is R.FloorDiv
    assert_matches_cpu(lambda a, b: op(x=a, y=b), x, y, rtol=0 if exact else 1e-5,
                       atol=0 if exact else 1e-5)


def test_floor_div_mod_int64_edges():
    x = np.array([7, -7, 7, -7, -(2 ** 63), 0, 5], np.int64)
    y = np.array([2, 2, -2, -2, -1, 3, 5], np.int64)
    for op in (R.FloorDiv, R.FloorMod):
        assert_matches_cpu(lambda a, b: op(x=a, y=b), x, y, rtol=0, atol=0)


@pytest.mark.parametrize("op", [R.IsNan, R.IsInf, R.IsFinite])
def test_float_predicates(op):
    x = np.array([0.0, -1.0, np.nan, np.inf, -np.inf, 3e38, 1e-45], np.float32)
    assert_matches_cpu(lambda a: op(x=a), x)
    assert_matches_cpu(lambda a: op(x=a), np.zeros((0, 3), np.float32))


@pytest.mark.parametrize("shape", [(), (0,), (40, 3)])
def test_softsign(shape, rng):
    x = (rng.standard_normal(shape) * 4).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    assert_matches_cpu(lambda a: R.Softsign(features=a), x, rtol=1e-6, atol=0)
    assert_matches_cpu(lambda a, b: R.SoftsignGrad(gradients=b, features=a), x, g, rtol=1e-6,
                       atol=0)


@pytest.mark.parametrize("op", [R.Equal, R.NotEqual])
def test_equal_bool(op, rng):
    x = rng.integers(0, 2, size=(6, 4)).astype(bool)
    y = rng.integers(0, 2, size=(4,)).astype(bool)
    assert_matches_cpu(lambda a, b: op(x=a, y=b), x, y)


def _adam_steps(device, g0, w0):
    """Adam's update (Keras's formula) on variables of `device`, in a tf.function."""
    with tf.device(device):
        w = tf.Variable(w0)
        m = tf.Variable(tf.zeros_like(w0))
        v = tf.Variable(tf.zeros_like(w0))
        it = tf.Variable(np.int64(0))

        @tf.function
        def step(g):
            lr, b1, b2, eps = 0.001, 0.9, 0.999, 1e-7
            local_step = tf.cast(it + 1, tf.float32)
            b1_pow = tf.pow(tf.constant(b1), local_step)
            b2_pow = tf.pow(tf.constant(b2), local_step)
            alpha = lr * tf.sqrt(1 - b2_pow) / (1 - b1_pow)
            m.assign_add((g - m) * (1 - b1))
            v.assign_add((tf.square(g) - v) * (1 - b2))
            w.assign_sub((m * alpha) / (tf.sqrt(v) + eps))
            it.assign_add(1)

        for k in range(3):
            step(tf.constant(g0 * (k + 1)))
        return w.numpy(), m.numpy(), v.numpy(), it.numpy()


def test_adam_update_in_a_function(rng):
    g0 = rng.standard_normal((5, 3)).astype(np.float32)
    w0 = rng.standard_normal((5, 3)).astype(np.float32)
    got = _adam_steps(DEVICE, g0, w0)
    want = _adam_steps("/CPU:0", g0, w0)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def test_softplus_small_values_relative():
    # log1p(exp(x)) for x just above log(eps)+2: relative accuracy of tiny results.
    x = np.linspace(-20, 20, 4001).astype(np.float32)
    assert_matches_cpu(lambda a: R.Softplus(features=a), x, rtol=2e-6, atol=0)
    assert_matches_cpu(lambda a, b: R.SoftplusGrad(gradients=b, features=a), x,
                       np.ones_like(x), rtol=2e-6, atol=0)


def test_relu6_non_finite():
    x = np.array([np.nan, -1.0, 3.0, 7.0, np.inf, -np.inf], np.float32)
    g = np.array([np.nan, np.nan, np.inf, np.inf, 1.0, 1.0], np.float32)
    assert_matches_cpu(lambda a: R.Relu6(features=a), x, rtol=0, atol=0)
    assert_matches_cpu(lambda a, b: R.Relu6Grad(gradients=b, features=a), x, g, rtol=0, atol=0)


def test_pow_special_values():
    x = np.array([-2.0, -2.0, 0.0, 0.0, 1.0, np.nan, 2.0, -0.5, np.inf, 4.0], np.float32)
    y = np.array([3.0, 0.5, -1.0, 0.0, np.nan, 0.0, -2.0, 2.0, -1.0, 0.5], np.float32)
    assert_matches_cpu(lambda a, b: R.Pow(x=a, y=b), x, y, rtol=1e-6, atol=0)


def test_select_v2_high_rank(rng):
    # Up to rank 8 with no two neighbouring dims broadcasting alike.
    sc = (2, 1, 2, 1, 2, 1, 2, 1)
    st = (1, 2, 1, 2, 1, 2, 1, 2)
    c = rng.integers(0, 2, size=sc).astype(bool)
    t = rng.standard_normal(st).astype(np.float32)
    e = rng.standard_normal((2,)).astype(np.float32)
    assert_matches_cpu(lambda a, b, d: R.SelectV2(condition=a, t=b, e=d), c, t, e, rtol=0,
                       atol=0)


def test_select_v2_rank9_unimplemented():
    _assert_same_error(lambda a, b, d: R.SelectV2(condition=a, t=b, e=d), np.ones([1] * 9, bool),
                       np.ones([2] * 9, np.float32), np.ones([2] * 9, np.float32))
