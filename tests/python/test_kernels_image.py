"""Image kernels (src/kernels/image/) in Keras models, against TensorFlow's
CPU; the op-level comparison of every dtype and attribute combination is in
the conformance sweep (conformance_cases.py, "ResizeBilinear",
"ResizeNearestNeighbor", "ResizeBicubic", "ResizeArea",
"ScaleAndTranslate")."""
import numpy as np
import pytest
import tensorflow as tf

from keras_fit import fit_on_pdk_and_cpu
from tensorflow_pdk.testing import assert_close, launches


def _resizing_trains_like_cpu(resizing_layers, ops, seed):
    """Conv2D -> `resizing_layers()` -> GlobalAveragePooling2D -> Dense(3),
    two epochs: each op in `ops` launched on PDK (forward and gradient, every
    step), no compute op on the CPU, and the CPU's weights at the end."""
    import keras

    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, (8, 12, 10, 3)).astype(np.float32)
    y = rng.integers(0, 3, size=(8,)).astype(np.int32)
    w_pdk, w_cpu, rec, delta = fit_on_pdk_and_cpu(lambda: keras.Sequential(
        [keras.Input((12, 10, 3)), keras.layers.Conv2D(4, 3, padding="same")]
        + resizing_layers()
        + [keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(3)]), x, y)
    for op in ops:
        assert delta.get(op, 0) >= 4, (op, delta)
    assert not rec.compute_ops_on_cpu(), rec.report()
    for a, b in zip(w_pdk, w_cpu):
        assert_close(a, b, what="weights after 2 epochs", rtol=1e-4, atol=1e-5)


def test_keras_bilinear_resizing_trains_on_pdk_like_cpu():
    """Resizing (ResizeBilinear, half-pixel centers) and
    UpSampling2D(interpolation="bilinear")."""
    import keras

    _resizing_trains_like_cpu(
        lambda: [keras.layers.Resizing(7, 9),
                 keras.layers.UpSampling2D(2, interpolation="bilinear")],
        ("ResizeBilinear", "ResizeBilinearGrad"), 0)


def test_keras_nearest_resizing_trains_on_pdk_like_cpu():
    """Resizing(interpolation="nearest") down and up (ResizeNearestNeighbor,
    half-pixel centers, and its gradient), which ran on the CPU before."""
    import keras

    _resizing_trains_like_cpu(
        lambda: [keras.layers.Resizing(7, 9, interpolation="nearest"),
                 keras.layers.Resizing(16, 16, interpolation="nearest")],
        ("ResizeNearestNeighbor", "ResizeNearestNeighborGrad"), 1)


def test_keras_bicubic_resizing_trains_on_pdk_like_cpu():
    """Resizing(interpolation="bicubic") down and up (ResizeBicubic with
    Keys's kernel at half-pixel centers, and its gradient), which ran on the
    CPU before."""
    import keras

    _resizing_trains_like_cpu(
        lambda: [keras.layers.Resizing(7, 9, interpolation="bicubic"),
                 keras.layers.Resizing(16, 16, interpolation="bicubic")],
        ("ResizeBicubic", "ResizeBicubicGrad"), 2)


def test_keras_lanczos_resizing_trains_on_pdk_like_cpu():
    """Resizing(interpolation="lanczos3" | "lanczos5") down and up
    (ScaleAndTranslate and ScaleAndTranslateGrad), which ran on the CPU
    before."""
    import keras

    _resizing_trains_like_cpu(
        lambda: [keras.layers.Resizing(7, 9, interpolation="lanczos3"),
                 keras.layers.Resizing(16, 16, interpolation="lanczos5")],
        ("ScaleAndTranslate", "ScaleAndTranslateGrad"), 4)


def test_antialiased_resize_gradient_matches_cpu():
    """tf.image.resize(antialias=True) (ScaleAndTranslate with the filter
    stretched when downsampling) and its gradient, against the CPU."""
    rng = np.random.default_rng(5)
    x = tf.constant(rng.uniform(0, 1, (2, 33, 29, 3)), tf.float32)
    out = {}
    for device in ("/CPU:0", "/PDK:0"):
        with tf.device(device):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = tf.image.resize(x, (10, 12), method="bilinear", antialias=True)
                loss = tf.reduce_sum(y * y)
            out[device] = (y, tape.gradient(loss, x))
    assert out["/PDK:0"][0].device.endswith("PDK:0")
    for a, b in zip(out["/PDK:0"], out["/CPU:0"]):
        assert_close(a.numpy(), b.numpy(), what="antialiased resize", rtol=1e-5, atol=1e-5)


def test_keras_area_resizing_runs_on_pdk_like_cpu():
    """Resizing(interpolation="area") in front of a trained model (TensorFlow
    has no ResizeArea gradient; the layer has no weights): the forward on
    PDK, predictions and training equal to the CPU's."""
    import keras

    rng = np.random.default_rng(3)
    x = rng.uniform(0, 255, (8, 20, 18, 3)).astype(np.float32)
    y = rng.integers(0, 3, size=(8,)).astype(np.int32)
    w_pdk, w_cpu, rec, delta = fit_on_pdk_and_cpu(lambda: keras.Sequential(
        [keras.Input((20, 18, 3)), keras.layers.Resizing(7, 9, interpolation="area"),
         keras.layers.Rescaling(1 / 255.0), keras.layers.Conv2D(4, 3),
         keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(3)]), x, y)
    assert delta.get("ResizeArea", 0) >= 4, delta
    assert not rec.compute_ops_on_cpu(), rec.report()
    for a, b in zip(w_pdk, w_cpu):
        assert_close(a, b, what="weights after 2 epochs", rtol=1e-4, atol=1e-5)


RB, RBG = tf.raw_ops.ResizeBilinear, tf.raw_ops.ResizeBilinearGrad
RC, RCG = tf.raw_ops.ResizeBicubic, tf.raw_ops.ResizeBicubicGrad
RA = tf.raw_ops.ResizeArea
ST, STG = tf.raw_ops.ScaleAndTranslate, tf.raw_ops.ScaleAndTranslateGrad
RN, RNG = tf.raw_ops.ResizeNearestNeighbor, tf.raw_ops.ResizeNearestNeighborGrad
ERROR_CASES = {
    "images rank 3": lambda: RB(images=tf.zeros([4, 4, 3]), size=[2, 2]),
    "images without channels": lambda: RB(images=tf.zeros([1, 4, 4, 0]), size=[2, 2]),
    "images of zero height, empty batch": lambda: RB(images=tf.zeros([0, 0, 4, 3]), size=[2, 2]),
    "size of 3 values": lambda: RB(images=tf.zeros([1, 4, 4, 3]), size=[2, 2, 2]),
    "size 0": lambda: RB(images=tf.zeros([1, 4, 4, 3]), size=[0, 2]),
    "align_corners and half_pixel_centers": lambda: RB(
        images=tf.zeros([1, 4, 4, 3]), size=[2, 2], align_corners=True, half_pixel_centers=True),
    "grads of zero width": lambda: RBG(grads=tf.zeros([1, 8, 0, 2]),
                                       original_image=tf.zeros([1, 4, 4, 2])),
    "original_image of zero height": lambda: RBG(grads=tf.zeros([1, 8, 8, 2]),
                                                 original_image=tf.zeros([1, 0, 4, 2])),
    "original_image rank 3": lambda: RBG(grads=tf.zeros([1, 8, 8, 2]),
                                         original_image=tf.zeros([4, 4, 2])),
    "nearest: images rank 3": lambda: RN(images=tf.zeros([4, 4, 3]), size=[2, 2]),
    "nearest: size 0": lambda: RN(images=tf.zeros([1, 4, 4, 3]), size=[2, 0]),
    "nearest: align_corners and half_pixel_centers": lambda: RN(
        images=tf.zeros([1, 4, 4, 3]), size=[2, 2], align_corners=True, half_pixel_centers=True),
    "nearest grad: grads rank 3": lambda: RNG(grads=tf.zeros([8, 8, 2]), size=[4, 4]),
    "nearest grad: size of 3 values": lambda: RNG(grads=tf.zeros([1, 8, 8, 2]), size=[4, 4, 4]),
    "nearest grad: size 0": lambda: RNG(grads=tf.zeros([1, 8, 8, 2]), size=[0, 4]),
    "bicubic: images rank 3": lambda: RC(images=tf.zeros([4, 4, 3]), size=[2, 2]),
    "bicubic: size 0": lambda: RC(images=tf.zeros([1, 4, 4, 3]), size=[2, 0]),
    "bicubic: align_corners and half_pixel_centers": lambda: RC(
        images=tf.zeros([1, 4, 4, 3]), size=[2, 2], align_corners=True, half_pixel_centers=True),
    "bicubic grad: grads of zero height": lambda: RCG(grads=tf.zeros([1, 0, 8, 2]),
                                                      original_image=tf.zeros([1, 4, 4, 2])),
    "bicubic grad: original_image rank 3": lambda: RCG(grads=tf.zeros([1, 8, 8, 2]),
                                                       original_image=tf.zeros([4, 4, 2])),
    "area: images without channels": lambda: RA(images=tf.zeros([1, 4, 4, 0]), size=[2, 2]),
    "area: size of 1 value": lambda: RA(images=tf.zeros([1, 4, 4, 3]), size=[2]),
    "scale_and_translate: images rank 3": lambda: ST(
        images=tf.zeros([4, 4, 3]), size=[2, 2], scale=[0.5, 0.5], translation=[0.0, 0.0]),
    "scale_and_translate: size 0": lambda: ST(
        images=tf.zeros([1, 4, 4, 3]), size=[0, 2], scale=[0.5, 0.5], translation=[0.0, 0.0]),
    "scale_and_translate: scale 0": lambda: ST(
        images=tf.zeros([1, 4, 4, 3]), size=[2, 2], scale=[0.0, 0.5], translation=[0.0, 0.0]),
    "scale_and_translate: translation of 3 values": lambda: ST(
        images=tf.zeros([1, 4, 4, 3]), size=[2, 2], scale=[0.5, 0.5],
        translation=[0.0, 0.0, 0.0]),
    "scale_and_translate: unknown kernel_type": lambda: ST(
        images=tf.zeros([1, 4, 4, 3]), size=[2, 2], scale=[0.5, 0.5], translation=[0.0, 0.0],
        kernel_type="cubic"),
    "scale_and_translate grad: original_image rank 3": lambda: STG(
        grads=tf.zeros([1, 2, 2, 3]), original_image=tf.zeros([4, 4, 3]), scale=[0.5, 0.5],
        translation=[0.0, 0.0]),
    "scale_and_translate grad: scale negative": lambda: STG(
        grads=tf.zeros([1, 2, 2, 3]), original_image=tf.zeros([1, 4, 4, 3]), scale=[0.5, -1.0],
        translation=[0.0, 0.0]),
}


def _error(device, fn):
    with tf.device(device):
        try:
            fn()
        except tf.errors.OpError as e:
            return type(e), e.message.split("}} ", 1)[-1].split(" [Op:")[0]
    return None


@pytest.mark.parametrize("name", list(ERROR_CASES))
def test_resize_errors_are_the_cpus(name):
    """Each invalid call raises on PDK what it raises on the CPU (TensorFlow's
    checks in its order): the same class, TensorFlow's message first."""
    cpu = _error("/CPU:0", ERROR_CASES[name])
    pdk = _error("/PDK:0", ERROR_CASES[name])
    assert cpu is not None, "the CPU computed"
    assert pdk is not None and pdk[0] is cpu[0], (pdk, cpu)
    assert pdk[1].startswith(cpu[1]), (pdk, cpu)


def test_resize_bilinear_grad_takes_batch_and_channels_from_grads():
    """As TensorFlow's CPU kernel, the gradient's shape is grads' batch and
    channels with original_image's height and width: an original_image of
    another batch size (only its shape is read) gives the CPU's values."""
    g = tf.constant(np.random.default_rng(1).normal(size=(3, 7, 9, 2)), tf.float32)
    orig = tf.zeros([1, 4, 5, 2])
    with tf.device("/CPU:0"):
        want = RBG(grads=g, original_image=orig, half_pixel_centers=True)
    with tf.device("/PDK:0"):
        got = RBG(grads=g, original_image=orig, half_pixel_centers=True)
    assert got.device.endswith("PDK:0")
    assert got.shape == want.shape == (3, 4, 5, 2)
    assert_close(got.numpy(), want.numpy(), what="ResizeBilinearGrad", rtol=1e-6, atol=1e-6)


def test_keras_random_affine_layers_train_on_pdk_like_cpu():
    """RandomRotation, RandomZoom, RandomTranslation and RandomShear
    (ImageProjectiveTransformV3, bilinear and nearest, every fill mode Keras
    offers) in a model: the augmentation runs on PDK with no compute op on
    the CPU, and two epochs end with the CPU's weights (Keras draws the same
    random transforms on both devices: PDK's stateless random kernels are
    the CPU's, bit for bit)."""
    import keras

    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, (8, 12, 10, 3)).astype(np.float32)
    y = rng.integers(0, 3, size=(8,)).astype(np.int32)
    w_pdk, w_cpu, rec, delta = fit_on_pdk_and_cpu(lambda: keras.Sequential([
        keras.Input((12, 10, 3)),
        keras.layers.RandomRotation(0.2, fill_mode="reflect"),
        keras.layers.RandomZoom(0.3, fill_mode="constant", fill_value=0.5),
        keras.layers.RandomTranslation(0.2, 0.2, fill_mode="wrap", interpolation="nearest"),
        keras.layers.RandomShear(0.2, 0.2, fill_mode="nearest"),
        keras.layers.Conv2D(4, 3, padding="same"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(3)]), x, y)
    assert delta.get("ImageProjectiveTransformV3", 0) >= 4 * 4, delta
    assert not rec.compute_ops_on_cpu(), rec.report()
    for a, b in zip(w_pdk, w_cpu):
        assert_close(a, b, what="weights after 2 epochs", rtol=1e-4, atol=1e-5)


def _augment_on_cpu_and_pdk(build, batches):
    """build() -> a list of Keras layers; they run in training mode in one
    tf.function per device, seed 0, on each of `batches`. Returns ({device:
    [images per batch]}, PDK launches)."""
    import keras

    from tensorflow_pdk.testing import launches

    images = {}
    for device in ("/CPU:0", "/PDK:0"):
        keras.utils.set_random_seed(0)
        with tf.device(device):
            aug = keras.Sequential(build())
            step = tf.function(lambda t: aug(t, training=True))
            with launches() as n:
                images[device] = [step(tf.constant(b)).numpy() for b in batches]
    return images, n


def _fit_on_pdk(build, x, y, epochs):
    """The layers of build() before a small classifier, fitted on /PDK:0 with
    seed 0; returns (placement record, PDK launches) of the fit."""
    import keras

    from tensorflow_pdk import placement
    from tensorflow_pdk.testing import launches

    keras.utils.set_random_seed(0)
    with tf.device("/PDK:0"):
        model = keras.Sequential([keras.Input(x.shape[1:]), *build(),
                                  keras.layers.Conv2D(4, 3, padding="same"),
                                  keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(3)])
        model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        with placement.record() as rec, launches() as n:
            model.fit(x, y, batch_size=4, epochs=epochs, shuffle=False, verbose=0)
    return rec, n


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_colorspace_blocks_bits_equal_cpu(dtype):
    """float and double run RGBToHSV / HSVToRGB on planar blocks of 256
    pixels with every branch as a select (rgb_to_hsv.cc): the bits must be
    the CPU kernel's on a size that spans several blocks, shards and a
    partial block, with equal channels, zeros, negatives, NaN and inf."""
    rng = np.random.default_rng(21)
    x = (rng.integers(0, 5, size=(3, 37, 41, 3)) / 4).astype(dtype)
    x.reshape(-1)[::7] = rng.uniform(-0.5, 1.5, x.size)[::7].astype(dtype)
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30], dtype)
    x.reshape(-1)[:600] = np.resize(specials, 600)[rng.permutation(600)]
    for name in ("RGBToHSV", "HSVToRGB"):
        op = getattr(tf.raw_ops, name)
        out = {}
        for d in ("/CPU:0", "/PDK:0"):
            with tf.device(d), launches() as n:
                out[d] = op(images=tf.constant(x)).numpy()
        assert n.get(name, 0) == 1, n  # the PDK run launched PDK's kernel
        np.testing.assert_array_equal(np.isnan(out["/PDK:0"]), np.isnan(out["/CPU:0"]))
        ok = ~np.isnan(out["/CPU:0"])
        assert out["/PDK:0"][ok].tobytes() == out["/CPU:0"][ok].tobytes(), name


def test_keras_random_color_layers_run_on_pdk_like_cpu():
    """RandomHue, RandomSaturation and RandomColorJitter (RGBToHSV and
    HSVToRGB): in a tf.function with the same seed they give the CPU's
    images, and in fit() they run on PDK with no compute op on the CPU.
    (fit's weights are not compared: Keras compiles the CPU's step with XLA,
    whose RGBToHSV / HSVToRGB lowering differs from TensorFlow's kernels by a
    few ulps, measured 6e-8 and 2.4e-7, which two epochs grow past 1e-4.)"""
    import keras

    def layers():
        return [keras.layers.RandomHue(0.3, value_range=(0, 1)),
                keras.layers.RandomSaturation(0.4, value_range=(0, 1)),
                keras.layers.RandomColorJitter(value_range=(0, 1), saturation_factor=0.2,
                                               hue_factor=0.2)]

    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, (8, 12, 10, 3)).astype(np.float32)
    y = rng.integers(0, 3, size=(8,)).astype(np.int32)
    images, n = _augment_on_cpu_and_pdk(layers, [x[:4], x[4:]])
    assert n.get("RGBToHSV", 0) == n.get("HSVToRGB", 0) == 2 * 4, n
    for a, b in zip(images["/PDK:0"], images["/CPU:0"]):
        assert_close(a, b, what="augmented images", rtol=1e-6, atol=1e-7)

    rec, n = _fit_on_pdk(layers, x, y, epochs=2)
    assert n.get("RGBToHSV", 0) >= 4 * 4 and n.get("HSVToRGB", 0) >= 4 * 4, n
    assert not rec.compute_ops_on_cpu(), rec.report()


def test_keras_random_elastic_transform_runs_on_pdk_like_cpu():
    """RandomElasticTransform (GatherNd of float32 pixels with int32 indices,
    BitwiseOr of int32 seeds): the same seed gives the CPU's images, and fit()
    runs it with no compute op on the CPU."""
    import keras

    def layers():
        return [keras.layers.RandomElasticTransform(factor=1.0, scale=0.5)]

    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, (8, 12, 10, 3)).astype(np.float32)
    y = rng.integers(0, 3, size=(8,)).astype(np.int32)
    images, n = _augment_on_cpu_and_pdk(layers, [x])
    assert n.get("GatherNd", 0) >= 1 and n.get("BitwiseOr", 0) >= 1, n
    assert_close(images["/PDK:0"][0], images["/CPU:0"][0], what="transformed images",
                 rtol=1e-6, atol=1e-7)

    rec, _ = _fit_on_pdk(layers, x, y, epochs=1)
    assert not rec.compute_ops_on_cpu(), rec.report()


def test_keras_random_perspective_and_posterization_run_on_pdk_like_cpu():
    """RandomPerspective (MatrixSolve of each image's 8 x 8 homography
    system, ImageProjectiveTransformV3) and RandomPosterization (Cast to and
    from uint8, RightShift and LeftShift of uint8): the same seed gives the
    CPU's images, and fit() runs them with no compute op on the CPU."""
    import keras

    def layers():
        return [keras.layers.RandomPerspective(factor=1.0, scale=0.5, seed=1),
                keras.layers.RandomPosterization(factor=(1, 6), value_range=(0, 255), seed=2)]

    rng = np.random.default_rng(0)
    x = rng.uniform(0, 255, (8, 12, 10, 3)).astype(np.float32)
    y = rng.integers(0, 3, size=(8,)).astype(np.int32)
    images, n = _augment_on_cpu_and_pdk(layers, [x[:4], x[4:]])
    for op in ("MatrixSolve", "ImageProjectiveTransformV3", "RightShift", "LeftShift"):
        assert n.get(op, 0) >= 2, (op, n)
    for a, b in zip(images["/PDK:0"], images["/CPU:0"]):
        # The homography is solved with other vector code than the CPU's
        # (ulps); a pixel whose sample point moves across a pixel boundary
        # changes a little, so compare closely but not bit for bit.
        assert_close(a, b, what="augmented images", rtol=1e-4, atol=1e-2)

    rec, _ = _fit_on_pdk(layers, x, y, epochs=1)
    assert not rec.compute_ops_on_cpu(), rec.report()
