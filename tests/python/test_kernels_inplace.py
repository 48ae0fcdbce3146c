"""tf.parallel_stack and the in-place ops (src/kernels/array/inplace_ops.cc,
src/graph/rewrites/parallel_concat.cc) against TensorFlow's own CPU kernels.

Issue 14: tf.parallel_stack in a tf.function under /PDK:0 returned zeros.
TensorFlow expands ParallelConcat into _ParallelConcatStart, one
_ParallelConcatUpdate per input (writing into the start's buffer in place) and
an Identity with control inputs from the updates. PDK had no kernels for the
first two, so they ran on the CPU while the Identity ran on PDK, and the copy
of the start's buffer to PDK was taken before the updates wrote it.
"""
import os

import numpy as np
import pytest
import tensorflow as tf

import tensorflow_pdk
from tensorflow_pdk import placement
from tensorflow_pdk.testing import launches, random_array

DTYPES = [np.float32, np.float64, np.float16, tf.bfloat16.as_numpy_dtype, np.int32, np.int64,
          np.int8, np.int16, np.uint8, np.bool_]
SHAPES = [(3,), (2, 3), (4, 1, 5), (1,), (3, 0)]


def _parallel_stack(device, values):
    @tf.function
    def f(*xs):
        return tf.parallel_stack(list(xs))

    with tf.device(device):
        tensors = [tf.constant(v) for v in values]
        return f(*tensors).numpy()


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("n", [1, 2, 5])
def test_parallel_stack_matches_np_stack(dtype, shape, n):
    rng = np.random.default_rng(14)
    values = [random_array(shape, dtype, rng) for _ in range(n)]
    with launches() as counts:
        out = _parallel_stack("/PDK:0", values)
    expected = np.stack(values)
    assert out.dtype == expected.dtype and out.shape == expected.shape
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(_parallel_stack("/CPU:0", values), expected)
    assert counts.get("_ParallelConcatStart", 0) == 1, counts
    assert counts.get("_ParallelConcatUpdate", 0) == n, counts


def test_parallel_stack_issue_example_placed_on_pdk():
    """The issue's example; every node of the expansion is placed on PDK."""
    x = np.array([1, 2, 3], np.int32)
    y = np.array([4, 5, 6], np.int32)
    with placement.record() as p:
        out = _parallel_stack("/PDK:0", [x, y])
    np.testing.assert_array_equal(out, [[1, 2, 3], [4, 5, 6]])
    on_cpu = p.ops_on("CPU")
    for op in ("_ParallelConcatStart", "_ParallelConcatUpdate"):
        assert p.ops_on("PDK").get(op, 0) > 0, p.report()
        assert on_cpu.get(op, 0) == 0, p.report()


def test_parallel_stack_large_and_in_a_bigger_graph():
    rng = np.random.default_rng(1)
    values = [rng.standard_normal((64, 257)).astype(np.float32) for _ in range(7)]

    @tf.function
    def f(*xs):
        s = tf.parallel_stack([x * 2.0 for x in xs])
        return tf.reduce_sum(s, axis=0) + s[3]

    outs = {}
    for dev in ("/CPU:0", "/PDK:0"):
        with tf.device(dev):
            outs[dev] = f(*[tf.constant(v) for v in values]).numpy()
    np.testing.assert_allclose(outs["/PDK:0"], outs["/CPU:0"], rtol=1e-6, atol=1e-5)


def test_parallel_stack_eager_raises_like_cpu():
    """tf.parallel_stack is graph-only: eager raises the same on both devices."""
    errs = []
    for dev in ("/CPU:0", "/PDK:0"):
        with tf.device(dev), pytest.raises(Exception) as e:
            tf.parallel_stack([tf.constant([1.0]), tf.constant([2.0])])
        errs.append(type(e.value))
    assert errs[0] == errs[1]


def test_parallel_stack_unsupported_dtype_stays_on_one_device():
    """complex64: PDK has no start/update kernels, so they run on the CPU; the
    graph rewrite moves the Identity reading their buffer there too."""
    values = [np.array([1 + 2j, 3 - 1j], np.complex64), np.array([0.5j, 2], np.complex64)]
    tensorflow_pdk.reset_graph_rewrite_counts()
    np.testing.assert_array_equal(_parallel_stack("/PDK:0", values), np.stack(values))
    assert tensorflow_pdk.graph_rewrite_counts().get("ParallelConcat reader on another device")


def test_parallel_stack_graph_dump_shows_the_expansion(tmp_path, monkeypatch):
    """PDK's optimizer sees the expansion placed on PDK and sets _pdk_shape."""
    monkeypatch.setenv("PDK_GRAPH_DUMP", str(tmp_path))

    @tf.function
    def f(a, b):
        return tf.parallel_stack([a, b])

    with tf.device("/PDK:0"):
        f(tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0]))
    starts = []
    for name in sorted(os.listdir(tmp_path)):
        if not name.endswith("_after.pb"):
            continue
        g = tf.compat.v1.GraphDef.FromString((tmp_path / name).read_bytes())
        starts += [n for n in g.node if n.op == "_ParallelConcatStart"]
    assert starts, "no graph with _ParallelConcatStart reached PDK's optimizer"
    for n in starts:
        assert "PDK" in n.device
        assert list(n.attr["_pdk_shape"].list.i) == [2, 2]


# ------------------------------------------------------------- raw in-place ops

INPLACE = [("InplaceUpdate", lambda x, i, v: _apply(x, i, v, "set")),
           ("InplaceAdd", lambda x, i, v: _apply(x, i, v, "add")),
           ("InplaceSub", lambda x, i, v: _apply(x, i, v, "sub"))]


def _apply(x, i, v, how):
    y = x.copy()
    rows = x.shape[0]
    for j, r in enumerate(i):
        r = (r % rows + rows) % rows
        if how == "set":
            y[r] = v[j]
        elif how == "add":
            y[r] = y[r] + v[j]
        else:
            y[r] = y[r] - v[j]
    return y


@pytest.mark.parametrize("op,ref", INPLACE, ids=[o for o, _ in INPLACE])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.int64,
                                   np.int8], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("x_shape,idx", [((5, 3), [0, 2]), ((4,), [3, 3, 1]),
                                         ((3, 2, 2), [-1]), ((2, 4), []),
                                         ((6, 257), [5, 0, 2, 7])])
def test_inplace_ops_match_cpu(op, ref, dtype, x_shape, idx):
    rng = np.random.default_rng(3)
    x = random_array(x_shape, dtype, rng)
    v = random_array((len(idx),) + x_shape[1:], dtype, rng)
    i = np.array(idx, np.int32)
    outs = {}
    for dev in ("/CPU:0", "/PDK:0"):
        with launches() as counts, tf.device(dev):
            outs[dev] = getattr(tf.raw_ops, op)(x=tf.constant(x), i=tf.constant(i),
                                                 v=tf.constant(v)).numpy()
        if dev == "/PDK:0":
            assert counts.get(op, 0) == 1, counts
    np.testing.assert_array_equal(outs["/PDK:0"], outs["/CPU:0"])
    np.testing.assert_array_equal(outs["/PDK:0"], ref(x, idx, v))


def test_inplace_update_bool_and_tf_inplace_helpers():
    x = np.array([[True, False], [False, False], [True, True]])
    v = np.array([[False, True]])
    with launches() as counts, tf.device("/PDK:0"):
        out = tf.raw_ops.InplaceUpdate(x=tf.constant(x), i=tf.constant([1]), v=tf.constant(v))
    np.testing.assert_array_equal(out.numpy(), _apply(x, [1], v, "set"))
    assert counts.get("InplaceUpdate") == 1


@pytest.mark.parametrize("op", ["InplaceUpdate", "InplaceAdd"])
def test_inplace_ops_in_a_function(op):
    """In a tf.function: the op writes the DeepCopy of x, as tf's
    inplace_ops.inplace_update does."""
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    v = np.ones((2, 3), np.float32)

    @tf.function
    def f(x, v):
        y = tf.raw_ops.DeepCopy(x=x)
        return getattr(tf.raw_ops, op)(x=y, i=tf.constant([3, 1]), v=v), x

    outs = {}
    for dev in ("/CPU:0", "/PDK:0"):
        with launches() as counts, tf.device(dev):
            outs[dev] = [t.numpy() for t in f(tf.constant(x), tf.constant(v))]
        if dev == "/PDK:0":
            assert counts.get(op, 0) == 1 and counts.get("DeepCopy", 0) == 1, counts
    for a, b in zip(outs["/PDK:0"], outs["/CPU:0"]):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(outs["/PDK:0"][1], x)  # the input is untouched


@pytest.mark.parametrize("kwargs,match", [
    (dict(x=np.zeros((3, 2), np.float32), i=np.array([[0]], np.int32),
          v=np.zeros((1, 2), np.float32)), "i must be a vector"),
    (dict(x=np.zeros((3, 2), np.float32), i=np.array([0], np.int32),
          v=np.zeros((1, 3), np.float32)), "x and v shape doesn't match at index 1"),
    (dict(x=np.zeros((3, 2), np.float32), i=np.array([0], np.int32),
          v=np.zeros((1, 2, 1), np.float32)), r"x and v shape doesn't match \(ranks differ\)"),
    (dict(x=np.zeros((3, 2), np.float32), i=np.array([0, 1], np.int32),
          v=np.zeros((1, 2), np.float32)), "i and x shape doesn't match at index 0"),
])
def test_inplace_errors_match_cpu(kwargs, match):
    for dev in ("/CPU:0", "/PDK:0"):
        with tf.device(dev), pytest.raises(tf.errors.InvalidArgumentError, match=match):
            tf.raw_ops.InplaceAdd(**{k: tf.constant(v) for k, v in kwargs.items()})


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, np.float16],
                         ids=lambda d: np.dtype(d).name)
def test_empty_and_deep_copy(dtype):
    with launches() as counts, tf.device("/PDK:0"):
        e = tf.raw_ops.Empty(shape=tf.constant([2, 3]), dtype=dtype, init=True)
        e0 = tf.raw_ops.Empty(shape=tf.constant([0, 4]), dtype=dtype, init=False)
        x = tf.constant(random_array((3, 5), dtype, np.random.default_rng(0)))
        c = tf.raw_ops.DeepCopy(x=x)
    assert e.shape == (2, 3) and not np.any(e.numpy())
    assert e0.shape == (0, 4)
    np.testing.assert_array_equal(c.numpy(), x.numpy())
    assert counts.get("Empty") == 2 and counts.get("DeepCopy") == 1, counts


def test_empty_negative_shape_raises_like_cpu():
    for dev in ("/CPU:0", "/PDK:0"):
        with tf.device(dev), pytest.raises(tf.errors.InvalidArgumentError,
                                           match="must be >= 0"):
            tf.raw_ops.Empty(shape=tf.constant([2, -1]), dtype=tf.float32, init=True)
