"""The conv group's kernels on OPENCL against TensorFlow's CPU kernels:
MatMul / BatchMatMul / BatchMatMulV2 (CLBlast SGEMM), Conv2D and its
backprops (im2col / col2im + SGEMM), DepthwiseConv2dNative and its backprops
(the grouped convolution), MaxPool / MaxPoolGrad, AvgPool /
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


# ---------------------------------------------------------------- Conv2D

CONV_CASES = [
    # (input NHWC, filter HWIO, strides, padding, dilations)
    ((1, 5, 5, 3), (3, 3, 3, 2), (1, 1), "VALID", (1, 1)),
    ((2, 7, 6, 3), (3, 2, 3, 4), (1, 1), "SAME", (1, 1)),
    ((2, 8, 9, 4), (3, 3, 4, 5), (2, 2), "SAME", (1, 1)),
    ((2, 9, 8, 2), (3, 3, 2, 3), (2, 1), "VALID", (1, 1)),
    ((1, 10, 11, 2), (3, 2, 2, 3), (1, 1), "SAME", (2, 3)),
    ((3, 6, 6, 5), (1, 1, 5, 7), (1, 1), "VALID", (1, 1)),
    ((0, 5, 5, 3), (3, 3, 3, 2), (1, 1), "SAME", (1, 1)),
    ((1, 2, 2, 3), (3, 3, 3, 2), (1, 1), "VALID", (1, 1)),
    ((2, 6, 7, 3), (2, 3, 3, 4), (2, 2), [[0, 0], [1, 2], [0, 3], [0, 0]], (1, 1)),
]


def _conv(x, f, strides, padding, dilations, data_format="NHWC"):
    if isinstance(padding, list):
        pads = padding if data_format == "NHWC" else [padding[i] for i in (0, 3, 1, 2)]
        kw = dict(padding="EXPLICIT", explicit_paddings=[p for pp in pads for p in pp])
    else:
        kw = dict(padding=padding)
    s = [1, *strides, 1] if data_format == "NHWC" else [1, 1, *strides]
    d = [1, *dilations, 1] if data_format == "NHWC" else [1, 1, *dilations]
    return tf.raw_ops.Conv2D(input=x, filter=f, strides=s, dilations=d, data_format=data_format,
                             **kw)


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d(rng, case):
    xs, fs, strides, padding, dil = case
    x = rng.standard_normal(xs).astype(np.float32)
    f = rng.standard_normal(fs).astype(np.float32)
    assert_matches_cpu(lambda a, b: _conv(a, b, strides, padding, dil), x, f,
                       rtol=RTOL, atol=ATOL)


def test_conv2d_grouped(rng):
    x = rng.standard_normal((2, 6, 6, 6)).astype(np.float32)
    f = rng.standard_normal((3, 3, 2, 9)).astype(np.float32)
    assert_matches_cpu(lambda a, b: _conv(a, b, (1, 1), "SAME", (1, 1)), x, f,
                       rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("case", CONV_CASES[:6] + CONV_CASES[8:])
def test_conv2d_nchw_matches_nhwc(rng, case):
    # The CPU has no NCHW Conv2D: compare with its NHWC result, transposed.
    xs, fs, strides, padding, dil = case
    x = rng.standard_normal(xs).astype(np.float32)
    f = rng.standard_normal(fs).astype(np.float32)
    want = run(lambda a, b: _conv(a, b, strides, padding, dil), x, f, device="/CPU:0")
    got = on_opencl(lambda a, b: _conv(a, b, strides, padding, dil, "NCHW"),
                    x.transpose(0, 3, 1, 2), f)
    np.testing.assert_allclose(got, want.transpose(0, 3, 1, 2), rtol=RTOL, atol=ATOL)


def _backprop_inputs(rng, case, forward):
    """Random x [case[0]], filter [case[1]] and an out_backprop of forward's
    output shape (the CPU's)."""
    x = rng.standard_normal(case[0]).astype(np.float32)
    f = rng.standard_normal(case[1]).astype(np.float32)
    y = run(forward, x, f, device="/CPU:0")
    return x, f, rng.standard_normal(y.shape).astype(np.float32)


@pytest.mark.parametrize("case", [c for c in CONV_CASES if c[4] == (1, 1)])
def test_conv2d_backprops(rng, case):
    xs, fs, strides, padding, dil = case
    x, f, dy = _backprop_inputs(rng, case, lambda a, b: _conv(a, b, strides, padding, dil))
    if isinstance(padding, list):
        kw = dict(padding="EXPLICIT", explicit_paddings=[p for pp in padding for p in pp])
    else:
        kw = dict(padding=padding)
    s = [1, *strides, 1]
    assert_matches_cpu(lambda b, g: tf.raw_ops.Conv2DBackpropInput(
        input_sizes=tf.constant(xs, tf.int32), filter=b, out_backprop=g, strides=s, **kw),
        f, dy, rtol=RTOL, atol=ATOL)
    bf = lambda a, g: tf.raw_ops.Conv2DBackpropFilter(  # noqa: E731
        input=a, filter_sizes=tf.constant(fs, tf.int32), out_backprop=g, strides=s, **kw)
    if dy.size == 0:
        # TensorFlow's CPU kernel leaves its output uninitialized here; the
        # gradient is zero.
        np.testing.assert_array_equal(on_opencl(bf, x, dy), np.zeros(fs, np.float32))
    else:
        assert_matches_cpu(bf, x, dy, rtol=RTOL, atol=ATOL)


def test_conv2d_backprop_input_two_sizes(rng):
    f = rng.standard_normal((3, 3, 3, 2)).astype(np.float32)
    dy = rng.standard_normal((2, 3, 3, 2)).astype(np.float32)
    assert_matches_cpu(lambda b, g: tf.raw_ops.Conv2DBackpropInput(
        input_sizes=tf.constant([6, 5], tf.int32), filter=b, out_backprop=g,
        strides=[1, 2, 2, 1], padding="SAME"), f, dy, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("dil,groups", [((1, 1), 1), ((2, 2), 1), ((1, 1), 2), ((2, 1), 3)])
def test_conv2d_gradient_tape(rng, data_format, dil, groups):
    # Dilated and grouped gradients: the CPU has no kernels for them, so the
    # reference is the CPU's gradient of an equivalent computation (per-group
    # convolutions of a zero-stuffed filter, all NHWC).
    x = rng.standard_normal((2, 9, 8, 3 * groups)).astype(np.float32)
    f = rng.standard_normal((3, 2, 3, 2 * groups)).astype(np.float32)
    dy = rng.standard_normal((2, 9, 8, 2 * groups)).astype(np.float32)

    def grads(a, b, g):
        with tf.GradientTape() as tape:
            tape.watch([a, b])
            y = _conv(a, b, (1, 1), "SAME", dil, data_format)
        return tape.gradient(y, [a, b], output_gradients=g)

    def reference(a, b, g):
        with tf.GradientTape() as tape:
            tape.watch([a, b])
            kh, kw = (b.shape[0] - 1) * dil[0] + 1, (b.shape[1] - 1) * dil[1] + 1
            big = tf.zeros([kh, kw, b.shape[2], b.shape[3]])
            idx = [[i * dil[0], j * dil[1]] for i in range(b.shape[0]) for j in range(b.shape[1])]
            big = tf.tensor_scatter_nd_update(big, idx, tf.reshape(b, [-1, b.shape[2], b.shape[3]]))
            xs = tf.split(a, groups, axis=3)
            fs = tf.split(big, groups, axis=3)
            y = tf.concat([_conv(xi, fi, (1, 1), "SAME", (1, 1)) for xi, fi in zip(xs, fs)], 3)
        return tape.gradient(y, [a, b], output_gradients=g)

    want = run(reference, x, f, dy, device="/CPU:0")
    if data_format == "NCHW":
        dx, df = on_opencl(grads, x.transpose(0, 3, 1, 2), f, dy.transpose(0, 3, 1, 2))
        dx = dx.transpose(0, 2, 3, 1)
    else:
        dx, df = on_opencl(grads, x, f, dy)
    np.testing.assert_allclose(dx, want[0], rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(df, want[1], rtol=RTOL, atol=ATOL)


Z = lambda *s: np.zeros(s, np.float32)  # noqa: E731


@pytest.mark.parametrize("xs,fs,kw", [
    ((1, 5, 5, 3), (2, 2, 4, 2), {}),
    ((5, 5, 3), (3, 3, 3, 2), {}),
    ((1, 5, 5, 3), (3, 3, 3), {}),
    ((1, 5, 5, 0), (3, 3, 0, 2), {}),
    ((1, 1, 5, 3), (3, 3, 3, 2), {}),
    ((1, 5, 5, 3), (3, 3, 3, 2), dict(strides=[1, 1, 1])),
    ((1, 5, 5, 3), (3, 3, 3, 2), dict(strides=[2, 1, 1, 1])),
    ((1, 5, 5, 3), (3, 3, 3, 2), dict(strides=[1, 0, 1, 1])),
    ((1, 5, 5, 3), (3, 3, 3, 2), dict(dilations=[1, 1, 1])),
    ((1, 5, 5, 3), (3, 3, 3, 2), dict(dilations=[2, 1, 1, 1])),
    ((1, 5, 5, 3), (3, 3, 3, 2), dict(dilations=[1, 0, 1, 1])),
    ((1, 5, 5, 3), (3, 3, 3, 2), dict(padding="EXPLICIT", explicit_paddings=[0, 0, 1, 1])),
    ((1, 5, 5, 3), (3, 3, 3, 2),
     dict(padding="EXPLICIT", explicit_paddings=[1, 0, 1, 1, 1, 1, 0, 0])),
    ((1, 5, 5, 3), (3, 3, 3, 2),
     dict(padding="EXPLICIT", explicit_paddings=[0, 0, -1, 1, 1, 1, 0, 0])),
    ((1, 5, 5, 3), (3, 3, 3, 2), dict(explicit_paddings=[0, 0, 1, 1, 1, 1, 0, 0])),
])
def test_conv2d_bad_shapes(xs, fs, kw):
    kw = {"strides": [1, 1, 1, 1], "padding": "VALID", **kw}
    _both_raise(lambda a, b: tf.raw_ops.Conv2D(input=a, filter=b, **kw), Z(*xs), Z(*fs))


@pytest.mark.parametrize("sizes,fs,dys,kw", [
    ([1, 5, 5, 3], (3, 3, 3, 2), (1, 4, 3, 2), {}),
    ([1, 5, 5, 4], (3, 3, 3, 2), (1, 3, 3, 2), {}),
    ([1, 5, 5, 3], (3, 3, 3, 2), (1, 3, 3, 3), {}),
    ([1, 5, 5], (3, 3, 3, 2), (1, 3, 3, 2), {}),
    ([[1, 5, 5, 3]], (3, 3, 3, 2), (1, 3, 3, 2), {}),
    ([2, 5, 5, 3], (3, 3, 3, 2), (1, 3, 3, 2), {}),
    ([1, 5, 5, 3], (3, 3, 3), (1, 3, 3, 2), {}),
    ([1, 5, 5, 3], (3, 3, 3, 2), (3, 3, 2), {}),
    ([1, 5, 5, 3], (3, 3, 3, 2), (1, 3, 3, 2), dict(strides=[2, 1, 1, 1])),
    ([1, -5, 5, 3], (3, 3, 3, 2), (1, 3, 3, 2), {}),
])
def test_conv2d_backprop_input_bad_shapes(sizes, fs, dys, kw):
    kw = {"strides": [1, 1, 1, 1], "padding": "VALID", **kw}
    _both_raise(lambda b, g: tf.raw_ops.Conv2DBackpropInput(
        input_sizes=tf.constant(sizes, tf.int32), filter=b, out_backprop=g, **kw), Z(*fs), Z(*dys))


@pytest.mark.parametrize("xs,sizes,dys", [
    ((1, 5, 5, 3), [3, 3, 3, 2], (1, 4, 3, 2)),
    ((1, 5, 5, 4), [3, 3, 3, 2], (1, 3, 3, 2)),
    ((1, 5, 5, 3), [3, 3, 3, 2], (1, 3, 3, 3)),
    ((1, 5, 5, 3), [3, 3, 3], (1, 3, 3, 2)),
    ((2, 5, 5, 3), [3, 3, 3, 2], (1, 3, 3, 2)),
    ((1, 5, 5, 3), [[3, 3, 3, 2]], (1, 3, 3, 2)),
    ((1, 5, 5, 3), [3, -3, 3, 2], (1, 3, 3, 2)),
])
def test_conv2d_backprop_filter_bad_shapes(xs, sizes, dys):
    _both_raise(lambda a, g: tf.raw_ops.Conv2DBackpropFilter(
        input=a, filter_sizes=tf.constant(sizes, tf.int32), out_backprop=g,
        strides=[1, 1, 1, 1], padding="VALID"), Z(*xs), Z(*dys))


# ---------------------------------------------------------------- pooling

POOL_CASES = [
    # (input NHWC, ksize (h, w), strides (h, w), padding)
    ((1, 4, 4, 3), (2, 2), (2, 2), "VALID"),
    ((2, 7, 6, 3), (3, 3), (2, 2), "SAME"),
    ((2, 7, 6, 3), (3, 2), (1, 2), "VALID"),
    ((1, 5, 5, 2), (2, 3), (3, 1), "SAME"),
    ((0, 5, 5, 2), (2, 2), (2, 2), "SAME"),
    ((1, 1, 5, 2), (2, 2), (1, 1), "VALID"),
    ((3, 8, 8, 4), (1, 1), (1, 1), "VALID"),
]


def _pool_kw(ks, st, padding, data_format="NHWC"):
    if data_format == "NHWC":
        return dict(ksize=[1, *ks, 1], strides=[1, *st, 1], padding=padding)
    return dict(ksize=[1, 1, *ks], strides=[1, 1, *st], padding=padding, data_format="NCHW")


@pytest.mark.parametrize("case", POOL_CASES)
def test_max_pool_and_grad(rng, case):
    xs, ks, st, padding = case
    x = rng.standard_normal(xs).astype(np.float32)
    kw = _pool_kw(ks, st, padding)
    y = assert_matches_cpu(lambda a: tf.raw_ops.MaxPool(input=a, **kw), x, rtol=0, atol=0)
    g = rng.standard_normal(y.shape).astype(np.float32)
    grad = lambda a, b, c: tf.raw_ops.MaxPoolGrad(  # noqa: E731
        orig_input=a, orig_output=b, grad=c, **kw)
    if g.size == 0:
        # TensorFlow's CPU kernel leaves its output uninitialized here.
        np.testing.assert_array_equal(on_opencl(grad, x, y, g), np.zeros(xs, np.float32))
    else:
        assert_matches_cpu(grad, x, y, g, rtol=1e-6, atol=1e-6)


def test_max_pool_grad_ties_go_to_the_first_maximum(rng):
    # Many equal values: each window's gradient goes where the CPU sends it.
    x = rng.integers(0, 3, (2, 9, 8, 3)).astype(np.float32)
    for ks, st, padding in [((3, 3), (2, 2), "SAME"), ((2, 2), (1, 1), "VALID"),
                            ((3, 2), (1, 2), "SAME")]:
        kw = _pool_kw(ks, st, padding)
        y = run(lambda a: tf.raw_ops.MaxPool(input=a, **kw), x, device="/CPU:0")
        g = rng.standard_normal(y.shape).astype(np.float32)
        assert_matches_cpu(lambda a, b, c: tf.raw_ops.MaxPoolGrad(
            orig_input=a, orig_output=b, grad=c, **kw), x, y, g, rtol=1e-6, atol=1e-6)


def test_max_pool_explicit_padding(rng):
    x = rng.standard_normal((2, 5, 6, 3)).astype(np.float32)
    kw = dict(ksize=[1, 3, 3, 1], strides=[1, 2, 1, 1], padding="EXPLICIT",
              explicit_paddings=[0, 0, 1, 2, 2, 0, 0, 0])
    y = assert_matches_cpu(lambda a: tf.raw_ops.MaxPool(input=a, **kw), x, rtol=0, atol=0)
    g = rng.standard_normal(y.shape).astype(np.float32)
    assert_matches_cpu(lambda a, b, c: tf.raw_ops.MaxPoolGrad(
        orig_input=a, orig_output=b, grad=c, **kw), x, y, g, rtol=1e-6, atol=1e-6)


def test_max_pool_depthwise(rng):
    x = rng.standard_normal((2, 3, 4, 6)).astype(np.float32)
    kw = dict(ksize=[1, 1, 1, 3], strides=[1, 1, 1, 3], padding="VALID")
    assert_matches_cpu(lambda a: tf.raw_ops.MaxPool(input=a, **kw), x, rtol=0, atol=0)


def test_max_pool_v2(rng):
    x = rng.standard_normal((2, 7, 6, 3)).astype(np.float32)
    assert_matches_cpu(lambda a: tf.raw_ops.MaxPoolV2(
        input=a, ksize=tf.constant([1, 3, 3, 1]), strides=tf.constant([1, 2, 2, 1]),
        padding="SAME"), x, rtol=0, atol=0)


@pytest.mark.parametrize("case", POOL_CASES)
def test_avg_pool_and_grad(rng, case):
    xs, ks, st, padding = case
    x = rng.standard_normal(xs).astype(np.float32)
    kw = _pool_kw(ks, st, padding)
    y = assert_matches_cpu(lambda a: tf.raw_ops.AvgPool(value=a, **kw), x, rtol=1e-5, atol=1e-6)
    g = rng.standard_normal(y.shape).astype(np.float32)
    assert_matches_cpu(lambda c: tf.raw_ops.AvgPoolGrad(
        orig_input_shape=tf.constant(xs, tf.int32), grad=c, **kw), g, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", POOL_CASES[:4])
def test_pools_nchw_match_nhwc(rng, case):
    # The CPU has no NCHW pooling: compare with its NHWC results, transposed.
    xs, ks, st, padding = case
    x = rng.standard_normal(xs).astype(np.float32)
    t = lambda v: v.transpose(0, 3, 1, 2)  # noqa: E731
    nhwc, nchw = _pool_kw(ks, st, padding), _pool_kw(ks, st, padding, "NCHW")
    for op, arg in [(tf.raw_ops.MaxPool, "input"), (tf.raw_ops.AvgPool, "value")]:
        y = run(lambda a: op(**{arg: a}, **nhwc), x, device="/CPU:0")
        got = on_opencl(lambda a: op(**{arg: a}, **nchw), t(x))
        np.testing.assert_allclose(got, t(y), rtol=1e-5, atol=1e-6)
    y = run(lambda a: tf.raw_ops.MaxPool(input=a, **nhwc), x, device="/CPU:0")
    g = rng.standard_normal(y.shape).astype(np.float32)
    want = run(lambda a, b, c: tf.raw_ops.MaxPoolGrad(orig_input=a, orig_output=b, grad=c, **nhwc),
               x, y, g, device="/CPU:0")
    got = on_opencl(lambda a, b, c: tf.raw_ops.MaxPoolGrad(
        orig_input=a, orig_output=b, grad=c, **nchw), t(x), t(y), t(g))
    np.testing.assert_allclose(got, t(want), rtol=1e-6, atol=1e-6)
    want = run(lambda c: tf.raw_ops.AvgPoolGrad(
        orig_input_shape=tf.constant(xs, tf.int32), grad=c, **nhwc), g, device="/CPU:0")
    got = on_opencl(lambda c: tf.raw_ops.AvgPoolGrad(
        orig_input_shape=tf.constant(t(np.zeros(xs)).shape, tf.int32), grad=c, **nchw), t(g))
    np.testing.assert_allclose(got, t(want), rtol=1e-5, atol=1e-6)


def test_keras_pooling_gradients(rng):
    x = rng.standard_normal((2, 8, 8, 3)).astype(np.float32)

    g = rng.standard_normal((2, 4, 4, 3)).astype(np.float32)

    def f(a, dy):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(a)
            y = tf.nn.max_pool2d(a, 2, 2, "SAME")
            z = tf.nn.avg_pool2d(a, 3, 2, "SAME")
        return (y, tape.gradient(y, a, output_gradients=dy), z,
                tape.gradient(z, a, output_gradients=dy))

    assert_matches_cpu(f, x, g, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("xs,kw", [
    ((5, 5, 3), {}),
    ((1, 5, 5, 3), dict(ksize=[2, 2, 2, 1])),
    ((1, 5, 5, 3), dict(ksize=[1, 0, 2, 1])),
    ((1, 5, 5, 3), dict(strides=[1, 0, 1, 1])),
    ((1, 1, 5, 3), dict(ksize=[1, 3, 2, 1])),
    ((1, 5, 5, 4), dict(ksize=[1, 1, 1, 3], strides=[1, 1, 1, 3])),
    ((1, 5, 5, 4), dict(ksize=[1, 2, 1, 2], strides=[1, 1, 1, 2])),
    ((1, 5, 5, 4), dict(padding="EXPLICIT", explicit_paddings=[0, 0, 1, 1])),
])
def test_max_pool_bad_shapes(xs, kw):
    kw = {"ksize": [1, 2, 2, 1], "strides": [1, 1, 1, 1], "padding": "VALID", **kw}
    _both_raise(lambda a: tf.raw_ops.MaxPool(input=a, **kw), Z(*xs))


@pytest.mark.parametrize("xs,ys,gs", [
    ((1, 4, 4, 3), (1, 2, 2, 3), (1, 3, 2, 3)),
    ((1, 4, 4, 3), (1, 3, 2, 3), (1, 2, 2, 3)),
    ((4, 4, 3), (1, 2, 2, 3), (1, 2, 2, 3)),
    ((1, 4, 4, 3), (1, 2, 2, 3), (2, 2, 3)),
    ("depth", None, None),
])
def test_max_pool_grad_bad_shapes(xs, ys, gs):
    if xs == "depth":
        _both_raise(lambda a, b, c: tf.raw_ops.MaxPoolGrad(
            orig_input=a, orig_output=b, grad=c, ksize=[1, 1, 1, 2], strides=[1, 1, 1, 2],
            padding="VALID"), Z(1, 4, 4, 4), Z(1, 4, 4, 2), Z(1, 4, 4, 2))
        return
    _both_raise(lambda a, b, c: tf.raw_ops.MaxPoolGrad(
        orig_input=a, orig_output=b, grad=c, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1],
        padding="VALID"), Z(*xs), Z(*ys), Z(*gs))


@pytest.mark.parametrize("xs,kw", [
    ((5, 5, 3), {}),
    ((1, 5, 5, 3), dict(ksize=[2, 2, 2, 1])),
    ((1, 5, 5, 3), dict(ksize=[1, 0, 2, 1])),
    ((1, 1, 5, 3), dict(ksize=[1, 3, 2, 1])),
    ((1, 4, 4, 4), dict(ksize=[1, 1, 1, 2], strides=[1, 1, 1, 2])),
])
def test_avg_pool_bad_shapes(xs, kw):
    kw = {"ksize": [1, 2, 2, 1], "strides": [1, 1, 1, 1], "padding": "VALID", **kw}
    _both_raise(lambda a: tf.raw_ops.AvgPool(value=a, **kw), Z(*xs))


@pytest.mark.parametrize("shape,gs", [([1, 4, 4], (1, 2, 2, 3)), ([1, 4, 4, 3], (2, 2, 3))])
def test_avg_pool_grad_bad_shapes(shape, gs):
    _both_raise(lambda c: tf.raw_ops.AvgPoolGrad(
        orig_input_shape=tf.constant(shape, tf.int32), grad=c, ksize=[1, 2, 2, 1],
        strides=[1, 2, 2, 1], padding="VALID"), Z(*gs))


@pytest.mark.parametrize("case", [c for c in CONV_CASES if c[4] == (1, 1)])
def test_conv2d_backprops_nchw_match_nhwc(rng, case):
    xs, fs, strides, padding, dil = case
    x, f, dy = _backprop_inputs(rng, case, lambda a, b: _conv(a, b, strides, padding, dil))
    t = lambda v: v.transpose(0, 3, 1, 2)  # noqa: E731

    def kw(fmt):
        if isinstance(padding, list):
            pads = padding if fmt == "NHWC" else [padding[i] for i in (0, 3, 1, 2)]
            out = dict(padding="EXPLICIT", explicit_paddings=[p for pp in pads for p in pp])
        else:
            out = dict(padding=padding)
        out["strides"] = [1, *strides, 1] if fmt == "NHWC" else [1, 1, *strides]
        out["data_format"] = fmt
        return out

    want = run(lambda b, g: tf.raw_ops.Conv2DBackpropInput(
        input_sizes=tf.constant(xs, tf.int32), filter=b, out_backprop=g, **kw("NHWC")),
        f, dy, device="/CPU:0")
    got = on_opencl(lambda b, g: tf.raw_ops.Conv2DBackpropInput(
        input_sizes=tf.constant(t(x).shape, tf.int32), filter=b, out_backprop=g, **kw("NCHW")),
        f, t(dy))
    np.testing.assert_allclose(got, t(want), rtol=RTOL, atol=ATOL)
    got = on_opencl(lambda a, g: tf.raw_ops.Conv2DBackpropFilter(
        input=a, filter_sizes=tf.constant(fs, tf.int32), out_backprop=g, **kw("NCHW")),
        t(x), t(dy))
    if dy.size == 0:
        np.testing.assert_array_equal(got, np.zeros(fs, np.float32))
    else:
        want = run(lambda a, g: tf.raw_ops.Conv2DBackpropFilter(
            input=a, filter_sizes=tf.constant(fs, tf.int32), out_backprop=g, **kw("NHWC")),
            x, dy, device="/CPU:0")
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("hw,stride,padding", [(64, 1, "SAME"), (130, 2, "VALID")])
def test_conv2d_in_several_im2col_chunks(rng, data_format, hw, stride, padding):
    # 4 images of 64x64 outputs x 1152 columns: more than one im2col chunk
    # (conv2d.cc's kMaxColFloats), one image split between two, so the filter
    # gradient accumulates and col2im adds up partial rows.
    x = rng.standard_normal((4, hw, hw, 128)).astype(np.float32)
    f = (rng.standard_normal((3, 3, 128, 4)) / 30).astype(np.float32)
    dy = rng.standard_normal((4, 64, 64, 4)).astype(np.float32)
    s = [1, stride, stride, 1]
    sn = [1, 1, stride, stride] if data_format == "NCHW" else s
    t = (lambda v: v.transpose(0, 3, 1, 2)) if data_format == "NCHW" else (lambda v: v)
    y_want = run(lambda a, b: tf.raw_ops.Conv2D(input=a, filter=b, strides=s, padding=padding),
                 x, f, device="/CPU:0")
    dx_want = run(lambda b, g: tf.raw_ops.Conv2DBackpropInput(
        input_sizes=tf.constant(x.shape, tf.int32), filter=b, out_backprop=g, strides=s,
        padding=padding), f, dy, device="/CPU:0")
    df_want = run(lambda a, g: tf.raw_ops.Conv2DBackpropFilter(
        input=a, filter_sizes=tf.constant(f.shape, tf.int32), out_backprop=g, strides=s,
        padding=padding), x, dy, device="/CPU:0")
    y = on_opencl(lambda a, b: tf.raw_ops.Conv2D(
        input=a, filter=b, strides=sn, padding=padding, data_format=data_format), t(x), f)
    dx = on_opencl(lambda b, g: tf.raw_ops.Conv2DBackpropInput(
        input_sizes=tf.constant(t(x).shape, tf.int32), filter=b, out_backprop=g, strides=sn,
        padding=padding, data_format=data_format), f, t(dy))
    df = on_opencl(lambda a, g: tf.raw_ops.Conv2DBackpropFilter(
        input=a, filter_sizes=tf.constant(f.shape, tf.int32), out_backprop=g, strides=sn,
        padding=padding, data_format=data_format), t(x), t(dy))
    np.testing.assert_allclose(y, t(y_want), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(dx, t(dx_want), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(df, df_want, rtol=1e-3, atol=1e-3)


def test_conv_and_pool_in_a_tf_function(rng):
    x = rng.standard_normal((2, 12, 12, 3)).astype(np.float32)
    f = rng.standard_normal((3, 3, 3, 8)).astype(np.float32)
    w = rng.standard_normal((8, 5)).astype(np.float32)

    @tf.function
    def net(a, b, c):
        with tf.GradientTape() as tape:
            tape.watch([a, b, c])
            y = tf.nn.conv2d(a, b, 2, "SAME")
            y = tf.nn.max_pool2d(y, 2, 2, "VALID")
            y = tf.reshape(tf.nn.avg_pool2d(y, 3, 3, "SAME"), [2, 8])
            z = tf.matmul(y, c)
        return (z, *tape.gradient(z, [a, b, c]))

    assert_matches_cpu(net, x, f, w, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("ta,tb", [(False, False), (True, True)])
def test_large_matmuls(rng, ta, tb):
    # Large enough for CLBlast's indirect GEMM (padded copies of the inputs),
    # batched at offsets inside the buffers.
    x = rng.standard_normal((3, 520, 300)).astype(np.float32)
    y = rng.standard_normal((3, 300, 610)).astype(np.float32)
    if ta:
        x = x.transpose(0, 2, 1).copy()
    if tb:
        y = y.transpose(0, 2, 1).copy()
    assert_matches_cpu(lambda a, b: tf.raw_ops.BatchMatMulV2(x=a, y=b, adj_x=ta, adj_y=tb),
                       x, y, rtol=1e-3, atol=1e-3)
    assert_matches_cpu(lambda a, b: tf.raw_ops.MatMul(a=a, b=b, transpose_a=ta, transpose_b=tb),
                       x[1], y[2], rtol=1e-3, atol=1e-3)


# ------------------------------------------------------- DepthwiseConv2dNative

DW_CASES = [
    # (input NHWC, filter [KH, KW, C, M], strides, padding, dilations)
    ((2, 5, 5, 3), (2, 2, 3, 2), (1, 1), "VALID", (1, 1)),
    ((1, 7, 6, 4), (3, 3, 4, 1), (2, 2), "SAME", (1, 1)),
    ((2, 6, 7, 2), (3, 2, 2, 3), (3, 3), "SAME", (1, 1)),
    ((3, 4, 4, 5), (1, 1, 5, 3), (1, 1), "VALID", (1, 1)),
    ((2, 6, 7, 3), (2, 3, 3, 2), (2, 2), [[0, 0], [1, 2], [0, 1], [0, 0]], (1, 1)),
    ((0, 5, 5, 3), (3, 3, 3, 2), (1, 1), "SAME", (1, 1)),
]


def _dw_kw(strides, padding, dilations, data_format="NHWC"):
    """strides / dilations / padding attributes of the depthwise ops."""
    if isinstance(padding, list):
        pads = padding if data_format == "NHWC" else [padding[i] for i in (0, 3, 1, 2)]
        kw = dict(padding="EXPLICIT", explicit_paddings=[p for pp in pads for p in pp])
    else:
        kw = dict(padding=padding)
    nhwc = data_format == "NHWC"
    kw["strides"] = [1, *strides, 1] if nhwc else [1, 1, *strides]
    kw["dilations"] = [1, *dilations, 1] if nhwc else [1, 1, *dilations]
    kw["data_format"] = data_format
    return kw


def _dw(x, f, case, data_format="NHWC"):
    return tf.raw_ops.DepthwiseConv2dNative(input=x, filter=f, **_dw_kw(*case[2:], data_format))


def _dw_grads(x_shape, f_shape, case, data_format="NHWC"):
    kw = _dw_kw(*case[2:], data_format)
    bi = lambda b, g: tf.raw_ops.DepthwiseConv2dNativeBackpropInput(  # noqa: E731
        input_sizes=tf.constant(x_shape, tf.int32), filter=b, out_backprop=g, **kw)
    bf = lambda a, g: tf.raw_ops.DepthwiseConv2dNativeBackpropFilter(  # noqa: E731
        input=a, filter_sizes=tf.constant(f_shape, tf.int32), out_backprop=g, **kw)
    return bi, bf


@pytest.mark.parametrize("case", DW_CASES)
def test_depthwise_conv2d(rng, case):
    x = rng.standard_normal(case[0]).astype(np.float32)
    f = rng.standard_normal(case[1]).astype(np.float32)
    assert_matches_cpu(lambda a, b: _dw(a, b, case), x, f, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("case", DW_CASES)
def test_depthwise_conv2d_nchw_matches_nhwc(rng, case):
    x = rng.standard_normal(case[0]).astype(np.float32)
    f = rng.standard_normal(case[1]).astype(np.float32)
    want = run(lambda a, b: _dw(a, b, case), x, f, device="/CPU:0")
    got = on_opencl(lambda a, b: _dw(a, b, case, "NCHW"), x.transpose(0, 3, 1, 2), f)
    np.testing.assert_allclose(got, want.transpose(0, 3, 1, 2), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("case", DW_CASES)
def test_depthwise_conv2d_backprops(rng, case):
    xs, fs = case[0], case[1]
    x, f, dy = _backprop_inputs(rng, case, lambda a, b: _dw(a, b, case))
    bi, bf = _dw_grads(xs, fs, case)
    assert_matches_cpu(bi, f, dy, rtol=RTOL, atol=ATOL)
    if dy.size == 0:
        np.testing.assert_array_equal(on_opencl(bf, x, dy), np.zeros(fs, np.float32))
    else:
        assert_matches_cpu(bf, x, dy, rtol=RTOL, atol=ATOL)
    # NCHW on OPENCL against the CPU's NHWC, transposed
    t = lambda v: v.transpose(0, 3, 1, 2)  # noqa: E731
    bi_c, bf_c = _dw_grads([xs[i] for i in (0, 3, 1, 2)], fs, case, "NCHW")
    np.testing.assert_allclose(on_opencl(bi_c, f, t(dy)), t(run(bi, f, dy, device="/CPU:0")),
                               rtol=RTOL, atol=ATOL)
    if dy.size:
        np.testing.assert_allclose(on_opencl(bf_c, t(x), t(dy)),
                                   run(bf, x, dy, device="/CPU:0"), rtol=RTOL, atol=ATOL)


def test_depthwise_conv2d_gradient_tape(rng):
    x = tf.constant(rng.standard_normal((2, 6, 6, 3)).astype(np.float32))
    f = tf.constant(rng.standard_normal((3, 3, 3, 2)).astype(np.float32))

    def grads(device):
        with tf.device(device):
            with tf.GradientTape() as tape:
                tape.watch([x, f])
                y = tf.nn.depthwise_conv2d(x, f, [1, 2, 2, 1], "SAME")
                loss = tf.reduce_sum(y * y)
            return [g.numpy() for g in tape.gradient(loss, [x, f])]

    for got, want in zip(grads(DEVICE), grads("/CPU:0")):
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("xs,fs,kw", [
    ((1, 5, 5, 3), (2, 2, 4, 1), dict(strides=[1, 1, 1, 1], padding="VALID")),
    ((1, 5, 5, 3), (7, 7, 3, 1), dict(strides=[1, 1, 1, 1], padding="VALID")),
    ((1, 5, 5, 3), (2, 2, 3, 1), dict(strides=[1, 1, 1, 2], padding="VALID")),
    ((1, 5, 5, 3), (2, 2, 3, 1), dict(strides=[1, 1, 2, 1], padding="VALID")),
    ((1, 5, 5, 3), (2, 2, 3, 1), dict(strides=[1, 1, 1], padding="VALID")),
    ((1, 5, 5, 3), (2, 2, 3, 1), dict(strides=[1, 1, 1, 1], padding="VALID",
                                      dilations=[1, 2, 2, 1])),
    ((5, 5, 3), (2, 2, 3, 1), dict(strides=[1, 1, 1, 1], padding="VALID")),
    ((1, 5, 5, 3), (2, 3, 1), dict(strides=[1, 1, 1, 1], padding="VALID")),
])
def test_depthwise_conv2d_bad_shapes(xs, fs, kw):
    _both_raise(lambda a, b: tf.raw_ops.DepthwiseConv2dNative(input=a, filter=b, **kw),
                np.zeros(xs, np.float32), np.zeros(fs, np.float32))


@pytest.mark.parametrize("sizes,fs,dys", [
    ([2, 5, 5, 3], (2, 2, 3, 2), (2, 3, 4, 6)),   # rows
    ([2, 5, 5, 3], (2, 2, 3, 2), (2, 4, 3, 6)),   # cols
    ([2, 5, 5, 3], (2, 2, 3, 2), (2, 4, 4, 5)),   # out depth
    ([2, 5, 5, 4], (2, 2, 3, 2), (2, 4, 4, 6)),   # in depth
    ([2, 5, 5], (2, 2, 3, 2), (2, 4, 4, 6)),
    ([5, 5], (2, 2, 3, 2), (2, 4, 4, 6)),
])
def test_depthwise_conv2d_backprop_input_bad_shapes(sizes, fs, dys):
    _both_raise(lambda b, g: tf.raw_ops.DepthwiseConv2dNativeBackpropInput(
        input_sizes=tf.constant(sizes, tf.int32), filter=b, out_backprop=g,
        strides=[1, 1, 1, 1], padding="VALID"), np.zeros(fs, np.float32), np.zeros(dys, np.float32))


@pytest.mark.parametrize("xs,sizes,dys", [
    ((2, 5, 5, 3), [2, 2, 3, 2], (2, 3, 4, 6)),
    ((2, 5, 5, 3), [2, 2, 3, 2], (2, 4, 4, 5)),
    ((2, 5, 5, 3), [2, 2, 4, 2], (2, 4, 4, 8)),
    ((2, 5, 5, 3), [2, 2, 3], (2, 4, 4, 6)),
])
def test_depthwise_conv2d_backprop_filter_bad_shapes(xs, sizes, dys):
    _both_raise(lambda a, g: tf.raw_ops.DepthwiseConv2dNativeBackpropFilter(
        input=a, filter_sizes=tf.constant(sizes, tf.int32), out_backprop=g,
        strides=[1, 1, 1, 1], padding="VALID"), np.zeros(xs, np.float32), np.zeros(dys, np.float32))


def test_conv2d_no_input_channels():
    # groups = 0: the output is a sum over nothing
    x = np.zeros((1, 5, 5, 0), np.float32)
    f = np.ones((3, 3, 1, 2), np.float32)
    assert_matches_cpu(lambda a, b: _conv(a, b, (1, 1), "VALID", (1, 1)), x, f)
