"""The Keras Adam rewrite (src/graph/rewrites/keras_adam.cc) and its kernel
_PdkKerasAdamUpdate (src/kernels/training/keras_adam_update.cc), inside the real
TensorFlow with Keras 3's own optimizers.

Reference: the same optimizer on /CPU:0 (TensorFlow's unfused elementwise
kernels), from the same variables and the same gradients. The kernel promises
the IEEE operations of the unfused graph in the same order, so variables and
both moments must be bit-identical after several steps, not merely close.
Each test also proves the fused kernel ran on PDK (launch counts) and that the
rewrite fired (graph_rewrite_counts), or, where it must not fire, that it did
not and the result is still the CPU's.
"""
import contextlib
import os

import keras
import numpy as np
import pytest
import tensorflow as tf

import tensorflow_pdk as tp
from tensorflow_pdk import testing as tpt

SHAPES = [(37, 19), (19,), (5, 3, 7), ()]


@contextlib.contextmanager
def _env(name, value):
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            del os.environ[name]
        else:
            os.environ[name] = old


def _run_optimizer(device, make_opt, dtype="float32", steps=4, seed=0):
    """`steps` apply_gradients calls of a fresh optimizer on `device` (one
    tf.function); returns every variable, then every optimizer variable."""
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    grads = [[rng.standard_normal(s).astype(dtype) for s in SHAPES] for _ in range(steps)]
    with tf.device(device):
        vs = [tf.Variable(x) for x in init]
        opt = make_opt()
        opt.build(vs)
        gs = [[tf.identity(tf.constant(g)) for g in step] for step in grads]

        @tf.function
        def apply(g):
            opt.apply_gradients(zip(g, vs))

        for g in gs:
            apply(g)
    return [v.numpy() for v in vs], [v.numpy() for v in opt.variables]


def _compare(make_opt, dtype="float32", expect_fused=True):
    tp.reset_graph_rewrite_counts()
    with tpt.launches() as counts:
        pdk_vars, pdk_slots = _run_optimizer("/PDK:0", make_opt, dtype)
    fired = tp.graph_rewrite_counts().get("KerasAdam", 0)
    launched = counts.get("_PdkKerasAdamUpdate", 0)
    if expect_fused:
        assert fired == len(SHAPES), tp.graph_rewrite_counts()
        assert launched == 4 * len(SHAPES), counts
    else:
        assert fired == 0 and launched == 0, (tp.graph_rewrite_counts(), counts)
    cpu_vars, cpu_slots = _run_optimizer("/CPU:0", make_opt, dtype)
    for i, (p, c) in enumerate(zip(pdk_vars, cpu_vars)):
        np.testing.assert_array_equal(p, c, err_msg=f"variable {i} {SHAPES[i]}")
    for i, (p, c) in enumerate(zip(pdk_slots, cpu_slots)):
        np.testing.assert_array_equal(p, c, err_msg=f"optimizer variable {i}")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_adam_fuses_and_is_bit_identical_to_cpu(dtype):
    _compare(lambda: keras.optimizers.Adam(learning_rate=0.01), dtype)


def test_adamw_with_weight_decay_fuses():
    # AdamW decays the variable first (var.assign(var - var * wd * lr)); the
    # fused update must read the decayed value.
    _compare(lambda: keras.optimizers.AdamW(learning_rate=0.01, weight_decay=0.1))


def test_adam_with_schedule_and_custom_betas():
    sched = keras.optimizers.schedules.ExponentialDecay(0.05, decay_steps=2, decay_rate=0.5)
    _compare(lambda: keras.optimizers.Adam(learning_rate=sched, beta_1=0.5, beta_2=0.75,
                                           epsilon=1e-3))


def test_amsgrad_is_not_fused_and_still_matches():
    # amsgrad divides by sqrt(v_hat), not sqrt(v): not the pattern.
    _compare(lambda: keras.optimizers.Adam(learning_rate=0.01, amsgrad=True),
             expect_fused=False)


def test_switch_turns_it_off():
    with _env("PDK_GRAPH_DISABLE", "adam_fusion"):
        _compare(lambda: keras.optimizers.Adam(learning_rate=0.01), expect_fused=False)


def test_moment_read_elsewhere_is_kept_and_sees_the_update():
    """A value the pattern would remove (m after its update) is also returned:
    the read stays, ordered after the fused update's assign."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 4)).astype("float32")
    g = rng.standard_normal((8, 4)).astype("float32")
    out = {}
    for d in ("/PDK:0", "/CPU:0"):
        with tf.device(d):
            v = tf.Variable(x)
            opt = keras.optimizers.Adam(learning_rate=0.1)
            opt.build([v])
            gt = tf.identity(tf.constant(g))
            m = next(w for w in opt.variables if "momentum" in w.name)

            @tf.function
            def step():
                opt.apply_gradients([(gt, v)])
                return m.value * 2.0  # m after the update

            tp.reset_graph_rewrite_counts()
            out[d] = (step().numpy(), v.numpy())
            if d == "/PDK:0":
                assert tp.graph_rewrite_counts().get("KerasAdam", 0) == 1
    np.testing.assert_array_equal(out["/PDK:0"][0], out["/CPU:0"][0])
    np.testing.assert_array_equal(out["/PDK:0"][1], out["/CPU:0"][1])


def test_model_fit_fuses_and_trains_like_cpu():
    """model.fit with Adam: every Dense kernel/bias update is fused on PDK, and
    the weights after two epochs match the CPU's within the float32 round-off
    of the forward/backward kernels (which differ between the devices; the
    update itself is exact)."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 10)).astype("float32")
    y = rng.integers(0, 3, 64)
    weights, init = {}, None
    for d in ("/CPU:0", "/PDK:0"):
        keras.utils.set_random_seed(0)
        with tf.device(d):
            model = keras.Sequential([keras.Input((10,)), keras.layers.Dense(16, activation="relu"),
                                      keras.layers.Dense(3)])
            if init is None:
                init = model.get_weights()
            model.set_weights(init)  # the same start on both devices
            model.compile(optimizer=keras.optimizers.Adam(1e-2),
                          loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                          **tpt.keras_compile_args(d))
            tp.reset_graph_rewrite_counts()
            with tpt.launches() as counts:
                model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
            if d == "/PDK:0" and "adam_fusion" not in os.environ.get("PDK_GRAPH_DISABLE", ""):
                assert tp.graph_rewrite_counts().get("KerasAdam", 0) >= 4
                assert counts.get("_PdkKerasAdamUpdate", 0) == 4 * 8, counts
            weights[d] = [w.numpy() for w in model.weights]
    for p, c in zip(weights["/PDK:0"], weights["/CPU:0"]):
        tpt.assert_close(p, c, rtol=1e-4, atol=1e-5, what="weights after fit")


def _call_kernel(var, m, v, grad, coeffs):
    from tensorflow.python.eager import context, execute
    with tf.device("/PDK:0"):
        args = [tf.constant(np.asarray(a, np.float32)) for a in (var, m, v, grad, *coeffs)]
        return execute.execute(b"_PdkKerasAdamUpdate", 3, inputs=args,
                               attrs=("T", tf.float32.as_datatype_enum), ctx=context.context())


def test_kernel_rejects_mismatched_shapes_and_vector_coefficients():
    z = np.zeros((3, 4))
    scalars = [0.1, 0.001, 0.01, 1e-7]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"var\.shape \[3,4\] != grad\.shape \[4,3\]"):
        _call_kernel(z, z, z, np.zeros((4, 3)), scalars)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"alpha must hold one element.*got shape \[4\]"):
        _call_kernel(z, z, z, z, [0.1, 0.001, np.full(4, 0.01), 1e-7])
    out = _call_kernel(z, z, z, z, scalars)  # the valid call still works
    assert [o.shape for o in out] == [(3, 4)] * 3
