"""Image kernels (src/kernels/image/) in Keras models, against TensorFlow's
CPU; the op-level comparison of every dtype and attribute combination is in
the conformance sweep (conformance_cases.py, "ResizeBilinear")."""
import numpy as np
import pytest
import tensorflow as tf

from keras_fit import fit_on_pdk_and_cpu
from tensorflow_pdk.testing import assert_close


def test_keras_bilinear_resizing_trains_on_pdk_like_cpu():
    """Resizing (ResizeBilinear, half-pixel centers) and
    UpSampling2D(interpolation="bilinear") in a model: forward and gradient run
    on PDK with no compute op on the CPU, and two epochs end with the CPU's
    weights."""
    import keras

    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, (8, 12, 10, 3)).astype(np.float32)
    y = rng.integers(0, 3, size=(8,)).astype(np.int32)
    w_pdk, w_cpu, rec, delta = fit_on_pdk_and_cpu(lambda: keras.Sequential([
        keras.Input((12, 10, 3)),
        keras.layers.Conv2D(4, 3, padding="same"),
        keras.layers.Resizing(7, 9),
        keras.layers.UpSampling2D(2, interpolation="bilinear"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(3)]), x, y)
    for op in ("ResizeBilinear", "ResizeBilinearGrad"):
        assert delta.get(op, 0) >= 4, (op, delta)
    assert not rec.compute_ops_on_cpu(), rec.report()
    for a, b in zip(w_pdk, w_cpu):
        assert_close(a, b, what="weights after 2 epochs", rtol=1e-4, atol=1e-5)


def test_resize_bilinear_errors_keep_tensorflows_wording():
    with tf.device("/PDK:0"):
        with pytest.raises(tf.errors.InvalidArgumentError, match="} input must be 4-dimensional"):
            tf.raw_ops.ResizeBilinear(images=tf.zeros([4, 4, 3]), size=[2, 2])
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="If half_pixel_centers is True, align_corners must be False"):
            tf.raw_ops.ResizeBilinear(images=tf.zeros([1, 4, 4, 3]), size=[2, 2],
                                      align_corners=True, half_pixel_centers=True)
        with pytest.raises(tf.errors.InvalidArgumentError, match="output dimensions must be positive"):
            tf.raw_ops.ResizeBilinear(images=tf.zeros([1, 4, 4, 3]), size=[0, 2])
