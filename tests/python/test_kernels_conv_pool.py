"""PDK's convolution and pooling kernels against TensorFlow's own CPU kernels.

Covers src/kernels/nn/{conv2d,conv3d,depthwise_conv2d,pooling}.cc: every test runs
the same function on /CPU:0 and /PDK:0, compares the results and checks that
the named ops launched PDK kernels (so a silent CPU fallback fails). Where the
CPU has no kernel (NCHW Conv2D, NCDHW Conv3D, grouped Conv2D's backprops) the
reference is the CPU computing the same thing another way: the channels-last
op on transposed operands, or one ordinary convolution per group.

Dilated Conv2D gradients: TensorFlow's CPU Conv2DBackpropInput refuses
dilation > 1 where its oneDNN kernels are off (TF 2.21 on AVX2-only x86:
"Current CPU implementations do not yet support dilation rates larger than
1"). There the reference is the same TF function compiled by XLA for the CPU
(tf.function(jit_compile=True) under /CPU:0, see cpu_reference), which every
machine has; PDK's side and the launch checks are unchanged.

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


CPU_REFUSES_DILATION = "do not yet support dilation rates larger than 1"


def cpu_reference(fn, *arrays):
    """fn(*arrays) on TensorFlow's CPU kernels; where the CPU kernel refuses a
    dilation rate > 1 (no oneDNN), the same function compiled by XLA for the
    CPU. Returns numpy outputs like run_on."""
    try:
        return run_on("/CPU:0", fn, *arrays)
    except tf.errors.InvalidArgumentError as e:
        if CPU_REFUSES_DILATION not in str(e):
            raise
    with launches() as delta:
        out = run_on("/CPU:0", tf.function(fn, jit_compile=True), *arrays)
    assert not delta, f"the XLA CPU reference launched PDK kernels: {delta}"
    return out


def assert_matches_cpu_reference(fn, *arrays, ops, rtol, atol):
    """assert_matches_cpu with cpu_reference as the expected side."""
    expected = cpu_reference(fn, *arrays)
    with launches() as delta:
        actual = run_on("/PDK:0", fn, *arrays)
    for op in ops:
        assert delta.get(op, 0) > 0, f"{op} did not run on PDK (launches: {delta})"
    assert len(actual) == len(expected)
    for i, (a, e) in enumerate(zip(actual, expected)):
        assert_close(a, e, rtol, atol, what=f"output {i}")
    return actual


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
    assert_matches_cpu_reference(grads, x, w, dy, ops=ops, **F32)


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
    ey, edx, edw = cpu_reference(grads("NHWC", nhwc_pad), x, w, dy)
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
        model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        with placement.record() as rec, launches() as delta:
            model.fit(x, y, batch_size=4, epochs=1, verbose=0)
    for op in ("Conv2D", "Conv2DBackpropFilter"):
        assert delta.get(op, 0) > 0, delta
    conv_on_cpu = {op: n for op, n in rec.compute_ops_on_cpu().items() if "Conv" in op}
    assert not conv_on_cpu, rec.report()


@pytest.mark.parametrize("padding", ["valid", "same"])
def test_keras_3d_pooling_trains_on_pdk_like_cpu(rng, padding):
    """Conv3D -> MaxPooling3D -> AveragePooling3D: MaxPool3D, AvgPool3D and
    their gradients run on PDK (no compute op on the CPU) and two epochs end
    with the CPU's weights."""
    import keras

    from keras_fit import fit_on_pdk_and_cpu

    x = rand(rng, (8, 6, 7, 8, 2))
    y = rng.integers(0, 3, size=(8,)).astype(np.int32)
    w_pdk, w_cpu, rec, delta = fit_on_pdk_and_cpu(lambda: keras.Sequential([
        keras.Input((6, 7, 8, 2)),
        keras.layers.Conv3D(4, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling3D(2, padding=padding),
        keras.layers.AveragePooling3D((2, 1, 2), strides=1, padding=padding),
        keras.layers.Flatten(),
        keras.layers.Dense(3)]), x, y)
    for op in ("MaxPool3D", "MaxPool3DGrad", "AvgPool3D", "AvgPool3DGrad"):
        assert delta.get(op, 0) >= 4, (op, delta)
    assert not rec.compute_ops_on_cpu(), rec.report()
    for a, b in zip(w_pdk, w_cpu):
        assert_close(a, b, what="weights after 2 epochs", rtol=1e-4, atol=1e-5)


def test_3d_pooling_bad_shapes_are_invalid_argument():
    pool = dict(ksize=[1, 2, 2, 2, 1], strides=[1, 2, 2, 2, 1], padding="VALID")
    with tf.device("/PDK:0"):
        with pytest.raises(tf.errors.InvalidArgumentError, match="input must be rank 5"):
            tf.raw_ops.MaxPool3D(input=tf.zeros([2, 4, 4, 1]), **pool)
        x = tf.zeros([1, 4, 4, 4, 2])
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Expected grad shape to be \[1,2,2,2,2\], but got \[1,2,2,3,2\]"):
            tf.raw_ops.MaxPool3DGrad(orig_input=x, orig_output=tf.zeros([1, 2, 2, 2, 2]),
                                     grad=tf.zeros([1, 2, 2, 3, 2]), **pool)
        with pytest.raises(tf.errors.InvalidArgumentError, match="5 elements"):
            tf.raw_ops.AvgPool3DGrad(orig_input_shape=tf.constant([1, 4, 4, 4]),
                                     grad=tf.zeros([1, 2, 2, 2, 2]), **pool)


# --------------------------------------------------------- grouped Conv2D
# Conv2D with input depth C = groups x filter in_depth (Keras 3's
# Conv2D(groups=g) emits it through tf.nn.convolution). TF's CPU computes the
# forward but refuses its backprops ("Gradients for grouped convolutions are
# not supported on CPU"), so the reference is per-group: the channels split
# into `groups` slices, one ordinary float64 tf.nn.conv2d per slice on the
# CPU (gradients from a tape), the results concatenated.


def grouped_reference(x, w, dy, stride, padding, groups):
    """y, dx, dw of the grouped NHWC convolution, float64, on the CPU."""
    def fn(a, b):
        ys = [tf.nn.conv2d(ai, bi, strides=stride, padding=padding)
              for ai, bi in zip(tf.split(a, groups, axis=3), tf.split(b, groups, axis=3))]
        return tf.concat(ys, axis=3)
    return run_on("/CPU:0", lambda a, b, g: _grads(fn, a, b, g),
                  *(v.astype(np.float64) for v in (x, w, dy)))


GROUPED_CASES = [
    # (input NHWC, kernel, out channels, groups, stride, padding)
    ((2, 9, 7, 8), 3, 8, 2, 1, "SAME"),
    ((2, 9, 7, 8), 3, 12, 4, 2, "VALID"),
    ((1, 8, 8, 6), 1, 6, 3, 1, "VALID"),      # 1x1
    ((2, 8, 8, 4), 3, 8, 4, 1, "SAME"),       # groups = C, multiplier 2
    ((4, 16, 16, 32), 3, 32, 8, 1, "SAME"),   # batch split over the device pool
    ((0, 8, 8, 4), 3, 4, 2, 1, "SAME"),       # empty batch
]


def grouped_id(c):
    x, k, f, g, s, p = c
    return f"{ids(x)}-k{k}-f{f}-g{g}-s{s}-{p}"


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, "bfloat16"])
@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
@pytest.mark.parametrize("case", GROUPED_CASES, ids=grouped_id)
def test_grouped_conv2d_forward_and_gradients(case, fmt, dtype, rng):
    import ml_dtypes

    x_shape, k, f, groups, s, p = case
    dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    x = rand(rng, x_shape).astype(dt)
    w = rand(rng, (k, k, x_shape[3] // groups, f)).astype(dt)
    dy = rand(rng, conv_out_shape(x_shape, k, s, p, 1, f)).astype(dt)
    nchw = fmt == "NCHW"
    fn = lambda a, b: tf.nn.conv2d(a, b, strides=s, padding=p, data_format=fmt)  # noqa: E731
    ops = ["Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"]
    with launches() as delta:
        y, dx, dw = run_on("/PDK:0", lambda a, b, g: _grads(fn, a, b, g),
                           to_nchw(x) if nchw else x, w, to_nchw(dy) if nchw else dy)
    for op in ops:
        assert delta.get(op, 0) > 0, f"{op} did not run on PDK (launches: {delta})"
    if nchw:
        y, dx = to_nhwc(y), to_nhwc(dx)
    ey, edx, edw = grouped_reference(x, w, dy, s, p, groups)
    # 16-bit: inputs exact in float64, PDK sums in float32 and rounds once.
    tol = {np.float32: F32, np.float64: F64}.get(dt.type, None)
    if tol is None:
        tol = dict(rtol=1e-2, atol=1e-2) if dt == np.float16 else dict(rtol=2e-2, atol=5e-2)
    for what, a, e in (("y", y, ey), ("dx", dx, edx), ("dw", dw, edw)):
        assert a.dtype == dt, (what, a.dtype)
        assert_close(a.astype(np.float64), e.astype(dt).astype(np.float64), what=what, **tol)


def test_grouped_reference_matches_xla_cpu(rng):
    """The conformance sweep's reference for grouped Conv2D (XLA on the CPU,
    conformance_cases._xla_reference) agrees with the per-group one here."""
    x = rand(rng, (2, 9, 7, 8), np.float64)
    w = rand(rng, (3, 3, 2, 8), np.float64)
    dy = rand(rng, (2, 5, 4, 8), np.float64)
    fn = lambda a, b: tf.nn.conv2d(a, b, strides=2, padding="SAME")  # noqa: E731
    xla = tf.function(lambda a, b, g: _grads(fn, a, b, g), jit_compile=True)
    got = run_on("/CPU:0", xla, x, w, dy)
    for what, a, e in zip(("y", "dx", "dw"), got, grouped_reference(x, w, dy, 2, "SAME", 4)):
        assert_close(a, e, what=what, **F64)


def test_grouped_conv2d_fallback_float64_dilated(rng):
    """float64 (never oneDNN) takes the per-group im2col path; with dilation,
    against XLA on the CPU (TF's float64 CPU backprops reject dilations)."""
    x = rand(rng, (2, 9, 7, 6), np.float64)
    w = rand(rng, (3, 3, 2, 9), np.float64)
    dy = rand(rng, (2, 9, 7, 9), np.float64)
    fn = lambda a, b: tf.nn.conv2d(a, b, strides=1, padding="SAME", dilations=2)  # noqa: E731
    with launches() as delta:
        got = run_on("/PDK:0", lambda a, b, g: _grads(fn, a, b, g), x, w, dy)
    assert delta.get("Conv2DBackpropFilter", 0) > 0
    want = run_on("/CPU:0", tf.function(lambda a, b, g: _grads(fn, a, b, g), jit_compile=True),
                  x, w, dy)
    for what, a, e in zip(("y", "dx", "dw"), got, want):
        assert_close(a, e, what=what, **F64)


def _grouped_layer():
    import keras

    with tf.device("/PDK:0"):
        layer = keras.layers.Conv2D(12, 3, padding="same", groups=4)
        layer.build((None, 10, 10, 8))
    return layer


def test_keras_grouped_conv2d_forward_and_gradient(rng):
    """A keras.layers.Conv2D(groups=4) (as in ConvNeXt) computed on PDK with
    the ops Keras's TensorFlow backend emits for it (keras/src/backend/
    tensorflow/nn.py `conv`: tf.nn.convolution, a plain Conv2D whose input
    depth is groups x the kernel's in_depth, then the bias), forward and
    gradient, against the per-group reference with the layer's weights. Keras
    wraps that convolution in tf.function(jit_compile=True); the layer call
    itself is the next test."""
    layer = _grouped_layer()
    x = rand(rng, (4, 10, 10, 8))
    with tf.device("/PDK:0"):
        xt = tf.constant(x)
        with launches() as delta:
            with tf.GradientTape() as tape:
                tape.watch(xt)
                y = tf.nn.convolution(xt, layer.kernel, strides=1, padding="SAME",
                                      data_format="NHWC", dilations=1) + layer.bias
                loss = tf.reduce_sum(y * y)
            dx, dk, db = tape.gradient(loss, [xt, layer.kernel, layer.bias])
    for op in ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"):
        assert delta.get(op, 0) > 0, f"{op} did not run on PDK (launches: {delta})"
    kernel, bias = layer.kernel.numpy(), layer.bias.numpy()
    assert kernel.shape == (3, 3, 2, 12)
    y = y.numpy()
    ey = grouped_reference(x, kernel, np.zeros_like(y), 1, "SAME", 4)[0] + bias
    _, edx, edk = grouped_reference(x, kernel, 2 * y.astype(np.float64), 1, "SAME", 4)
    assert_close(y, ey.astype(np.float32), what="y", **F32)
    assert_close(dx.numpy(), edx.astype(np.float32), what="dx", rtol=1e-4, atol=5e-4)
    assert_close(dk.numpy(), edk.astype(np.float32), what="dkernel", rtol=1e-4, atol=5e-3)
    assert_close(db.numpy(), (2 * y.astype(np.float64)).sum(axis=(0, 1, 2)).astype(np.float32),
                 what="dbias", rtol=1e-4, atol=5e-4)


def test_keras_grouped_conv2d_layer_call_on_pdk(rng):
    """The layer itself, called eagerly: Keras runs its grouped convolution as a
    tf.function(jit_compile=True), which PDK runs with its own kernels
    (python/tensorflow_pdk/_xla.py); same result as the per-group reference."""
    layer = _grouped_layer()
    x = rand(rng, (2, 10, 10, 8))
    with tf.device("/PDK:0"):
        with launches() as delta:
            y = layer(tf.constant(x)).numpy()
    assert delta.get("Conv2D", 0) > 0, f"Conv2D did not run on PDK (launches: {delta})"
    kernel, bias = layer.kernel.numpy(), layer.bias.numpy()
    ey = grouped_reference(x, kernel, np.zeros_like(y), 1, "SAME", 4)[0] + bias
    assert_close(y, ey.astype(np.float32), what="y", **F32)


def test_grouped_conv2d_errors():
    x = np.ones((1, 8, 8, 8), np.float32)
    conv = lambda a, b: tf.raw_ops.Conv2D(input=a, filter=b, strides=[1] * 4,  # noqa: E731
                                          padding="SAME")
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"input depth must be evenly divisible by filter depth: 8 vs 3"
                             r".*\[1,8,8,8\].*\[3,3,3,8\]"):
        _on_pdk(conv, x, np.ones((3, 3, 3, 8), np.float32))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"output depth must be evenly divisible by number of groups: 6 vs 4"):
        _on_pdk(conv, x, np.ones((3, 3, 2, 6), np.float32))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"evenly divisible by number of groups: 6 vs 4.*NHWC copies"):
        _on_pdk(lambda a, b: tf.raw_ops.Conv2D(input=a, filter=b, strides=[1] * 4,
                                               padding="SAME", data_format="NCHW"),
                np.ones((1, 8, 4, 4), np.float32), np.ones((3, 3, 2, 6), np.float32))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"evenly divisible by filter depth"):
        _on_pdk(lambda a, g: tf.raw_ops.Conv2DBackpropFilter(
            input=a, filter_sizes=[3, 3, 3, 8], out_backprop=g, strides=[1] * 4,
            padding="SAME"), x, np.ones((1, 8, 8, 8), np.float32))


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
    # A depth stride: Unimplemented on PDK, as TensorFlow's float32 Conv3D
    # where oneDNN is on (its Eigen kernel, float64 or oneDNN off: the same
    # words as InvalidArgument).
    for device, classes in (("/CPU:0", (tf.errors.UnimplementedError,
                                        tf.errors.InvalidArgumentError)),
                            ("/PDK:0", tf.errors.UnimplementedError)):
        with pytest.raises(classes, match="does not yet support strides in the batch and depth"):
            with tf.device(device):
                tf.raw_ops.Conv3D(input=x, filter=np.ones((3, 3, 3, 3, 5), np.float32),
                                  strides=[1, 1, 1, 1, 2], padding="SAME")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[1,4,4,4,2\].*NDHWC copies"):
        _on_pdk(lambda a, b: tf.raw_ops.Conv3D(input=a, filter=b, strides=[1] * 5,
                                               padding="SAME", data_format="NCDHW"),
                np.ones((1, 2, 4, 4, 4), np.float32), np.ones((3, 3, 3, 3, 5), np.float32))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"out_backprop.*\[1,4,4,4,5\]"):
        _on_pdk(lambda a, g: tf.raw_ops.Conv3DBackpropFilterV2(
            input=a, filter_sizes=[3, 3, 3, 3, 5], out_backprop=g, strides=[1] * 5,
            padding="SAME"), x, np.ones((1, 4, 4, 3, 5), np.float32))


def to_ncdhw(a):
    return np.ascontiguousarray(np.transpose(a, (0, 4, 1, 2, 3)))


def to_ndhwc(a):
    return np.ascontiguousarray(np.transpose(a, (0, 2, 3, 4, 1)))


@pytest.mark.parametrize("case", CONV3D_CASES, ids=conv3d_id)
@pytest.mark.parametrize("x_shape", [(2, 5, 6, 7, 3), (0, 4, 4, 4, 2)], ids=ids)
def test_conv3d_ncdhw_forward_and_gradients(x_shape, case, rng):
    """NCDHW against the NDHWC op on the CPU, operands and results transposed."""
    k, s, p, d = case
    x = rand(rng, x_shape)
    w = rand(rng, tuple(k) + (x_shape[4], 5))
    dy = rand(rng, conv3d_out_shape(x_shape, k, s, p, d, 5))
    fn = lambda a, b: tf.nn.conv3d(a, b, strides=[1, 1, s, s, s], padding=p,  # noqa: E731
                                   dilations=[1, 1, d, d, d], data_format="NCDHW")
    ops = ["Conv3D", "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2"]
    with launches() as delta:
        y, dx, dw = run_on("/PDK:0", lambda a, b, g: _grads(fn, a, b, g), to_ncdhw(x), w,
                           to_ncdhw(dy))
    for op in ops:
        assert delta.get(op, 0) > 0, f"{op} did not run on PDK (launches: {delta})"
    assert y.shape == to_ncdhw(dy).shape and dx.shape == to_ncdhw(x).shape
    if x_shape[0] == 0:
        np.testing.assert_array_equal(dw, np.zeros_like(dw))
        return
    ref = _conv3d_reference(s, p, d)
    expected = run_on("/CPU:0", lambda a, b, g: _grads(ref, a, b, g), x, w, dy)
    for what, a, e in zip(("y", "dx", "dw"), (to_ndhwc(y), to_ndhwc(dx), dw), expected):
        assert_close(a, e, what=what, **F32)


def test_conv3d_ncdhw_backprop_input_sizes(rng):
    """Conv3DBackpropInputV2's input_sizes is in NCDHW order too."""
    w = rand(rng, (3, 3, 3, 4, 5))
    dy = rand(rng, (2, 3, 3, 4, 5))
    kw = dict(strides=[1, 2, 2, 2, 1], padding="SAME")
    expected = run_on("/CPU:0", lambda f, g: tf.raw_ops.Conv3DBackpropInputV2(
        input_sizes=[2, 5, 6, 7, 4], filter=f, out_backprop=g, **kw), w, dy)[0]
    with launches() as delta:
        actual = run_on("/PDK:0", lambda f, g: tf.raw_ops.Conv3DBackpropInputV2(
            input_sizes=[2, 4, 5, 6, 7], filter=f, out_backprop=g, strides=[1, 1, 2, 2, 2],
            padding="SAME", data_format="NCDHW"), w, to_ncdhw(dy))[0]
    assert delta.get("Conv3DBackpropInputV2", 0) > 0
    assert_close(to_ndhwc(actual), expected, what="dx", **F32)


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
        model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
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
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv2d_strides_on_batch_or_depth(strides, dtype):
    """Both of TensorFlow's CPU kernels (oneDNN's for float32 where oneDNN is
    on, Eigen's for float64) answer Unimplemented, in these words; so does PDK."""
    x = np.ones((2, 8, 8, 3), dtype)
    w = np.ones((3, 3, 3, 5), dtype)
    for device in ("/CPU:0", "/PDK:0"):
        with pytest.raises(tf.errors.UnimplementedError,
                           match="^.*Current implementation does not yet support strides in the "
                                 "batch and depth dimensions."):
            with tf.device(device):
                tf.raw_ops.Conv2D(input=x, filter=w, strides=strides, padding="SAME")


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


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("depth_window", [2, 3, 12])
def test_max_pool_depth_window(depth_window, dtype, rng):
    """Depth-only max pooling (ksize [1,1,1,K]): the maximum of each K
    consecutive channels, as TensorFlow's CPU kernel (DepthwiseMaxPool)."""
    x = rng.standard_normal((2, 5, 3, 12)).astype(np.float32)
    x[0, 0, 0, :4] = 1.0  # ties
    k = [1, 1, 1, depth_window]
    fn = lambda a: tf.nn.max_pool(tf.cast(a, dtype), k, k, "VALID")  # noqa: E731
    y = assert_matches_cpu(fn, x, ops=["MaxPool"], rtol=0, atol=0)[0]
    assert y.shape == (2, 5, 3, 12 // depth_window)


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


@pytest.mark.parametrize("padding", ["VALID", "SAME"])
def test_max_pool3d_of_minus_infinity_as_on_cpu(padding):
    """TensorFlow's CuboidMaxPooling starts from -inf and gives its padded
    positions lowest(): a window of -inf values is -inf, one clipped by SAME
    padding lowest(). PDK's MaxPool3D gives the CPU's values, bit for bit."""
    x = tf.fill([1, 3, 3, 3, 2], float("-inf"))
    out = {}
    for device in ("/CPU:0", "/PDK:0"):
        with tf.device(device):
            out[device] = tf.nn.max_pool3d(x, 2, 2, padding).numpy()
    assert out["/PDK:0"].tobytes() == out["/CPU:0"].tobytes(), (out["/PDK:0"], out["/CPU:0"])
    assert np.isneginf(out["/CPU:0"].flat[0])  # the first window is never clipped
