"""InTopKV2 (src/kernels/nn/in_top_k.cc) in Keras's
SparseTopKCategoricalAccuracy, against TensorFlow's CPU; ties, out-of-range
targets and non-finite rows are in the conformance sweep."""
import numpy as np
import pytest
import tensorflow as tf

from tensorflow_pdk.testing import launches


def test_sparse_top_k_accuracy_metric_runs_on_pdk_like_cpu():
    """evaluate() with SparseTopKCategoricalAccuracy(k=3): InTopKV2 launches
    on PDK once per batch, and loss and metric equal the CPU's."""
    import keras

    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 10)).astype(np.float32)
    y = rng.integers(0, 6, size=(32,)).astype(np.int32)
    results = {}
    for device in ("/PDK:0", "/CPU:0"):
        keras.utils.set_random_seed(0)
        with tf.device(device):
            m = keras.Sequential([keras.Input((10,)), keras.layers.Dense(6)])
            m.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=[keras.metrics.SparseTopKCategoricalAccuracy(k=3)])
            with launches() as delta:
                results[device] = m.evaluate(x, y, batch_size=8, verbose=0, return_dict=True)
        if device == "/PDK:0":
            assert delta.get("InTopKV2", 0) >= 4, delta
    assert results["/PDK:0"] == pytest.approx(results["/CPU:0"], rel=1e-6), results


def test_in_top_k_errors_keep_tensorflows_wording():
    with tf.device("/PDK:0"):
        with pytest.raises(tf.errors.InvalidArgumentError, match="predictions must be 2-dimensional"):
            tf.raw_ops.InTopKV2(predictions=tf.zeros([4]), targets=tf.zeros([4], tf.int32), k=1)
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="First dimension of predictions 4 must match length of targets 3"):
            tf.raw_ops.InTopKV2(predictions=tf.zeros([4, 5]), targets=tf.zeros([3], tf.int32), k=1)
