"""Qr, MatrixDiagPartV3, SpaceToBatchND and BatchToSpaceND on PDK beyond the
conformance sweep: properties (q r = input, q orthonormal, against NumPy in
float64), the Keras initializer and the layer that need them (Orthogonal;
a dilated convolution with its gradients), and their errors."""
import numpy as np
import pytest
import tensorflow as tf

from tensorflow_pdk.testing import assert_matches_cpu, launches


def _on_pdk(fn, *arrays):
    with tf.device("/PDK:0"):
        return fn(*[tf.constant(a) for a in arrays])


@pytest.mark.parametrize("shape", [[6, 4], [4, 6], [3, 5, 5], [2, 40, 33]])
@pytest.mark.parametrize("full", [False, True])
def test_qr_reconstructs_and_is_orthonormal(shape, full, rng):
    a = rng.standard_normal(shape)
    with launches() as delta:
        q, r = _on_pdk(lambda x: tf.linalg.qr(x, full_matrices=full), a)
    assert delta.get("Qr", 0) == 1, delta
    q, r = q.numpy(), r.numpy()
    m, n = shape[-2:]
    k = m if full else min(m, n)
    assert q.shape == tuple(shape[:-2]) + (m, k) and r.shape == tuple(shape[:-2]) + (k, n)
    np.testing.assert_allclose(q @ r, a, atol=1e-12)
    np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(k), q.shape[:-2] + (k, k)),
                               atol=1e-12)
    np.testing.assert_array_equal(np.tril(r, -1), 0)
    # Same signs as NumPy (LAPACK's Householder convention agrees with Eigen's).
    rq = np.linalg.qr(a, mode="complete" if full else "reduced")[1]
    np.testing.assert_allclose(r, rq, atol=1e-10)


def test_keras_orthogonal_initializer_matches_cpu():
    import keras
    init = keras.initializers.Orthogonal(seed=3)
    out = {}
    for dev in ("/CPU:0", "/PDK:0"):
        with tf.device(dev), launches() as delta:
            out[dev] = np.asarray(init((16, 64)))
    assert delta.get("Qr", 0) >= 1 and delta.get("MatrixDiagPartV3", 0) >= 1, delta
    np.testing.assert_allclose(out["/PDK:0"], out["/CPU:0"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["/PDK:0"] @ out["/PDK:0"].T, np.eye(16), atol=1e-5)


def test_dilated_conv2d_and_gradients_match_cpu(rng):
    x = rng.standard_normal((2, 11, 9, 3)).astype(np.float32)
    f = rng.standard_normal((3, 3, 3, 4)).astype(np.float32)

    def fn(x, f):
        with tf.GradientTape() as tape:
            tape.watch([x, f])
            y = tf.nn.convolution(x, f, padding="SAME", dilations=[2, 3])
            loss = tf.reduce_sum(y * y)
        return [y] + tape.gradient(loss, [x, f])

    with launches() as delta:
        assert_matches_cpu(fn, x, f, rtol=1e-4, atol=1e-4)
    for op in ("SpaceToBatchND", "BatchToSpaceND", "Conv2D", "Conv2DBackpropFilter"):
        assert delta.get(op, 0) > 0, (op, delta)


def test_qr_errors(rng):
    with pytest.raises(tf.errors.InvalidArgumentError, match="rank"):
        _on_pdk(lambda x: tf.raw_ops.Qr(input=x), rng.standard_normal([4]).astype(np.float32))


def test_matrix_diag_part_errors(rng):
    a = rng.standard_normal([3, 4]).astype(np.float32)

    def diag(k, pad=0.0, align="RIGHT_LEFT", x=a):
        return _on_pdk(lambda x: tf.raw_ops.MatrixDiagPartV3(
            input=x, k=tf.constant(k, tf.int32), padding_value=tf.constant(pad, tf.float32),
            align=align), x)

    with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
        diag(4)
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
        diag([-3, 0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="greater"):
        diag([2, 1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="k must be"):
        diag([0, 1, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="padding_value"):
        diag(0, pad=[0.0, 1.0])
    with pytest.raises(tf.errors.InvalidArgumentError):
        diag(0, x=rng.standard_normal([4]).astype(np.float32))
    # The op keeps working.
    assert_matches_cpu(lambda x: tf.linalg.diag_part(x, k=(-1, 2)), a, ops=["MatrixDiagPartV3"])


def test_space_to_batch_errors(rng):
    x = rng.standard_normal([2, 5, 3]).astype(np.float32)

    def s2b(block, pads, x=x):
        return _on_pdk(lambda x: tf.raw_ops.SpaceToBatchND(
            input=x, block_shape=tf.constant(block, tf.int32),
            paddings=tf.constant(pads, tf.int32)), x)

    def b2s(block, crops, x=x):
        return _on_pdk(lambda x: tf.raw_ops.BatchToSpaceND(
            input=x, block_shape=tf.constant(block, tf.int32), crops=tf.constant(crops, tf.int32)), x)

    with pytest.raises(tf.errors.InvalidArgumentError, match="not divisible"):
        s2b([2], [[0, 0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match=">= 1"):
        s2b([0], [[0, 0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match=">= 0"):
        s2b([2], [[-1, 2]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="must have shape"):
        s2b([2], [[1, 0], [0, 0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="rank"):
        s2b([1, 1, 1], [[0, 0]] * 3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="batch"):
        b2s([4], [[0, 0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="exceed"):
        b2s([2], [[6, 5]])
    # Round trip.
    y = s2b([2], [[1, 0]])
    back = _on_pdk(lambda y: tf.raw_ops.BatchToSpaceND(input=y, block_shape=[2], crops=[[1, 0]]),
                   y.numpy())
    np.testing.assert_array_equal(back.numpy(), x)


@pytest.mark.parametrize("adjoint", [False, True])
def test_matrix_solve_against_numpy_and_its_gradient_against_cpu(adjoint, rng):
    """tf.linalg.solve on PDK (MatrixSolve) against NumPy's LAPACK solve in
    float64, and its gradient (MatrixSolve with the other adjoint, MatMul)
    against TensorFlow's CPU."""
    a = rng.standard_normal((2, 3, 6, 6)) + 4 * np.eye(6)
    b = rng.standard_normal((2, 3, 6, 5))
    with launches() as delta:
        x = _on_pdk(lambda m, r: tf.linalg.solve(m, r, adjoint=adjoint), a, b).numpy()
    assert delta.get("MatrixSolve", 0) == 1, delta
    want = np.linalg.solve(np.swapaxes(a, -1, -2) if adjoint else a, b)
    np.testing.assert_allclose(x, want, rtol=1e-12, atol=1e-12)

    def grads(m, r):
        with tf.GradientTape() as tape:
            tape.watch([m, r])
            loss = tf.reduce_sum(tf.sin(tf.linalg.solve(m, r, adjoint=adjoint)))
        return tape.gradient(loss, [m, r])

    with launches() as delta:
        got = _on_pdk(grads, a.astype(np.float32), b.astype(np.float32))
    assert delta.get("MatrixSolve", 0) == 2, delta
    with tf.device("/CPU:0"):
        want = grads(tf.constant(a.astype(np.float32)), tf.constant(b.astype(np.float32)))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("a_shape, b_shape, message", [
    ([4], [4, 1], "Input tensor 0 must have rank >= 2, got 1"),
    ([3, 3], [2, 3, 1], "All input tensors must have the same rank."),
    ([2, 3, 3], [3, 3, 1], "All input tensors must have the same outer dimensions."),
    ([3, 4], [3, 1], "First input (lhs) must be a square matrix."),
    ([3, 3], [4, 1], "Input matrix and rhs are incompatible."),
])
def test_matrix_solve_shape_errors_are_the_cpus(a_shape, b_shape, message):
    """Bad shapes: TensorFlow's wording on both devices (PDK adds the shapes).
    raw_ops skip the Python shape checks, so the kernels decide."""
    a, b = np.ones(a_shape, np.float32), np.ones(b_shape, np.float32)
    for device in ("/CPU:0", "/PDK:0"):
        with tf.device(device), pytest.raises(tf.errors.InvalidArgumentError) as e:
            tf.raw_ops.MatrixSolve(matrix=tf.constant(a), rhs=tf.constant(b))
        assert message in str(e.value), (device, str(e.value))
    assert "matrix shape" in str(e.value), str(e.value)


def test_matrix_solve_singular_is_an_error_like_cpu():
    a = np.array([[1.0, 2.0], [2.0, 4.0]], np.float32)  # rank 1: an exact zero pivot
    for device in ("/CPU:0", "/PDK:0"):
        with tf.device(device), pytest.raises(tf.errors.InvalidArgumentError,
                                              match="Input matrix is not invertible."):
            tf.linalg.solve(tf.constant(a), tf.constant([[1.0], [1.0]]))
