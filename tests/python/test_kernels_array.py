"""Array kernels on PDK: Identity, Reshape, ExpandDims, Squeeze, Fill,
ZerosLike, OnesLike, ConcatV2, Transpose, Pack, Unpack, Tile, Shape, ShapeN,
Size, Rank.

Each test runs the op on /CPU:0 and /PDK:0 (tensorflow_pdk.testing) and checks
the results agree and that the op launched a PDK kernel. TensorFlow registers
DEVICE_DEFAULT kernels for many of these ops (e.g. Identity, Reshape, Shape);
a device-specific registration takes precedence over them, so the launch
checks here prove PDK's own kernel ran (test_pdk_kernels_win_over_default).
"""
import gc
import itertools

import numpy as np
import pytest
import tensorflow as tf

import tensorflow_pdk
from tensorflow_pdk.testing import assert_matches_cpu as _assert_matches_cpu
from tensorflow_pdk.testing import launches, random_array

# Every dtype the data-movement kernels register.
DTYPES = [np.float32, np.float64, np.float16, tf.bfloat16.as_numpy_dtype, np.int32, np.int64,
          np.bool_, np.uint8, np.int8, np.int16]
BF16 = tf.bfloat16.as_numpy_dtype
DTYPE_IDS = [np.dtype(d).name for d in DTYPES]
SHAPES = [(), (0,), (2, 0, 3), (7,), (3, 4), (2, 3, 4, 5)]


def assert_matches_cpu(fn, *arrays, ops):
    """testing.assert_matches_cpu, working around np.asarray failing on a rank-0
    bfloat16 EagerTensor ("object __array__ method not producing an array"):
    such outputs are reshaped to [1] (a PDK Reshape) before comparison."""
    def wrapped(*ts):
        out = fn(*ts)
        seq = out if isinstance(out, (list, tuple)) else [out]
        seq = [tf.reshape(o, [1]) if o.dtype == tf.bfloat16 and o.shape.rank == 0 else o
               for o in seq]
        return seq if isinstance(out, (list, tuple)) else seq[0]
    return _assert_matches_cpu(wrapped, *arrays, ops=ops)


def has_shape(a, shape):
    """a.shape == shape, allowing the [1] stand-in for a rank-0 bfloat16 output."""
    shape = tuple(shape)
    return a.shape == shape or (a.dtype == BF16 and shape == () and a.shape == (1,))


def dtype_params():
    return pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)


def arr(shape, dtype, rng):
    return random_array(shape, dtype, rng)


def raises_invalid(fn, *fragments):
    """Runs fn on PDK; asserts InvalidArgumentError whose message has every fragment."""
    with tf.device("/PDK:0"):
        with pytest.raises(tf.errors.InvalidArgumentError) as e:
            fn()
    msg = str(e.value)
    assert "PDK" in msg, msg  # raised by the PDK kernel, not the CPU one
    for f in fragments:
        assert f in msg, f"{f!r} not in {msg!r}"
    return msg


# ----------------------------------------------------------------- registration


def test_registered_ops_and_dtypes():
    regs = tensorflow_pdk.registered_kernels()
    by_op = {}
    for r in regs:
        by_op.setdefault(r.op, set()).add(dict(r.type_constraints).get("T"))
    names = {np.dtype(d).name for d in DTYPES}
    for op in ["Snapshot", "Reshape", "ExpandDims", "Squeeze", "ConcatV2", "Transpose", "Pack",
               "Unpack", "Tile", "Fill", "ZerosLike", "OnesLike", "Shape", "ShapeN", "Size",
               "Rank"]:
        assert names <= by_op.get(op, set()), (op, names - by_op.get(op, set()))
    host = {(r.op, a) for r in regs for a in r.host_memory}
    for op, arg in [("Reshape", "shape"), ("ExpandDims", "dim"), ("Fill", "dims"),
                    ("ConcatV2", "axis"), ("Transpose", "perm"), ("Tile", "multiples"),
                    ("Shape", "output"), ("ShapeN", "output"), ("Size", "output"),
                    ("Rank", "output")]:
        assert (op, arg) in host, (op, arg)


def test_pdk_kernels_win_over_default():
    # TF 2.21 registers DEVICE_DEFAULT kernels for Identity, Reshape, ExpandDims,
    # Squeeze, Shape, ShapeN, Size, Rank (all dtypes) and for int32 Fill, ZerosLike,
    # OnesLike, ConcatV2, Unpack. TF picks a device-specific kernel before any
    # DEFAULT one, so ours run and no "Multiple OpKernel registrations" arises.
    # Identity, StopGradient and int32 AddV2 / Less PDK leaves to TensorFlow's
    # (src/kernels/tensorflow_default_kernels.h): test_left_to_tensorflow_default.
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    with launches() as d:
        with tf.device("/PDK:0"):
            t = tf.constant(x)
            tf.reshape(t, [3, 2])
            tf.raw_ops.ZerosLike(x=t)
            tf.concat([t, t], 0)
            tf.unstack(t)
            tf.shape(t)
            tf.raw_ops.Rank(input=t)
    for op in ["Reshape", "ZerosLike", "ConcatV2", "Unpack", "Shape", "Rank"]:
        assert d.get(op, 0) >= 1, (op, d)


def test_left_to_tensorflow_default():
    """Identity, StopGradient (every dtype) and int32 AddV2 / Less are
    TensorFlow's own DEVICE_DEFAULT kernels on PDK (a loop's per-iteration
    bookkeeping, without the kernel C API's round trip): PDK registers none,
    they run on the PDK device (int32 in host memory) and give the CPU's
    results; a loop of them computes on PDK with no copy."""
    regs = {(r.op, dict(r.type_constraints).get("T")) for r in tensorflow_pdk.registered_kernels()}
    for op in ("Identity", "StopGradient"):
        assert not [t for o, t in regs if o == op], op
    for op in ("AddV2", "Less"):
        assert (op, "int32") not in regs and (op, "float32") in regs, op
    with launches() as d, tf.device("/PDK:0"):
        i = tf.constant(3)
        outs = [tf.identity(tf.constant([1.5])), tf.stop_gradient(tf.constant([2.5])), i + 4, i < 4]

        @tf.function
        def count(n):
            return tf.while_loop(lambda k, s: k < n, lambda k, s: (k + 1, s + k), (0, 0))[1]

        outs.append(count(tf.constant(100)))
    for o in outs:
        assert o.device.endswith("PDK:0"), o.device
    assert [np.asarray(o).tolist() for o in outs] == [[1.5], [2.5], 7, True, 4950]
    assert not {"Identity", "StopGradient", "AddV2", "Less"} & set(d), d


# ----------------------------------------------------------------------- Identity


@dtype_params()
def test_identity(dtype, rng):
    for shape in SHAPES:
        assert_matches_cpu(tf.identity, arr(shape, dtype, rng), ops=["Identity"])


# ------------------------------------------------------ Reshape / ExpandDims / Squeeze

RESHAPES = [
    ((), [1, 1]), ((1, 1), []), ((7,), [7, 1]), ((7,), [-1]), ((3, 4), [4, 3]),
    ((3, 4), [-1, 2]), ((3, 4), [2, -1, 3]), ((2, 3, 4, 5), [6, -1]), ((2, 3, 4, 5), [-1]),
    ((0,), [0, 5]), ((2, 0, 3), [0, -1]), ((2, 0, 3), [-1, 0]), ((2, 0, 3), [3, -1, 0]),
    ((2, 0, 3), [-1, 3]),
]


@dtype_params()
def test_reshape(dtype, rng):
    for shape, new in RESHAPES:
        out = assert_matches_cpu(lambda x: tf.reshape(x, new), arr(shape, dtype, rng),
                                 ops=["Reshape"])
        assert -1 in new or has_shape(out[0], new)


def test_reshape_int64_shape(rng):
    x = arr((2, 3, 4), np.float32, rng)
    assert_matches_cpu(lambda t: tf.reshape(t, tf.constant([4, -1], tf.int64)), x,
                       ops=["Reshape"])


def test_reshape_errors(rng):
    x = arr((2, 3), np.float32, rng)
    msg = raises_invalid(lambda: tf.reshape(x, [4]), "Reshape", "[2,3]", "6", "[4]", "has 4")
    assert "values" in msg
    raises_invalid(lambda: tf.reshape(x, [4, -1]), "Reshape", "[2,3]", "multiple of 4")
    raises_invalid(lambda: tf.reshape(x, [-1, -1]), "Reshape", "Only one")
    raises_invalid(lambda: tf.reshape(x, [-2, 3]), "Reshape", "-2")


def test_reshape_family_is_zero_copy():
    # The outputs alias the input's buffer: no device memory is allocated.
    # Earlier tests' garbage (variables in reference cycles) is collected
    # first, so that no buffer of theirs is freed between the two readings.
    gc.collect()
    with tf.device("/PDK:0"):
        big = tf.identity(np.ones([512, 1024], np.float32))
        before = tf.config.experimental.get_memory_info("PDK:0")["current"]
        with launches() as d:
            r = tf.reshape(big, [-1])
            e = tf.expand_dims(big, 0)
            q = tf.squeeze(e, [0])
            t = tf.transpose(e, [1, 0, 2])  # moves only a size-1 dim
        after = tf.config.experimental.get_memory_info("PDK:0")["current"]
        copy = tf.transpose(big)
        grown = tf.config.experimental.get_memory_info("PDK:0")["current"]
    assert {"Reshape", "ExpandDims", "Squeeze", "Transpose"} <= set(d), d
    assert after == before, (before, after)
    assert grown - after >= big.numpy().nbytes  # a real transpose does allocate
    np.testing.assert_array_equal(r.numpy(), np.ones(512 * 1024, np.float32))
    np.testing.assert_array_equal(q.numpy(), big.numpy())
    assert t.shape == (512, 1, 1024) and copy.shape == (1024, 512)


@dtype_params()
def test_expand_dims(dtype, rng):
    for shape in SHAPES:
        rank = len(shape)
        for dim in sorted({0, rank, -1, -rank - 1, rank // 2}):
            assert_matches_cpu(lambda x: tf.expand_dims(x, dim), arr(shape, dtype, rng),
                               ops=["ExpandDims"])


def test_expand_dims_int64_dim_and_errors(rng):
    x = arr((3, 4), np.float32, rng)
    assert_matches_cpu(lambda t: tf.expand_dims(t, tf.constant(-2, tf.int64)), x,
                       ops=["ExpandDims"])
    raises_invalid(lambda: tf.expand_dims(x, 3), "ExpandDims", "3", "[3,4]")
    raises_invalid(lambda: tf.expand_dims(x, -4), "ExpandDims", "-4", "[3,4]")


@dtype_params()
def test_squeeze(dtype, rng):
    cases = [((1,), None), ((1, 1), None), ((3, 1, 4, 1), None), ((3, 1, 4, 1), [1]),
             ((3, 1, 4, 1), [-1]), ((3, 1, 4, 1), [1, -1]), ((1, 0, 1), [0]), ((2, 3), None),
             ((), None), ((1, 7, 1), [0, 2])]
    for shape, axis in cases:
        assert_matches_cpu(lambda x: tf.squeeze(x, axis), arr(shape, dtype, rng),
                           ops=["Squeeze"])


def test_squeeze_errors(rng):
    x = arr((2, 1, 3), np.float32, rng)
    raises_invalid(lambda: tf.squeeze(x, [0]), "Squeeze", "dim[0]", "got 2", "[2,1,3]")
    raises_invalid(lambda: tf.squeeze(x, [-1]), "Squeeze", "dim[2]", "got 3")
    raises_invalid(lambda: tf.squeeze(x, [3]), "Squeeze", "3", "out of range")


# --------------------------------------------------------- Fill / ZerosLike / OnesLike


@dtype_params()
def test_fill(dtype, rng):
    value = arr((), dtype, rng)
    for dims in [[], [0], [2, 0, 3], [7], [3, 4], [2, 3, 4, 5]]:
        out = assert_matches_cpu(lambda v: tf.fill(dims, v), value, ops=["Fill"])
        assert has_shape(out[0], dims)
    assert_matches_cpu(lambda v: tf.fill(tf.constant([3, 2], tf.int64), v), value, ops=["Fill"])


def test_fill_large_and_errors():
    # Large enough to split over the thread pool.
    out = assert_matches_cpu(lambda v: tf.fill([1000, 1001], v), np.float32(2.5), ops=["Fill"])
    assert (out[0] == 2.5).all()
    raises_invalid(lambda: tf.raw_ops.Fill(dims=[2, -1], value=np.float32(1)), "Fill", "-1")
    raises_invalid(lambda: tf.raw_ops.Fill(dims=[2], value=np.ones(2, np.float32)), "Fill",
                   "scalar", "[2]")


@dtype_params()
@pytest.mark.parametrize("op", ["ZerosLike", "OnesLike"])
def test_zeros_ones_like(op, dtype, rng):
    fn = getattr(tf.raw_ops, op)
    for shape in SHAPES:
        x = arr(shape, dtype, rng)
        if x.size and np.dtype(dtype) != np.bool_:
            x[...] = 3  # neither 0 nor 1, so a no-op kernel would fail
        out = assert_matches_cpu(lambda t: fn(x=t), x, ops=[op])
        assert has_shape(out[0], shape)


# ------------------------------------------------------------------------ ConcatV2


@dtype_params()
def test_concat_two(dtype, rng):
    for shape in [(7,), (3, 4), (2, 3, 4, 5)]:
        rank = len(shape)
        for axis in range(-rank, rank):
            other = list(shape)
            other[axis] = 2
            assert_matches_cpu(lambda a, b: tf.concat([a, b], axis), arr(shape, dtype, rng),
                               arr(other, dtype, rng), ops=["ConcatV2"])


@dtype_params()
def test_concat_five_with_empty(dtype, rng):
    for axis in [0, 1, -1]:
        sizes = [2, 0, 3, 1, 4]
        arrays = []
        for s in sizes:
            shape = [3, 4, 2]
            shape[axis] = s
            arrays.append(arr(shape, dtype, rng))
        assert_matches_cpu(lambda *xs: tf.concat(list(xs), axis), *arrays, ops=["ConcatV2"])
    # All-empty inputs, and an empty non-axis dimension.
    assert_matches_cpu(lambda a, b: tf.concat([a, b], 0), arr((0, 3), dtype, rng),
                       arr((0, 3), dtype, rng), ops=["ConcatV2"])
    assert_matches_cpu(lambda a, b: tf.concat([a, b], 1), arr((2, 0, 3), dtype, rng),
                       arr((2, 0, 3), dtype, rng), ops=["ConcatV2"])


def test_concat_one_input_is_identity(rng):
    # tf.concat of a single tensor is an Identity (ConcatV2 needs N >= 2).
    assert_matches_cpu(lambda a: tf.concat([a], 0), arr((3, 4), np.float32, rng),
                       ops=["Identity"])


def test_concat_large_and_int64_axis(rng):
    a, b = arr((3, 200000), np.float32, rng), arr((2, 200000), np.float32, rng)
    assert_matches_cpu(lambda x, y: tf.concat([x, y], 0), a, b, ops=["ConcatV2"])
    assert_matches_cpu(lambda x, y: tf.concat([x, y], tf.constant(0, tf.int64)), a, b,
                       ops=["ConcatV2"])
    c, d = arr((5000, 3), np.float64, rng), arr((5000, 5), np.float64, rng)
    assert_matches_cpu(lambda x, y: tf.concat([x, y], 1), c, d, ops=["ConcatV2"])


def test_concat_errors(rng):
    a, b = arr((2, 3), np.float32, rng), arr((3, 2), np.float32, rng)
    raises_invalid(lambda: tf.concat([a, b], 0), "ConcatV2", "[2,3]", "[3,2]")
    raises_invalid(lambda: tf.concat([a, arr((2, 3, 1), np.float32, rng)], 0), "ConcatV2",
                   "[2,3]", "[2,3,1]", "rank")
    raises_invalid(lambda: tf.concat([a, a], 2), "ConcatV2", "axis 2", "[2,3]")


# ----------------------------------------------------------------------- Transpose


def _perms(rank, rng, n=4):
    perms = list(itertools.permutations(range(rank)))
    if len(perms) > n:
        perms = [perms[0], perms[-1]] + [perms[i] for i in rng.choice(len(perms), n - 2,
                                                                      replace=False)]
    return perms


@dtype_params()
def test_transpose(dtype, rng):
    shapes = [(7,), (3, 4), (2, 3, 4), (2, 3, 4, 5), (2, 3, 1, 4, 5), (3, 1, 4), (2, 0, 3)]
    for shape in shapes:
        for perm in _perms(len(shape), rng):
            assert_matches_cpu(lambda x: tf.transpose(x, perm), arr(shape, dtype, rng),
                               ops=["Transpose"])
    assert_matches_cpu(lambda x: tf.transpose(x, []), arr((), dtype, rng), ops=["Transpose"])


def test_transpose_rank6_and_large(rng):
    # Rank 6 that no simplification reduces: the strided fallback.
    x = arr((2, 3, 2, 3, 2, 3), np.float32, rng)
    for perm in [(5, 4, 3, 2, 1, 0), (1, 3, 5, 0, 2, 4)]:
        assert_matches_cpu(lambda t: tf.transpose(t, perm), x, ops=["Transpose"])
    assert_matches_cpu(lambda t: tf.transpose(t, tf.constant([1, 0], tf.int64)),
                       arr((300, 700), np.float64, rng), ops=["Transpose"])
    assert_matches_cpu(lambda t: tf.transpose(t, [0, 2, 1, 3]),
                       arr((4, 30, 50, 16), np.int8, rng), ops=["Transpose"])
    # Eigen shuffles on the calling thread (a Keras LSTM's [batch, time,
    # features] -> [time, batch, features], 640 KiB) and, above 1 MiB
    # (kInlineShuffleBytes), on the device pool.
    for shape in [(32, 80, 64), (80, 64, 96)]:
        assert_matches_cpu(lambda t: tf.transpose(t, [1, 0, 2]), arr(shape, np.float32, rng),
                           ops=["Transpose"])
    # Tiled (batched) 2-D path: full and partial 8x8 tiles, every element size.
    for dtype in [np.uint8, np.float16, np.int32, np.float64]:
        assert_matches_cpu(lambda t: tf.transpose(t, [0, 3, 1, 2]),
                           arr((2, 9, 13, 17), dtype, rng), ops=["Transpose"])
        assert_matches_cpu(lambda t: tf.transpose(t, [0, 2, 3, 1]),
                           arr((3, 33, 20, 5), dtype, rng), ops=["Transpose"])
        assert_matches_cpu(lambda t: tf.transpose(t), arr((517, 1030), dtype, rng),
                           ops=["Transpose"])


def test_transpose_errors(rng):
    x = arr((2, 3, 4), np.float32, rng)
    raises_invalid(lambda: tf.transpose(x, [0, 1]), "Transpose", "size 3", "size 2", "[2,3,4]")
    raises_invalid(lambda: tf.transpose(x, [0, 1, 3]), "Transpose", "3 is out of range",
                   "perm[2]")
    raises_invalid(lambda: tf.transpose(x, [0, 1, 1]), "Transpose", "2 is missing from {0,1,1}",
                   "not a permutation")


# --------------------------------------------------------------------- Pack / Unpack


@dtype_params()
def test_pack(dtype, rng):
    for shape in [(), (0,), (7,), (3, 4), (2, 3, 4, 5), (2, 0, 3)]:
        rank = len(shape)
        for n in [1, 3]:
            for axis in sorted({0, rank, -1, -rank - 1}):
                arrays = [arr(shape, dtype, rng) for _ in range(n)]
                assert_matches_cpu(lambda *xs: tf.stack(list(xs), axis), *arrays, ops=["Pack"])


@dtype_params()
def test_unpack(dtype, rng):
    for shape in [(7,), (3, 4), (2, 3, 4, 5), (2, 0, 3), (1, 5)]:
        for axis in range(-len(shape), len(shape)):
            if shape[axis] == 0:
                continue
            assert_matches_cpu(lambda x: tf.unstack(x, axis=axis), arr(shape, dtype, rng),
                               ops=["Unpack"])


def test_pack_unpack_large_and_errors(rng):
    xs = [arr((1000, 300), np.float32, rng) for _ in range(3)]
    assert_matches_cpu(lambda *t: tf.stack(list(t), 1), *xs, ops=["Pack"])
    assert_matches_cpu(lambda *t: tf.stack(list(t), 0), *xs, ops=["Pack"])
    assert_matches_cpu(lambda t: tf.unstack(t, axis=0), arr((3, 200000), np.float32, rng),
                       ops=["Unpack"])
    a, b = arr((2, 3), np.float32, rng), arr((3, 2), np.float32, rng)
    # TensorFlow's words (pack_op.cc, unpack_op.cc), which its tests match.
    raises_invalid(lambda: tf.stack([a, b]), "Pack", "Shapes of all inputs must match: "
                   "values[0].shape = [2,3] != values[1].shape = [3,2]")
    raises_invalid(lambda: tf.raw_ops.Unpack(value=a, num=3, axis=0), "Unpack",
                   "Input shape axis 0 must equal 3, got shape [2,3]")
    raises_invalid(lambda: tf.raw_ops.Pack(values=[a, a], axis=3), "Pack",
                   "axis = 3 not in [-3, 3)")


# ---------------------------------------------------------------------------- Tile


@dtype_params()
def test_tile(dtype, rng):
    cases = [((), []), ((7,), [3]), ((7,), [0]), ((3, 4), [2, 3]), ((3, 4), [1, 1]),
             ((3, 4), [0, 2]), ((3, 1), [1, 5]), ((2, 3, 4, 5), [1, 2, 1, 2]),
             ((2, 3, 4, 5), [2, 1, 1, 1]), ((2, 0, 3), [2, 2, 2]), ((0,), [3]),
             ((1, 3, 1, 2), [3, 1, 1, 2])]
    for shape, mult in cases:
        assert_matches_cpu(lambda x: tf.tile(x, mult), arr(shape, dtype, rng), ops=["Tile"])


def test_tile_large_and_errors(rng):
    assert_matches_cpu(lambda x: tf.tile(x, tf.constant([300, 2], tf.int64)),
                       arr((50, 37), np.float32, rng), ops=["Tile"])
    assert_matches_cpu(lambda x: tf.tile(x, [1, 1000]), arr((1000, 1), np.int16, rng),
                       ops=["Tile"])
    x = arr((2, 3), np.float32, rng)
    raises_invalid(lambda: tf.tile(x, [2]), "Tile", "length 2", "[1]")
    raises_invalid(lambda: tf.tile(x, [2, -1]), "Tile", "multiples[1]", "-1")


# --------------------------------------------------------- Shape / ShapeN / Size / Rank


@dtype_params()
@pytest.mark.parametrize("out_type", [tf.int32, tf.int64], ids=["int32", "int64"])
def test_shape_ops(dtype, out_type, rng):
    for shape in SHAPES:
        x = arr(shape, dtype, rng)
        out = assert_matches_cpu(lambda t: tf.raw_ops.Shape(input=t, out_type=out_type), x,
                                 ops=["Shape"])
        assert out[0].tolist() == list(shape) and out[0].dtype == out_type.as_numpy_dtype
        out = assert_matches_cpu(lambda t: tf.raw_ops.Size(input=t, out_type=out_type), x,
                                 ops=["Size"])
        assert out[0] == int(np.prod(shape))
        out = assert_matches_cpu(lambda t: tf.raw_ops.Rank(input=t), x, ops=["Rank"])
        assert out[0] == len(shape)
    xs = [arr(s, dtype, rng) for s in SHAPES]
    out = assert_matches_cpu(lambda *t: tf.raw_ops.ShapeN(input=list(t), out_type=out_type),
                             *xs, ops=["ShapeN"])
    assert [o.tolist() for o in out] == [list(s) for s in SHAPES]


def test_shape_in_graph_stays_on_pdk(rng):
    # A dynamic reshape: Shape's host-memory output feeds Reshape's host-memory
    # shape input; both run on PDK.
    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32)])
    def f(x):
        s = tf.shape(x)
        return tf.reshape(x, tf.stack([s[1], s[0]])) + 0.0, tf.size(x), tf.rank(x)

    x = arr((3, 5), np.float32, rng)
    with tf.device("/PDK:0"):
        t = tf.constant(x)
        with launches() as d:
            r, n, k = f(t)
    np.testing.assert_array_equal(r.numpy(), x.reshape(5, 3))
    assert int(n) == 15 and int(k) == 2
    assert d.get("Shape", 0) >= 1 and d.get("Reshape", 0) >= 1, d


# ----------------------------------------------------------------------- gradients


def _grad_on(device, fn, x):
    with tf.device(device):
        v = tf.constant(x)
        with tf.GradientTape() as tape:
            tape.watch(v)
            y = fn(v)
            loss = tf.reduce_sum(y * y)
        return tape.gradient(loss, v).numpy()


@pytest.mark.parametrize("name,fn,op", [
    ("concat", lambda v: tf.concat([v, 2.0 * v, v[:, :1]], 1), "ConcatV2"),
    ("transpose", lambda v: tf.transpose(tf.reshape(v, [2, 3, 4]), [2, 0, 1]), "Transpose"),
    ("tile", lambda v: tf.tile(v, [2, 3]), "Tile"),
    ("reshape", lambda v: tf.reshape(v, [4, -1]) * tf.constant([[1.0], [2.0], [3.0], [4.0]]),
     "Reshape"),
])
def test_gradients_match(name, fn, op, rng):
    x = arr((6, 4), np.float32, rng)
    expected = _grad_on("/CPU:0", fn, x)
    with launches() as d:
        actual = _grad_on("/PDK:0", fn, x)
    assert d.get(op, 0) >= 1, d
    np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("policy", ["IGNORE", "ERROR", ""])
def test_gather_nd_bad_indices_policy_as_on_cpu(policy):
    """GatherNd's bad_indices_policy (TensorFlow 2.17 and later): IGNORE gives
    zeros for an index row outside params, as the CPU; ERROR and the default
    raise InvalidArgumentError with TensorFlow's wording."""
    from tensorflow.python.framework import op_def_registry

    if not any(a.name == "bad_indices_policy" for a in op_def_registry.get("GatherNd").attr):
        pytest.skip("this TensorFlow's GatherNd has no bad_indices_policy")
    params = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3))
    idx = tf.constant([[0, 1], [4, 0], [3, 2], [-1, 1], [2, 0]], tf.int32)
    out = {}
    for device in ("/CPU:0", "/PDK:0"):
        with tf.device(device):
            try:
                out[device] = tf.raw_ops.GatherNd(params=params, indices=idx,
                                                  bad_indices_policy=policy).numpy()
            except tf.errors.InvalidArgumentError as e:
                out[device] = e
    if policy == "IGNORE":
        np.testing.assert_array_equal(out["/PDK:0"], out["/CPU:0"])
        np.testing.assert_array_equal(out["/PDK:0"], [1, 0, 11, 0, 6])
    else:
        for device in out:
            assert isinstance(out[device], tf.errors.InvalidArgumentError), out[device]
        assert "does not index into param shape [4,3]" in out["/PDK:0"].message
        assert "device:PDK:0" in str(out["/PDK:0"])
