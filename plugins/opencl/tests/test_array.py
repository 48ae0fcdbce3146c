"""The array ops on OPENCL (src/kernels/array_*.cc, cl/array*.cl) against
TensorFlow's CPU kernels: Pack, Unpack, ConcatV2, Concat, Split, SplitV, Slice,
StridedSlice, StridedSliceGrad, Transpose, Tile, BroadcastTo, ReverseV2,
Reverse, GatherV2, GatherNd, OneHot, Pad, PadV2, Snapshot, MatrixBandPart,
SpaceToDepth, DepthToSpace, Roll,
ScatterNd, TensorScatterAdd/Update, UnsortedSegmentSum; float32, int64, bool
and int32 (host memory); empty shapes, negative axes, and bad arguments (same
exception class and message as the CPU kernel)."""
import re

import numpy as np
import pytest
import tensorflow as tf

from conftest import DEVICE, assert_matches_cpu

# int32: TensorFlow keeps int32 tensors of a device in host memory; the int32
# kernels here (and TensorFlow's DEVICE_DEFAULT ones for Unpack, ConcatV2,
# Slice) compute on the host.
DTYPES = [np.float32, np.int64, np.bool_, np.int32]


def make(shape, dtype, rng):
    if dtype == np.bool_:
        return rng.random(shape) > 0.5
    if dtype in (np.int64, np.int32):
        return rng.integers(-100, 100, shape).astype(dtype)
    return rng.standard_normal(shape).astype(np.float32)


def exact(fn, *args, **kwargs):
    return assert_matches_cpu(fn, *args, rtol=0, atol=0, **kwargs)


def _message(e):
    m = re.sub(r"\{\{function_node [^}]*\}\}\s*", "", e.message)
    m = re.sub(r"\s*\[\[\{\{node [^}]*\}\}\]\]", "", m)
    return re.sub(r"\s*\[Op:.*$", "", m, flags=re.S).strip()


def assert_same_error(fn, *args):
    """fn raises on OPENCL what it raises on the CPU: class and message."""
    errors = []
    for device in (DEVICE, "/CPU:0"):
        with tf.device(device):
            dev_args = [tf.identity(a) if isinstance(a, np.ndarray) else a for a in args]
            with pytest.raises(tf.errors.OpError) as info:
                out = fn(*dev_args)
                tf.nest.map_structure(lambda t: t.numpy(), out)
        errors.append(info.value)
    got, want = errors
    assert type(got) is type(want), (got, want)
    assert _message(got) == _message(want)
    return _message(got)


# ---- Pack / Unpack ----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,axis", [((3, 4), 0), ((3, 4), 1), ((3, 4), 2), ((3, 4), -1),
                                        ((2, 0, 3), 1), ((), 0), ((5,), -2)])
def test_pack(shape, axis, dtype, rng):
    xs = [make(shape, dtype, rng) for _ in range(3)]
    exact(lambda a, b, c: tf.stack([a, b, c], axis=axis), *xs)


def test_pack_single_and_errors(rng):
    x = make((2, 3), np.float32, rng)
    exact(lambda a: tf.stack([a], axis=1), x)
    assert_same_error(lambda a: tf.raw_ops.Pack(values=[a, a], axis=3), x)
    assert_same_error(lambda a, b: tf.raw_ops.Pack(values=[a, b], axis=0), x,
                      make((3, 2), np.float32, rng))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,axis", [((3, 4), 0), ((3, 4), 1), ((3, 4), -1),
                                        ((2, 0, 3), 0), ((2, 3, 0), 1), ((4,), 0)])
def test_unpack(shape, axis, dtype, rng):
    exact(lambda a: tf.unstack(a, axis=axis), make(shape, dtype, rng))


def test_unpack_errors(rng):
    x = make((2, 3), np.float32, rng)
    assert_same_error(lambda a: tf.raw_ops.Unpack(value=a, num=2, axis=2), x)
    assert_same_error(lambda a: tf.raw_ops.Unpack(value=a, num=3, axis=0), x)


# ---- ConcatV2 / Concat ----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes,axis", [
    ([(2, 3), (2, 5)], 1), ([(2, 3), (4, 3), (1, 3)], 0), ([(2, 3, 4), (2, 1, 4)], -2),
    ([(2, 0, 4), (2, 3, 4)], 1), ([(0, 3), (0, 3)], 1), ([(5,), (0,), (2,)], 0),
    ([(2, 3, 4)], 2)])
def test_concat(shapes, axis, dtype, rng):
    xs = [make(s, dtype, rng) for s in shapes]
    exact(lambda *a: tf.concat(list(a), axis=axis), *xs)


def test_concat_v1_and_int64_axis(rng):
    a, b = make((2, 3), np.float32, rng), make((2, 2), np.float32, rng)
    exact(lambda x, y: tf.raw_ops.Concat(concat_dim=1, values=[x, y]), a, b)
    exact(lambda x, y: tf.raw_ops.ConcatV2(values=[x, y], axis=tf.constant(-1, tf.int64)), a, b)


@pytest.mark.parametrize("case", ["axis", "rank", "dim", "scalars"])
def test_concat_errors(case, rng):
    a = make((2, 3), np.float32, rng)
    if case == "axis":
        assert_same_error(lambda x: tf.raw_ops.ConcatV2(values=[x, x], axis=2), a)
    elif case == "rank":
        assert_same_error(lambda x, y: tf.raw_ops.ConcatV2(values=[x, y], axis=0), a,
                          make((2, 3, 1), np.float32, rng))
    elif case == "dim":
        assert_same_error(lambda x, y: tf.raw_ops.ConcatV2(values=[x, y], axis=0), a,
                          make((2, 4), np.float32, rng))
    else:
        s = np.float32(1.0)
        assert_same_error(lambda x, y: tf.raw_ops.ConcatV2(values=[x, y], axis=0),
                          np.array(s), np.array(s))


# ---- Split / SplitV ----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,num,axis", [((6, 4), 3, 0), ((6, 4), 2, 1), ((2, 6, 3), 3, -2),
                                            ((0, 4), 2, 1), ((4, 4), 1, 0), ((2, 0), 2, 1)])
def test_split(shape, num, axis, dtype, rng):
    exact(lambda a: tf.split(a, num, axis=axis), make(shape, dtype, rng))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,sizes,axis", [((6, 4), [1, 2, 3], 0), ((6, 4), [3, -1], 1),
                                              ((2, 5, 3), [0, 5], -2), ((6,), [6], 0),
                                              ((6, 0), [2, -1], 0)])
def test_split_v(shape, sizes, axis, dtype, rng):
    exact(lambda a: tf.split(a, sizes, axis=axis), make(shape, dtype, rng))


@pytest.mark.parametrize("case", ["axis", "uneven", "two_minus_one", "sum", "negative", "count"])
def test_split_errors(case, rng):
    x = make((6, 4), np.float32, rng)
    f = {
        "axis": lambda a: tf.raw_ops.Split(axis=2, value=a, num_split=2),
        "uneven": lambda a: tf.raw_ops.Split(axis=1, value=a, num_split=3),
        "two_minus_one": lambda a: tf.raw_ops.SplitV(value=a, size_splits=[-1, -1],
                                                     axis=0, num_split=2),
        "sum": lambda a: tf.raw_ops.SplitV(value=a, size_splits=[2, 2], axis=0, num_split=2),
        "negative": lambda a: tf.raw_ops.SplitV(value=a, size_splits=[7, -1], axis=0,
                                                num_split=2),
        "count": lambda a: tf.raw_ops.SplitV(value=a, size_splits=[2, 2, 2], axis=0,
                                             num_split=2),
    }[case]
    assert_same_error(f, x)


# ---- Slice / StridedSlice / StridedSliceGrad ----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,begin,size", [
    ((4, 5, 6), [1, 0, 2], [2, -1, 3]), ((4, 5), [0, 0], [4, 5]), ((4, 5), [4, 2], [0, 3]),
    ((0, 3), [0, 1], [0, 2]), ((7,), [3], [-1]),
    ((2, 3, 4, 5, 2, 2, 2, 3), [1, 1, 1, 1, 1, 0, 0, 1],
                                                   [1, 2, 3, 4, 1, 2, 2, 1])])
def test_slice(shape, begin, size, dtype, rng):
    exact(lambda a: tf.slice(a, begin, size), make(shape, dtype, rng))


@pytest.mark.parametrize("begin,size", [([0, 0], [5, 1]), ([-1, 0], [1, 1]), ([0], [1]),
                                        ([1, 1], [1, -2])])
def test_slice_errors(begin, size, rng):
    assert_same_error(lambda a: tf.slice(a, begin, size), make((4, 3), np.float32, rng))


SLICES = [
    lambda a: a[1:3],
    lambda a: a[:, ::2],
    lambda a: a[::-1, 1:, -2::-2],
    lambda a: a[..., 1],
    lambda a: a[1, ..., tf.newaxis, :2],
    lambda a: a[tf.newaxis, -1, :, tf.newaxis],
    lambda a: a[-10:10, 4:1:-1, 1:1],
    lambda a: a[:],
    lambda a: a[0, 1, 2],
    lambda a: a[..., ::-1, :],
    lambda a: a[2:0:-1, ..., 3],
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", range(len(SLICES)))
def test_strided_slice(k, dtype, rng):
    exact(SLICES[k], make((4, 5, 6), dtype, rng))


def test_strided_slice_empty_and_int64_spec(rng):
    exact(lambda a: a[1:, ::-1], make((0, 3), np.float32, rng))
    exact(lambda a: a[:, 2:1], make((3, 4), np.float32, rng))
    x = make((4, 5), np.float32, rng)
    exact(lambda a: tf.raw_ops.StridedSlice(
        input=a, begin=tf.constant([1, -1], tf.int64), end=tf.constant([4, 0], tf.int64),
        strides=tf.constant([2, -1], tf.int64), end_mask=1), x)


@pytest.mark.parametrize("case", ["stride0", "shrink_oob", "ellipses", "shapes", "too_many",
                                  "shrink_stride"])
def test_strided_slice_errors(case, rng):
    x = make((4, 5), np.float32, rng)
    f = {
        "stride0": lambda a: tf.raw_ops.StridedSlice(input=a, begin=[0], end=[1], strides=[0]),
        "shrink_oob": lambda a: tf.raw_ops.StridedSlice(input=a, begin=[0, 7], end=[1, 8],
                                                        strides=[1, 1], shrink_axis_mask=2),
        "ellipses": lambda a: tf.raw_ops.StridedSlice(input=a, begin=[0, 0], end=[1, 1],
                                                      strides=[1, 1], ellipsis_mask=3),
        "shapes": lambda a: tf.raw_ops.StridedSlice(input=a, begin=[0, 0], end=[1],
                                                    strides=[1, 1]),
        "too_many": lambda a: tf.raw_ops.StridedSlice(input=a, begin=[0, 0, 0], end=[1, 1, 1],
                                                      strides=[1, 1, 1]),
        "shrink_stride": lambda a: tf.raw_ops.StridedSlice(input=a, begin=[1], end=[2],
                                                           strides=[-1], shrink_axis_mask=1),
    }[case]
    assert_same_error(f, x)


GRADS = [
    dict(begin=[1, 0, 0], end=[3, 5, 6], strides=[1, 2, 1]),
    dict(begin=[-1, 4, 0], end=[0, 0, 6], strides=[-1, -2, 3], new_axis_mask=0),
    dict(begin=[1, 0, 0, 2], end=[2, 0, 0, 4], strides=[1, 1, 1, 1], shrink_axis_mask=1,
         new_axis_mask=4, ellipsis_mask=2),
    dict(begin=[0, 0, 0], end=[4, 5, 6], strides=[1, 1, 1]),
    dict(begin=[0, 3], end=[0, 3], strides=[1, 1], ellipsis_mask=1),
]


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int32])
@pytest.mark.parametrize("k", range(len(GRADS)))
def test_strided_slice_grad(k, dtype, rng):
    spec = GRADS[k]
    shape = [4, 5, 6]
    fwd = tf.raw_ops.StridedSlice(input=np.zeros(shape, np.float32), **spec)
    dy = make(fwd.shape, dtype, rng)
    exact(lambda d: tf.raw_ops.StridedSliceGrad(shape=shape, dy=d, **spec), dy)


def test_strided_slice_grad_of_keras_style_slice(rng):
    x = make((3, 4), np.float32, rng)
    with tf.device(DEVICE):
        v = tf.identity(x)
        with tf.GradientTape() as tape:
            tape.watch(v)
            y = v[:, 1:3]
        g = tape.gradient(y, v, output_gradients=tf.identity(np.ones((3, 2), np.float32)))
    want = np.zeros((3, 4), np.float32)
    want[:, 1:3] = 1
    assert "OPENCL" in g.device
    np.testing.assert_array_equal(g.numpy(), want)


def test_strided_slice_grad_errors(rng):
    dy = make((2, 2), np.float32, rng)
    assert_same_error(lambda d: tf.raw_ops.StridedSliceGrad(
        shape=[4, 5], begin=[0, 0], end=[2, 3], strides=[1, 1], dy=d), dy)


# ---- Transpose / Tile / BroadcastTo / ReverseV2 ----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,perm", [((3, 4), [1, 0]), ((2, 3, 4), [2, 0, 1]),
                                        ((2, 3, 4, 5), [0, 2, 1, 3]), ((2, 0, 3), [2, 1, 0]),
                                        ((5,), [0]), ((2, 3), [0, 1]),
                                        ((2, 1, 3, 1, 2, 2, 1, 2, 3), [8, 7, 6, 5, 4, 3, 2, 1, 0])])
def test_transpose(shape, perm, dtype, rng):
    exact(lambda a: tf.transpose(a, perm), make(shape, dtype, rng))


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_])
@pytest.mark.parametrize("shape,perm", [((37, 50), [1, 0]), ((3, 40, 33), [0, 2, 1]),
                                        ((16, 32), [1, 0]), ((1, 1), [1, 0]),
                                        ((5, 1, 17), [2, 1, 0]),
                                        ((2, 3, 17, 19), [0, 1, 3, 2]),
                                        ((2, 17, 19, 3), [0, 2, 1, 3])])
def test_transpose_tiled(shape, perm, dtype, rng):
    # Batches of matrix transposes go through __local tiles (16 x 16).
    exact(lambda a: tf.transpose(a, perm), make(shape, dtype, rng))


@pytest.mark.parametrize("perm", [[0, 0], [0, 2], [0], [[0, 1]]])
def test_transpose_errors(perm, rng):
    assert_same_error(lambda a: tf.raw_ops.Transpose(x=a, perm=perm), make((2, 3), np.float32, rng))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,mult", [((2, 3), [2, 3]), ((2, 3, 4), [1, 2, 1]), ((3,), [0]),
                                        ((0, 2), [3, 2]), ((2, 3), [1, 1]), ((1, 1, 2), [4, 1, 2])])
def test_tile(shape, mult, dtype, rng):
    exact(lambda a: tf.tile(a, mult), make(shape, dtype, rng))


@pytest.mark.parametrize("mult", [[1], [1, -1]])
def test_tile_errors(mult, rng):
    assert_same_error(lambda a: tf.tile(a, mult), make((2, 3), np.float32, rng))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,to", [((3,), (2, 3)), ((2, 1), (2, 4)), ((1, 3, 1), (5, 2, 3, 4)),
                                      ((), (3, 2)), ((2, 3), (2, 3)), ((1, 3), (0, 3))])
def test_broadcast_to(shape, to, dtype, rng):
    exact(lambda a: tf.broadcast_to(a, to), make(shape, dtype, rng))


@pytest.mark.parametrize("shape,to", [((3,), (2, 4)), ((2, 3), (3,)), ((3, 1), (1, 4))])
def test_broadcast_to_errors(shape, to, rng):
    assert_same_error(lambda a: tf.raw_ops.BroadcastTo(input=a, shape=to),
                      make(shape, np.float32, rng))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,axis", [((3, 4), [0]), ((3, 4), [-1]), ((2, 3, 4), [0, 2]),
                                        ((2, 3, 4), []), ((0, 3), [1]), ((5,), [0])])
def test_reverse(shape, axis, dtype, rng):
    exact(lambda a: tf.reverse(a, axis), make(shape, dtype, rng))


@pytest.mark.parametrize("axis", [[2], [0, -2]])
def test_reverse_errors(axis, rng):
    assert_same_error(lambda a: tf.raw_ops.ReverseV2(tensor=a, axis=axis),
                      make((3, 4), np.float32, rng))


# ---- GatherV2 / OneHot ----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("itype", [np.int32, np.int64])
@pytest.mark.parametrize("shape,idx_shape,axis,batch_dims", [
    ((5, 3), (4,), 0, 0), ((5, 3), (2, 2), 1, 0), ((2, 5, 3), (3,), -2, 0),
    ((2, 5, 3), (2, 4), 1, 1), ((2, 3, 5, 3), (2, 3, 2), 2, 2), ((2, 3, 5, 3), (2, 2), 2, -1),
    ((5, 0), (3,), 0, 0), ((5, 3), (0,), 0, 0), ((5,), (), 0, 0)])
def test_gather(shape, idx_shape, axis, batch_dims, itype, dtype, rng):
    params = make(shape, dtype, rng)
    ax = axis if axis >= 0 else axis + len(shape)
    idx = rng.integers(0, shape[ax], idx_shape).astype(itype)
    exact(lambda p, i: tf.gather(p, i, axis=axis, batch_dims=batch_dims), params, idx)


def test_gather_out_of_range_writes_zeros(rng):
    # TensorFlow's CPU kernel raises; its GPU kernel (and this one: the
    # indices are in device memory) writes 0 for an index outside [0, n).
    params = make((4, 3), np.float32, rng)
    with tf.device(DEVICE):
        got = tf.gather(tf.identity(params), tf.identity(np.array([1, 4, -1, 3], np.int64))).numpy()
    np.testing.assert_array_equal(got[[0, 3]], params[[1, 3]])
    np.testing.assert_array_equal(got[[1, 2]], 0)


@pytest.mark.parametrize("case", ["axis", "batch", "batch_axis", "batch_shape", "scalar"])
def test_gather_errors(case, rng):
    p = make((2, 3), np.float32, rng)
    i = np.array([[0, 1], [1, 0]], np.int64)
    if case == "batch_shape":
        i = np.zeros((4, 2), np.int64)
    f = {
        "axis": lambda a, b: tf.raw_ops.GatherV2(params=a, indices=b, axis=2),
        "batch": lambda a, b: tf.raw_ops.GatherV2(params=a, indices=b, axis=1, batch_dims=3),
        "batch_axis": lambda a, b: tf.raw_ops.GatherV2(params=a, indices=b, axis=0,
                                                       batch_dims=1),
        "batch_shape": lambda a, b: tf.raw_ops.GatherV2(params=a, indices=b, axis=1,
                                                        batch_dims=1),
        "scalar": lambda a, b: tf.raw_ops.GatherV2(params=a[0, 0], indices=b, axis=0),
    }[case]
    assert_same_error(f, p, i)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("itype", [np.int32, np.int64, np.uint8])
@pytest.mark.parametrize("idx_shape,depth,axis", [((4,), 3, -1), ((2, 3), 4, 0), ((2, 3), 4, 1),
                                                  ((0,), 3, -1), ((3,), 0, -1), ((), 5, -1)])
def test_one_hot(idx_shape, depth, axis, itype, dtype, rng):
    idx = rng.integers(0, depth + 2, idx_shape).astype(itype)
    if itype != np.uint8 and idx.size:
        idx.flat[0] = -1
    on, off = make((2,), dtype, rng)
    exact(lambda i, a, b: tf.one_hot(i, depth, on_value=a, off_value=b, axis=axis, dtype=dtype),
          idx, np.array(on), np.array(off))


def test_one_hot_errors(rng):
    idx = np.array([0, 1], np.int64)
    assert_same_error(lambda i: tf.one_hot(i, 3, axis=2), idx)
    assert_same_error(lambda i: tf.one_hot(i, -1), idx)


# ---- Pad / PadV2 / Snapshot / Reverse / GatherNd ----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,pads", [((2, 3), [[1, 0], [2, 1]]),
                                        ((2, 3, 4), [[0, 0], [1, 1], [0, 3]]),
                                        ((3,), [[0, 0]]), ((0, 2), [[1, 1], [0, 1]]), ((), []),
                                        ((1, 2, 1, 2), [[0, 1], [1, 0], [2, 2], [0, 0]])])
def test_pad(shape, pads, dtype, rng):
    x = make(shape, dtype, rng)
    p = np.array(pads, np.int64).reshape(-1, 2)
    exact(lambda a: tf.pad(a, p), x)
    exact(lambda a: tf.pad(a, p.astype(np.int32)), x)
    cv = make((), dtype, rng)
    exact(lambda a: tf.pad(a, p, constant_values=cv), x)


@pytest.mark.parametrize("pads", [[[1, 0]], [[1, 0, 1], [0, 0, 0]], [[-1, 0], [0, 0]]])
def test_pad_errors(pads, rng):
    assert_same_error(lambda a: tf.raw_ops.Pad(input=a, paddings=pads),
                      make((2, 3), np.float32, rng))


def test_pad_v2_constant_not_scalar(rng):
    assert_same_error(lambda a: tf.raw_ops.PadV2(input=a, paddings=[[1, 0], [0, 0]],
                                                 constant_values=[1.0, 2.0]),
                      make((2, 3), np.float32, rng))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 4), (0,), ()])
def test_snapshot(shape, dtype, rng):
    exact(lambda a: tf.raw_ops.Snapshot(input=a), make(shape, dtype, rng))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,dims", [((3, 4), [True, False]), ((2, 3, 4), [True, False, True]),
                                        ((3, 0), [False, True]), ((5,), [False])])
def test_reverse_v1(shape, dims, dtype, rng):
    exact(lambda a: tf.raw_ops.Reverse(tensor=a, dims=dims), make(shape, dtype, rng))


def test_reverse_v1_errors(rng):
    assert_same_error(lambda a: tf.raw_ops.Reverse(tensor=a, dims=[True, False]),
                      make((0, 3), np.float32, rng))
    assert_same_error(lambda a: tf.raw_ops.Reverse(tensor=a, dims=[True]),
                      make((3, 4), np.float32, rng))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("itype", [np.int32, np.int64])
@pytest.mark.parametrize("shape,idx_shape", [((5, 3), (4, 1)), ((5, 3), (2, 2)),
                                             ((2, 3, 4), (2, 2, 2)), ((2, 3, 4), (3, 3)),
                                             ((4, 3), (0, 1)), ((4, 3), (2, 0))])
def test_gather_nd(shape, idx_shape, itype, dtype, rng):
    params = make(shape, dtype, rng)
    k = idx_shape[-1]
    idx = np.zeros(idx_shape, itype)
    for j in range(k):
        idx[..., j] = rng.integers(0, shape[j], idx_shape[:-1])
    exact(lambda p, i: tf.gather_nd(p, i), params, idx)


def test_gather_nd_out_of_range_writes_zeros(rng):
    params = make((4, 3), np.float32, rng)
    with tf.device(DEVICE):
        got = tf.gather_nd(tf.identity(params),
                           tf.identity(np.array([[1, 2], [4, 0], [0, -1]], np.int64))).numpy()
    np.testing.assert_array_equal(got, [params[1, 2], 0, 0])


def test_gather_nd_errors(rng):
    assert_same_error(lambda p, i: tf.raw_ops.GatherNd(params=p, indices=i),
                      make((4, 3), np.float32, rng), np.zeros((2, 3), np.int64))
    assert_same_error(lambda p, i: tf.raw_ops.GatherNd(params=p, indices=i),
                      make((0, 3), np.float32, rng), np.zeros((2, 1), np.int64))


def test_int32_out_of_range_indices_raise_as_on_cpu(rng):
    # int32 params: everything in host memory, so the indices are checked.
    params = make((4, 3), np.int32, rng)
    assert_same_error(lambda p, i: tf.gather(p, i), params, np.array([1, 4], np.int64))
    with tf.device(DEVICE):
        with pytest.raises(tf.errors.InvalidArgumentError, match="does not index into param"):
            tf.gather_nd(tf.identity(params), tf.identity(np.array([[1, 3]], np.int64)))


def test_int32_shape_arithmetic_of_gradients(rng):
    # Gradients of Slice / Tile / Pad / GatherV2 build int32 shapes with Pack
    # and StridedSlice on the device.
    x = make((2, 3, 4), np.float32, rng)
    with tf.device(DEVICE):
        v = tf.identity(x)
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(v)
            ys = [tf.slice(v, [0, 1, 0], [1, 2, 3]), tf.pad(v, [[1, 0], [0, 0], [2, 1]])]
        for y in ys:
            g = tape.gradient(y, v, output_gradients=tf.identity(np.ones(y.shape, np.float32)))
            assert "OPENCL" in g.device
            assert g.shape == v.shape


# ---- MatrixBandPart ----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,lower,upper", [((4, 5), -1, 0), ((4, 5), 0, -1), ((2, 3, 4), 1, 2),
                                               ((3, 3), 0, 0), ((2, 0, 3), 0, 1), ((3, 4), 3, 4),
                                               ((2, 2, 3, 3), 2, -1)])
def test_matrix_band_part(shape, lower, upper, dtype, rng):
    exact(lambda a: tf.linalg.band_part(a, lower, upper), make(shape, dtype, rng))
    exact(lambda a: tf.linalg.band_part(a, tf.constant(lower, tf.int64),
                                        tf.constant(upper, tf.int64)), make(shape, dtype, rng))


@pytest.mark.parametrize("shape,lower,upper", [((4,), 0, 0), ((4, 5), 5, 0), ((4, 5), 0, 6),
                                               ((4, 5), [0], 0)])
def test_matrix_band_part_errors(shape, lower, upper, rng):
    assert_same_error(lambda a: tf.raw_ops.MatrixBandPart(input=a, num_lower=lower,
                                                          num_upper=upper),
                      make(shape, np.float32, rng))


# ---- ScatterNd / TensorScatterAdd / TensorScatterUpdate / UnsortedSegmentSum ----

SCATTERS = [((3, 4), (2, 1), (2, 4)), ((3, 4), (5, 2), (5,)), ((2, 3, 4), (2, 2, 1), (2, 2, 3, 4)),
            ((2, 3, 4), (3, 2), (3, 4)), ((3, 4), (0, 1), (0, 4)), ((4,), (6, 1), (6,))]


def _scatter_args(shape, idx_shape, upd_shape, itype, dtype, rng):
    k = idx_shape[-1]
    idx = np.zeros(idx_shape, itype)
    for j in range(k):
        idx[..., j] = rng.integers(0, shape[j], idx_shape[:-1])
    return idx, make(upd_shape, dtype, rng)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("itype", [np.int32, np.int64])
@pytest.mark.parametrize("shape,idx_shape,upd_shape", SCATTERS)
def test_scatter_nd(shape, idx_shape, upd_shape, itype, dtype, rng):
    idx, upd = _scatter_args(shape, idx_shape, upd_shape, itype, dtype, rng)
    assert_matches_cpu(lambda i, u: tf.scatter_nd(i, u, shape), idx, upd, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("itype", [np.int32, np.int64])
@pytest.mark.parametrize("shape,idx_shape,upd_shape", SCATTERS)
def test_tensor_scatter_add(shape, idx_shape, upd_shape, itype, dtype, rng):
    idx, upd = _scatter_args(shape, idx_shape, upd_shape, itype, dtype, rng)
    assert_matches_cpu(lambda t, i, u: tf.tensor_scatter_nd_add(t, i, u), make(shape, dtype, rng),
                       idx, upd, rtol=1e-5, atol=1e-5)


def _distinct_rows_fit(shape, idx_shape):
    # Whether idx_shape's index rows can all be distinct rows of shape.
    k = idx_shape[-1]
    return int(np.prod(idx_shape[:-1])) <= int(np.prod(shape[:k]))


# Distinct indices only: with duplicates the winner is unspecified, so the
# SCATTERS cases with more updates than rows are not collected.
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("itype", [np.int32, np.int64])
@pytest.mark.parametrize("shape,idx_shape,upd_shape",
                         [s for s in SCATTERS if _distinct_rows_fit(s[0], s[1])])
def test_tensor_scatter_update(shape, idx_shape, upd_shape, itype, dtype, rng):
    k = idx_shape[-1]
    rows = int(np.prod(shape[:k]))
    m = int(np.prod(idx_shape[:-1]))
    flat = rng.permutation(rows)[:m]
    idx = np.stack(np.unravel_index(flat, shape[:k]), -1).reshape(idx_shape).astype(itype)
    upd = make(upd_shape, dtype, rng)
    exact(lambda t, i, u: tf.tensor_scatter_nd_update(t, i, u), make(shape, dtype, rng), idx, upd)


def test_scatter_out_of_range_is_skipped_on_device(rng):
    # TensorFlow's CPU kernels raise; its GPU kernels (and these) skip the update.
    with tf.device(DEVICE):
        got = tf.scatter_nd(tf.identity(np.array([[1], [5], [-1]], np.int64)),
                            tf.identity(np.ones((3, 2), np.float32)), [3, 2]).numpy()
        seg = tf.math.unsorted_segment_sum(tf.identity(np.ones((3, 2), np.float32)),
                                           tf.identity(np.array([0, 7, -1], np.int64)), 2).numpy()
    np.testing.assert_array_equal(got, [[0, 0], [1, 1], [0, 0]])
    np.testing.assert_array_equal(seg, [[1, 1], [0, 0]])


@pytest.mark.parametrize("case", ["outer", "inner", "rank", "depth", "oob_int32", "upd_rank"])
def test_scatter_nd_errors(case, rng):
    f32 = np.float32
    args = {
        "outer": (np.array([[1], [2]]), np.ones((3, 4), f32), [3, 4]),
        "inner": (np.array([[1], [2]]), np.ones((2, 5), f32), [3, 4]),
        "rank": (np.array([[1], [2]]), np.ones((2, 4, 1), f32), [3, 4]),
        "depth": (np.array([[1, 1, 1]]), np.ones((1,), f32), [3, 4]),
        "oob_int32": (np.array([[1], [5]]), np.ones((2, 4), np.int32), [3, 4]),
        "upd_rank": (np.array([[1]]), np.array(1, f32), [3]),
    }[case]
    assert_same_error(lambda i, u: tf.raw_ops.ScatterNd(indices=i, updates=u, shape=args[2]),
                      args[0], args[1])


@pytest.mark.parametrize("case", ["outer", "inner", "rank", "oob_int32"])
def test_tensor_scatter_errors(case, rng):
    t = np.zeros((3, 4), np.float32)
    args = {
        "outer": (t, np.array([[1], [2]]), np.ones((3, 4), np.float32)),
        "inner": (t, np.array([[1], [2]]), np.ones((2, 5), np.float32)),
        "rank": (t, np.array([[1], [2]]), np.ones((2, 4, 1), np.float32)),
        "oob_int32": (t.astype(np.int32), np.array([[[1], [5]]]), np.ones((1, 2, 4), np.int32)),
    }[case]
    assert_same_error(lambda a, i, u: tf.tensor_scatter_nd_add(a, i, u), *args)
    assert_same_error(lambda a, i, u: tf.tensor_scatter_nd_update(a, i, u), *args)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("itype", [np.int32, np.int64])
@pytest.mark.parametrize("shape,ids_shape,num", [((6, 3), (6,), 4), ((2, 3, 4), (2, 3), 5),
                                                 ((5,), (5,), 2), ((0, 3), (0,), 3),
                                                 ((4, 2), (4,), 0)])
def test_unsorted_segment_sum(shape, ids_shape, num, itype, dtype, rng):
    data = make(shape, dtype, rng)
    ids = rng.integers(-1, max(num, 1), ids_shape).astype(itype)
    if num == 0:
        ids[...] = -1
    assert_matches_cpu(lambda d, i: tf.math.unsorted_segment_sum(d, i, num), data, ids,
                       rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", ["prefix", "negative", "oob_int32", "num_shape"])
def test_unsorted_segment_sum_errors(case, rng):
    args = {
        "prefix": (np.ones((2, 3), np.float32), np.array([[0, 1], [1, 1]]), 2),
        "negative": (np.ones((2, 3), np.float32), np.array([0, 1]), -1),
        "oob_int32": (np.ones((2, 3), np.int32), np.array([0, 5]), 2),
        "num_shape": (np.ones((2, 3), np.float32), np.array([0, 1]), [2]),
    }[case]
    assert_same_error(lambda d, i: tf.raw_ops.UnsortedSegmentSum(
        data=d, segment_ids=i, num_segments=args[2]), args[0], args[1])


def test_gradients_of_gather_and_gather_nd(rng):
    x = make((4, 3, 2), np.float32, rng)
    for f in (lambda a: tf.gather(a, [2, 0, 2], axis=1),
              lambda a: tf.gather_nd(a, [[1, 0], [3, 2]]),
              lambda a: tf.gather(a, [3, 3, 0], axis=0)):
        def grad(a):
            with tf.GradientTape() as tape:
                tape.watch(a)
                y = f(a)
            g = tape.gradient(y, a, output_gradients=tf.identity(np.ones(y.shape, np.float32)))
            return tf.convert_to_tensor(g)
        assert_matches_cpu(grad, x)


# ---- SpaceToDepth / DepthToSpace / Roll ----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,block", [((2, 4, 6, 3), 2), ((1, 6, 6, 1), 3), ((0, 4, 4, 2), 2),
                                         ((1, 2, 2, 5), 2)])
def test_space_to_depth(shape, block, dtype, rng):
    x = make(shape, dtype, rng)
    y = exact(lambda a: tf.nn.space_to_depth(a, block), x)
    exact(lambda a: tf.nn.depth_to_space(a, block), y)


@pytest.mark.parametrize("block", [2, 3])
def test_space_depth_nchw_is_nhwc_transposed(block, rng):
    # TensorFlow's CPU kernels are NHWC only; NCHW is its GPU's layout.
    x = make((2, 2 * block, 3 * block, 4), np.float32, rng)
    want = tf.nn.space_to_depth(x, block).numpy().transpose(0, 3, 1, 2)
    with tf.device(DEVICE):
        nchw = tf.identity(x.transpose(0, 3, 1, 2))
        got = tf.nn.space_to_depth(nchw, block, data_format="NCHW")
        back = tf.nn.depth_to_space(got, block, data_format="NCHW")
    np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(back.numpy(), x.transpose(0, 3, 1, 2))


@pytest.mark.parametrize("case", ["rank", "rank_d2s", "divisible", "depth", "block"])
def test_space_depth_errors(case, rng):
    f = {
        "rank": lambda a: tf.raw_ops.SpaceToDepth(input=a[0], block_size=2),
        "rank_d2s": lambda a: tf.raw_ops.DepthToSpace(input=a[0], block_size=2),
        "divisible": lambda a: tf.raw_ops.SpaceToDepth(input=a, block_size=3),
        "depth": lambda a: tf.raw_ops.DepthToSpace(input=a, block_size=2),
        "block": lambda a: tf.raw_ops.SpaceToDepth(input=a, block_size=1),
    }[case]
    assert_same_error(f, make((1, 4, 4, 3), np.float32, rng))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,shift,axis", [((5,), 2, 0), ((3, 4), [1, -1], [0, 1]),
                                              ((2, 3, 4), [7, 2, -5], [-1, 0, 2]),
                                              ((3, 4), 0, 1), ((0, 3), 1, 1), ((3, 4), 4, 1)])
def test_roll(shape, shift, axis, dtype, rng):
    exact(lambda a: tf.roll(a, shift, axis), make(shape, dtype, rng))


@pytest.mark.parametrize("shift,axis", [([1, 2], [0]), (1, 2), ([[1]], [[0]])])
def test_roll_errors(shift, axis, rng):
    assert_same_error(lambda a: tf.roll(a, shift, axis), make((3, 4), np.float32, rng))

