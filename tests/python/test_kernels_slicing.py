"""StridedSlice and Bitcast against TensorFlow's CPU kernels."""
import numpy as np
import pytest
import tensorflow as tf

from tensorflow_pdk.testing import assert_matches_cpu

X = np.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5)

SLICES = {
    "index": lambda t: t[1],
    "range": lambda t: t[:, 1:3],
    "ellipsis_neg_stride": lambda t: t[..., ::-2],
    "newaxis_shrink": lambda t: t[:, tf.newaxis, -1, ::2],
    "ellipsis_middle": lambda t: t[-1, ..., 3],
    "reverse": lambda t: t[::-1, 5:0:-1],
    "empty": lambda t: t[1:1],
    "trailing_newaxis": lambda t: t[..., tf.newaxis],
    "scalar": lambda t: t[0, 0, 0, 0],
    "clamped": lambda t: t[:, -100:100, 2:-1],
}


@pytest.mark.parametrize("name", sorted(SLICES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.bool_])
def test_strided_slice(name, dtype):
    x = (X % 3 == 0) if dtype == np.bool_ else X.astype(dtype)
    assert_matches_cpu(SLICES[name], x, ops=["StridedSlice"])


def test_strided_slice_int64_indices():
    assert_matches_cpu(
        lambda t: tf.strided_slice(t, tf.constant([0, 1], tf.int64), tf.constant([2, 3], tf.int64),
                                   tf.constant([1, 1], tf.int64)), X.astype(np.float32),
        ops=["StridedSlice"])


def test_strided_slice_out_of_range_index():
    with tf.device("/PDK:0"), pytest.raises(tf.errors.InvalidArgumentError) as e:
        tf.constant(X.astype(np.float32))[5]
    assert "out of bounds" in str(e.value) and "[2,3,4,5]" in str(e.value)


@pytest.mark.parametrize("src,dst", [(np.float32, tf.int32), (np.float32, tf.uint8),
                                     (np.int64, tf.int32), (np.uint8, tf.float32),
                                     (np.int32, tf.float32)])
def test_bitcast(src, dst):
    x = np.arange(8, dtype=src).reshape(2, 4)
    assert_matches_cpu(lambda t: tf.bitcast(t, dst), x, ops=["Bitcast"])


def test_bitcast_bad_last_dimension():
    with tf.device("/PDK:0"), pytest.raises(tf.errors.InvalidArgumentError):
        tf.bitcast(tf.constant(np.zeros((2, 3), np.uint8)), tf.float32)
