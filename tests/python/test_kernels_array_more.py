"""Array kernels Keras models need beyond the basics: Slice, StridedSliceGrad,
GatherV2 (axis, batch_dims), UnsortedSegmentSum/Max/Min/Prod, Pad, PadV2,
MirrorPad, MirrorPadGrad, Split, SplitV, ReverseV2, OneHot, Range, Cumsum,
Cumprod, TopKV2, Where; gradients through them; an Embedding model.

Each test runs on /CPU:0 and /PDK:0 (tensorflow_pdk.testing), checks the
results agree with TensorFlow's CPU kernel and that the op launched a PDK
kernel (so a silent CPU fallback fails).
"""
import numpy as np
import pytest
import tensorflow as tf

import tensorflow_pdk
from tensorflow_pdk.testing import assert_matches_cpu, launches, random_array, run_on

DT4 = [np.float32, np.float64, np.int32, np.int64]
DT4_IDS = [np.dtype(d).name for d in DT4]
DT5 = DT4 + [np.bool_]
DT5_IDS = DT4_IDS + ["bool"]


def dtypes(lst=DT4, ids=DT4_IDS):
    return pytest.mark.parametrize("dtype", lst, ids=ids)


def arr(shape, dtype, rng):
    return random_array(shape, dtype, rng)


def raises_invalid(fn, *fragments):
    """Runs fn on PDK; asserts an InvalidArgumentError from the PDK kernel whose
    message holds every fragment."""
    with tf.device("/PDK:0"):
        with pytest.raises(tf.errors.InvalidArgumentError) as e:
            fn()
    msg = str(e.value)
    assert "PDK" in msg, msg
    for f in fragments:
        assert f in msg, f"{f!r} not in {msg!r}"
    return msg


def test_registered():
    ops = {r.op for r in tensorflow_pdk.registered_kernels()}
    for op in ["Slice", "StridedSliceGrad", "GatherV2", "UnsortedSegmentSum",
               "UnsortedSegmentMax", "UnsortedSegmentMin", "UnsortedSegmentProd", "Pad", "PadV2",
               "MirrorPad", "MirrorPadGrad", "Split", "SplitV", "ReverseV2", "OneHot", "Range",
               "Cumsum", "Cumprod", "TopKV2", "Where"]:
        assert op in ops, op


# ------------------------------------------------------------------------- Slice

SLICES = [((), [], []), ((0,), [0], [-1]), ((7,), [2], [3]), ((7,), [0], [-1]),
          ((3, 4), [1, 1], [2, -1]), ((3, 4), [3, 0], [0, 4]), ((2, 3, 4, 5), [1, 0, 1, 2], [1, 3, 2, -1]),
          ((2, 3, 4, 5), [0, 1, 0, 0], [2, 2, 4, 5]), ((2, 0, 3), [1, 0, 1], [1, 0, 2])]


@dtypes(DT5, DT5_IDS)
def test_slice(dtype, rng):
    for shape, b, s in SLICES:
        b, s = np.asarray(b, np.int32), np.asarray(s, np.int32)
        assert_matches_cpu(lambda x: tf.slice(x, b, s), arr(shape, dtype, rng), ops=["Slice"])


def test_slice_int64_large_and_errors(rng):
    x = arr((64, 300, 9), np.float32, rng)
    assert_matches_cpu(lambda t: tf.slice(t, tf.constant([3, 7, 2], tf.int64),
                                          tf.constant([50, 280, 5], tf.int64)), x, ops=["Slice"])
    assert_matches_cpu(lambda t: tf.slice(t, [3, 0, 0], [50, -1, -1]), x, ops=["Slice"])
    x = arr((3, 4), np.float32, rng)
    raises_invalid(lambda: tf.slice(x, [1, 2], [3, 1]), "Slice", "size[0]", "[0, 2]", "3")
    raises_invalid(lambda: tf.slice(x, [0, 5], [1, 0]), "Slice", "begin[1]", "[0, 4]", "5")


# ------------------------------------------------------------ StridedSliceGrad


@dtypes(DT5, DT5_IDS)
def test_strided_slice_grad_raw(dtype, rng):
    cases = [([5, 6], [1, -1], [4, 0], [1, -2], 0, 0, 0),
             ([2, 3, 4], [1, 0], [2, 0], [1, 1], 0, 0, 1),      # shrink axis 0
             ([4, 3], [0, 0], [0, 0], [1, 1], 3, 3, 0),         # all masked
             ([3, 0], [0], [2], [1], 0, 0, 0)]                  # empty
    for shape, b, e, s, bm, em, sm in cases:
        ref = tf.strided_slice(np.zeros(shape, np.float32), b, e, s, begin_mask=bm,
                               end_mask=em, shrink_axis_mask=sm)
        dy = arr(ref.shape.as_list(), dtype, rng)
        assert_matches_cpu(
            lambda d: tf.raw_ops.StridedSliceGrad(shape=tf.constant(shape), begin=b, end=e,
                                                  strides=s, dy=d, begin_mask=bm, end_mask=em,
                                                  shrink_axis_mask=sm),
            dy, ops=["StridedSliceGrad"])


def test_strided_slice_grad_bad_dy(rng):
    raises_invalid(lambda: tf.raw_ops.StridedSliceGrad(
        shape=tf.constant([5]), begin=[1], end=[3], strides=[1], dy=tf.zeros([3])),
        "StridedSliceGrad", "[3]", "[2]")


# ----------------------------------------------------------------------- GatherV2

GATHERS = [  # params shape, indices, axis, batch_dims
    ((5,), np.array([4, 0, 2, 2]), 0, 0),
    ((5,), np.array(3), 0, 0),
    ((5, 3), np.array([[1, 0], [4, 4], [2, 3]]), 0, 0),
    ((5, 3), np.array([2, 0, 1, 1]), 1, 0),
    ((5, 3), np.array([2, 0]), -1, 0),
    ((2, 4, 3), np.array([], np.int64).reshape(0, 2), 1, 0),
    ((0, 3), np.array([], np.int32), 0, 0),
    ((3, 6, 2), np.array([[5, 0], [1, 1], [3, 2]]), 1, 1),
    ((3, 6, 2), np.array([[1, 0, 1], [0, 0, 1], [1, 1, 1]]), 2, 1),
    ((2, 3, 4, 5), np.array([[[3, 0], [1, 2], [0, 0]], [[4, 4], [2, 1], [3, 3]]]), 3, -1),
    ((2, 3, 4, 5), np.array([[3, 0, 1], [2, 2, 2]]), 2, 1),
    ((2, 3, 4, 5), np.array([[1, 0, 2], [2, 2, 0]]), -2, -1),
]


@dtypes(DT5, DT5_IDS)
@pytest.mark.parametrize("itype", [np.int32, np.int64])
def test_gather(dtype, itype, rng):
    for shape, idx, axis, bd in GATHERS:
        assert_matches_cpu(lambda p, i: tf.gather(p, i, axis=axis, batch_dims=bd),
                           arr(shape, dtype, rng), idx.astype(itype), ops=["GatherV2"])


def test_gather_large_and_int64_axis(rng):
    p = arr((300, 70, 8), np.float32, rng)
    i = rng.integers(0, 70, size=(40, 3)).astype(np.int32)
    assert_matches_cpu(lambda a, b: tf.gather(a, b, axis=tf.constant(1, tf.int64)), p, i,
                       ops=["GatherV2"])
    # An embedding lookup (copied on the calling thread) and an output over
    # 4 MiB (kInlineGatherBytes: split over the device pool).
    for vocab, width, n in [(5000, 64, 2560), (3000, 256, 5000)]:
        table = arr((vocab, width), np.float32, rng)
        ids = rng.integers(0, vocab, size=n).astype(np.int32)
        assert_matches_cpu(lambda a, b: tf.gather(a, b), table, ids, ops=["GatherV2"])


def test_gather_out_of_range():
    p = np.arange(10, dtype=np.float32).reshape(5, 2)
    raises_invalid(lambda: tf.gather(p, [[0, 1], [7, 2]]), "indices[1,0] = 7", "[0, 5)")
    raises_invalid(lambda: tf.gather(p, [-1]), "indices[0] = -1", "[0, 5)")
    raises_invalid(lambda: tf.gather(p, [0, 2, 1], axis=1), "= 2", "[0, 2)")
    raises_invalid(lambda: tf.gather(p, [0], axis=2), "Shape must be at least rank 3 but is rank 2")


# ---------------------------------------------------------- UnsortedSegment*

SEGMENTS = [  # data shape, ids, num_segments
    ((6,), [0, 2, 2, -1, 0, 3], 4),
    ((6, 3), [1, 1, 0, 4, -3, 1], 6),
    ((2, 3, 4), [[0, 1, 1], [2, 0, 1]], 3),
    ((0, 2), np.zeros([0], np.int32), 2),
    ((4, 2), [0, 1, 0, 1], 0 + 2),
    ((3,), [0, 0, 0], 0 + 1),
]


@dtypes()
@pytest.mark.parametrize("op", ["UnsortedSegmentSum", "UnsortedSegmentMax", "UnsortedSegmentMin",
                                "UnsortedSegmentProd"])
def test_unsorted_segment(op, dtype, rng):
    f = getattr(tf.raw_ops, op)
    for shape, ids, n in SEGMENTS:
        for itype in (np.int32, np.int64):
            ids_a = np.asarray(ids, dtype=itype)
            assert_matches_cpu(lambda d, i: f(data=d, segment_ids=i, num_segments=n),
                               arr(shape, dtype, rng), ids_a, ops=[op])


def test_unsorted_segment_sum_large_and_errors(rng):
    d = arr((3000, 40), np.float32, rng)
    ids = rng.integers(-1, 50, size=3000).astype(np.int64)
    assert_matches_cpu(lambda a, b: tf.math.unsorted_segment_sum(a, b, tf.constant(50, tf.int64)),
                       d, ids, ops=["UnsortedSegmentSum"])
    # An embedding's gradient (Keras's sparse Adam update) and wide rows.
    for rows, width, num in [(2560, 64, 2200), (300, 2048, 50)]:
        ids = rng.integers(0, num, size=rows).astype(np.int32)
        assert_matches_cpu(lambda a, b: tf.math.unsorted_segment_sum(a, b, num),
                           arr((rows, width), np.float32, rng), ids, ops=["UnsortedSegmentSum"])
    raises_invalid(lambda: tf.math.unsorted_segment_sum(tf.ones([4]), [0, 1, 5, 0], 3),
                   "segment_ids[2] = 5", "[0, 3)")


# --------------------------------------------------------------------------- Pad

PADS = [((), []), ((0,), [[1, 2]]), ((5,), [[0, 3]]), ((3, 4), [[1, 0], [2, 2]]),
        ((2, 3, 4), [[0, 0], [1, 1], [0, 0]]), ((2, 0, 3), [[1, 1], [2, 0], [0, 1]]),
        ((3, 2), [[0, 0], [0, 0]])]


@dtypes(DT5, DT5_IDS)
def test_pad(dtype, rng):
    for shape, p in PADS:
        p = np.asarray(p, np.int32).reshape(len(shape), 2)
        x = arr(shape, dtype, rng)
        assert_matches_cpu(lambda t: tf.pad(t, p), x, ops=["Pad"] if p.any() else [])
        c = True if dtype == np.bool_ else 3
        assert_matches_cpu(lambda t: tf.pad(t, p.astype(np.int64), constant_values=c), x,
                           ops=["PadV2"])


def test_pad_large_and_errors(rng):
    x = arr((70, 300, 3), np.float32, rng)
    assert_matches_cpu(lambda t: tf.pad(t, [[2, 3], [0, 1], [4, 4]]), x, ops=["Pad"])
    raises_invalid(lambda: tf.raw_ops.Pad(input=tf.ones([2, 2]), paddings=[[1, 1]]),
                   "Pad", "[2, 2]", "[1,2]")
    raises_invalid(lambda: tf.raw_ops.Pad(input=tf.ones([2]), paddings=[[1, -1]]),
                   "Pad", "non-negative")


MIRRORS = [((5,), [[2, 4]]), ((3, 4), [[1, 2], [3, 0]]), ((2, 3, 4), [[1, 1], [0, 2], [3, 3]]),
           ((2, 3), [[0, 0], [0, 0]])]


@dtypes(DT5, DT5_IDS)
@pytest.mark.parametrize("mode", ["REFLECT", "SYMMETRIC"])
def test_mirror_pad(mode, dtype, rng):
    for shape, p in MIRRORS:
        p = np.minimum(np.asarray(p), np.asarray(shape)[:, None] - (mode == "REFLECT"))
        assert_matches_cpu(lambda t: tf.pad(t, p, mode=mode), arr(shape, dtype, rng),
                           ops=["MirrorPad"])


@dtypes()
@pytest.mark.parametrize("mode", ["REFLECT", "SYMMETRIC"])
def test_mirror_pad_grad(mode, dtype, rng):
    for shape, p in MIRRORS:
        p = np.minimum(np.asarray(p), np.asarray(shape)[:, None] - (mode == "REFLECT"))
        padded = [s + a + b for s, (a, b) in zip(shape, p)]
        assert_matches_cpu(lambda g: tf.raw_ops.MirrorPadGrad(input=g, paddings=p, mode=mode),
                           arr(padded, dtype, rng), ops=["MirrorPadGrad"])


def test_mirror_pad_errors():
    raises_invalid(lambda: tf.pad(tf.ones([3]), [[3, 0]], mode="REFLECT"), "MirrorPad",
                   "less than the dimension size: 3, 0 not less than 3", "REFLECT")
    raises_invalid(lambda: tf.pad(tf.ones([3]), [[0, 4]], mode="SYMMETRIC"),
                   "no greater than the dimension size: 0, 4 greater than 3", "SYMMETRIC")


# ------------------------------------------------------------------ Split, SplitV


@dtypes(DT5, DT5_IDS)
def test_split(dtype, rng):
    for shape, n, axis in [((6,), 3, 0), ((4, 6), 2, 1), ((4, 6), 2, -2), ((2, 9, 3), 3, 1),
                           ((2, 0, 3), 3, 2), ((3, 5), 1, 1), ((0, 4), 2, 1)]:
        assert_matches_cpu(lambda t: tf.split(t, n, axis=axis), arr(shape, dtype, rng),
                           ops=["Split"])


@dtypes(DT5, DT5_IDS)
def test_split_v(dtype, rng):
    for shape, sizes, axis in [((7,), [2, 5], 0), ((4, 6), [1, -1, 2], 1), ((4, 6), [0, 4], -2),
                               ((2, 9, 3), [3, 3, 2, 1], 1), ((3, 2, 5), [5], -1), ((3, 0, 2), [-1, 0], 1)]:
        assert_matches_cpu(lambda t: tf.split(t, sizes, axis=axis), arr(shape, dtype, rng),
                           ops=["SplitV"])


def test_split_large_and_errors(rng):
    x = arr((8, 400, 30), np.float32, rng)
    assert_matches_cpu(lambda t: tf.split(t, 4, axis=1), x, ops=["Split"])
    assert_matches_cpu(lambda t: tf.split(t, tf.constant([100, 250, 50], tf.int64), axis=1),
                       x, ops=["SplitV"])
    raises_invalid(lambda: tf.raw_ops.Split(axis=1, value=tf.ones([2, 5]), num_split=2),
                   "Split", "num_split 2", "size = 5")
    raises_invalid(lambda: tf.raw_ops.SplitV(value=tf.ones([2, 5]), size_splits=[1, 2],
                                             axis=1, num_split=2), "SplitV", "sum to 3", "5")
    raises_invalid(lambda: tf.raw_ops.SplitV(value=tf.ones([2, 5]), size_splits=[-1, -1],
                                             axis=1, num_split=2), "SplitV", "one -1")
    raises_invalid(lambda: tf.raw_ops.SplitV(value=tf.ones([2, 5]), size_splits=[-1],
                                             axis=1, num_split=1), "SplitV", "only one output")


# ---------------------------------------------------------------------- ReverseV2


@dtypes(DT5, DT5_IDS)
def test_reverse(dtype, rng):
    for shape, axes in [((), []), ((0,), [0]), ((7,), [0]), ((3, 4), [1]), ((3, 4), [-2]),
                        ((3, 4), [0, 1]), ((2, 3, 4, 5), [1, 3]), ((2, 1, 4, 5), [0, 1, 2]),
                        ((2, 3, 4), [])]:
        assert_matches_cpu(lambda t: tf.reverse(t, axes), arr(shape, dtype, rng),
                           ops=["ReverseV2"])


def test_reverse_large_and_errors(rng):
    x = arr((40, 500, 7), np.float32, rng)
    assert_matches_cpu(lambda t: tf.reverse(t, tf.constant([0, 2], tf.int64)), x,
                       ops=["ReverseV2"])
    assert_matches_cpu(lambda t: tf.reverse(t, [1]), x, ops=["ReverseV2"])
    raises_invalid(lambda: tf.reverse(tf.ones([2, 3]), [2]), "ReverseV2", "[-2, 2)")
    raises_invalid(lambda: tf.reverse(tf.ones([2, 3]), [1, -1]), "ReverseV2", "more than once")


# ------------------------------------------------------------------------- OneHot


@dtypes(DT5, DT5_IDS)
@pytest.mark.parametrize("itype", [np.int32, np.int64, np.uint8])
def test_one_hot(dtype, itype, rng):
    on, off = (True, False) if dtype == np.bool_ else (5, -1)
    for ishape, depth, axis in [((), 4, -1), ((6,), 5, -1), ((6,), 5, 0), ((2, 3), 4, 1),
                                ((2, 3), 4, 2), ((0, 3), 2, -1), ((4,), 0, -1)]:
        idx = rng.integers(-1 if itype != np.uint8 else 0, depth + 2, size=ishape).astype(itype)
        assert_matches_cpu(
            lambda i: tf.one_hot(i, depth, on_value=tf.constant(on, dtype),
                                 off_value=tf.constant(off, dtype), axis=axis, dtype=dtype),
            idx, ops=["OneHot"])


def test_one_hot_errors():
    raises_invalid(lambda: tf.raw_ops.OneHot(indices=[1, 2], depth=-2, on_value=1.0,
                                             off_value=0.0), "OneHot", "depth", "-2")


# -------------------------------------------------------------------------- Range


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.int32, tf.int64],
                         ids=["float32", "float64", "int32", "int64"])
def test_range(dtype):
    for start, limit, delta in [(0, 10, 1), (3, 17, 4), (10, -3, -3), (5, 5, 1), (-4, 9, 5)]:
        assert_matches_cpu(lambda: tf.range(tf.constant(start, dtype), tf.constant(limit, dtype),
                                            tf.constant(delta, dtype)), ops=["Range"])
    if dtype.is_floating:
        assert_matches_cpu(lambda: tf.range(tf.constant(0.1, dtype), tf.constant(7.3, dtype),
                                            tf.constant(0.1, dtype)), ops=["Range"], rtol=0, atol=0)


def test_range_errors():
    raises_invalid(lambda: tf.raw_ops.Range(start=0, limit=5, delta=0), "Range", "delta != 0")
    raises_invalid(lambda: tf.raw_ops.Range(start=6, limit=5, delta=1), "Range", "start <= limit")
    raises_invalid(lambda: tf.range(tf.constant(1.0), 5.0, -1.0), "start >= limit")


# ---------------------------------------------------------------- Cumsum, Cumprod


@dtypes()
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_scan(op, dtype, rng):
    f = getattr(tf.math, op)
    for shape, axis in [((0,), 0), ((7,), 0), ((3, 4), 1), ((3, 4), -2), ((2, 3, 4), 1),
                        ((2, 0, 3), 2)]:
        x = arr(shape, dtype, rng) if op == "cumsum" else random_array(shape, dtype, rng, -1.5, 1.5)
        for exclusive in (False, True):
            for reverse in (False, True):
                assert_matches_cpu(lambda t: f(t, axis, exclusive=exclusive, reverse=reverse), x,
                                   ops=["Cumsum" if op == "cumsum" else "Cumprod"])


def test_cumsum_large_and_errors(rng):
    x = arr((64, 2000), np.float32, rng)
    assert_matches_cpu(lambda t: tf.math.cumsum(t, axis=tf.constant(1, tf.int64)), x,
                       ops=["Cumsum"])
    assert_matches_cpu(lambda t: tf.math.cumsum(t, axis=0, reverse=True), x, ops=["Cumsum"])
    raises_invalid(lambda: tf.math.cumsum(tf.ones([2, 3]), axis=2), "Cumsum", "[-2, 2)")


# ------------------------------------------------------------------------- TopKV2


@dtypes()
def test_top_k(dtype, rng):
    for shape, k in [((7,), 3), ((7,), 7), ((7,), 0), ((4, 9), 1), ((2, 3, 10), 4), ((0, 5), 2)]:
        x = rng.integers(-3, 4, size=shape).astype(dtype)  # many ties
        assert_matches_cpu(lambda t: tf.math.top_k(t, k), x, ops=["TopKV2"])
        x = arr(shape, dtype, rng)
        assert_matches_cpu(lambda t: tf.math.top_k(t, k), x, ops=["TopKV2"])


def test_top_k_int64_and_unsorted(rng):
    x = arr((30, 1000), np.float32, rng)
    assert_matches_cpu(lambda t: tf.math.top_k(t, tf.constant(17, tf.int64),
                                               index_type=tf.int64), x, ops=["TopKV2"])
    # sorted=False: any order is valid; compare as sets.
    cpu = run_on("/CPU:0", lambda t: tf.math.top_k(t, 5, sorted=False), x)
    with launches() as d:
        pdk = run_on("/PDK:0", lambda t: tf.math.top_k(t, 5, sorted=False), x)
    assert d.get("TopKV2", 0) > 0
    np.testing.assert_array_equal(np.sort(cpu[0], -1), np.sort(pdk[0], -1))
    raises_invalid(lambda: tf.math.top_k(tf.ones([2, 3]), 4), "TopKV2", "at least k columns",
                   "needed 4", "[2,3]")


# -------------------------------------------------------------------------- Where


@dtypes(DT5, DT5_IDS)
def test_where(dtype, rng):
    for shape in [(0,), (7,), (3, 4), (2, 3, 4), (2, 0, 3), (2, 1, 3, 2, 2)]:
        x = rng.integers(0, 2, size=shape).astype(dtype)
        assert_matches_cpu(tf.where, x, ops=["Where"])
    assert_matches_cpu(tf.where, np.zeros((3, 4), dtype), ops=["Where"])
    assert_matches_cpu(tf.where, np.ones((5,), dtype), ops=["Where"])


# ------------------------------------------------------------------- gradients


def grad_of(f):
    """fn(*tensors) -> [f(*tensors), d sum(f * w) / d first tensor], as dense."""
    def fn(x, *rest):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = f(x, *rest)
            ys = y if isinstance(y, (list, tuple)) else [y]
            # Distinct weights per element, so a misplaced gradient shows.
            loss = tf.add_n([tf.reduce_sum(v * (1.0 + tf.cast(
                tf.reshape(tf.range(tf.size(v)), tf.shape(v)), v.dtype))) for v in ys])
        g = tape.gradient(loss, x)
        return list(ys) + [tf.convert_to_tensor(g)]
    return fn


GRADS = {
    "gather": (lambda x, i: tf.gather(x, i), ["GatherV2", "UnsortedSegmentSum"]),
    "gather_axis1": (lambda x, i: tf.gather(x, i, axis=1), ["GatherV2", "UnsortedSegmentSum"]),
    "slice": (lambda x, i: tf.slice(x, [1, 1], [3, 2]), ["Slice", "Pad"]),
    "strided": (lambda x, i: x[1:3], ["StridedSlice", "StridedSliceGrad"]),
    "pad": (lambda x, i: tf.pad(x, [[1, 2], [0, 3]]), ["Pad", "Slice"]),
    "mirror_pad": (lambda x, i: tf.pad(x, [[1, 2], [0, 1]], mode="REFLECT"),
                   ["MirrorPad", "MirrorPadGrad"]),
    "split": (lambda x, i: tf.split(x, [1, 2], axis=1), ["SplitV"]),
    "reverse": (lambda x, i: tf.reverse(x, [0]), ["ReverseV2"]),
    "cumsum": (lambda x, i: tf.math.cumsum(x, axis=0, exclusive=True), ["Cumsum"]),
    "segment_sum": (lambda x, i: tf.math.unsorted_segment_sum(x, [0, 2, -1, 2, 3], 4),
                    ["UnsortedSegmentSum", "GatherV2"]),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients(name, rng):
    f, ops = GRADS[name]
    x = arr((5, 3), np.float32, rng)
    idx = np.array([2, 0, 2], np.int32)
    assert_matches_cpu(grad_of(f), x, idx, ops=ops)


# --------------------------------------------------------------- Keras Embedding


def test_keras_embedding_model(rng):
    needed = {"MatMul", "Mean", "BiasAdd"}
    have = {r.op for r in tensorflow_pdk.registered_kernels()}
    if not needed <= have:
        pytest.skip(f"plugin built without {sorted(needed - have)} (partial PDK_KERNELS build)")
    import keras

    ids = rng.integers(0, 50, size=(8, 12)).astype(np.int32)
    y = rng.normal(size=(8, 3)).astype(np.float32)

    def run(device):
        keras.utils.set_random_seed(7)
        with tf.device(device):
            model = keras.Sequential([keras.Input((12,), dtype="int32"),
                                      keras.layers.Embedding(50, 16),
                                      keras.layers.GlobalAveragePooling1D(),
                                      keras.layers.Dense(3)])
            x, t = tf.constant(ids), tf.constant(y)
            with tf.GradientTape() as tape:
                out = model(x, training=True)
                loss = tf.reduce_mean(tf.square(out - t))
            grads = tape.gradient(loss, model.trainable_variables)
            return [out.numpy(), loss.numpy()] + [tf.convert_to_tensor(g).numpy() for g in grads]

    expected = run("/CPU:0")
    with launches() as d:
        actual = run("/PDK:0")
    for op in ["GatherV2", "UnsortedSegmentSum", "MatMul"]:
        assert d.get(op, 0) > 0, (op, d)
    assert len(actual) == len(expected) == 5
    for a, e in zip(actual, expected):
        np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6)
