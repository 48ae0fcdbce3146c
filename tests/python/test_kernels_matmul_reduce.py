"""MatMul, BatchMatMulV2, Sum/Mean/Prod/Max/Min and ArgMax/ArgMin on PDK.

Every comparison goes through ``assert_matches_cpu``: the same function runs on
``/CPU:0`` (TensorFlow's own kernels) and on ``/PDK:0``, the named op must have
launched on PDK, and the outputs must agree.

Tolerances beyond the defaults of ``tensorflow_pdk.testing.TOLERANCES``:
- float32 matrix products: rtol 1e-4, atol 1e-4 (OpenBLAS and TensorFlow's
  oneDNN/Eigen GEMM sum the K products in different orders; K <= 800 here);
- float32 sums/means over >= 1e5 elements: rtol 1e-4, atol 1e-3 (Eigen's
  threaded tree reduction vs TF's, different summation order).
Integer results must match exactly.
"""
import numpy as np
import pytest
import tensorflow as tf

from tensorflow_pdk.testing import assert_matches_cpu, launches, random_array

FLOAT_MM_TOL = dict(rtol=1e-4, atol=1e-4)


def _mm_tol(dtype):
    return FLOAT_MM_TOL if np.dtype(dtype) == np.float32 else {}


def _on_both(fn):
    """Runs fn() on CPU and on PDK; returns the two exceptions raised (or None)."""
    errs = []
    for dev in ("/CPU:0", "/PDK:0"):
        try:
            with tf.device(dev):
                fn()
            errs.append(None)
        except tf.errors.InvalidArgumentError as e:
            errs.append(e)
    return errs


# --------------------------------------------------------------------- MatMul

MATMUL_SHAPES = [  # (m, k, n)
    (1, 1, 1),
    (0, 5, 3),
    (3, 0, 4),        # empty contraction: zeros
    (64, 128, 32),
    (300, 200, 100),  # parallel, split along rows
    (16, 400, 800),   # parallel, split along columns
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("transpose_b", [False, True])
def test_matmul(dtype, transpose_a, transpose_b, rng):
    for m, k, n in MATMUL_SHAPES:
        a = random_array((k, m) if transpose_a else (m, k), dtype, rng)
        b = random_array((n, k) if transpose_b else (k, n), dtype, rng)
        out = assert_matches_cpu(
            lambda x, y: tf.linalg.matmul(x, y, transpose_a=transpose_a, transpose_b=transpose_b),
            a, b, ops=["MatMul"], **_mm_tol(dtype))
        assert out[0].shape == (m, n)


# float32 products with a transposed A that pdk_compute::TransposedAGemm splits
# into dense blocks (src/compute/gemm.h; products of at least
# kSplitProductFlops, 32 MFLOP): (m, k, n) with k split over the pool (uneven
# ranges: k = 2001), and with A transposed first (n * 3 > k; and every
# transpose_b = True).
TRANSPOSED_A_SHAPES = [(130, 2001, 70), (128, 2048, 256), (784, 256, 512), (257, 600, 257)]


@pytest.mark.parametrize("transpose_b", [False, True])
@pytest.mark.parametrize("m,k,n", TRANSPOSED_A_SHAPES)
def test_matmul_transposed_a_float32(m, k, n, transpose_b, rng):
    """Against the CPU, and the same bits on a second run (the split depends
    on the shapes and the pool size only)."""
    a = random_array((k, m), np.float32, rng)
    b = random_array((n, k) if transpose_b else (k, n), np.float32, rng)
    fn = lambda x, y: tf.linalg.matmul(x, y, transpose_a=True, transpose_b=transpose_b)
    out = assert_matches_cpu(fn, a, b, ops=["MatMul"], rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(out[0], a.astype(np.float64).T @ (b.T if transpose_b else b),
                               rtol=1e-4, atol=1e-3)
    with tf.device("/PDK:0"):
        again = fn(tf.constant(a), tf.constant(b)).numpy()
    assert again.tobytes() == out[0].tobytes()


def test_matmul_gradients(rng):
    a = random_array((37, 53), np.float32, rng)
    b = random_array((53, 29), np.float32, rng)
    g = random_array((37, 29), np.float32, rng)

    def fn(x, y, dy):
        with tf.GradientTape() as tape:
            tape.watch([x, y])
            z = tf.linalg.matmul(x, y)
        dx, dyy = tape.gradient(z, [x, y], output_gradients=dy)
        return z, dx, dyy

    with launches() as delta:
        out = assert_matches_cpu(fn, a, b, g, ops=["MatMul"], **FLOAT_MM_TOL)
    assert delta["MatMul"] == 3, delta  # forward + both gradients on PDK
    np.testing.assert_allclose(out[1], g @ b.T, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(out[2], a.T @ g, rtol=1e-4, atol=1e-4)


def test_matmul_incompatible_shapes():
    with tf.device("/PDK:0"):
        with launches() as delta:
            with pytest.raises(tf.errors.InvalidArgumentError) as e:
                tf.linalg.matmul(tf.ones([3, 4]), tf.ones([5, 6]))
    assert delta.get("MatMul", 0) == 1
    msg = str(e.value)
    assert "[3,4]" in msg and "[5,6]" in msg, msg
    assert "(4)" in msg and "(5)" in msg, msg


def test_matmul_rank_error():
    cpu, pdk = _on_both(lambda: tf.raw_ops.MatMul(a=tf.ones([3, 4, 1]), b=tf.ones([4, 6])))
    assert cpu is not None and pdk is not None
    assert "[3,4,1]" in str(pdk), str(pdk)


# -------------------------------------------------------------- BatchMatMulV2

BMM_SHAPES = [  # (x batch, y batch, m, k, n)
    ((2,), (2,), 3, 4, 5),
    ((2, 1), (3,), 3, 4, 6),      # -> batch [2,3]
    ((), (4, 2), 5, 3, 2),        # rank-2 x broadcast over y's batch
    ((3, 1, 2), (1, 4, 1), 2, 3, 2),
    ((1,), (1,), 256, 128, 192),  # one large product: row-split across threads
    ((6,), (1,), 64, 96, 80),     # many products: batch-split across threads
    ((0,), (1,), 3, 4, 5),        # empty batch
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("adj_x", [False, True])
@pytest.mark.parametrize("adj_y", [False, True])
def test_batch_matmul_v2(dtype, adj_x, adj_y, rng):
    for xb, yb, m, k, n in BMM_SHAPES:
        x = random_array(xb + ((k, m) if adj_x else (m, k)), dtype, rng)
        y = random_array(yb + ((n, k) if adj_y else (k, n)), dtype, rng)
        out = assert_matches_cpu(
            lambda p, q: tf.raw_ops.BatchMatMulV2(x=p, y=q, adj_x=adj_x, adj_y=adj_y),
            x, y, ops=["BatchMatMulV2"], **_mm_tol(dtype))
        assert out[0].shape == np.broadcast_shapes(xb, yb) + (m, n)


def test_batch_matmul_v2_errors():
    cpu, pdk = _on_both(lambda: tf.raw_ops.BatchMatMulV2(x=tf.ones([2, 3, 4]), y=tf.ones([3, 4, 6])))
    assert cpu is not None and pdk is not None
    assert "[2]" in str(pdk) and "[3]" in str(pdk), str(pdk)
    cpu, pdk = _on_both(lambda: tf.raw_ops.BatchMatMulV2(x=tf.ones([2, 3, 4]), y=tf.ones([2, 5, 6])))
    assert cpu is not None and pdk is not None
    assert "[2,3,4]" in str(pdk) and "[2,5,6]" in str(pdk), str(pdk)


# ----------------------------------------------------------------- reductions

REDUCTIONS = {
    "Sum": tf.math.reduce_sum,
    "Mean": tf.math.reduce_mean,
    "Prod": tf.math.reduce_prod,
    "Max": tf.math.reduce_max,
    "Min": tf.math.reduce_min,
}
RED_SHAPES = [(), (0,), (5,), (3, 4), (2, 3, 4), (2, 0, 3)]
RED_AXES = [None, 0, -1, [0, 2], [1]]


def _red_input(op, shape, dtype, rng):
    if op == "Prod":  # keep products in range: exact for ints, tame for floats
        if np.dtype(dtype).kind == "i":
            return rng.choice(np.array([-2, -1, 1, 2], dtype=dtype), size=shape)
        return rng.uniform(0.5, 1.5, size=shape).astype(dtype)
    return random_array(shape, dtype, rng)


def _axes_valid(shape, axes):
    if axes is None:
        return True
    return all(-len(shape) <= a < len(shape) for a in np.atleast_1d(axes))


@pytest.mark.parametrize("op", list(REDUCTIONS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("shape", RED_SHAPES, ids=str)
def test_reduction(op, dtype, shape, rng):
    fn = REDUCTIONS[op]
    x = _red_input(op, shape, dtype, rng)
    for axes in RED_AXES:
        for keep in (False, True):
            what = f"{op}({shape}, axis={axes}, keepdims={keep})"
            f = lambda t: fn(t, axis=axes, keepdims=keep)  # noqa: E731
            if _axes_valid(shape, axes):
                out = assert_matches_cpu(f, x, ops=[op])
                assert out[0].dtype == np.dtype(dtype), what
            else:  # out-of-range axis: InvalidArgument on both devices
                cpu, pdk = _on_both(lambda: f(tf.constant(x)))
                assert cpu is not None and pdk is not None, what
                assert "reduction" in str(pdk) and str(list(shape)).replace(" ", "") in str(pdk), \
                    str(pdk)


@pytest.mark.parametrize("op", list(REDUCTIONS))
@pytest.mark.parametrize("shape,axes", [
    ((2, 3, 4, 5, 6), [0, 2, 4]),            # 5 alternating runs: general 8-D path
    ((3, 4, 5, 6, 7), [1, 3]),               # K R K R K
    ((2, 3, 2, 3, 2, 3, 2), [0, 2, 4, 6]),   # 7 runs starting reduced
    ((3, 1, 4, 1, 5), [1, 2]),               # size-1 dims merge into neighbours
    ((1, 1, 6), [0, 1]),                     # only size-1 dims reduced: a copy
    ((7, 1), [1]),
    ((40, 50, 60), [0, 2]),                  # R K R, threaded
    ((40, 50, 60), [1]),                     # K R K, threaded
])
def test_reduction_layouts(op, shape, axes, rng):
    x = _red_input(op, shape, np.float64, rng)
    for keep in (False, True):
        assert_matches_cpu(lambda t: REDUCTIONS[op](t, axis=axes, keepdims=keep), x, ops=[op])


@pytest.mark.parametrize("op", ["Sum", "Mean", "Max", "Min"])
@pytest.mark.parametrize("shape,axes", [((1000, 300), None), ((1000, 300), 0), ((1000, 300), 1),
                                        ((1 << 20,), 0)])
def test_reduction_large_float32(op, shape, axes, rng):
    x = random_array(shape, np.float32, rng)
    assert_matches_cpu(lambda t: REDUCTIONS[op](t, axis=axes), x, ops=[op], rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("op", ["Sum", "Mean", "Max"])
@pytest.mark.parametrize("shape,axes", [((5, 100003), 1), ((100003, 5), 0), ((2048, 128), 1),
                                        ((2048, 128), 0), ((1024, 1024), 1), ((1024, 1024), 0)])
def test_reduction_two_runs_bitwise_as_cpu(op, shape, axes, rng):
    """[K R] -> [K] and [R K] -> [K] split their outputs over the pool in blocks,
    each reducing its elements with the element's own input indices: the bits
    of TensorFlow's CPU kernel, also where Eigen's tree over a long inner run
    (100003) splits at packet boundaries counted from the input's start."""
    x = random_array(shape, np.float32, rng) * 37.0
    assert_matches_cpu(lambda t: REDUCTIONS[op](t, axis=axes), x, ops=[op], rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_reduction_large_int(dtype, rng):
    x = random_array((512, 513), dtype, rng)
    for op in ("Sum", "Mean", "Max", "Min"):
        for axes in (None, 0, 1):
            assert_matches_cpu(lambda t: REDUCTIONS[op](t, axis=axes), x, ops=[op])


def test_mean_int32_accumulates_wide():
    # TF sums int32 in int64 for Mean: 3 * 2^30 does not overflow.
    x = np.full((2, 3), 1 << 30, np.int32)
    out = assert_matches_cpu(lambda t: tf.reduce_mean(t, axis=1), x, ops=["Mean"])
    np.testing.assert_array_equal(out[0], [1 << 30, 1 << 30])
    # Integer division truncates toward zero: -7 / 3 == -2.
    out = assert_matches_cpu(lambda t: tf.reduce_mean(t), np.array([-7, 0, 0], np.int32),
                             ops=["Mean"])
    assert out[0] == -2


@pytest.mark.parametrize("op", ["Max", "Min", "Sum"])
def test_reduction_nan_inf(op):
    x = np.array([[1.0, np.nan, 2.0], [np.inf, -np.inf, 3.0], [4.0, 5.0, -1.0]], np.float32)
    for axes in (None, 0, 1):
        assert_matches_cpu(lambda t: REDUCTIONS[op](t, axis=axes), x, ops=[op])


@pytest.mark.parametrize("idx_dtype", [tf.int32, tf.int64])
def test_reduction_indices_dtype_and_forms(idx_dtype, rng):
    x = random_array((2, 3, 4), np.float32, rng)
    for axes in (1, [-1], [2, 0], [], [[0], [1]]):
        for op in ("Sum", "Max"):
            raw = getattr(tf.raw_ops, op)
            assert_matches_cpu(
                lambda t: raw(input=t, axis=tf.constant(axes, idx_dtype), keep_dims=False),
                x, ops=[op])


def test_reduction_empty_axes_is_identity(rng):
    x = random_array((3, 4), np.int32, rng)
    out = assert_matches_cpu(
        lambda t: tf.raw_ops.Prod(input=t, axis=tf.constant([], tf.int32), keep_dims=False),
        x, ops=["Prod"])
    np.testing.assert_array_equal(out[0], x)


@pytest.mark.parametrize("axes", [[0, 0], [1, -1]])
def test_reduction_duplicate_axes(axes):
    cpu, pdk = _on_both(lambda: tf.raw_ops.Sum(input=tf.ones([2, 3]), axis=tf.constant(axes),
                                               keep_dims=False))
    assert cpu is not None and pdk is not None
    assert "more than once" in str(pdk), str(pdk)


@pytest.mark.parametrize("axis", [2, -3])
def test_reduction_axis_out_of_range(axis):
    with launches() as delta:
        cpu, pdk = _on_both(lambda: tf.raw_ops.Sum(input=tf.ones([2, 3]),
                                                   axis=tf.constant([axis]), keep_dims=False))
    assert delta.get("Sum", 0) == 1
    assert cpu is not None and pdk is not None
    msg = str(pdk)
    assert "[2,3]" in msg and str(axis) in msg and "[-2, 2)" in msg, msg


# ------------------------------------------------------------ ArgMax / ArgMin

ARG_OPS = {"ArgMax": tf.math.argmax, "ArgMin": tf.math.argmin}


def _tied_input(shape, dtype, rng):
    # Few distinct values so that ties are common.
    return rng.integers(0, 3, size=shape).astype(dtype)


@pytest.mark.parametrize("op", list(ARG_OPS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("output_type", [tf.int32, tf.int64])
def test_argminmax(op, dtype, output_type, rng):
    fn = ARG_OPS[op]
    for shape in [(5,), (3, 4), (2, 3, 4), (4, 300, 3), (2, 700)]:
        x = _tied_input(shape, dtype, rng)
        for axis in range(-len(shape), len(shape)):
            out = assert_matches_cpu(lambda t: fn(t, axis=axis, output_type=output_type), x,
                                     ops=[op])
            assert out[0].dtype == output_type.as_numpy_dtype
            # independent check: numpy's argmax/argmin also pick the first tie
            ref = np.argmax(x, axis=axis) if op == "ArgMax" else np.argmin(x, axis=axis)
            np.testing.assert_array_equal(out[0], ref)


@pytest.mark.parametrize("op", list(ARG_OPS))
def test_argminmax_nan_inf(op):
    rows = [[np.nan, 1.0], [1.0, np.nan], [np.nan, np.nan], [-np.inf, -np.inf],
            [np.inf, np.inf], [np.nan, -np.inf], [2.0, 2.0]]
    x = np.array(rows, np.float32)
    assert_matches_cpu(lambda t: ARG_OPS[op](t, axis=1), x, ops=[op])
    # long rows (the vectorized contiguous scan) with NaN, +-inf and ties
    rng = np.random.default_rng(7)
    y = rng.integers(-2, 3, size=(6, 517)).astype(np.float64)
    y[rng.random(y.shape) < 0.2] = np.nan
    y[1, :] = -np.inf
    y[2, :] = np.inf
    y[3, :] = np.nan
    y[4, 300:] = np.inf
    y[5, 40] = np.nan
    for axis in (0, 1):
        assert_matches_cpu(lambda t: ARG_OPS[op](t, axis=axis), y, ops=[op])


@pytest.mark.parametrize("op", list(ARG_OPS))
def test_argminmax_edge_cases(op, rng):
    raw = getattr(tf.raw_ops, op)
    x = random_array((3, 4), np.float32, rng)
    # int64 dimension in host memory
    assert_matches_cpu(lambda t: raw(input=t, dimension=tf.constant(-1, tf.int64)), x, ops=[op])
    # empty output: fine
    out = assert_matches_cpu(lambda t: raw(input=t, dimension=0), np.zeros((3, 0), np.float32),
                             ops=[op])
    assert out[0].shape == (0,)
    # empty reduced dimension with non-empty output, out-of-range and non-scalar dimension
    for make in (lambda: raw(input=tf.zeros([0, 3]), dimension=0),
                 lambda: raw(input=tf.ones([2, 3]), dimension=2),
                 lambda: raw(input=tf.ones([2, 3]), dimension=-3),
                 lambda: raw(input=tf.ones([2, 3]), dimension=[1])):
        cpu, pdk = _on_both(make)
        assert cpu is not None and pdk is not None
        assert op in str(pdk) and "shape" in str(pdk), str(pdk)
