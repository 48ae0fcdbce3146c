"""The conv group's kernels on OPENCL against TensorFlow's CPU kernels:
MatMul / BatchMatMul / BatchMatMulV2 (CLBlast SGEMM), Conv2D and its
backprops (im2col / col2im + SGEMM), MaxPool / MaxPoolGrad, AvgPool /
AvgPoolGrad."""
import numpy as np
import pytest
import tensorflow as tf

from conftest import DEVICE, assert_matches_cpu, on_opencl, run

RTOL, ATOL = 1e-4, 1e-4


def _both_raise(fn, *args, **kwargs):
    """fn raises on OPENCL the exception class and message it raises on CPU."""
    with pytest.raises(Exception) as cpu:
        run(fn, *args, device="/CPU:0", **kwargs)
    with pytest.raises(type(cpu.value)) as dev:
        on_opencl(fn, *args, **kwargs)
    want = cpu.value.message.split("}}")[-1].split("[Op:")[0].strip()
    assert want in dev.value.message, (want, dev.value.message)


# ---------------------------------------------------------------- MatMul

@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (3, 5, 7), (64, 33, 17), (4, 0, 3), (0, 3, 4)])
def test_matmul(rng, m, k, n, ta, tb):
    a = rng.standard_normal((k, m) if ta else (m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if tb else (k, n)).astype(np.float32)
    assert_matches_cpu(lambda x, y: tf.raw_ops.MatMul(a=x, b=y, transpose_a=ta, transpose_b=tb),
                       a, b, rtol=RTOL, atol=ATOL)


def test_matmul_bad_shapes():
    f = lambda x, y: tf.raw_ops.MatMul(a=x, b=y)
    _both_raise(f, np.zeros((2, 3), np.float32), np.zeros((4, 5), np.float32))
    _both_raise(f, np.zeros((2, 3, 1), np.float32), np.zeros((4, 5), np.float32))
    _both_raise(f, np.zeros((2,), np.float32), np.zeros((2,), np.float32))


@pytest.mark.parametrize("xs,ys", [
    ((2, 3, 4), (2, 4, 5)),
    ((3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (1, 3, 4, 2)),
    ((0, 3, 4), (0, 4, 2)),
    ((2, 3, 0), (2, 0, 5)),
    ((1, 2, 3), (4, 3, 2)),
])
@pytest.mark.parametrize("adj", [(False, False), (True, False), (False, True), (True, True)])
def test_batch_matmul_v2(rng, xs, ys, adj):
    ax, ay = adj
    xs = xs[:-2] + (xs[-1], xs[-2]) if ax else xs
    ys = ys[:-2] + (ys[-1], ys[-2]) if ay else ys
    x = rng.standard_normal(xs).astype(np.float32)
    y = rng.standard_normal(ys).astype(np.float32)
    assert_matches_cpu(lambda a, b: tf.raw_ops.BatchMatMulV2(x=a, y=b, adj_x=ax, adj_y=ay),
                       x, y, rtol=RTOL, atol=ATOL)


def test_batch_matmul_v1(rng):
    x = rng.standard_normal((3, 2, 4)).astype(np.float32)
    y = rng.standard_normal((3, 4, 5)).astype(np.float32)
    assert_matches_cpu(lambda a, b: tf.raw_ops.BatchMatMul(x=a, y=b), x, y, rtol=RTOL, atol=ATOL)


def test_batch_matmul_bad_shapes():
    f = lambda a, b: tf.raw_ops.BatchMatMulV2(x=a, y=b)
    z = lambda *s: np.zeros(s, np.float32)
    _both_raise(f, z(2, 2, 3), z(2, 4, 5))
    _both_raise(f, z(2, 2, 3), z(3, 3, 5))
    _both_raise(f, z(2), z(3, 3, 5))
    _both_raise(f, z(2, 3), z(3))
