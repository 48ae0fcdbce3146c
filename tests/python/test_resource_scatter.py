"""Sparse variable updates (ResourceScatter*) on PDK.

Keras applies an Embedding's sparse gradient with variable.scatter_sub /
scatter_add / scatter_update. PDK registers ResourceScatter* kernels only to
satisfy the placer; its graph optimizer rewrites each such node on PDK to
ReadVariableOp + TensorScatter* + AssignVariableOp
(src/graph/rewrites/resource_scatter.cc). Compared with the same update on the
CPU; launch counts prove the TensorScatter* kernels ran on PDK.
"""
import numpy as np
import pytest
import tensorflow as tf

import tensorflow_pdk

OPS = {  # tf.Variable method -> PDK kernel that computes it
    "scatter_add": "TensorScatterAdd",
    "scatter_sub": "TensorScatterSub",
    "scatter_update": "TensorScatterUpdate",
    "scatter_min": "TensorScatterMin",
    "scatter_max": "TensorScatterMax",
}


def _update(device, method, init, idx, upd, dtype):
    with tf.device(device):
        v = tf.Variable(init.astype(dtype))

        @tf.function
        def step(i, u):
            getattr(v, method)(tf.IndexedSlices(u, i))
            return v.read_value()

        return step(tf.constant(idx), tf.constant(upd.astype(dtype))).numpy()


@pytest.mark.parametrize("method", sorted(OPS))
@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_scatter_in_tf_function_matches_cpu(method, dtype, index_dtype):
    rng = np.random.default_rng(3)
    init = rng.integers(-9, 9, (7, 3))
    idx = np.array([4, 0, 4, 6, 1], index_dtype)  # index 4 twice: accumulates
    upd = rng.integers(-5, 5, (5, 3))
    tensorflow_pdk.reset_launch_counts()
    got = _update("/PDK:0", method, init, idx, upd, dtype)
    assert tensorflow_pdk.launch_counts().get(OPS[method], 0) == 1
    want = _update("/CPU:0", method, init, idx, upd, dtype)
    np.testing.assert_array_equal(got, want)


def test_out_of_range_index_is_an_error_like_cpu():
    for device in ("/CPU:0", "/PDK:0"):
        with pytest.raises(tf.errors.InvalidArgumentError):
            _update(device, "scatter_add", np.zeros((3, 2)), np.array([3], "int32"),
                    np.ones((1, 2)), "float32")


def test_eager_scatter_on_pdk_says_what_to_do():
    with tf.device("/PDK:0"):
        v = tf.Variable(tf.zeros((3, 2)))
        with pytest.raises(tf.errors.UnimplementedError, match="inside a tf.function"):
            v.scatter_add(tf.IndexedSlices(tf.ones((1, 2)), tf.constant([1])))
