"""Reductions (Sum, Mean, Max, Min, Prod, L2Loss; int32 ones in host memory),
Bitcast, ArgMax/ArgMin, Softmax, LogSoftmax and the softmax cross-entropies on
OPENCL, against TensorFlow's CPU kernels (src/kernels/reduction_ops.cc, bitcast.cc, argminmax.cc, softmax.cc,
xent.cc)."""
import contextlib
import re

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.ops import gen_math_ops, gen_nn_ops

from conftest import DEVICE, assert_matches_cpu, on_opencl, run

REDUCERS = {
    "Sum": gen_math_ops._sum,
    "Mean": gen_math_ops.mean,
    "Max": gen_math_ops._max,
    "Min": gen_math_ops._min,
    "Prod": gen_math_ops.prod,
}


def _message(e):
    """An error's text without the device-specific function-node prefix."""
    text = str(e)
    text = re.sub(r"\{\{function_node [^}]*\}\}\s*", "", text)
    return re.sub(r"\s*\[Op:.*$", "", text, flags=re.S).strip()


def assert_same_error(fn, *args, **kwargs):
    """fn raises on OPENCL what it raises on the CPU: same class, same text."""
    with pytest.raises(tf.errors.OpError) as cpu:
        run(fn, *args, device="/CPU:0", **kwargs)
    with pytest.raises(tf.errors.OpError) as dev:
        on_opencl(fn, *args, **kwargs)
    assert type(dev.value) is type(cpu.value), (dev.value, cpu.value)
    assert _message(dev.value) == _message(cpu.value)
    return _message(dev.value)


def _data(rng, shape, op):
    # Positive data away from 0 keeps float sums and products well
    # conditioned; Prod gets values near 1 so long products stay finite.
    if op == "Prod":
        return rng.uniform(0.9, 1.1, shape).astype(np.float32)
    return rng.uniform(-1.0, 1.0, shape).astype(np.float32) + 2.0


# ---------------------------------------------------------------- reductions

REDUCE_CASES = [
    ((), []),
    ((5,), [0]),
    ((5,), []),
    ((3, 4, 5), [0]),
    ((3, 4, 5), [1]),
    ((3, 4, 5), [2]),
    ((3, 4, 5), [0, 2]),
    ((3, 4, 5), [-1, -3]),
    ((3, 4, 5), [2, 0, 1]),
    ((3, 4, 5), []),
    ((6, 1, 5, 2), [1]),
    ((6, 1, 5, 2), [0, 3]),
    ((2, 3, 4, 5, 6), [1, 3]),
    ((2, 3, 4, 5, 6), [0, 2, 4]),
    ((1, 1, 7), [0, 1]),
    ((0,), [0]),
    ((0, 3), [0]),
    ((0, 3), [1]),
    ((2, 0, 3), [1]),
    ((2, 0, 3), [0, 2]),
    ((4, 0), []),
    ((300, 5000), [1]),
    ((5000, 300), [0]),
    ((64, 40, 33), [0, 2]),
]


@pytest.mark.parametrize("op", list(REDUCERS))
@pytest.mark.parametrize("shape,axes", REDUCE_CASES)
@pytest.mark.parametrize("keep_dims", [False, True])
def test_reduction_matches_cpu(op, shape, axes, keep_dims, rng):
    x = _data(rng, shape, op)
    axes = tf.constant(axes, tf.int32)
    assert_matches_cpu(REDUCERS[op], x, axes, keep_dims=keep_dims, rtol=2e-5)


@pytest.mark.parametrize("op", list(REDUCERS))
def test_reduction_int64_axes(op, rng):
    x = _data(rng, (4, 6, 3), op)
    assert_matches_cpu(REDUCERS[op], x, tf.constant([-1, 0], tf.int64), keep_dims=True)


@pytest.mark.parametrize("op", list(REDUCERS))
def test_reduction_axes_of_rank_2_are_flattened(op, rng):
    x = _data(rng, (4, 6, 3), op)
    assert_matches_cpu(REDUCERS[op], x, tf.constant([[2], [0]], tf.int32))


@pytest.mark.parametrize("op", list(REDUCERS))
@pytest.mark.parametrize("n", [1 << 20, 3 * 1024 * 1024 + 17])
def test_full_reduction_of_a_big_tensor(op, n, rng):
    # Several passes (chunked partial results), not one work-item.
    if op == "Prod":
        # A float product of 1M values near 1 drifts by rounding (-0.2% on
        # the CPU, more here): exact factors test the passes instead.
        x = rng.choice(np.array([1.0, -1.0], np.float32), n)
        x[rng.choice(n, 40, replace=False)] = np.float32(2.0)
        x[rng.choice(n, 30, replace=False)] = np.float32(0.5)
        assert_matches_cpu(REDUCERS[op], x, tf.constant([0]), rtol=0, atol=0)
        return
    x = _data(rng, (n,), op)
    assert_matches_cpu(REDUCERS[op], x, tf.constant([0]), rtol=1e-5)


def test_reduction_of_a_big_matrix_to_few_rows(rng):
    x = _data(rng, (3, 400000), "Sum")
    assert_matches_cpu(gen_math_ops._sum, x, tf.constant([1]), rtol=1e-5)
    assert_matches_cpu(gen_math_ops.mean, x, tf.constant([1]), rtol=1e-5)
    # Down columns TF's CPU sums with ~2e-5 relative error (this kernel's is
    # ~1e-7 against float64), hence the looser tolerance against the CPU.
    x = _data(rng, (400000, 3), "Sum")
    assert_matches_cpu(gen_math_ops._sum, x, tf.constant([0]), rtol=1e-4)
    np.testing.assert_allclose(on_opencl(gen_math_ops._sum, x, tf.constant([0])),
                               x.astype(np.float64).sum(0), rtol=1e-6)


@pytest.mark.parametrize("shape,axes", [((3, 4, 5), [1]), ((3, 4, 5), [0, 2]), ((0, 3), [0]),
                                        ((7,), []), ((2000, 700), [0, 1])])
def test_sum_int64(shape, axes, rng):
    x = rng.integers(-(1 << 40), 1 << 40, shape).astype(np.int64)
    assert_matches_cpu(gen_math_ops._sum, x, tf.constant(axes, tf.int32), rtol=0, atol=0)


def test_empty_reductions_give_the_identity():
    x = np.zeros((0, 3), np.float32)
    got = {op: on_opencl(f, x, tf.constant([0])) for op, f in REDUCERS.items()}
    np.testing.assert_array_equal(got["Sum"], [0, 0, 0])
    assert np.isnan(got["Mean"]).all()
    np.testing.assert_array_equal(got["Max"], [-np.inf] * 3)
    np.testing.assert_array_equal(got["Min"], [np.inf] * 3)
    np.testing.assert_array_equal(got["Prod"], [1, 1, 1])


def test_max_min_propagate_nan():
    x = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]], np.float32)
    for op in ("Max", "Min"):
        assert_matches_cpu(REDUCERS[op], x, tf.constant([1]))
        assert_matches_cpu(REDUCERS[op], x, tf.constant([0, 1]))


def test_keras_style_reductions(rng):
    x = rng.standard_normal((8, 10)).astype(np.float32)
    assert_matches_cpu(tf.reduce_mean, x, atol=1e-6)
    assert_matches_cpu(tf.reduce_sum, x, axis=-1, keepdims=True, atol=1e-5)
    assert_matches_cpu(tf.reduce_max, x, axis=0)


@pytest.mark.parametrize("op", list(REDUCERS))
@pytest.mark.parametrize("shape,axes", [((2, 3), [2]), ((2, 3), [-3]), ((), [0]),
                                        ((2, 3), [1, -1]), ((2, 3, 4), [0, 2, 0])])
def test_bad_axes_errors_match_cpu(op, shape, axes):
    x = np.ones(shape, np.float32)
    msg = assert_same_error(REDUCERS[op], x, tf.constant(axes))
    assert "reduction" in msg


# ---------------------------------------------------------------- int32 (host memory)
# Sum / Prod / Mean int32: OPENCL kernels with every argument in host memory,
# computed on the host; Max / Min int32 are TensorFlow's DEVICE_DEFAULT ones.

INT32_CASES = [((), []), ((5,), [0]), ((3, 4, 5), [1]), ((3, 4, 5), [0, 2]), ((3, 4, 5), []),
               ((6, 1, 5, 2), [0, 3]), ((2, 3, 4, 5, 6), [0, 2, 4]), ((1, 1, 7), [0, 1]),
               ((0,), [0]), ((0, 3), [0]), ((0, 3), [1]), ((2, 0, 3), [0, 2]), ((4, 0), []),
               ((300, 500), [1]), ((500, 300), [0])]


@pytest.mark.parametrize("op", list(REDUCERS))
@pytest.mark.parametrize("shape,axes", INT32_CASES)
@pytest.mark.parametrize("keep_dims", [False, True])
def test_int32_reduction_matches_cpu(op, shape, axes, keep_dims, rng):
    # Negative values (Mean truncates toward 0) and big ones (Sum and Prod
    # wrap modulo 2^32 as TensorFlow's CPU int32).
    x = rng.integers(-(1 << 30), 1 << 30, shape).astype(np.int32)
    assert_matches_cpu(REDUCERS[op], x, tf.constant(axes, tf.int32), keep_dims=keep_dims,
                       rtol=0, atol=0)


@pytest.mark.parametrize("op", list(REDUCERS))
def test_int32_reduction_int64_axes_and_small_values(op, rng):
    x = rng.integers(-7, 8, (4, 6, 3)).astype(np.int32)
    assert_matches_cpu(REDUCERS[op], x, tf.constant([-1, 0], tf.int64), keep_dims=True,
                       rtol=0, atol=0)
    assert_matches_cpu(REDUCERS[op], x, tf.constant([[2], [0]], tf.int32), rtol=0, atol=0)


def test_int32_reduction_of_a_shape_tensor():
    # What Keras's losses do: the product of a tensor's shape.
    with tf.device(DEVICE):
        x = tf.identity(np.zeros((3, 4, 5), np.float32))
        n = tf.reduce_prod(tf.shape(x))
    assert n.dtype == tf.int32 and int(n) == 60


@pytest.mark.parametrize("op", list(REDUCERS))
@pytest.mark.parametrize("shape,axes", [((2, 3), [2]), ((2, 3), [-3]), ((), [0]),
                                        ((2, 3), [1, -1]), ((2, 3, 4), [0, 2, 0])])
def test_int32_bad_axes_errors_match_cpu(op, shape, axes):
    x = np.ones(shape, np.int32)
    msg = assert_same_error(REDUCERS[op], x, tf.constant(axes))
    assert "reduction" in msg


# ---------------------------------------------------------------- Bitcast

BITCAST_CASES = [
    (np.float32, tf.int32, (3, 4)), (np.int32, tf.float32, (5,)), (np.float32, tf.int32, ()),
    (np.float32, tf.int32, (0, 3)), (np.float32, tf.uint8, (2, 3)), (np.uint8, tf.float32, (3, 4)),
    (np.uint8, tf.float32, (0, 4)), (np.int64, tf.int32, (4,)), (np.int32, tf.int64, (3, 2)),
    (np.float32, tf.int64, (5, 2)), (np.int64, tf.float32, ()), (np.float64, tf.int64, (2, 2)),
    (np.int64, tf.uint16, (2,)), (np.int16, tf.float16, (7,)), (np.uint32, tf.int32, (3,)),
]


@pytest.mark.parametrize("src,dst,shape", BITCAST_CASES)
def test_bitcast_matches_cpu(src, dst, shape, rng):
    x = rng.integers(0, 256, shape + (np.dtype(src).itemsize,), dtype=np.uint8)
    x = x.view(src).reshape(shape)
    if np.issubdtype(src, np.floating):  # finite values (NaN payloads aside)
        x = rng.standard_normal(shape).astype(src)
    got = assert_matches_cpu(lambda a: tf.bitcast(a, dst), x, rtol=0, atol=0)
    np.testing.assert_array_equal(np.asarray(got).reshape(-1).view(np.uint8),
                                  np.asarray(x).reshape(-1).view(np.uint8))


def test_bitcast_of_a_slice_reads_at_its_offset(rng):
    x = rng.standard_normal((4, 6)).astype(np.float32)
    with tf.device(DEVICE):
        parts = tf.unstack(tf.identity(x))
        got = [tf.bitcast(p, tf.int32).numpy() for p in parts]
    for p, g in zip(x, got):
        np.testing.assert_array_equal(g, p.view(np.int32))


def test_bitcast_int32_output_feeds_int32_ops(rng):
    # Keras's signbit: bitcast float32 -> int32, then an int32 comparison.
    x = np.array([-1.5, 0.0, -0.0, 2.0, -np.inf, np.inf], np.float32)
    got = assert_matches_cpu(lambda a: tf.less(tf.bitcast(a, tf.int32), 0), x)
    np.testing.assert_array_equal(got, np.signbit(x))


@pytest.mark.parametrize("src,dst,shape", [(np.int32, tf.int64, (3,)), (np.int32, tf.int64, ()),
                                           (np.uint8, tf.int32, (2, 3)), (np.uint8, tf.int32, (0,)),
                                           (np.float32, tf.float64, (4, 3))])
def test_bitcast_shape_errors_match_cpu(src, dst, shape):
    msg = assert_same_error(lambda a: tf.bitcast(a, dst), np.zeros(shape, src))
    assert "Cannot bitcast" in msg


# ---------------------------------------------------------------- int32 Cast and bitwise (host)
# What Keras's argmax / sparse_categorical_accuracy run besides the above:
# Cast with an int32 side and BitwiseAnd int32, host-memory kernels.

CAST_VALUES = {
    np.float32: np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 2.7, -2.7, 0.0, -0.0, 2147483520.0,
                          -2147483648.0, 1e-30], np.float32),
    np.int64: np.array([1 << 40, -(1 << 40) - 5, 7, -1, 0, (1 << 31), -(1 << 31) - 1], np.int64),
    np.bool_: np.array([True, False, True], np.bool_),
    np.int32: np.array([16777217, -3, 0, 1, 2147483647, -2147483648, 255], np.int32),
}


@pytest.mark.parametrize("src,dst", [(np.int32, tf.float32), (np.int32, tf.int64),
                                     (np.int32, tf.bool), (np.float32, tf.int32),
                                     (np.int64, tf.int32), (np.bool_, tf.int32)])
@pytest.mark.parametrize("shape", [None, (0, 3), ()])
def test_int32_cast_matches_cpu(src, dst, shape, rng):
    x = CAST_VALUES[src]
    if shape is not None:
        x = np.zeros(shape, src)
    # A float / int64 / bool result goes through an OPENCL op (it is made in
    # host memory), so on_opencl's check that it ends on OPENCL holds.
    fn = (lambda a: tf.cast(a, dst)) if dst == tf.int32 else (lambda a: tf.identity(tf.cast(a, dst)))
    assert_matches_cpu(fn, x, rtol=0, atol=0)


@pytest.mark.parametrize("op", [tf.bitwise.bitwise_and, tf.bitwise.bitwise_or,
                                tf.bitwise.bitwise_xor])
@pytest.mark.parametrize("sa,sb", [((6,), (6,)), ((3, 4), (4,)), ((3, 1), (1, 5)), ((), (2, 3)),
                                   ((0, 3), (3,)), ((2, 1, 4), (3, 1))])
def test_int32_bitwise_matches_cpu(op, sa, sb, rng):
    a = rng.integers(-(1 << 31), (1 << 31) - 1, sa, dtype=np.int64).astype(np.int32)
    b = rng.integers(-(1 << 31), (1 << 31) - 1, sb, dtype=np.int64).astype(np.int32)
    assert_matches_cpu(op, a, b, rtol=0, atol=0)


def test_int32_bitwise_shape_error_matches_cpu():
    a, b = np.ones((2, 3), np.int32), np.ones((4,), np.int32)
    msg = assert_same_error(tf.bitwise.bitwise_and, a, b)
    assert "Incompatible shapes" in msg


# ---------------------------------------------------------------- L2Loss

@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 4, 5), (1000, 1100)])
def test_l2loss_matches_cpu(shape, rng):
    x = rng.standard_normal(shape).astype(np.float32)
    assert_matches_cpu(gen_nn_ops.l2_loss, x, rtol=1e-5)


# ---------------------------------------------------------------- ArgMax / ArgMin

@pytest.mark.parametrize("fn", [tf.math.argmax, tf.math.argmin])
@pytest.mark.parametrize("shape,axis", [((7,), 0), ((3, 5), 0), ((3, 5), 1), ((3, 5), -1),
                                        ((2, 3, 4), 1), ((2, 3, 4), -3), ((4, 0), 0),
                                        ((0, 4), 1), ((2, 1, 3, 1, 2, 1, 2), 4),
                                        ((64, 1000), 1)])
@pytest.mark.parametrize("out", [tf.int64, tf.int32])
def test_argminmax_matches_cpu(fn, shape, axis, out, rng):
    x = rng.standard_normal(shape).astype(np.float32)
    got = assert_matches_cpu(fn, x, axis, output_type=out, rtol=0, atol=0)
    assert got.dtype == out.as_numpy_dtype


def test_argmax_int32_output_feeds_int32_ops(rng):
    # The int32 output is in device memory (TF's GPU registration); int32
    # consumers (host-memory kernels) get it copied.
    x = rng.standard_normal((6, 5)).astype(np.float32)

    @tf.function
    def f(v):
        a = tf.math.argmax(v, 1, output_type=tf.int32)
        return a + 1, tf.math.argmin(v, 0, output_type=tf.int32)

    got = on_opencl(f, x)
    np.testing.assert_array_equal(got[0], x.argmax(1) + 1)
    np.testing.assert_array_equal(got[1], x.argmin(0))


@pytest.mark.parametrize("fn", [tf.math.argmax, tf.math.argmin])
def test_argminmax_ties_and_nan(fn):
    x = np.array([[3.0, 1.0, 3.0, 1.0], [2.0, np.nan, 5.0, 0.0], [-np.inf] * 4,
                  [np.inf] * 4], np.float32)
    assert_matches_cpu(fn, x, 1, rtol=0, atol=0)


@pytest.mark.parametrize("fn", [tf.math.argmax, tf.math.argmin])
@pytest.mark.parametrize("shape,dim", [((2, 3), 2), ((2, 3), -3), ((), 0), ((0, 3), 0),
                                       ((2, 0), -1), ((2, 3), [0, 1])])
def test_argminmax_errors_match_cpu(fn, shape, dim):
    x = np.ones(shape, np.float32)
    raw = gen_math_ops.arg_max if fn is tf.math.argmax else gen_math_ops.arg_min
    for out in (tf.int64, tf.int32):
        assert_same_error(raw, x, tf.constant(dim, tf.int32), output_type=out)


# ---------------------------------------------------------------- Softmax

@pytest.mark.parametrize("fn", [gen_nn_ops.softmax, gen_nn_ops.log_softmax])
@pytest.mark.parametrize("shape", [(1,), (7,), (3, 5), (2, 3, 4), (0, 5), (4, 0), (64, 1000),
                                   (3, 257), (2, 4099), (5, 1, 300)])
def test_softmax_matches_cpu(fn, shape, rng):
    x = (3 * rng.standard_normal(shape)).astype(np.float32)
    assert_matches_cpu(fn, x, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fn", [gen_nn_ops.softmax, gen_nn_ops.log_softmax])
@pytest.mark.parametrize("depth", [3, 300])  # one work-item / one work-group per row
def test_softmax_extreme_logits(fn, depth):
    x = np.zeros((4, depth), np.float32)
    x[0, :3] = [1000.0, 0.0, -1000.0]
    x[1] = -1e30
    x[3, -1] = np.inf
    assert_matches_cpu(fn, x)


@pytest.mark.parametrize("fn", [gen_nn_ops.softmax, gen_nn_ops.log_softmax])
def test_softmax_of_a_scalar_is_an_error(fn):
    msg = assert_same_error(fn, np.float32(1.0))
    assert "logits must have >= 1 dimension" in msg


# ---------------------------------------------------------------- cross-entropies

@pytest.mark.parametrize("label_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("batch,depth", [(1, 1), (5, 7), (0, 3), (128, 10), (3, 2000)])
def test_sparse_xent_matches_cpu(label_dtype, batch, depth, rng):
    logits = (2 * rng.standard_normal((batch, depth))).astype(np.float32)
    labels = rng.integers(0, depth, batch).astype(label_dtype)
    assert_matches_cpu(gen_nn_ops.sparse_softmax_cross_entropy_with_logits, logits, labels,
                       rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("label_dtype", [np.int32, np.int64])
def test_sparse_xent_bad_labels_give_nan_rows(label_dtype, rng):
    # TensorFlow's GPU behaviour (its CPU kernel raises InvalidArgument).
    logits = rng.standard_normal((4, 3)).astype(np.float32)
    labels = np.array([0, 3, 2, -1], label_dtype)
    loss, backprop = on_opencl(gen_nn_ops.sparse_softmax_cross_entropy_with_logits, logits,
                               labels)
    assert np.isnan(loss[[1, 3]]).all() and np.isnan(backprop[[1, 3]]).all()
    good = np.array([0, 2])
    want = run(gen_nn_ops.sparse_softmax_cross_entropy_with_logits, logits[good],
               labels[good], device="/CPU:0")
    np.testing.assert_allclose(loss[good], want[0], rtol=1e-6)
    np.testing.assert_allclose(backprop[good], want[1], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("logits_shape,labels_shape", [((2, 3, 4), (2,)), ((2, 3), (1, 2)),
                                                       ((2, 3), (3,)), ((2, 0), (2,)),
                                                       ((0, 0), (0,))])
def test_sparse_xent_shape_errors_match_cpu(logits_shape, labels_shape):
    assert_same_error(gen_nn_ops.sparse_softmax_cross_entropy_with_logits,
                      np.zeros(logits_shape, np.float32), np.zeros(labels_shape, np.int64))


@pytest.mark.parametrize("logits_shape,labels_shape", [
    ((5, 7), (5, 7)), ((1, 1), (1, 1)), ((0, 4), (0, 4)), ((3, 0), (3, 0)),
    ((4, 6), (1, 6)), ((1, 6), (4, 6)), ((4, 6), (4, 1)), ((4, 1), (4, 6)),
    ((6,), (4, 6)), ((4, 6), (6,)), ((4, 6), ()), ((64, 1000), (64, 1000))])
def test_xent_matches_cpu(logits_shape, labels_shape, rng):
    logits = (2 * rng.standard_normal(logits_shape)).astype(np.float32)
    labels = rng.uniform(0, 1, labels_shape).astype(np.float32)
    assert_matches_cpu(gen_nn_ops.softmax_cross_entropy_with_logits, logits, labels,
                       rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("logits_shape,labels_shape", [((2, 3), (1, 2)), ((2, 3), (3, 3)),
                                                       ((2, 3, 4), (2, 3, 4)), ((3,), (3,)),
                                                       ((), ())])
def test_xent_shape_errors_match_cpu(logits_shape, labels_shape):
    assert_same_error(gen_nn_ops.softmax_cross_entropy_with_logits,
                      np.zeros(logits_shape, np.float32), np.zeros(labels_shape, np.float32))


@pytest.mark.parametrize("fn", [
    gen_nn_ops.softmax, gen_nn_ops.log_softmax,
    lambda a: gen_nn_ops.sparse_softmax_cross_entropy_with_logits(a, tf.constant([2, 2, 0, 1])),
    lambda a: gen_nn_ops.softmax_cross_entropy_with_logits(a, tf.constant(np.full((4, 3), 1 / 3, np.float32))),
    lambda a: tf.math.argmax(a, 1), lambda a: tf.math.argmin(a, 1),
    lambda a: tf.reduce_max(a, 1), lambda a: tf.reduce_sum(a, 1)])
def test_infinities_and_nans_match_cpu(fn):
    inf = np.inf
    x = np.array([[-inf, -inf, 0], [-inf, -inf, -inf], [inf, 0, 1], [np.nan, 0, 1]], np.float32)
    assert_matches_cpu(fn, x)


def test_inputs_at_an_offset_in_their_buffer(rng):
    # Slices of one device buffer (unstack): the kernels read at the offset.
    x = rng.standard_normal((4, 6, 5)).astype(np.float32)
    with tf.device(DEVICE):
        parts = tf.unstack(tf.identity(x))
        got = [(tf.reduce_sum(p, 1).numpy(), tf.nn.softmax(p).numpy(),
                tf.math.argmax(p, 0).numpy()) for p in parts]
    for p, (s, sm, am) in zip(x, got):
        np.testing.assert_allclose(s, p.sum(1), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(sm, np.exp(p) / np.exp(p).sum(1, keepdims=True), rtol=1e-5)
        np.testing.assert_array_equal(am, p.argmax(0))


# ---------------------------------------------------------------- in graphs and Keras

def test_in_a_tf_function(rng):
    logits = rng.standard_normal((16, 10)).astype(np.float32)
    labels = rng.integers(0, 10, 16).astype(np.int32)

    @tf.function
    def step(x, y):
        loss, _ = gen_nn_ops.sparse_softmax_cross_entropy_with_logits(x, y)
        return tf.reduce_mean(loss), tf.math.argmax(x, axis=-1), tf.nn.softmax(x)

    assert_matches_cpu(step, logits, labels)


def _keras_matches_cpu(fn, *args):
    return assert_matches_cpu(fn, *args, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("from_logits", [True, False])
def test_keras_sparse_categorical_crossentropy(from_logits, rng):
    logits = rng.standard_normal((32, 10)).astype(np.float32)
    labels = rng.integers(0, 10, 32).astype(np.int64)
    x = logits if from_logits else tf.nn.softmax(logits).numpy()
    loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=from_logits)
    _keras_matches_cpu(lambda y, p: loss(y, p), labels, x)


def test_keras_sparse_categorical_accuracy(rng):
    logits = rng.standard_normal((32, 10)).astype(np.float32)
    labels = rng.integers(0, 10, 32).astype(np.float32)
    _keras_matches_cpu(lambda y, p: tf.reduce_mean(tf.keras.metrics.sparse_categorical_accuracy(y, p)),
                   labels, logits)
