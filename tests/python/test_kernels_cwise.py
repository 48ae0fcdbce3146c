"""Elementwise kernels (cwise_binary.cc, cwise_unary.cc, cast.cc, select.cc,
broadcast_to.cc) against TensorFlow's own CPU kernels."""
import re

import numpy as np
import pytest
import tensorflow as tf

import tensorflow_pdk
from tensorflow_pdk.testing import assert_matches_cpu, launches, random_array

F = [np.float32, np.float64]
I = [np.int32, np.int64]
FI = F + I

# (x.shape, y.shape): scalar, empty, vector, matrix, broadcasting, large, and
# shapes that collapse to ranks 3..5 in the broadcast helper.
BINARY_SHAPES = [
    ((), ()),
    ((0,), (0,)),
    ((2, 0), (2, 0)),
    ((2, 0), (1,)),
    ((7,), (7,)),
    ((3, 4), (3, 4)),
    ((3, 1), (1, 4)),
    ((2, 3, 4), (4,)),
    ((4,), (2, 3, 4)),
    ((), (5,)),
    ((5,), ()),
    ((3, 1, 5), (1, 4, 5)),
    ((2, 1, 3, 1), (1, 4, 1, 5)),
    ((2, 1, 3, 1, 2), (1, 4, 1, 5, 1)),
    ((256, 1024), (256, 1024)),
    ((256, 1024), (1024,)),
    # rank-2 broadcasts with rows of >= 16 elements (the row loop of
    # compute/broadcast.h; 37: a tail after the full packets)
    ((33, 37), (33, 1)),
    ((33, 1), (33, 37)),
    ((33, 1), (1, 37)),
]
UNARY_SHAPES = [(), (0,), (2, 0), (7,), (3, 4), (256, 1024), (257, 1023)]  # the last two split
# over the pool (pdk_compute::Assign), the odd one ending in a partial packet


def _sid(shapes):
    return "x".join(str(list(s)).replace(" ", "") for s in shapes)


def _discrete(shape, dtype, rng, lo=-3, hi=4):
    """Small integers (as dtype): many ties, zeros and equalities."""
    return rng.integers(lo, hi, size=shape).astype(dtype)


def _nonzero(a):
    a = np.array(a)
    a[a == 0] = 1
    if a.dtype.kind == "f":
        a[np.abs(a) < 0.25] = 0.5
    return a


def _binary_inputs(op, shapes, dtype, rng):
    (xs, ys), dt = shapes, np.dtype(dtype)
    if dt == np.bool_:
        return random_array(xs, dt, rng), random_array(ys, dt, rng)
    if op in ("Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual",
              "Maximum", "Minimum"):
        return _discrete(xs, dt, rng), _discrete(ys, dt, rng)
    if op == "Pow":
        if dt.kind == "i":
            return _discrete(xs, dt, rng, -5, 6), _discrete(ys, dt, rng, 0, 6)
        return random_array(xs, dt, rng, 0.1, 3.0), random_array(ys, dt, rng, -2.0, 2.0)
    if op == "DivNoNan":
        y = random_array(ys, dt, rng)
        y[rng.random(ys) < 0.3] = 0
        return random_array(xs, dt, rng), y
    if op == "BitwiseAnd":
        return (rng.integers(-1000, 1000, size=xs).astype(dt),
                rng.integers(-1000, 1000, size=ys).astype(dt))
    x = random_array(xs, dt, rng, -10, 10)
    y = random_array(ys, dt, rng, -10, 10)
    if op in ("RealDiv", "FloorDiv", "FloorMod"):
        y = _nonzero(y)
    return x, y


BINARY_OPS = {
    "AddV2": FI, "Add": FI, "Sub": FI, "Mul": FI, "RealDiv": F, "DivNoNan": F,
    "Maximum": FI, "Minimum": FI, "SquaredDifference": FI, "Pow": FI,
    "FloorDiv": FI, "FloorMod": FI,
    "Equal": FI + [np.bool_], "NotEqual": FI + [np.bool_],
    "Less": FI, "LessEqual": FI, "Greater": FI, "GreaterEqual": FI,
    "LogicalAnd": [np.bool_], "LogicalOr": [np.bool_], "BitwiseAnd": I,
}
BINARY_CASES = [(op, dt) for op, dts in BINARY_OPS.items() for dt in dts]


@pytest.mark.parametrize("shapes", BINARY_SHAPES, ids=_sid)
@pytest.mark.parametrize("op,dtype", BINARY_CASES,
                         ids=[f"{o}-{np.dtype(d).name}" for o, d in BINARY_CASES])
def test_binary(op, dtype, shapes, rng):
    x, y = _binary_inputs(op, shapes, dtype, rng)
    fn = getattr(tf.raw_ops, op)
    out = assert_matches_cpu(lambda a, b: fn(x=a, y=b), x, y, ops=[op])
    assert out[0].shape == np.broadcast_shapes(shapes[0], shapes[1])


@pytest.mark.parametrize("dtype", [np.float32, np.int64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", ["AddV2", "Mul", "Less"])
def test_binary_rank6_broadcast(op, dtype, rng):
    # Collapses to 6 dims; TensorFlow's CPU kernel stops at 5, so NumPy is the
    # reference here.
    x = _discrete((2, 1, 3, 1, 2, 1), dtype, rng)
    y = _discrete((1, 4, 1, 5, 1, 3), dtype, rng)
    with launches() as delta, tf.device("/PDK:0"):
        out = np.asarray(getattr(tf.raw_ops, op)(x=tf.constant(x), y=tf.constant(y)))
    assert delta.get(op, 0) > 0
    ref = {"AddV2": np.add, "Mul": np.multiply, "Less": np.less}[op](x, y)
    np.testing.assert_array_equal(out, ref)


UNARY_OPS = {
    "Neg": FI, "Square": FI, "Abs": FI, "Sign": FI, "Round": FI,
    "Sqrt": F, "Rsqrt": F, "Exp": F, "Log": F, "Log1p": F, "Expm1": F, "Reciprocal": F,
    "Floor": F, "Ceil": F, "Sigmoid": F, "Tanh": F, "LogicalNot": [np.bool_],
}
UNARY_CASES = [(op, dt) for op, dts in UNARY_OPS.items() for dt in dts]


def _unary_input(op, shape, dtype, rng):
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return random_array(shape, dt, rng)
    if dt.kind == "i":
        return rng.integers(-50, 50, size=shape).astype(dt)
    if op in ("Sqrt", "Rsqrt", "Log"):
        return random_array(shape, dt, rng, 0.01, 10.0)
    if op == "Log1p":
        return random_array(shape, dt, rng, -0.99, 10.0)
    if op == "Reciprocal":
        return _nonzero(random_array(shape, dt, rng, -10, 10))
    if op in ("Round", "Sign"):  # exact halves (round-half-to-even) and zeros
        return (rng.integers(-12, 13, size=shape) / 4).astype(dt)
    if op in ("Sigmoid", "Tanh"):
        return random_array(shape, dt, rng, -20, 20)
    return random_array(shape, dt, rng, -5, 5)


@pytest.mark.parametrize("shape", UNARY_SHAPES, ids=lambda s: _sid([s]))
@pytest.mark.parametrize("op,dtype", UNARY_CASES,
                         ids=[f"{o}-{np.dtype(d).name}" for o, d in UNARY_CASES])
def test_unary(op, dtype, shape, rng):
    x = _unary_input(op, shape, dtype, rng)
    fn = getattr(tf.raw_ops, op)
    if op == "Round" and np.dtype(dtype).kind == "i":
        # TensorFlow 2.21's CPU Round kernel returns zeros for integer inputs
        # (tf.round itself never calls it for integers); PDK returns x, as
        # the op is documented to.
        with launches() as delta, tf.device("/PDK:0"):
            out = np.asarray(fn(x=tf.constant(x)))
        assert delta.get(op, 0) > 0
        np.testing.assert_array_equal(out, np.round(x))
        assert out.dtype == x.dtype
        return
    out = assert_matches_cpu(lambda a: fn(x=a), x, ops=[op])
    assert out[0].shape == tuple(shape)


SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.5, 0.5, 3.0, -1e-30])


@pytest.mark.parametrize("dtype", F)
@pytest.mark.parametrize("op", ["Neg", "Abs", "Sign", "Round", "Floor", "Ceil", "Exp",
                                "Sigmoid", "Tanh", "Square", "Reciprocal"])
def test_unary_special_values(op, dtype):
    x = SPECIAL.astype(dtype)
    fn = getattr(tf.raw_ops, op)
    assert_matches_cpu(lambda a: fn(x=a), x, ops=[op])


@pytest.mark.parametrize("dtype", F)
@pytest.mark.parametrize("op", ["Maximum", "Minimum", "RealDiv", "DivNoNan", "FloorDiv",
                                "FloorMod", "Equal", "NotEqual", "Less", "GreaterEqual", "AddV2"])
def test_binary_special_values(op, dtype):
    x = np.repeat(SPECIAL, len(SPECIAL)).astype(dtype)
    y = np.tile(SPECIAL, len(SPECIAL)).astype(dtype)
    fn = getattr(tf.raw_ops, op)
    assert_matches_cpu(lambda a, b: fn(x=a, y=b), x, y, ops=[op])


@pytest.mark.parametrize("dtype", I)
@pytest.mark.parametrize("op", ["FloorDiv", "FloorMod"])
def test_integer_floor_division_signs(op, dtype):
    x = np.repeat(np.arange(-7, 8), 6).astype(dtype)
    y = np.tile([-3, -2, -1, 1, 2, 3], 15).astype(dtype)
    fn = getattr(tf.raw_ops, op)
    assert_matches_cpu(lambda a, b: fn(x=a, y=b), x, y, ops=[op])


@pytest.mark.parametrize("value", [True, False])
@pytest.mark.parametrize("op", ["Equal", "NotEqual"])
def test_equality_incompatible_shapes(op, value):
    fn = getattr(tf.raw_ops, op)
    rng = np.random.default_rng(0)
    x, y = _discrete((2, 3), np.float32, rng), _discrete((4,), np.float32, rng)
    if value:
        with tf.device("/PDK:0"):
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[2,3\].*\[4\]"):
                fn(x=tf.constant(x), y=tf.constant(y), incompatible_shape_error=True)
    else:
        out = assert_matches_cpu(
            lambda a, b: fn(x=a, y=b, incompatible_shape_error=False), x, y, ops=[op])
        assert out[0].shape == () and bool(out[0]) == (op == "NotEqual")
        # Compatible shapes still compare elementwise with the attribute off.
        y2 = _discrete((3,), np.float32, rng)
        assert_matches_cpu(lambda a, b: fn(x=a, y=b, incompatible_shape_error=False), x, y2,
                           ops=[op])


CAST_TYPES = [np.float32, np.float64, np.int32, np.int64, np.bool_]
CAST_CASES = [(s, d) for s in CAST_TYPES for d in CAST_TYPES]


def _cast_input(shape, dtype, rng):
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return random_array(shape, dt, rng)
    if dt.kind == "i":
        return rng.integers(-100, 100, size=shape).astype(dt)
    # Fractions of both signs (truncation toward zero) and zeros (-> False).
    return (rng.integers(-40, 41, size=shape) / 4).astype(dt)


@pytest.mark.parametrize("shape", [(), (0,), (3, 4), (256, 1024), (257, 1023)], ids=lambda s: _sid([s]))
@pytest.mark.parametrize("src,dst", CAST_CASES,
                         ids=[f"{np.dtype(s).name}-{np.dtype(d).name}" for s, d in CAST_CASES])
def test_cast(src, dst, shape, rng):
    x = _cast_input(shape, src, rng)
    out = assert_matches_cpu(lambda a: tf.raw_ops.Cast(x=a, DstT=dst), x, ops=["Cast"])
    assert out[0].dtype == np.dtype(dst) and out[0].shape == tuple(shape)


@pytest.mark.parametrize("src", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("n", [5, 20000])
def test_cast_float_to_uint8_saturates(src, n):
    """A float to uint8: in range truncated toward zero (the CPU's result),
    out of range saturated at every size, NaN -> 0 (cast.cc, SaturateToUint8:
    TensorFlow's CPU saturates on its vectorized path and wraps on its scalar
    one, so it has no one answer to compare with)."""
    import ml_dtypes
    vals = np.array([-5.0, -100.75, 300.0, 255.5, -0.5, 0.75, 254.9, 128.0, np.nan, np.inf,
                     -np.inf, 1e30], np.float64)
    x = np.resize(vals, n).astype(ml_dtypes.bfloat16 if src == "bfloat16" else src)
    with tf.device("/PDK:0"), launches() as delta:
        got = tf.cast(tf.constant(x), tf.uint8).numpy()
    assert delta.get("Cast", 0) == 1, delta
    wide = x.astype(np.float64)
    want = np.where(np.isnan(wide), 0, np.clip(np.trunc(np.nan_to_num(wide)), 0, 255)).astype(np.uint8)
    np.testing.assert_array_equal(got, want)
    in_range = (wide >= 0) & (wide < 256)
    with tf.device("/CPU:0"):
        cpu = tf.cast(tf.constant(x), tf.uint8).numpy()
    np.testing.assert_array_equal(got[in_range], cpu[in_range])


SELECT_SHAPES = [
    ((), (), ()),
    ((0,), (0,), (0,)),
    ((2, 0), (1,), ()),
    ((7,), (7,), (7,)),
    ((3, 4), (3, 4), (3, 4)),
    ((), (3, 4), (3, 4)),
    ((3, 4), (), ()),
    ((3, 1), (1, 4), (3, 4)),
    ((2, 1, 4), (3, 1), (4,)),
    ((4,), (2, 3, 4), ()),
    ((256, 1024), (256, 1024), (256, 1024)),
    ((256, 1), (1024,), ()),
    ((256, 1024), (256, 1024), ()),  # Dropout's where(mask, x, 0): flat, scalar branch
    ((5, 7), (), (5, 7)),
]
SELECT_TYPES = [np.float32, np.float64, np.int32, np.int64, np.bool_]


@pytest.mark.parametrize("shapes", SELECT_SHAPES, ids=_sid)
@pytest.mark.parametrize("dtype", SELECT_TYPES, ids=lambda d: np.dtype(d).name)
def test_select_v2(dtype, shapes, rng):
    cs, ts, es = shapes
    c = random_array(cs, np.bool_, rng)
    t = random_array(ts, dtype, rng)
    e = random_array(es, dtype, rng)
    out = assert_matches_cpu(lambda a, b, d: tf.raw_ops.SelectV2(condition=a, t=b, e=d),
                             c, t, e, ops=["SelectV2"])
    assert out[0].shape == np.broadcast_shapes(cs, ts, es)


BROADCAST_TO_CASES = [
    ((), (3, 4)),
    ((1,), (5,)),
    ((3, 4), (3, 4)),
    ((3, 1), (2, 3, 4)),
    ((4,), (2, 3, 4)),
    ((2, 1, 3, 1), (2, 5, 3, 6)),
    ((1, 2, 1, 2, 1), (3, 2, 3, 2, 3)),
    ((1,), (0,)),
    ((0,), (2, 0)),
    ((1, 1024), (256, 1024)),
]


@pytest.mark.parametrize("shapes", BROADCAST_TO_CASES, ids=_sid)
@pytest.mark.parametrize("tidx", [tf.int32, tf.int64], ids=["int32", "int64"])
@pytest.mark.parametrize("dtype", SELECT_TYPES, ids=lambda d: np.dtype(d).name)
def test_broadcast_to(dtype, tidx, shapes, rng):
    xs, target = shapes
    x = random_array(xs, dtype, rng)
    out = assert_matches_cpu(lambda a: tf.broadcast_to(a, tf.constant(target, tidx)), x,
                             ops=["BroadcastTo"])
    assert out[0].shape == tuple(target)


# ---------------------------------------------------------------- gradients

GRAD_CASES = [
    (tf.sigmoid, "SigmoidGrad", (-8, 8)),
    (tf.tanh, "TanhGrad", (-4, 4)),
    (tf.sqrt, "SqrtGrad", (0.1, 5)),
    (tf.math.rsqrt, "RsqrtGrad", (0.1, 5)),
    (tf.math.reciprocal, "ReciprocalGrad", (0.5, 5)),
    (tf.square, "Mul", (-3, 3)),
]


@pytest.mark.parametrize("shape", [(), (7,), (3, 4), (256, 1024)], ids=lambda s: _sid([s]))
@pytest.mark.parametrize("dtype", F, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("fn,grad_op,domain", GRAD_CASES, ids=[c[1] for c in GRAD_CASES])
def test_unary_gradients(fn, grad_op, domain, dtype, shape, rng):
    x = random_array(shape, dtype, rng, *domain)
    dy = random_array(shape, dtype, rng, -2, 2)
    if dy.size:
        dy.flat[0] = 0  # the *Grad kernels return 0 where dy == 0

    def grad(a, g):
        with tf.GradientTape() as tape:
            tape.watch(a)
            y = fn(a)
        return tape.gradient(y, a, output_gradients=g)

    assert_matches_cpu(grad, x, dy, ops=[grad_op])


@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((256, 1024), (256, 1024))], ids=_sid)
@pytest.mark.parametrize("dtype", F, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", [tf.multiply, tf.math.truediv], ids=["Mul", "RealDiv"])
def test_binary_gradients(op, dtype, shapes, rng):
    x = random_array(shapes[0], dtype, rng, -3, 3)
    y = _nonzero(random_array(shapes[1], dtype, rng, -3, 3))
    dz = random_array(np.broadcast_shapes(*shapes), dtype, rng)

    def grad(a, b, g):
        with tf.GradientTape() as tape:
            tape.watch([a, b])
            z = op(a, b)
        return tape.gradient(z, [a, b], output_gradients=g)

    names = ["Mul"] if op is tf.multiply else ["RealDiv", "Neg", "Mul"]
    assert_matches_cpu(grad, x, y, dz, ops=names)


@pytest.mark.parametrize("dtype", F, ids=lambda d: np.dtype(d).name)
def test_grad_ops_reject_mismatched_sizes(dtype):
    with tf.device("/PDK:0"):
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[2\].*\[3\]"):
            tf.raw_ops.SigmoidGrad(y=tf.ones([2], dtype), dy=tf.ones([3], dtype))


# ------------------------------------------------------ graph mode (forwarding)

@pytest.mark.parametrize("fusion", ["fused", "unfused"])
def test_chain_in_tf_function(rng, request, fusion):
    """Intermediates in a graph have one holder, so outputs reuse input buffers;
    the result must still match the CPU: as PDK's generic elementwise fusion
    runs it (one _PdkFusedElementwise kernel; the broadcast of `b` makes it run
    op by op inside), and unfused, op by op."""
    if fusion == "unfused":
        request.getfixturevalue("without_elementwise_fusion")
    @tf.function
    def chain(a, b):
        c = a * b - a
        d = tf.sqrt(tf.abs(c) + 1.0)
        e = d / (b * b + 1.0)
        f = tf.maximum(e, 0.25) + tf.sigmoid(c)
        return tf.where(f > 1.0, f, -f) * 3.0

    x = random_array((256, 1024), np.float32, rng)
    y = random_array((1024,), np.float32, rng)
    assert_matches_cpu(chain, x, y, ops=["_PdkFusedElementwise"] if fusion == "fused" else
                       ["Mul", "Sub", "Sqrt", "Abs", "AddV2", "RealDiv", "Maximum", "Sigmoid",
                        "Greater", "SelectV2", "Neg"])


def test_graph_intermediates_reuse_buffers():
    """Same-shape elementwise chains in a graph forward their input buffer to the
    output: the chain below allocates one new 4 MiB buffer, not one per op."""
    n = 1 << 20

    @tf.function
    def chain(a):
        b = a * 2.0                # new buffer (a is held by the caller)
        c = b + 1.0                # the rest reuse b's buffer
        d = tf.sqrt(tf.abs(c))
        e = d - a
        return tf.sigmoid(tf.maximum(e, 0.5))

    with tf.device("/PDK:0"):
        x = tf.identity(tf.ones([n]))
        chain(x)  # trace and warm up
        tf.config.experimental.reset_memory_stats("PDK:0")
        base = tf.config.experimental.get_memory_info("PDK:0")["current"]
        y = chain(x)
        peak = tf.config.experimental.get_memory_info("PDK:0")["peak"]
    np.testing.assert_allclose(y.numpy()[:3], 1 / (1 + np.exp(-(np.sqrt(3.0) - 1))), rtol=1e-6)
    assert (peak - base) / (4 * n) < 1.5, f"chain allocated {(peak - base) / (4 * n):.1f} buffers"


# ------------------------------------------------------------------- errors

@pytest.mark.parametrize("dtype", [np.float16, tf.bfloat16.as_numpy_dtype],
                         ids=["float16", "bfloat16"])
def test_v1_add_half_types_and_gradient_graph(dtype, rng):
    """The v1 Add (tf.distribute's all-reduce, FusedBatchNorm's gradient) runs
    AddV2's kernel on PDK, 16-bit types too."""
    x = random_array((4, 5), dtype, rng)
    y = random_array((5,), dtype, rng)
    assert_matches_cpu(lambda a, b: tf.raw_ops.Add(x=a, y=b), x, y, ops=["Add"],
                       rtol=2e-2, atol=2e-2)


def test_add_incompatible_shapes_message():
    with tf.device("/PDK:0"):
        with pytest.raises(tf.errors.InvalidArgumentError) as e:
            tf.raw_ops.AddV2(x=tf.ones([2, 3]), y=tf.ones([4]))
    msg = str(e.value)
    assert "AddV2" in msg and "[2,3]" in msg and "[4]" in msg
    assert "device:PDK" in msg  # raised by the PDK kernel, not a CPU fallback


def test_broadcast_over_six_collapsed_dims_is_an_error():
    # Alternating broadcast pattern: nothing collapses, 7 dims remain.
    xs, ys = (2, 1, 2, 1, 2, 1, 2), (1, 2, 1, 2, 1, 2, 1)
    with tf.device("/PDK:0"):
        with pytest.raises(tf.errors.InvalidArgumentError, match="at most 6"):
            tf.raw_ops.AddV2(x=tf.ones(xs), y=tf.ones(ys))


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64])
@pytest.mark.parametrize("op", ["FloorDiv", "FloorMod", "Div", "TruncateDiv"])
def test_integer_division_by_zero(op, dtype):
    """The CPU's error class and wording ("Integer division by zero"; for
    TruncateDiv TensorFlow's InternalError, "Unexpected error in binary
    operator ..."), then PDK's detail: the op and the element."""
    x, y = tf.constant([4, 5], dtype), tf.constant([2, 0], dtype)
    core = lambda e: re.sub(r"^\{\{function_node [^}]*\}\} ", "", e.message).split(" [Op:")[0]
    errors = {}
    for device in ("/CPU:0", "/PDK:0"):
        with tf.device(device):
            with pytest.raises(tf.errors.OpError) as e:
                getattr(tf.raw_ops, op)(x=x, y=y)
        errors[device] = e.value
    cpu, pdk = errors["/CPU:0"], errors["/PDK:0"]
    assert type(pdk) is type(cpu), (pdk, cpu)
    assert core(pdk).startswith(core(cpu)), (pdk, cpu)
    assert core(pdk).endswith(f"({op}: y[1] == 0)" if op != "TruncateDiv" else
                              f"({op}: y[1] == 0, integer division by zero)"), core(pdk)


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64])
@pytest.mark.parametrize("op", ["Div", "TruncateDiv"])
def test_integer_truncating_division(op, dtype):
    """Div and TruncateDiv round toward zero on integers (FloorDiv rounds
    down), and the minimum divided by -1 wraps, as on the CPU."""
    lo = dtype.min
    x = tf.constant([7, -7, 7, -7, lo, lo, 0], dtype)
    y = tf.constant([2, 2, -2, -2, -1, 3, 5], dtype)
    with tf.device("/CPU:0"):
        want = getattr(tf.raw_ops, op)(x=x, y=y).numpy()
    tensorflow_pdk.reset_launch_counts()
    with tf.device("/PDK:0"):
        got = getattr(tf.raw_ops, op)(x=x, y=y)
    assert tensorflow_pdk.launch_counts().get(op, 0) == 1
    np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(want[:4], [3, -3, -3, 3])


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64])
def test_integer_pow_negative_exponent(dtype):
    with tf.device("/PDK:0"):
        with pytest.raises(tf.errors.InvalidArgumentError, match="negative integer powers"):
            tf.raw_ops.Pow(x=tf.constant([4, 5], dtype), y=tf.constant([2, -1], dtype))


def test_select_v2_incompatible_shapes():
    with tf.device("/PDK:0"):
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[3\].*\[4\]"):
            tf.raw_ops.SelectV2(condition=tf.constant([True, False, True]), t=tf.ones([4]),
                                e=tf.ones([4]))


def test_broadcast_to_incompatible_shape():
    with tf.device("/PDK:0"):
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[2,3\].*\[4,3\]"):
            tf.broadcast_to(tf.ones([2, 3]), [4, 3])


def test_exp_minus_one_in_a_function_runs_as_expm1_on_pdk():
    """Grappler's arithmetic optimizer turns `exp(x) - 1` in a graph into
    Expm1 on the node's device, whatever kernels the device has (its
    ConvertExpm1Stage); before PDK registered Expm1 such a tf.function failed
    with "No registered 'Expm1' OpKernel for 'PDK' devices". It runs on PDK
    (alone, or fused with its neighbours) and matches the CPU."""
    x = random_array((64, 33), np.float32, np.random.default_rng(7), -5, 5)
    x[0, :3] = [0.0, 1e-8, -1e-8]

    @tf.function
    def fn(x):
        return tf.exp(x) - 1.0, (tf.exp(x) - 1.0) * 2.0

    with tf.device("/CPU:0"):
        want = [t.numpy() for t in fn(tf.constant(x))]
    with launches() as delta, tf.device("/PDK:0"):
        got = [t.numpy() for t in fn(tf.identity(tf.constant(x)))]
    assert delta.get("Expm1", 0) + delta.get("_PdkFusedElementwise", 0) >= 1, delta
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)


# ------------------- ops TensorFlow code meets that once ran on the CPU instead

def test_zero_guarded_binary_ops_match_cpu_where_the_guard_fires():
    """MulNoNan is 0 where y == 0 even for x NaN or inf; Xlogy, Xlog1py and
    Xdivy are 0 where x == 0 even for y 0, negative or NaN (the guards of
    tf.math.multiply_no_nan, xlogy, xlog1py, xdivy)."""
    x = np.array([0.0, -0.0, 1.5, np.nan, np.inf, -2.0, 0.0, 3.0], np.float32)
    y = np.array([0.0, 2.0, 0.0, 0.0, 0.0, 0.5, np.nan, -1.0], np.float32)
    fns = {"MulNoNan": tf.math.multiply_no_nan, "Xlogy": tf.math.xlogy,
           "Xlog1py": tf.math.xlog1py, "Xdivy": tf.math.xdivy}
    got = {op: assert_matches_cpu(fn, x, y, ops=[op], rtol=1e-6, atol=0)[0]  # NaNs too
           for op, fn in fns.items()}
    assert np.all(got["MulNoNan"][y == 0] == 0)
    for op in ("Xlogy", "Xlog1py", "Xdivy"):
        assert np.all(got[op][x == 0] == 0), op


def test_atan2_takes_the_ordinate_first_in_every_quadrant():
    y = np.array([1.0, 1.0, -1.0, -1.0, 0.0, 0.0, -0.0, 2.0], np.float64)
    x = np.array([1.0, -1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 0.0], np.float64)
    # TensorFlow's CPU (Eigen's atan2) is 1 ulp off the correctly rounded
    # pi/4 that C's atan2 (PDK's, NumPy's) gives: within 1 ulp of the CPU,
    # equal to NumPy.
    got = assert_matches_cpu(tf.math.atan2, y, x, ops=["Atan2"], rtol=2.3e-16, atol=0)[0]
    np.testing.assert_array_equal(got, np.arctan2(y, x))


def test_rint_rounds_half_to_even():
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.7, -3.2], np.float32)
    got = assert_matches_cpu(tf.math.rint, x, ops=["Rint"], rtol=0, atol=0)[0]
    np.testing.assert_array_equal(got, np.rint(x))


def test_xlogy_and_l2_loss_gradients_in_a_function_run_on_pdk():
    """A KL term written with tf.math.xlogy and a weight decay with
    tf.nn.l2_loss, differentiated in a tf.function: the forward ops and the
    gradient's Xlogy / Xdivy run on PDK and the values match the CPU."""
    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.ones(10), size=16).astype(np.float32)
    p[0, :4] = 0.0
    w0 = rng.standard_normal((10, 10)).astype(np.float32)

    def run(device):
        with tf.device(device):
            w = tf.Variable(w0)
            pt = tf.constant(p)

            @tf.function
            def step():
                with tf.GradientTape() as tape:
                    q = tf.nn.softmax(pt @ w)
                    loss = tf.reduce_sum(tf.math.xlogy(pt, pt) - tf.math.xlogy(pt, q)) \
                        + 1e-2 * tf.nn.l2_loss(w)
                return loss, tape.gradient(loss, w)
            return [t.numpy() for t in step()]

    want = run("/CPU:0")
    with launches() as delta:
        got = run("/PDK:0")
    for op in ("Xlogy", "L2Loss"):
        assert delta.get(op, 0) >= 1, (op, delta)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_check_numerics_passes_finite_tensors_and_names_what_it_found(dtype):
    x = np.array([1.0, -2.0, 3.0], dtype)
    got = assert_matches_cpu(lambda t: tf.debugging.check_numerics(t, "ok"), x,
                             ops=["CheckNumerics"], rtol=0, atol=0)[0]
    np.testing.assert_array_equal(got, x)
    cases = {"NaN": [1.0, np.nan], "Inf": [np.inf, 1.0], "Inf and NaN": [-np.inf, np.nan]}
    for what, values in cases.items():
        for device in ("/CPU:0", "/PDK:0"):  # TensorFlow's wording, on both
            with tf.device(device):
                t = tf.identity(tf.constant(np.array(values, dtype)))
                with pytest.raises(tf.errors.InvalidArgumentError,
                                   match=re.escape(f"loss : Tensor had {what} values")):
                    tf.debugging.check_numerics(t, "loss")
    v2 = {"-Inf, +Inf, and NaN": [-np.inf, np.inf, np.nan], "+Inf": [np.inf],
          "-Inf and NaN": [-np.inf, np.nan]}
    for what, values in v2.items():
        for device in ("/CPU:0", "/PDK:0"):
            with tf.device(device):
                t = tf.identity(tf.constant(np.array(values, dtype)))
                with pytest.raises(tf.errors.InvalidArgumentError,
                                   match=re.escape(f"v2 : Tensor had {what} values")):
                    tf.raw_ops.CheckNumericsV2(tensor=t, message="v2")
