"""Bad input gives InvalidArgumentError naming the operands' shapes, never a crash."""
import numpy as np
import pytest
import tensorflow as tf

import tensorflow_pdk
from tensorflow_pdk.testing import launches


def _on_pdk(fn):
    with tf.device("/PDK:0"):
        return fn()


def test_matmul_shape_mismatch():
    a = np.ones((3, 4), np.float32)
    b = np.ones((5, 6), np.float32)
    with launches() as n, pytest.raises(tf.errors.InvalidArgumentError) as e:
        _on_pdk(lambda: tf.linalg.matmul(tf.constant(a), tf.constant(b)))
    msg = str(e.value)
    assert "MatMul" in msg and "4" in msg and "5" in msg
    assert n.get("MatMul", 0) == 1, "the error must come from the PDK kernel"


def test_reshape_to_wrong_size():
    with launches() as n, pytest.raises(tf.errors.InvalidArgumentError) as e:
        _on_pdk(lambda: tf.reshape(tf.constant(np.ones((2, 3), np.float32)), [4]))
    assert "6" in str(e.value) and "4" in str(e.value)
    assert n.get("Reshape", 0) == 1


def test_broadcast_mismatch():
    with launches() as n, pytest.raises(tf.errors.InvalidArgumentError) as e:
        _on_pdk(lambda: tf.add(tf.constant(np.ones((2, 3), np.float32)),
                               tf.constant(np.ones((4,), np.float32))))
    assert "[2,3]" in str(e.value) and "[4]" in str(e.value)
    assert n.get("AddV2", 0) == 1


def test_device_keeps_working_after_errors():
    with pytest.raises(tf.errors.InvalidArgumentError):
        _on_pdk(lambda: tf.add(tf.ones((2, 3)), tf.ones((4,))))
    out = _on_pdk(lambda: tf.add(tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])))
    np.testing.assert_array_equal(out.numpy(), [4.0, 6.0])
