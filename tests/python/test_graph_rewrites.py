"""PDK's graph optimizer (src/graph/) inside the real TensorFlow.

TensorFlow's Grappler calls PDK's optimize_func (registered by TF_InitGraph)
for every tf.function graph with nodes on PDK. The MatMul + BiasAdd
[+ activation] pattern on PDK becomes one _PdkFusedMatMul node; the results
must equal the unfused function on the CPU, gradients included.
"""
import ctypes
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
import keras

import tensorflow_pdk as tp
from tensorflow_pdk import placement

FUSED = "_PdkFusedMatMul"
REPLACED = {"MatMul", "BiasAdd", "Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid"}


def _mlp(device, seed=0, activations=("relu", "relu", None)):
    with tf.device(device):
        keras.utils.set_random_seed(seed)
        model = keras.Sequential([keras.Input((12,))] + [
            keras.layers.Dense(n, activation=a) for n, a in zip((32, 16, 5), activations)])
    return model


def _on_each_device(pdk_model, cpu_model):
    """tf.functions calling each model under its device: (on PDK, on /CPU:0)."""
    def on(device, model):
        @tf.function
        def run(x):
            with tf.device(device):
                return model(x)
        return run
    return on("/PDK:0", pdk_model), on("/CPU:0", cpu_model)


def _pdk_ops(fn, *args):
    with placement.record() as p:
        out = fn(*args)
    return out, p.ops_on("PDK")


def test_dense_relu_layers_fuse_and_match_cpu(rng):
    x = rng.standard_normal((64, 12)).astype(np.float32)
    pdk_model, cpu_model = _mlp("/PDK:0"), _mlp("/CPU:0")
    on_pdk, on_cpu = _on_each_device(pdk_model, cpu_model)

    tp.reset_graph_rewrite_counts()
    y, ops = _pdk_ops(on_pdk, x)
    assert ops[FUSED] == 3, ops
    assert not (REPLACED & set(ops)), ops
    counts = tp.graph_rewrite_counts()
    assert counts.get("MatMul+BiasAdd+Relu", 0) >= 2 and counts.get("MatMul+BiasAdd", 0) >= 1, counts
    np.testing.assert_allclose(y.numpy(), on_cpu(x).numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("act", ["relu6", "elu", "leaky_relu", "tanh", "sigmoid"])
def test_other_activations_fuse_and_match_cpu(rng, act):
    x = rng.standard_normal((16, 12)).astype(np.float32) * 3
    acts = (act, act, None)
    pdk_model, cpu_model = _mlp("/PDK:0", 1, acts), _mlp("/CPU:0", 1, acts)

    @tf.function
    def on_pdk(x):
        with tf.device("/PDK:0"):
            return pdk_model(x)

    y, ops = _pdk_ops(on_pdk, x)
    cpu = tf.function(lambda x: cpu_model(x))
    with tf.device("/CPU:0"):
        expected = cpu(x).numpy()
    # Tanh/Sigmoid have no standalone PDK kernel in every build: only assert
    # the fusion where the graph put the activation on PDK.
    if FUSED in ops:
        assert "MatMul" not in ops and "BiasAdd" not in ops, ops
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-5, atol=1e-5)


def test_training_graph_gradients_match_cpu(rng):
    """ReluGrad reads Relu's output: the fused node keeps Relu's name and output,
    so the gradient graph still finds it."""
    x = rng.standard_normal((32, 12)).astype(np.float32)
    t = rng.standard_normal((32, 5)).astype(np.float32)

    def step_fn(model, device):
        @tf.function
        def step(x, t):
            with tf.device(device):
                with tf.GradientTape() as tape:
                    d = model(x) - t
                    loss = tf.reduce_sum(d * d)
                return loss, tape.gradient(loss, model.trainable_variables)
        return step

    pdk_model, cpu_model = _mlp("/PDK:0", 3), _mlp("/CPU:0", 3)
    (loss, grads), ops = _pdk_ops(step_fn(pdk_model, "/PDK:0"), x, t)
    closs, cgrads = step_fn(cpu_model, "/CPU:0")(x, t)
    assert ops[FUSED] >= 3, ops
    assert "ReluGrad" in ops
    np.testing.assert_allclose(loss.numpy(), closs.numpy(), rtol=1e-4)
    for g, c in zip(grads, cgrads):
        np.testing.assert_allclose(g.numpy(), c.numpy(), rtol=1e-4, atol=1e-4)


GELU_PARTS = {"Mul", "Neg", "Erfc", "Erf", "Tanh", "AddV2", "Square", "Pow"}


def _gelu_mlp(device, approximate, seed=6):
    with tf.device(device):
        keras.utils.set_random_seed(seed)
        gelu = lambda h: keras.activations.gelu(h, approximate=approximate)  # noqa: E731
        return keras.Sequential([keras.Input((12,)), keras.layers.Dense(16, activation=gelu),
                                 keras.layers.Dense(5, activation=gelu)])


@pytest.mark.parametrize("approximate", [False, True])
def test_dense_gelu_fuses_and_matches_cpu(rng, approximate):
    """Keras Dense(activation=gelu) on the TF backend: the whole tf.nn.gelu
    subgraph (in the layout TensorFlow's arithmetic optimizer leaves) becomes
    the fused op's activation."""
    x = rng.standard_normal((32, 12)).astype(np.float32) * 2
    pdk_model, cpu_model = _gelu_mlp("/PDK:0", approximate), _gelu_mlp("/CPU:0", approximate)
    on_pdk, on_cpu = _on_each_device(pdk_model, cpu_model)

    tp.reset_graph_rewrite_counts()
    y, ops = _pdk_ops(on_pdk, x)
    kind = "GeluApproximate" if approximate else "GeluExact"
    assert tp.graph_rewrite_counts().get("MatMul+BiasAdd+" + kind, 0) == 2, \
        tp.graph_rewrite_counts()
    assert ops[FUSED] == 2, ops
    assert not ((REPLACED | GELU_PARTS) & set(ops)), ops
    assert not [op for op in ops if op.startswith("_Fused")], ops  # nothing of TensorFlow's
    np.testing.assert_allclose(y.numpy(), on_cpu(x).numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("approximate", [False, True])
def test_dense_gelu_training_graph_does_not_fuse_gelu(rng, approximate):
    """The gradient of gelu reads BiasAdd's output and the intermediates
    (Erfc, Tanh, ...): the Gelu subgraph must stay, MatMul + BiasAdd still
    fuse, and loss and gradients equal the CPU's."""
    x = rng.standard_normal((16, 12)).astype(np.float32)
    t = rng.standard_normal((16, 5)).astype(np.float32)

    def step_fn(model, device):
        @tf.function
        def step(x, t):
            with tf.device(device):
                with tf.GradientTape() as tape:
                    d = model(x) - t
                    loss = tf.reduce_sum(d * d)
                return loss, tape.gradient(loss, model.trainable_variables)
        return step

    pdk_model, cpu_model = _gelu_mlp("/PDK:0", approximate), _gelu_mlp("/CPU:0", approximate)
    tp.reset_graph_rewrite_counts()
    (loss, grads), ops = _pdk_ops(step_fn(pdk_model, "/PDK:0"), x, t)
    closs, cgrads = step_fn(cpu_model, "/CPU:0")(x, t)
    counts = tp.graph_rewrite_counts()
    assert not [k for k in counts if "Gelu" in k], counts
    assert counts.get("MatMul+BiasAdd", 0) >= 2, counts
    # The Gelu subgraph runs on its own: as its ops, or in the generic
    # elementwise fusion's kernel.
    assert ("Tanh" if approximate else "Erfc") in ops or "_PdkFusedElementwise" in ops, ops
    np.testing.assert_allclose(loss.numpy(), closs.numpy(), rtol=1e-4)
    for g, c in zip(grads, cgrads):
        np.testing.assert_allclose(g.numpy(), c.numpy(), rtol=1e-4, atol=1e-4)


def test_intermediate_with_second_consumer_is_not_fused(rng):
    x = rng.standard_normal((8, 4)).astype(np.float32)
    w = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal((3,)).astype(np.float32)

    @tf.function
    def f(x):
        with tf.device("/PDK:0"):
            mm = tf.matmul(x, w)
            return tf.nn.relu(tf.nn.bias_add(mm, b)), mm  # MatMul's output is fetched

    (y, mm), ops = _pdk_ops(f, x)
    assert "MatMul" in ops and FUSED not in ops, ops
    np.testing.assert_allclose(y.numpy(), np.maximum(x @ w + b, 0), rtol=1e-5, atol=1e-5)


def test_remapper_emits_no_tensorflow_fused_op_on_pdk(rng):
    """TensorFlow's remapper fuses only nodes on CPU or GPU (NodeIsOnCpu /
    NodeIsOnGpu): with remapping left on, no _FusedMatMul lands on PDK."""
    x = rng.standard_normal((8, 12)).astype(np.float32)
    model = _mlp("/PDK:0", 4)

    @tf.function
    def f(x):
        with tf.device("/PDK:0"):
            return model(x)

    _, ops = _pdk_ops(f, x)
    assert not [op for op in ops if op.startswith("_Fused")], ops


def test_report_logs_each_rewrite():
    code = (
        "import numpy as np, tensorflow as tf\n"
        "w = np.ones((3, 2), np.float32); b = np.ones((2,), np.float32)\n"
        "@tf.function\n"
        "def f(x):\n"
        "  with tf.device('/PDK:0'):\n"
        "    return tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w, name='mm'), b, name='ba'), name='act')\n"
        "print(f(np.ones((2, 3), np.float32)).numpy().sum())\n")
    env = dict(os.environ, PDK_GRAPH_REPORT="1", TF_CPP_MIN_LOG_LEVEL="3")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert "PDK graph: MatMul+BiasAdd+Relu -> _PdkFusedMatMul 'act' (replaces mm, ba, act)" \
        in r.stderr, r.stderr
    assert r.stdout.strip().endswith("16.0")


class _TFBuffer(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("length", ctypes.c_size_t),
                ("data_deallocator", ctypes.c_void_p)]


OPTIMIZE_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(_TFBuffer), ctypes.c_void_p,
                               ctypes.POINTER(_TFBuffer), ctypes.c_void_p)


class _TPOptimizer(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("ext", ctypes.c_void_p),
                ("create_func", ctypes.c_void_p), ("optimize_func", ctypes.c_void_p),
                ("destroy_func", ctypes.c_void_p)]


class _TPOptimizerConfigs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("ext", ctypes.c_void_p)] + [
        (f"c{i}", ctypes.c_int) for i in range(19)]


class _TPParams(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("ext", ctypes.c_void_p),
                ("major", ctypes.c_int32), ("minor", ctypes.c_int32), ("patch", ctypes.c_int32),
                ("device_type", ctypes.c_char_p),
                ("optimizer_configs", ctypes.POINTER(_TPOptimizerConfigs)),
                ("optimizer", ctypes.POINTER(_TPOptimizer))]


def init_graph_optimizer():
    """Calls the plugin's TF_InitGraph directly: (params, configs, call), where
    call(bytes) runs its optimize_func (null GrapplerItem) on a serialized
    GraphDef and returns (TF_Code, the optimized bytes or None)."""
    lib = ctypes.CDLL(tp.plugin_path())
    fw = ctypes.CDLL(os.path.join(os.path.dirname(tf.__file__), "libtensorflow_framework.so.2"))
    fw.TF_NewStatus.restype = ctypes.c_void_p
    fw.TF_GetCode.argtypes = [ctypes.c_void_p]
    fw.TF_DeleteStatus.argtypes = [ctypes.c_void_p]
    configs, opt = _TPOptimizerConfigs(), _TPOptimizer()
    params = _TPParams(optimizer_configs=ctypes.pointer(configs), optimizer=ctypes.pointer(opt))
    status = fw.TF_NewStatus()
    lib.TF_InitGraph(ctypes.byref(params), ctypes.c_void_p(status))
    assert fw.TF_GetCode(status) == 0
    optimize = OPTIMIZE_FN(opt.optimize_func)

    def call(data):
        src = ctypes.create_string_buffer(data, len(data))
        inp = _TFBuffer(ctypes.cast(src, ctypes.c_void_p), len(data), None)
        out = _TFBuffer()
        optimize(None, ctypes.byref(inp), None, ctypes.byref(out), ctypes.c_void_p(status))
        code = fw.TF_GetCode(status)
        result = ctypes.string_at(out.data, out.length) if out.data else None
        return code, result
    return params, configs, call


def test_optimize_func_rejects_garbage_from_python():
    """optimize_func called directly (null GrapplerItem) with garbage bytes:
    an error status, never a crash."""
    params, configs, call = init_graph_optimizer()
    assert params.device_type == b"PDK"
    assert configs.c13 == 0  # remapping: TensorFlow's default (see docs/architecture.md)
    rng = np.random.default_rng(5)
    for n in (1, 3, 17, 256):
        garbage = (b"\x0b" + rng.integers(0, 256, n, dtype=np.uint8).tobytes())
        code, out = call(garbage)
        assert code == 3  # INVALID_ARGUMENT
        assert out is None
