"""PDK's batch-norm, smooth-activation and error-function kernels against
TensorFlow's own CPU kernels.

Covers src/kernels/nn/fused_batch_norm.cc (FusedBatchNorm{,V2,V3} and
FusedBatchNormGrad{,V2,V3}), src/kernels/nn/activations.cc (Selu, Softplus,
Softsign and their gradients), src/kernels/math/erf.cc (Erf, Erfc) and
src/kernels/math/add_n.cc (AddN, which the gelu gradients emit). Every
comparison runs the same function on /CPU:0 and /PDK:0 and checks that the
named ops launched PDK kernels, so a silent CPU fallback fails.

Tolerances: activations use the float32/float64 defaults of
tensorflow_pdk.testing (rtol 1e-5 / 1e-12). Batch norm uses rtol 1e-4,
atol 1e-5 for float32: TF's CPU reference for float32 is its oneDNN kernel (Eigen's where oneDNN is off),
which sums in float in its own order while PDK sums in double, and the
normalised outputs divide by a standard deviation that carries that rounding.

Reference behaviour worth knowing (TF 2.21 wheel, oneDNN on): float32 batch norm
runs TF's oneDNN kernel, whose reserve_space_3 has shape [0] and whose gradient
outputs 3 and 4 are scalars; PDK follows TF's Eigen kernel (the one half uses):
reserve_space_3 is a scalar 0 and the gradient's outputs 3 and 4 have shape
[0]. Both are placeholders that no consumer reads, so those outputs are
checked for their PDK shape only.

Which forward outputs TensorFlow defines (fused_batch_norm_op.cc, CPU Eigen
kernel — the float32 kernel wherever TF's oneDNN is off, e.g. AVX2-only
machines): y, batch_mean and batch_variance always (NaN statistics for an
empty x). reserve_space_1/2 only when is_training and x is non-empty: the
inference functor never writes them and the empty-input path returns before
it does, so they hold whatever the allocator returned (the Python gradient
of an inference batch norm reads the op's inputs, not these outputs). The
CPU comparison covers only the defined outputs (_defined_outputs); PDK's own
values for the rest (population mean/variance in inference, zeros for an
empty x — src/kernels/nn/fused_batch_norm.cc) are checked directly.

Keras 3's BatchNormalization never emits FusedBatchNormV3 (it computes moments
with Mean/SquaredDifference/...), so the Keras training test adds a small
layer built on tf.compat.v1.nn.fused_batch_norm next to it.
"""
import numpy as np
import pytest
import tensorflow as tf

from tensorflow_pdk.testing import (assert_close, assert_matches_cpu, keras_compile_args, launches,
                                    random_array, run_on)

BN_RTOL, BN_ATOL = 1e-4, 1e-5

BN_SHAPES = [(2, 4, 4, 3), (8, 1, 1, 16), (1, 5, 7, 2), (0, 4, 4, 3),
             (8, 32, 32, 16)]      # enough rows to shard the sums over the pool


def ids(shape):
    return "x".join(map(str, shape))


def _channel_params(c, rng, dtype=np.float32):
    scale = rng.uniform(0.5, 2.0, c).astype(dtype)
    offset = rng.uniform(-1.0, 1.0, c).astype(dtype)
    mean = rng.uniform(-1.0, 1.0, c).astype(dtype)
    var = rng.uniform(0.5, 3.0, c).astype(dtype)
    return scale, offset, mean, var


def _bn_v3(is_training, epsilon=1e-3, factor=1.0, data_format="NHWC", op="FusedBatchNormV3"):
    fn = getattr(tf.raw_ops, op)
    def run(x, scale, offset, mean, var):
        kw = dict(x=x, scale=scale, offset=offset, mean=mean, variance=var,
                  epsilon=epsilon, exponential_avg_factor=factor,
                  data_format=data_format, is_training=is_training)
        return list(fn(**kw))
    return run


def _defined_outputs(is_training, x):
    """How many leading forward outputs TensorFlow's CPU kernel defines: all
    five when training on a non-empty x, else y, batch_mean, batch_variance
    (reserve_space_1/2 are left unwritten — see the module docstring)."""
    return 5 if is_training and np.asarray(x).size else 3


def _check_pdk_reserve_spaces(out, is_training, x, mean, var):
    """PDK's reserve_space_1/2 where TensorFlow leaves them undefined: the
    population statistics in inference, zeros for an empty x."""
    c = np.asarray(mean).shape[0] if not is_training else out[1].shape[0]
    assert out[3].shape == (c,) and out[4].shape == (c,)
    if not np.asarray(x).size:
        np.testing.assert_array_equal(out[3], 0)
        np.testing.assert_array_equal(out[4], 0)
    elif not is_training:
        np.testing.assert_array_equal(out[3], mean)
        np.testing.assert_array_equal(out[4], var)


def _check_bn(fn, args, op, n_compare=5, rtol=BN_RTOL, atol=BN_ATOL):
    """Compares the first n_compare outputs of fn on both devices, checks `op`
    ran on PDK; returns the PDK outputs."""
    def head(*t):
        return fn(*t)[:n_compare]
    assert_matches_cpu(head, *args, ops=[op], rtol=rtol, atol=atol)
    with tf.device("/PDK:0"):
        return [o.numpy() for o in fn(*[tf.constant(a) for a in args])]


# ------------------------------------------------------------- forward, float32

@pytest.mark.parametrize("shape", BN_SHAPES, ids=ids)
@pytest.mark.parametrize("factor", [1.0, 0.25])
def test_fused_batch_norm_v3_training(shape, factor, rng):
    x = random_array(shape, np.float32, rng, low=-3.0, high=5.0)
    scale, offset, mean, var = _channel_params(shape[-1], rng)
    out = _check_bn(_bn_v3(True, epsilon=1e-3, factor=factor), [x, scale, offset, mean, var],
                    "FusedBatchNormV3", n_compare=_defined_outputs(True, x))
    _check_pdk_reserve_spaces(out, True, x, mean, var)
    assert out[5].shape == () and out[5].dtype == np.float32
    if x.size:  # against numpy: biased batch variance saved, Bessel-corrected one returned
        flat = x.reshape(-1, shape[-1]).astype(np.float64)
        n = flat.shape[0]
        np.testing.assert_allclose(out[3], flat.mean(0), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(out[4], flat.var(0), rtol=1e-5)
        bessel = n / max(n - 1, 1)
        want_var = (1 - factor) * var + factor * bessel * flat.var(0)
        np.testing.assert_allclose(out[2], want_var, rtol=1e-5)
    else:
        assert np.isnan(out[1]).all() and np.isnan(out[2]).all()


@pytest.mark.parametrize("shape", [(2, 4, 4, 3), (1, 5, 7, 2), (0, 4, 4, 3)], ids=ids)
def test_fused_batch_norm_v3_training_empty_running_stats(shape, rng):
    """tf.compat.v1.nn.fused_batch_norm passes mean=variance=[] when training."""
    x = random_array(shape, np.float32, rng)
    scale, offset, _, _ = _channel_params(shape[-1], rng)
    empty = np.zeros([0], np.float32)
    out = _check_bn(_bn_v3(True), [x, scale, offset, empty, empty], "FusedBatchNormV3",
                    n_compare=_defined_outputs(True, x))
    _check_pdk_reserve_spaces(out, True, x, empty, empty)


@pytest.mark.parametrize("shape", BN_SHAPES, ids=ids)
@pytest.mark.parametrize("epsilon", [1e-3, 1e-5])
def test_fused_batch_norm_v3_inference(shape, epsilon, rng):
    x = random_array(shape, np.float32, rng, low=-3.0, high=5.0)
    scale, offset, mean, var = _channel_params(shape[-1], rng)
    out = _check_bn(_bn_v3(False, epsilon=epsilon), [x, scale, offset, mean, var],
                    "FusedBatchNormV3", n_compare=_defined_outputs(False, x))
    _check_pdk_reserve_spaces(out, False, x, mean, var)
    if x.size:
        want = (x - mean) / np.sqrt(var + np.float32(epsilon)) * scale + offset
        np.testing.assert_allclose(out[0], want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("is_training", [True, False])
@pytest.mark.parametrize("shape", [(2, 3, 4, 4), (4, 5, 1, 1), (2, 4, 2, 3, 3)], ids=ids)
def test_fused_batch_norm_v3_channels_first(shape, is_training, rng):
    x = random_array(shape, np.float32, rng, low=-3.0, high=5.0)
    scale, offset, mean, var = _channel_params(shape[1], rng)
    fmt = "NCHW" if len(shape) == 4 else "NCDHW"
    _check_bn(_bn_v3(is_training, data_format=fmt), [x, scale, offset, mean, var],
              "FusedBatchNormV3", n_compare=3)


@pytest.mark.parametrize("op", ["FusedBatchNorm", "FusedBatchNormV2"])
@pytest.mark.parametrize("is_training", [True, False])
def test_fused_batch_norm_v1_v2(op, is_training, rng):
    x = random_array((2, 4, 4, 3), np.float32, rng)
    args = [x, *_channel_params(3, rng)]
    out = _check_bn(_bn_v3(is_training, op=op), args, op,
                    n_compare=_defined_outputs(is_training, x))
    assert len(out) == 5
    _check_pdk_reserve_spaces(out, is_training, x, args[3], args[4])


@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("is_training", [True, False])
def test_fused_batch_norm_v3_rank5(is_training, grad, rng):
    """NDHWC: TF's float32 CPU (oneDNN) kernel takes rank 4 only, so the CPU
    reference runs on x reshaped to [N, D, H*W, C] — the same statistics."""
    shape = (2, 2, 3, 3, 4)
    a = random_array(shape, np.float32, rng, low=-3.0, high=5.0)
    x = random_array(shape, np.float32, rng, low=-3.0, high=5.0)
    params = _channel_params(shape[-1], rng)
    if grad:
        fn, args, op = _bn_grad_v3(is_training), [a, x, params[0], params[2], params[3]], \
            "FusedBatchNormGradV3"
    else:
        fn, args, op = _bn_v3(is_training), [x, *params], "FusedBatchNormV3"
    n_big = 2 if grad else 1
    flat = [v.reshape(2, 2, 9, 4) if i < n_big else v for i, v in enumerate(args)]
    expected = run_on("/CPU:0", lambda *t: fn(*t)[:3], *flat)
    with launches() as delta:
        actual = run_on("/PDK:0", lambda *t: fn(*t)[:3], *args)
    assert delta.get(op, 0) == 1, delta
    assert actual[0].shape == shape
    for i, (got, want) in enumerate(zip(actual, expected)):
        assert_close(got.reshape(want.shape), want, BN_RTOL, BN_ATOL, what=f"output {i}")


# ------------------------------------------------------- forward, 16-bit floats

@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"])
@pytest.mark.parametrize("is_training", [True, False])
@pytest.mark.parametrize("shape", [(2, 4, 4, 3), (8, 1, 1, 16), (0, 4, 4, 3)], ids=ids)
def test_fused_batch_norm_v3_16bit(shape, is_training, dtype, rng):
    """T = half / bfloat16 with U = float (Keras mixed precision)."""
    if dtype == "bfloat16":
        import ml_dtypes
        dtype = ml_dtypes.bfloat16
    x = random_array(shape, np.float32, rng).astype(dtype)
    args = [x, *_channel_params(shape[-1], rng)]
    # y in T: 16-bit tolerances; statistics in float. Only y, batch_mean and
    # batch_variance: TF's half (Eigen) kernel leaves the reserve spaces
    # unwritten in inference.
    tol = (1e-2, 1e-2) if np.dtype(dtype) == np.float16 else (2e-2, 5e-2)
    def y_only(*t):
        return _bn_v3(is_training)(*t)[:1]
    def stats(*t):
        return _bn_v3(is_training)(*t)[1:3]
    assert_matches_cpu(y_only, *args, ops=["FusedBatchNormV3"], rtol=tol[0], atol=tol[1])
    assert_matches_cpu(stats, *args, ops=["FusedBatchNormV3"], rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------- gradient ops

def _bn_grad_v3(is_training, epsilon=1e-3, data_format="NHWC", op="FusedBatchNormGradV3"):
    fn = getattr(tf.raw_ops, op)
    def run(dy, x, scale, rs1, rs2):
        kw = dict(y_backprop=dy, x=x, scale=scale, reserve_space_1=rs1, reserve_space_2=rs2,
                  epsilon=epsilon, data_format=data_format, is_training=is_training)
        if op == "FusedBatchNormGradV3":
            kw["reserve_space_3"] = tf.zeros([], tf.float32)
        return list(fn(**kw))
    return run


@pytest.mark.parametrize("is_training", [True, False])
@pytest.mark.parametrize("shape", BN_SHAPES, ids=ids)
def test_fused_batch_norm_grad_v3(shape, is_training, rng):
    dy = random_array(shape, np.float32, rng)
    x = random_array(shape, np.float32, rng, low=-3.0, high=5.0)
    scale, _, mean, var = _channel_params(shape[-1], rng)
    args = [dy, x, scale, mean, var]
    out = _check_bn(_bn_grad_v3(is_training), args, "FusedBatchNormGradV3", n_compare=3)
    assert out[3].shape == (0,) and out[4].shape == (0,)
    if x.size == 0:
        assert not out[1].any() and not out[2].any()
    else:  # against numpy, float64
        c = shape[-1]
        g = dy.reshape(-1, c).astype(np.float64)
        xc = x.reshape(-1, c).astype(np.float64) - mean
        k = 1.0 / np.sqrt(var.astype(np.float64) + 1e-3)
        np.testing.assert_allclose(out[2], g.sum(0), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(out[1], (g * xc).sum(0) * k, rtol=1e-4, atol=1e-4)
        if is_training:
            dx = scale * k * (g - g.mean(0) - xc * k * k * (g * xc).mean(0))
        else:
            dx = g * scale * k
        np.testing.assert_allclose(out[0].reshape(-1, c), dx, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape", [(2, 3, 4, 4), (2, 4, 2, 3, 3)], ids=ids)
def test_fused_batch_norm_grad_v3_channels_first(shape, rng):
    dy = random_array(shape, np.float32, rng)
    x = random_array(shape, np.float32, rng)
    scale, _, mean, var = _channel_params(shape[1], rng)
    fmt = "NCHW" if len(shape) == 4 else "NCDHW"
    _check_bn(_bn_grad_v3(True, data_format=fmt), [dy, x, scale, mean, var],
              "FusedBatchNormGradV3", n_compare=3)


@pytest.mark.parametrize("op", ["FusedBatchNormGrad", "FusedBatchNormGradV2"])
def test_fused_batch_norm_grad_v1_v2(op, rng):
    dy = random_array((2, 4, 4, 3), np.float32, rng)
    x = random_array((2, 4, 4, 3), np.float32, rng)
    scale, _, mean, var = _channel_params(3, rng)
    _check_bn(_bn_grad_v3(True, op=op), [dy, x, scale, mean, var], op, n_compare=3)


@pytest.mark.parametrize("is_training", [True, False])
def test_fused_batch_norm_grad_v3_half(is_training, rng):
    dy = random_array((2, 4, 4, 3), np.float32, rng).astype(np.float16)
    x = random_array((2, 4, 4, 3), np.float32, rng).astype(np.float16)
    scale, _, mean, var = _channel_params(3, rng)
    _check_bn(_bn_grad_v3(is_training), [dy, x, scale, mean, var], "FusedBatchNormGradV3",
              n_compare=3, rtol=1e-2, atol=1e-2)


# ----------------------------------------------------- gradients via autodiff

@pytest.mark.parametrize("is_training", [True, False])
@pytest.mark.parametrize("shape", [(2, 4, 4, 3), (8, 1, 1, 16), (1, 5, 7, 2)], ids=ids)
def test_fused_batch_norm_gradient_tape(shape, is_training, rng):
    x = random_array(shape, np.float32, rng, low=-2.0, high=3.0)
    w = random_array(shape, np.float32, rng)  # makes the upstream gradient non-uniform
    scale, offset, mean, var = _channel_params(shape[-1], rng)

    def fn(x, w, scale, offset, mean, var):
        with tf.GradientTape() as tape:
            tape.watch([x, scale, offset])
            if is_training:
                y, _, _ = tf.compat.v1.nn.fused_batch_norm(x, scale, offset, epsilon=1e-3,
                                                           is_training=True)
            else:
                y, _, _ = tf.compat.v1.nn.fused_batch_norm(x, scale, offset, mean, var,
                                                           epsilon=1e-3, is_training=False)
            loss = tf.reduce_sum(y * w)
        return [y, *tape.gradient(loss, [x, scale, offset])]

    assert_matches_cpu(fn, x, w, scale, offset, mean, var,
                       ops=["FusedBatchNormV3", "FusedBatchNormGradV3"],
                       rtol=BN_RTOL, atol=BN_ATOL)


def _fused_bn_layer_cls():
    import keras

    class FusedBatchNorm(keras.layers.Layer):
        """Channels-last batch norm through tf.compat.v1.nn.fused_batch_norm
        (Keras 3's BatchNormalization computes moments with Mean/Sub/... and
        never emits FusedBatchNormV3)."""

        def build(self, input_shape):
            c = input_shape[-1]
            self.gamma = self.add_weight(shape=(c,), initializer="ones", name="gamma")
            self.beta = self.add_weight(shape=(c,), initializer="zeros", name="beta")
            self.moving_mean = self.add_weight(shape=(c,), initializer="zeros",
                                               trainable=False, name="moving_mean")
            self.moving_var = self.add_weight(shape=(c,), initializer="ones",
                                              trainable=False, name="moving_var")

        def call(self, x, training=False):
            if training:
                y, m, v = tf.compat.v1.nn.fused_batch_norm(
                    x, self.gamma, self.beta, self.moving_mean, self.moving_var,
                    epsilon=1e-3, is_training=True, exponential_avg_factor=0.1)
                self.moving_mean.assign(m)
                self.moving_var.assign(v)
                return y
            y, _, _ = tf.compat.v1.nn.fused_batch_norm(
                x, self.gamma, self.beta, self.moving_mean, self.moving_var,
                epsilon=1e-3, is_training=False)
            return y

    return FusedBatchNorm


def _train_bn_model(device, x, y, init):
    import keras
    with tf.device(device):
        model = keras.Sequential([
            keras.Input(x.shape[1:]),
            _fused_bn_layer_cls()(),
            keras.layers.BatchNormalization(momentum=0.9),
            keras.layers.Flatten(),
            keras.layers.Dense(2),
        ])
        if init is not None:
            model.set_weights(init)
        model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse",
                      **keras_compile_args(device))
        losses = [float(model.train_on_batch(x, y)) for _ in range(3)]
        pred = model.predict_on_batch(x)
        return model.get_weights(), losses, np.asarray(pred)


def test_keras_model_with_batch_norm_trains_like_cpu(rng):
    import keras
    x = random_array((8, 4, 4, 3), np.float32, rng, low=-1.0, high=3.0)
    y = random_array((8, 2), np.float32, rng)
    keras.utils.set_random_seed(7)
    with tf.device("/CPU:0"):  # the same initial weights on both devices
        init_model = keras.Sequential([keras.Input(x.shape[1:]), _fused_bn_layer_cls()(),
                                       keras.layers.BatchNormalization(momentum=0.9),
                                       keras.layers.Flatten(), keras.layers.Dense(2)])
        init = init_model.get_weights()
    cpu_w, cpu_losses, cpu_pred = _train_bn_model("/CPU:0", x, y, init)
    with launches() as delta:
        pdk_w, pdk_losses, pdk_pred = _train_bn_model("/PDK:0", x, y, init)
    for op in ["FusedBatchNormV3", "FusedBatchNormGradV3"]:
        assert delta.get(op, 0) >= 3, f"{op} did not run on PDK every step: {delta}"
    np.testing.assert_allclose(pdk_losses, cpu_losses, rtol=1e-4)
    assert cpu_losses[-1] < cpu_losses[0]  # it did train
    for i, (a, e) in enumerate(zip(pdk_w, cpu_w)):
        assert_close(a, e, 1e-4, 1e-5, what=f"weight {i}")
    assert_close(pdk_pred, cpu_pred, 1e-4, 1e-5, what="predictions")


# ------------------------------------------------------------------ bad input

def test_fused_batch_norm_scale_wrong_length():
    with tf.device("/PDK:0"):
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"FusedBatchNormV3: scale .*\[4\].*x\.shape \[2,4,4,3\]"):
            tf.raw_ops.FusedBatchNormV3(x=tf.ones([2, 4, 4, 3]), scale=tf.ones([4]),
                                        offset=tf.zeros([3]), mean=tf.zeros([0]),
                                        variance=tf.zeros([0]), is_training=True)


def test_fused_batch_norm_bad_inputs():
    with tf.device("/PDK:0"):
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"x must be rank 4 or 5.*\[2,3\]"):
            tf.raw_ops.FusedBatchNormV3(x=tf.ones([2, 3]), scale=tf.ones([3]),
                                        offset=tf.zeros([3]), mean=tf.zeros([3]),
                                        variance=tf.ones([3]), is_training=False)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"mean .*\[2\]"):
            tf.raw_ops.FusedBatchNormV3(x=tf.ones([2, 4, 4, 3]), scale=tf.ones([3]),
                                        offset=tf.zeros([3]), mean=tf.zeros([2]),
                                        variance=tf.ones([3]), is_training=False)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[2,4,4,3\].*\[2,4,4,2\]"):
            tf.raw_ops.FusedBatchNormGradV3(
                y_backprop=tf.ones([2, 4, 4, 2]), x=tf.ones([2, 4, 4, 3]), scale=tf.ones([3]),
                reserve_space_1=tf.zeros([3]), reserve_space_2=tf.ones([3]),
                reserve_space_3=tf.zeros([]), is_training=True)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"is_training=false.*NCHW"):
            tf.raw_ops.FusedBatchNormGradV3(
                y_backprop=tf.ones([2, 3, 4, 4]), x=tf.ones([2, 3, 4, 4]), scale=tf.ones([3]),
                reserve_space_1=tf.zeros([3]), reserve_space_2=tf.ones([3]),
                reserve_space_3=tf.zeros([]), is_training=False, data_format="NCHW")


# ---------------------------------------------------------------- activations

DTYPES = [np.float32, np.float64]
ACT_SHAPES = [(7,), (4, 10), (0, 3), (64, 257)]


def _activation_input(shape, dtype, rng):
    """Random values over [-6, 6] with zero, tiny, large and infinite entries."""
    x = random_array(shape, dtype, rng, low=-6.0, high=6.0)
    special = [0.0, -0.0, 1e-7, -1e-7, 30.0, -30.0, 90.0, -90.0, 1e4, -1e4,
               np.inf, -np.inf, np.nan]
    flat = x.reshape(-1)
    k = min(flat.size, len(special))
    flat[:k] = special[:k]
    return x


UNARY = {
    "Selu": lambda x: tf.raw_ops.Selu(features=x),
    "Softplus": lambda x: tf.raw_ops.Softplus(features=x),
    "Softsign": lambda x: tf.raw_ops.Softsign(features=x),
    "Erf": lambda x: tf.raw_ops.Erf(x=x),
    "Erfc": lambda x: tf.raw_ops.Erfc(x=x),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", ACT_SHAPES, ids=ids)
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_activation(op, shape, dtype, rng):
    x = _activation_input(shape, dtype, rng)
    out = assert_matches_cpu(UNARY[op], x, ops=[op])[0]
    assert out.shape == shape and out.dtype == dtype


def test_activation_values():
    """Spot values that do not depend on TF's CPU kernels."""
    x = np.array([-np.inf, -100.0, -1.0, 0.0, 1.0, 100.0, np.inf], np.float64)
    with tf.device("/PDK:0"):
        selu = tf.raw_ops.Selu(features=x).numpy()
        softplus = tf.raw_ops.Softplus(features=x).numpy()
        softsign = tf.raw_ops.Softsign(features=x).numpy()
        erf = tf.raw_ops.Erf(x=x).numpy()
        erfc = tf.raw_ops.Erfc(x=x).numpy()
    scale, alpha = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717
    np.testing.assert_allclose(selu[1:-1], np.where(x[1:-1] < 0, scale * alpha * np.expm1(x[1:-1]),
                                                    scale * x[1:-1]), rtol=1e-12)
    np.testing.assert_allclose(softplus[:-1], np.logaddexp(0.0, x[:-1]), rtol=1e-12)
    assert softplus[-1] == np.inf
    np.testing.assert_allclose(softsign[1:-1], x[1:-1] / (1 + np.abs(x[1:-1])), rtol=1e-12)
    np.testing.assert_array_equal(erf[[1, 3, 5]], [-1.0, 0.0, 1.0])
    np.testing.assert_array_equal(erfc[[0, 1, 3, 5, 6]], [2.0, 2.0, 1.0, 0.0, 0.0])
    np.testing.assert_allclose(erf[2], -0.8427007929497149, rtol=1e-14)
    # Eigen's float64 erf, hence TF's CPU kernel, gives NaN at +-inf; float32 gives +-1.
    assert np.isnan(erf[[0, 6]]).all()
    with tf.device("/PDK:0"):
        erf32 = tf.raw_ops.Erf(x=x.astype(np.float32)).numpy()
    np.testing.assert_array_equal(erf32[[0, 6]], [-1.0, 1.0])


GRADS = {
    "SeluGrad": lambda g, y: tf.raw_ops.SeluGrad(gradients=g, outputs=y),
    "SoftplusGrad": lambda g, x: tf.raw_ops.SoftplusGrad(gradients=g, features=x),
    "SoftsignGrad": lambda g, x: tf.raw_ops.SoftsignGrad(gradients=g, features=x),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", ACT_SHAPES, ids=ids)
@pytest.mark.parametrize("op", sorted(GRADS))
def test_activation_grad_op(op, shape, dtype, rng):
    g = random_array(shape, dtype, rng)
    x = _activation_input(shape, dtype, rng)
    if op == "SeluGrad":  # its second input is Selu's output, > -scale * alpha
        with tf.device("/CPU:0"):
            x = tf.raw_ops.Selu(features=x).numpy()
    assert_matches_cpu(GRADS[op], g, x, ops=[op])


def test_activation_grad_shape_mismatch():
    with tf.device("/PDK:0"):
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"SoftsignGrad: gradients.shape \[2,3\] != features.shape \[3,2\]"):
            tf.raw_ops.SoftsignGrad(gradients=tf.ones([2, 3]), features=tf.ones([3, 2]))


def _keras_activations():
    import keras
    return {
        "selu": (keras.activations.selu, ["Selu", "SeluGrad"]),
        "softplus": (keras.activations.softplus, ["Softplus"]),
        "softsign": (keras.activations.softsign, ["Softsign", "SoftsignGrad"]),
        "gelu": (lambda x: keras.activations.gelu(x, approximate=False), ["Erfc", "AddN"]),
        "gelu_tanh": (lambda x: keras.activations.gelu(x, approximate=True), ["AddN"]),
        "silu": (keras.activations.silu, []),
    }


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["selu", "softplus", "softsign", "gelu", "gelu_tanh", "silu"])
def test_keras_activation_and_gradient(name, dtype, rng):
    fn, ops = _keras_activations()[name]
    x = random_array((16, 33), dtype, rng, low=-8.0, high=8.0)
    x.reshape(-1)[:6] = [0.0, -0.0, 40.0, -40.0, 1e-6, -1e-6]

    def value_and_grad(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = fn(x)
            loss = tf.reduce_sum(y * y)
        return [y, tape.gradient(loss, x)]

    assert_matches_cpu(value_and_grad, x, ops=ops)


# ----------------------------------------------------------------------- AddN

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("n", [1, 2, 3, 9])
@pytest.mark.parametrize("shape", [(5,), (4, 10), (0, 3), (64, 257)], ids=ids)
def test_add_n(shape, n, dtype, rng):
    arrays = [random_array(shape, dtype, rng) for _ in range(n)]
    assert_matches_cpu(lambda *t: tf.raw_ops.AddN(inputs=list(t)), *arrays,
                       ops=["AddN"] if n > 1 else [])


def test_add_n_shape_mismatch():
    with tf.device("/PDK:0"):
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"inputs\[0\]\.shape \[2,3\] != inputs\[1\]\.shape \[3,2\]"):
            tf.raw_ops.AddN(inputs=[tf.ones([2, 3]), tf.ones([3, 2])])
