"""PDK's convolution and pooling kernels against TensorFlow's own CPU kernels.

Covers src/kernels/nn/{conv2d,conv3d,depthwise_conv2d,pooling}.cc: every test runs
the same function on /CPU:0 and /PDK:0, compares the results and checks that
the named ops launched PDK kernels (so a silent CPU fallback fails).

Tolerances: float32 rtol 1e-4 / atol 1e-4 (PDK's im2col + OpenBLAS GEMM sums
in a different order from TF's oneDNN / Eigen kernels); float64 rtol 1e-10 /
atol 1e-10. Max pooling (forward and gradient) is compared exactly.
"""
import numpy as np
import pytest
import tensorflow as tf

from tensorflow_pdk.testing import assert_close, assert_matches_cpu, launches, run_on

F32 = dict(rtol=1e-4, atol=1e-4)
F64 = dict(rtol=1e-10, atol=1e-10)
TOL = {np.float32: F32, np.float64: F64}

INPUTS = [(1, 8, 8, 3), (2, 9, 7, 4), (4, 32, 32, 16), (0, 8, 8, 3)]
# (padding, explicit_paddings) with asymmetric explicit padding.
PADDINGS = {
    "SAME": ("SAME", []),
    "VALID": ("VALID", []),
    "EXPLICIT": ("EXPLICIT", [0, 0, 1, 2, 2, 0, 0, 0]),
}


def ids(shape):
    return "x".join(map(str, shape))


def rand(rng, shape, dtype=np.float32):
    return rng.uniform(-1.0, 1.0, size=shape).astype(dtype)


def conv_out_shape(x_shape, k, stride, padding, dilation, out_c):
    """TF's GetWindowedOutputSizeVerbose, to build matching out_backprop values."""
    n, h, w, _ = x_shape
    pad, pads = PADDINGS[padding]
    eff = (k - 1) * dilation + 1
    out = []
    for i, size in enumerate((h, w)):
        if pad == "SAME":
            out.append((size + stride - 1) // stride)
        elif pad == "VALID":
            out.append((size - eff + stride) // stride)
        else:
            out.append((size + pads[2 + 2 * i] + pads[3 + 2 * i] - eff + stride) // stride)
    return (n, out[0], out[1], out_c)


def conv_kwargs(stride, padding, dilation):
    pad, pads = PADDINGS[padding]
    return dict(strides=[1, stride, stride, 1], padding=pad, explicit_paddings=pads,
                dilations=[1, dilation, dilation, 1])


def check_empty_batch(fn, arrays, ops, shapes):
    """Empty-batch inputs. TF's oneDNN CPU kernels return a wrongly shaped
    result for these (the input itself), so PDK is checked against the output
    shapes of GetWindowedOutputSizeVerbose instead; a gradient w.r.t. a filter
    (a sum over no pixels) must be all zeros."""
    with launches() as delta:
        outs = run_on("/PDK:0", fn, *arrays)
    for op in ops:
        assert delta.get(op, 0) > 0, f"{op} did not run on PDK (launches: {delta})"
    assert [o.shape for o in outs] == [tuple(s) for s in shapes]
    for o in outs:
        if o.size:
            np.testing.assert_array_equal(o, np.zeros_like(o))
    return outs


# ------------------------------------------------------------------- Conv2D

CONV_CASES = [
    # (kernel, stride, padding, dilation)
    (1, 1, "VALID", 1),  # plain GEMM path
    (1, 1, "SAME", 1),
    (1, 2, "VALID", 1),  # 1x1 but strided: im2col path
    (1, 1, "EXPLICIT", 1),
    (3, 1, "SAME", 1),
    (3, 1, "VALID", 1),
    (3, 2, "SAME", 1),
    (3, 2, "EXPLICIT", 1),
    (3, 1, "SAME", 2),
    (3, 1, "EXPLICIT", 2),
    (5, 1, "SAME", 1),
    (5, 2, "VALID", 1),
    (5, 1, "SAME", 2),
]


def case_id(c):
    k, s, p, d = c
    return f"k{k}-s{s}-{p}-d{d}"


@pytest.mark.parametrize("case", CONV_CASES, ids=case_id)
@pytest.mark.parametrize("x_shape", INPUTS, ids=ids)
def test_conv2d(x_shape, case, rng):
    k, s, p, d = case
    x = rand(rng, x_shape)
    w = rand(rng, (k, k, x_shape[3], 5))
    kw = conv_kwargs(s, p, d)
    fn = lambda a, b: tf.raw_ops.Conv2D(input=a, filter=b, **kw)  # noqa: E731
    want = conv_out_shape(x_shape, k, s, p, d, 5)
    if x_shape[0] == 0:
        check_empty_batch(fn, [x, w], ["Conv2D"], [want])
        return
    out = assert_matches_cpu(fn, x, w, ops=["Conv2D"], **F32)[0]
    assert out.shape == want


def test_conv2d_window_larger_than_input(rng):
    """A dilated 5x5 window (effective 9) over an 8x8 VALID input: an empty
    output, per GetWindowedOutputSizeVerbose. (TF's oneDNN CPU kernel returns a
    wrongly shaped result here, so this one is checked against the formula.)"""
    x = rand(rng, (1, 8, 8, 3))
    w = rand(rng, (5, 5, 3, 5))
    with launches() as delta:
        out = run_on("/PDK:0", lambda a, b: tf.raw_ops.Conv2D(
            input=a, filter=b, **conv_kwargs(1, "VALID", 2)), x, w)[0]
    assert delta.get("Conv2D", 0) > 0
    assert out.shape == (1, 0, 0, 5)


@pytest.mark.parametrize("case", [(3, 2, "SAME", 1), (1, 1, "VALID", 1), (5, 1, "EXPLICIT", 2)],
                         ids=case_id)
def test_conv2d_float64(case, rng):
    k, s, p, d = case
    x = rand(rng, (2, 9, 7, 4), np.float64)
    w = rand(rng, (k, k, 4, 6), np.float64)
    kw = conv_kwargs(s, p, d)
    assert_matches_cpu(lambda a, b: tf.raw_ops.Conv2D(input=a, filter=b, **kw), x, w,
                       ops=["Conv2D"], **F64)


def _grads(fn, x, w, dy):
    """fn(x, w) and its gradients w.r.t. x and w for upstream gradient dy."""
    with tf.GradientTape() as tape:
        tape.watch([x, w])
        y = fn(x, w)
    dx, dw = tape.gradient(y, [x, w], output_gradients=dy)
    return y, dx, dw


GRAD_CASES = [
    (1, 1, "VALID", 1),
    (3, 1, "SAME", 1),
    (3, 2, "SAME", 1),
    (3, 2, "EXPLICIT", 1),
    (5, 1, "VALID", 1),
    (3, 1, "SAME", 2),
    (5, 2, "EXPLICIT", 1),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=case_id)
@pytest.mark.parametrize("x_shape", INPUTS, ids=ids)
def test_conv2d_gradients(x_shape, case, rng):
    k, s, p, d = case
    x = rand(rng, x_shape)
    w = rand(rng, (k, k, x_shape[3], 6))
    dy = rand(rng, conv_out_shape(x_shape, k, s, p, d, 6))
    pad, pads = PADDINGS[p]
    padding = pad if pad != "EXPLICIT" else [[0, 0], pads[2:4], pads[4:6], [0, 0]]
    fn = lambda a, b: tf.nn.conv2d(a, b, strides=s, padding=padding, dilations=d)  # noqa: E731
    ops = ["Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"]
    grads = lambda a, b, g: _grads(fn, a, b, g)  # noqa: E731
    if x_shape[0] == 0:
        check_empty_batch(grads, [x, w, dy], ops, [dy.shape, x.shape, w.shape])
        return
    assert_matches_cpu(grads, x, w, dy, ops=ops, **F32)


def test_conv2d_gradients_float64(rng):
    x = rand(rng, (2, 9, 7, 4), np.float64)
    w = rand(rng, (3, 3, 4, 5), np.float64)
    dy = rand(rng, (2, 5, 4, 5), np.float64)
    fn = lambda a, b: tf.nn.conv2d(a, b, strides=2, padding="SAME")  # noqa: E731
    assert_matches_cpu(lambda a, b, g: _grads(fn, a, b, g), x, w, dy,
                       ops=["Conv2DBackpropInput", "Conv2DBackpropFilter"], **F64)


def test_conv2d_backprop_input_spatial_sizes(rng):
    """input_sizes may be just [H, W] (batch from out_backprop, depth from filter)."""
    w = rand(rng, (3, 3, 4, 5))
    dy = rand(rng, (2, 5, 4, 5))
    kw = dict(strides=[1, 2, 2, 1], padding="SAME")
    expected = run_on("/CPU:0", lambda f, g: tf.raw_ops.Conv2DBackpropInput(
        input_sizes=[2, 9, 7, 4], filter=f, out_backprop=g, **kw), w, dy)[0]
    with launches() as delta:
        actual = run_on("/PDK:0", lambda f, g: tf.raw_ops.Conv2DBackpropInput(
            input_sizes=[9, 7], filter=f, out_backprop=g, **kw), w, dy)[0]
    assert delta.get("Conv2DBackpropInput", 0) > 0
    assert_close(actual, expected, what="dx", **F32)


def test_conv2d_large_parallel(rng):
    """Big enough that the device pool splits tiles across shards."""
    x = rand(rng, (2, 40, 40, 32))
    w = rand(rng, (3, 3, 32, 48))
    dy = rand(rng, (2, 40, 40, 48))
    fn = lambda a, b: tf.nn.conv2d(a, b, strides=1, padding="SAME")  # noqa: E731
    assert_matches_cpu(lambda a, b, g: _grads(fn, a, b, g), x, w, dy,
                       ops=["Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"],
                       rtol=1e-4, atol=5e-4)


# ------------------------------------------------------------ Conv2D NCHW
# TF's CPU kernels have no NCHW Conv2D: the reference is the NHWC op on the
# CPU, its operands and results transposed.

def to_nchw(a):
    return np.ascontiguousarray(np.transpose(a, (0, 3, 1, 2)))


def to_nhwc(a):
    return np.ascontiguousarray(np.transpose(a, (0, 2, 3, 1)))


NCHW_CASES = [(1, 1, "VALID", 1), (3, 1, "SAME", 1), (3, 2, "EXPLICIT", 1), (3, 1, "SAME", 2),
              (5, 2, "VALID", 1)]


@pytest.mark.parametrize("case", NCHW_CASES, ids=case_id)
@pytest.mark.parametrize("x_shape", [(2, 9, 7, 4), (1, 8, 8, 3), (0, 8, 8, 3)], ids=ids)
def test_conv2d_nchw_forward_and_gradients(x_shape, case, rng):
    k, s, p, d = case
    x = rand(rng, x_shape)
    w = rand(rng, (k, k, x_shape[3], 6))
    dy = rand(rng, conv_out_shape(x_shape, k, s, p, d, 6))
    pad, pads = PADDINGS[p]
    nhwc_pad = pad if pad != "EXPLICIT" else [[0, 0], pads[2:4], pads[4:6], [0, 0]]
    nchw_pad = pad if pad != "EXPLICIT" else [[0, 0], [0, 0], pads[2:4], pads[4:6]]

    def grads(fmt, padding):
        fn = lambda a, b: tf.nn.conv2d(a, b, strides=s, padding=padding,  # noqa: E731
                                       dilations=d, data_format=fmt)
        return lambda a, b, g: _grads(fn, a, b, g)

    ops = ["Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"]
    with launches() as delta:
        y, dx, dw = run_on("/PDK:0", grads("NCHW", nchw_pad), to_nchw(x), w, to_nchw(dy))
    for op in ops:
        assert delta.get(op, 0) > 0, f"{op} did not run on PDK (launches: {delta})"
    if x_shape[0] == 0:
        assert y.shape == to_nchw(dy).shape and dx.shape == to_nchw(x).shape
        np.testing.assert_array_equal(dw, np.zeros_like(dw))
        return
    ey, edx, edw = run_on("/CPU:0", grads("NHWC", nhwc_pad), x, w, dy)
    assert_close(to_nhwc(y), ey, what="y", **F32)
    assert_close(to_nhwc(dx), edx, what="dx", **F32)
    assert_close(dw, edw, what="dw", **F32)


def test_conv2d_nchw_backprop_input_sizes_in_nchw(rng):
    """input_sizes is in data_format order; [H, W] alone also works."""
    w = rand(rng, (3, 3, 4, 5))
    dy = rand(rng, (2, 5, 4, 5))
    kw = dict(strides=[1, 2, 2, 1], padding="SAME")
    expected = run_on("/CPU:0", lambda f, g: tf.raw_ops.Conv2DBackpropInput(
        input_sizes=[2, 9, 7, 4], filter=f, out_backprop=g, **kw), w, dy)[0]
    nchw = dict(strides=[1, 1, 2, 2], padding="SAME", data_format="NCHW")
    for sizes in ([2, 4, 9, 7], [9, 7]):
        with launches() as delta:
            actual = run_on("/PDK:0", lambda f, g: tf.raw_ops.Conv2DBackpropInput(
                input_sizes=sizes, filter=f, out_backprop=g, **nchw), w, to_nchw(dy))[0]
        assert delta.get("Conv2DBackpropInput", 0) > 0
        assert_close(to_nhwc(actual), expected, what=f"dx {sizes}", **F32)


def test_keras_conv2d_channels_first_trains_on_pdk(rng):
    import keras

    from tensorflow_pdk import placement

    x = rand(rng, (8, 3, 12, 12))
    y = rng.integers(0, 4, size=(8,)).astype(np.int32)
    with tf.device("/PDK:0"):
        model = keras.Sequential([
            keras.Input((3, 12, 12)),
            keras.layers.Conv2D(4, 3, padding="same", data_format="channels_first",
                                activation="relu"),
            keras.layers.GlobalAveragePooling2D(data_format="channels_first"),
            keras.layers.Dense(4)])
        model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      jit_compile=False)
        with placement.record() as rec, launches() as delta:
            model.fit(x, y, batch_size=4, epochs=1, verbose=0)
    for op in ("Conv2D", "Conv2DBackpropFilter"):
        assert delta.get(op, 0) > 0, delta
    conv_on_cpu = {op: n for op, n in rec.compute_ops_on_cpu().items() if "Conv" in op}
    assert not conv_on_cpu, rec.report()


# ------------------------------------------------------------------- Conv3D

CONV3D_CASES = [
    # (kernel dhw, stride, padding, dilation)
    ((1, 1, 1), 1, "VALID", 1),
    ((3, 3, 3), 1, "SAME", 1),
    ((3, 3, 3), 2, "SAME", 1),
    ((2, 3, 1), 1, "VALID", 1),
    ((3, 2, 3), 2, "VALID", 1),
    ((3, 3, 3), 1, "SAME", 2),
    ((2, 2, 2), 1, "VALID", 2),
]


def conv3d_id(c):
    k, s, p, d = c
    return f"k{''.join(map(str, k))}-s{s}-{p}-d{d}"


def conv3d_out_shape(x_shape, k, s, p, d, f):
    out = [x_shape[0]]
    for size, kk in zip(x_shape[1:4], k):
        eff = (kk - 1) * d + 1
        out.append((size + s - 1) // s if p == "SAME" else (size - eff + s) // s)
    return tuple(out + [f])


def _conv3d_reference(s, p, d):
    """tf.nn.conv3d on the CPU; dilated ones through tf.nn.with_space_to_batch
    (TF's CPU Conv3D kernels reject dilations)."""
    def fn(a, b):
        if d == 1:
            return tf.nn.conv3d(a, b, strides=[1, s, s, s, 1], padding=p)
        assert s == 1
        return tf.nn.with_space_to_batch(
            a, dilation_rate=[d] * 3, padding=p, filter_shape=b.shape[:3],
            op=lambda inp, num_spatial_dims, padding: tf.nn.conv3d(
                inp, b, strides=[1] * 5, padding=padding))
    return fn


@pytest.mark.parametrize("case", CONV3D_CASES, ids=conv3d_id)
@pytest.mark.parametrize("x_shape", [(2, 5, 6, 7, 3), (1, 4, 4, 4, 1), (0, 4, 4, 4, 2)], ids=ids)
def test_conv3d_and_gradients(x_shape, case, rng):
    k, s, p, d = case
    x = rand(rng, x_shape)
    w = rand(rng, tuple(k) + (x_shape[4], 5))
    dy = rand(rng, conv3d_out_shape(x_shape, k, s, p, d, 5))
    pdk_fn = lambda a, b: tf.nn.conv3d(a, b, strides=[1, s, s, s, 1], padding=p,  # noqa: E731
                                       dilations=[1, d, d, d, 1])
    ops = ["Conv3D", "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2"]
    with launches() as delta:
        actual = run_on("/PDK:0", lambda a, b, g: _grads(pdk_fn, a, b, g), x, w, dy)
    for op in ops:
        assert delta.get(op, 0) > 0, f"{op} did not run on PDK (launches: {delta})"
    if x_shape[0] == 0:
        assert [a.shape for a in actual] == [dy.shape, x.shape, w.shape]
        np.testing.assert_array_equal(actual[2], np.zeros_like(actual[2]))
        return
    ref = _conv3d_reference(s, p, d)
    expected = run_on("/CPU:0", lambda a, b, g: _grads(ref, a, b, g), x, w, dy)
    for what, a, e in zip(("y", "dx", "dw"), actual, expected):
        assert_close(a, e, what=what, **F32)


def test_conv3d_float64_and_large(rng):
    x = rand(rng, (2, 9, 10, 11, 8), np.float64)
    w = rand(rng, (3, 3, 3, 8, 16), np.float64)
    dy = rand(rng, (2, 5, 5, 6, 16), np.float64)
    fn = lambda a, b: tf.nn.conv3d(a, b, strides=[1, 2, 2, 2, 1], padding="SAME")  # noqa: E731
    assert_matches_cpu(lambda a, b, g: _grads(fn, a, b, g), x, w, dy,
                       ops=["Conv3D", "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2"], **F64)


def test_conv3d_errors():
    x = np.ones((1, 4, 4, 4, 3), np.float32)
    w = np.ones((3, 3, 3, 2, 5), np.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[1,4,4,4,3\].*\[3,3,3,2,5\]"):
        _on_pdk(lambda a, b: tf.raw_ops.Conv3D(input=a, filter=b, strides=[1] * 5,
                                               padding="SAME"), x, w)
    with pytest.raises(tf.errors.InvalidArgumentError, match="strides"):
        _on_pdk(lambda a, b: tf.raw_ops.Conv3D(input=a, filter=b, strides=[1, 1, 1, 1, 2],
                                               padding="SAME"), x, np.ones((3, 3, 3, 3, 5),
                                                                           np.float32))
    with pytest.raises((tf.errors.UnimplementedError, tf.errors.InvalidArgumentError),
                       match="NCDHW"):
        _on_pdk(lambda a, b: tf.raw_ops.Conv3D(input=a, filter=b, strides=[1] * 5,
                                               padding="SAME", data_format="NCDHW"),
                np.ones((1, 3, 4, 4, 4), np.float32), np.ones((3, 3, 3, 3, 5), np.float32))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"out_backprop.*\[1,4,4,4,5\]"):
        _on_pdk(lambda a, g: tf.raw_ops.Conv3DBackpropFilterV2(
            input=a, filter_sizes=[3, 3, 3, 3, 5], out_backprop=g, strides=[1] * 5,
            padding="SAME"), x, np.ones((1, 4, 4, 3, 5), np.float32))


def test_keras_conv3d_trains_on_pdk(rng):
    import keras

    from tensorflow_pdk import placement

    x = rand(rng, (4, 6, 6, 6, 2))
    y = rng.integers(0, 3, size=(4,)).astype(np.int32)
    with tf.device("/PDK:0"):
        model = keras.Sequential([
            keras.Input((6, 6, 6, 2)),
            keras.layers.Conv3D(4, 3, padding="same", activation="relu"),
            keras.layers.Flatten(),
            keras.layers.Dense(3)])
        model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      jit_compile=False)
        with placement.record() as rec, launches() as delta:
            model.fit(x, y, batch_size=2, epochs=1, verbose=0)
    for op in ("Conv3D", "Conv3DBackpropFilterV2"):
        assert delta.get(op, 0) > 0, delta
    conv_on_cpu = {op: n for op, n in rec.compute_ops_on_cpu().items() if "Conv" in op}
    assert not conv_on_cpu, rec.report()


# ---------------------------------------------------------------- errors

def _on_pdk(fn, *arrays):
    return run_on("/PDK:0", fn, *arrays)


def test_conv2d_channel_mismatch_names_shapes():
    x = np.ones((1, 8, 8, 3), np.float32)
    w = np.ones((3, 3, 4, 5), np.float32)
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        _on_pdk(lambda a, b: tf.raw_ops.Conv2D(input=a, filter=b, strides=[1, 1, 1, 1],
                                               padding="SAME"), x, w)
    msg = str(e.value)
    assert "[1,8,8,3]" in msg and "[3,3,4,5]" in msg and "Conv2D" in msg, msg


def test_conv2d_bad_rank():
    x = np.ones((8, 8, 3), np.float32)
    w = np.ones((3, 3, 3, 5), np.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"rank 4.*\[8,8,3\]"):
        _on_pdk(lambda a, b: tf.raw_ops.Conv2D(input=a, filter=b, strides=[1, 1, 1, 1],
                                               padding="SAME"), x, w)


@pytest.mark.parametrize("strides", [[2, 1, 1, 1], [1, 1, 1, 2]])
def test_conv2d_strides_on_batch_or_depth(strides):
    x = np.ones((2, 8, 8, 3), np.float32)
    w = np.ones((3, 3, 3, 5), np.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="strides"):
        _on_pdk(lambda a, b: tf.raw_ops.Conv2D(input=a, filter=b, strides=strides,
                                               padding="SAME"), x, w)


def test_conv2d_unknown_data_format_is_rejected():
    x = np.ones((1, 3, 8, 8), np.float32)
    w = np.ones((3, 3, 3, 5), np.float32)
    with pytest.raises((tf.errors.UnimplementedError, tf.errors.InvalidArgumentError),
                       match="NCHW"):
        _on_pdk(lambda a, b: tf.raw_ops.Conv2D(input=a, filter=b, strides=[1, 1, 1, 1],
                                               padding="SAME", data_format="NHCW"), x, w)


def test_conv2d_nchw_channel_mismatch_names_shapes():
    x = np.ones((1, 3, 8, 8), np.float32)  # NCHW, 3 channels
    w = np.ones((3, 3, 4, 5), np.float32)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"\[1,8,8,3\].*\[3,3,4,5\].*NHWC copies"):
        _on_pdk(lambda a, b: tf.raw_ops.Conv2D(input=a, filter=b, strides=[1, 1, 1, 1],
                                               padding="SAME", data_format="NCHW"), x, w)


def test_conv2d_backprop_filter_bad_out_backprop():
    x = np.ones((1, 8, 8, 3), np.float32)
    dy = np.ones((1, 7, 8, 5), np.float32)  # SAME stride 1 needs [1,8,8,5]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[1,7,8,5\].*\[1,8,8,5\]"):
        _on_pdk(lambda a, g: tf.raw_ops.Conv2DBackpropFilter(
            input=a, filter_sizes=[3, 3, 3, 5], out_backprop=g, strides=[1, 1, 1, 1],
            padding="SAME"), x, dy)


def test_depthwise_channel_mismatch_names_shapes():
    x = np.ones((1, 8, 8, 3), np.float32)
    w = np.ones((3, 3, 4, 2), np.float32)
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        _on_pdk(lambda a, b: tf.raw_ops.DepthwiseConv2dNative(
            input=a, filter=b, strides=[1, 1, 1, 1], padding="SAME"), x, w)
    assert "[1,8,8,3]" in str(e.value) and "[3,3,4,2]" in str(e.value), str(e.value)


# ---------------------------------------------------------- depthwise conv

DW_CASES = [
    # (kernel, stride, padding, dilation, multiplier)
    (3, 1, "SAME", 1, 1),
    (3, 2, "VALID", 1, 2),
    (3, 2, "EXPLICIT", 1, 1),
    (5, 1, "SAME", 1, 3),
    (3, 1, "SAME", 2, 2),
    (1, 1, "VALID", 1, 1),
]


def dw_id(c):
    k, s, p, d, m = c
    return f"k{k}-s{s}-{p}-d{d}-m{m}"


@pytest.mark.parametrize("case", DW_CASES, ids=dw_id)
@pytest.mark.parametrize("x_shape", INPUTS, ids=ids)
def test_depthwise_conv2d_and_gradients(x_shape, case, rng):
    k, s, p, d, m = case
    c = x_shape[3]
    x = rand(rng, x_shape)
    w = rand(rng, (k, k, c, m))
    dy = rand(rng, conv_out_shape(x_shape, k, s, p, d, c * m))
    kw = conv_kwargs(s, p, d)
    fn = lambda a, b: tf.raw_ops.DepthwiseConv2dNative(input=a, filter=b, **kw)  # noqa: E731
    ops = ["DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput",
           "DepthwiseConv2dNativeBackpropFilter"]
    grads = lambda a, b, g: _grads(fn, a, b, g)  # noqa: E731
    if x_shape[0] == 0:
        check_empty_batch(grads, [x, w, dy], ops, [dy.shape, x.shape, w.shape])
        return
    if d == 1:
        assert_matches_cpu(grads, x, w, dy, ops=ops, **F32)
        return
    # Dilated: TF's CPU DepthwiseConv2dNative backprops ignore `dilations`
    # (their gradients fail <dy, conv(x)> == <dx, x>), so the reference is
    # tf.nn.depthwise_conv2d's space-to-batch formulation on the CPU.
    ref = lambda a, b: tf.nn.depthwise_conv2d(  # noqa: E731
        a, b, strides=[1, s, s, 1], padding=p, dilations=[d, d])
    expected = run_on("/CPU:0", lambda a, b, g: _grads(ref, a, b, g), x, w, dy)
    with launches() as delta:
        actual = run_on("/PDK:0", grads, x, w, dy)
    for op in ops:
        assert delta.get(op, 0) > 0, f"{op} did not run on PDK (launches: {delta})"
    for i, (a, e) in enumerate(zip(actual, expected)):
        assert_close(a, e, what=f"output {i}", **F32)


def test_depthwise_conv2d_nn_api_float64(rng):
    x = rand(rng, (2, 9, 7, 4), np.float64)
    w = rand(rng, (3, 3, 4, 2), np.float64)
    dy = rand(rng, (2, 5, 4, 8), np.float64)
    fn = lambda a, b: tf.nn.depthwise_conv2d(a, b, strides=[1, 2, 2, 1], padding="SAME")  # noqa
    assert_matches_cpu(lambda a, b, g: _grads(fn, a, b, g), x, w, dy,
                       ops=["DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput",
                            "DepthwiseConv2dNativeBackpropFilter"], **F64)


# ----------------------------------------------------------------- pooling

POOL_CASES = [
    # (ksize, stride, padding)
    (2, 2, "VALID"),
    (2, 2, "SAME"),
    (3, 2, "SAME"),
    (3, 1, "VALID"),
    (3, 2, "VALID"),
    (1, 1, "SAME"),
]


def pool_id(c):
    return "k{}-s{}-{}".format(*c)


def _pool_grads(fn, x, dy):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    return y, tape.gradient(y, x, output_gradients=dy)


def pool_out_shape(x_shape, k, s, padding):
    return conv_out_shape(x_shape, k, s, padding, 1, x_shape[3])


@pytest.mark.parametrize("case", POOL_CASES, ids=pool_id)
@pytest.mark.parametrize("x_shape", INPUTS, ids=ids)
def test_max_pool_and_gradient(x_shape, case, rng):
    k, s, p = case
    x = rand(rng, x_shape)
    dy = rand(rng, pool_out_shape(x_shape, k, s, p))
    fn = lambda a: tf.nn.max_pool2d(a, ksize=k, strides=s, padding=p)  # noqa: E731
    assert_matches_cpu(lambda a, g: _pool_grads(fn, a, g), x, dy,
                       ops=["MaxPool", "MaxPoolGrad"], rtol=0, atol=0)


@pytest.mark.parametrize("case", POOL_CASES, ids=pool_id)
@pytest.mark.parametrize("x_shape", INPUTS, ids=ids)
def test_avg_pool_and_gradient(x_shape, case, rng):
    k, s, p = case
    x = rand(rng, x_shape)
    dy = rand(rng, pool_out_shape(x_shape, k, s, p))
    fn = lambda a: tf.nn.avg_pool2d(a, ksize=k, strides=s, padding=p)  # noqa: E731
    assert_matches_cpu(lambda a, g: _pool_grads(fn, a, g), x, dy,
                       ops=["AvgPool", "AvgPoolGrad"], **F32)


@pytest.mark.parametrize("case", [(3, 2, "SAME"), (2, 1, "VALID"), (3, 1, "SAME")],
                         ids=pool_id)
def test_max_pool_ties(case, rng):
    """Overlapping windows over values in {0, 1}: each window's gradient must go
    to its first maximum in row-major order, as TF's CPU kernel does."""
    k, s, p = case
    x = rng.integers(0, 2, size=(2, 9, 7, 5)).astype(np.float32)
    x[0, :, :, 0] = 1.0  # every window all tied
    dy = rng.integers(1, 100, size=pool_out_shape(x.shape, k, s, p)).astype(np.float32)
    fn = lambda a: tf.nn.max_pool2d(a, ksize=k, strides=s, padding=p)  # noqa: E731
    out = assert_matches_cpu(lambda a, g: _pool_grads(fn, a, g), x, dy,
                             ops=["MaxPool", "MaxPoolGrad"], rtol=0, atol=0)
    # The all-tied channel sends everything to window corners only.
    dx = out[1][0, :, :, 0]
    assert dx.sum() == dy[0, :, :, 0].sum()


@pytest.mark.parametrize("case", [(2, 2, "VALID"), (3, 2, "SAME")], ids=pool_id)
def test_max_pool_many_channels(case, rng):
    """70 channels: MaxPoolGrad works in blocks of 64 channels (64 + 6 here)."""
    k, s, p = case
    x = rng.integers(0, 3, size=(2, 9, 7, 70)).astype(np.float32)  # ties too
    dy = rand(rng, pool_out_shape(x.shape, k, s, p))
    fn = lambda a: tf.nn.max_pool2d(a, ksize=k, strides=s, padding=p)  # noqa: E731
    assert_matches_cpu(lambda a, g: _pool_grads(fn, a, g), x, dy,
                       ops=["MaxPool", "MaxPoolGrad"], rtol=0, atol=0)


def test_max_pool_explicit_padding(rng):
    x = rand(rng, (2, 9, 7, 4))
    kw = dict(ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding="EXPLICIT",
              explicit_paddings=[0, 0, 1, 2, 0, 1, 0, 0])
    y = assert_matches_cpu(lambda a: tf.raw_ops.MaxPool(input=a, **kw), x, ops=["MaxPool"],
                           rtol=0, atol=0)[0]
    dy = rand(rng, y.shape)
    assert_matches_cpu(lambda a, b, g: tf.raw_ops.MaxPoolGrad(orig_input=a, orig_output=b,
                                                              grad=g, **kw),
                       x, y, dy, ops=["MaxPoolGrad"], rtol=0, atol=0)


def test_max_pool_v2_and_gradient(rng):
    x = rand(rng, (2, 9, 7, 4))
    dy = rand(rng, (2, 5, 4, 4))
    fn = lambda a: tf.raw_ops.MaxPoolV2(input=a, ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1],  # noqa
                                        padding="SAME")
    assert_matches_cpu(lambda a, g: _pool_grads(fn, a, g), x, dy,
                       ops=["MaxPoolV2", "MaxPoolGradV2"], rtol=0, atol=0)


@pytest.mark.parametrize("op", ["max", "avg"])
def test_pool_float64(op, rng):
    x = rand(rng, (2, 9, 7, 4), np.float64)
    dy = rand(rng, (2, 5, 4, 4), np.float64)
    pool = tf.nn.max_pool2d if op == "max" else tf.nn.avg_pool2d
    fn = lambda a: pool(a, ksize=3, strides=2, padding="SAME")  # noqa: E731
    names = ["MaxPool", "MaxPoolGrad"] if op == "max" else ["AvgPool", "AvgPoolGrad"]
    assert_matches_cpu(lambda a, g: _pool_grads(fn, a, g), x, dy, ops=names, **F64)


def test_pool_rejects_batch_window():
    """Unimplemented, as TensorFlow's CPU kernel (tests/python/test_errors.py)."""
    x = np.ones((2, 8, 8, 3), np.float32)
    with pytest.raises(tf.errors.UnimplementedError, match="batch dimension.*ksize"):
        _on_pdk(lambda a: tf.raw_ops.MaxPool(input=a, ksize=[2, 2, 2, 1],
                                             strides=[1, 1, 1, 1], padding="VALID"), x)


# ------------------------------------------------------------- keras model

def _keras_step(device, weights, x, y):
    import keras

    with tf.device(device):
        model = keras.Sequential([
            keras.Input((12, 12, 3)),
            keras.layers.Conv2D(8, 3, padding="same", activation="relu"),
            keras.layers.MaxPooling2D(),
            keras.layers.Flatten(),
            keras.layers.Dense(4),
        ])
        if weights is not None:
            model.set_weights(weights)
        xt, yt = tf.constant(x), tf.constant(y)
        with tf.GradientTape() as tape:
            logits = model(xt)
            loss = tf.reduce_mean(tf.square(logits - yt))
        grads = tape.gradient(loss, model.trainable_variables)
    return model.get_weights(), [logits.numpy(), loss.numpy()] + [g.numpy() for g in grads]


def test_keras_conv_model_forward_backward(rng):
    x = rand(rng, (4, 12, 12, 3))
    y = rand(rng, (4, 4))
    weights, expected = _keras_step("/CPU:0", None, x, y)
    with launches() as delta:
        _, actual = _keras_step("/PDK:0", weights, x, y)
    for op in ["Conv2D", "Conv2DBackpropFilter", "MaxPool", "MaxPoolGrad"]:
        assert delta.get(op, 0) > 0, f"{op} did not run on PDK (launches: {delta})"
    for i, (a, e) in enumerate(zip(actual, expected)):
        assert_close(a, e, what=f"keras output {i}", **F32)
