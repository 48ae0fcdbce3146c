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
    exact = name not in ("Pow", "RealDiv", "DivNoNan")
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
