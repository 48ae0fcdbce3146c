"""PDK_STRICT=1 and TensorFlow's own errors for ops or dtypes PDK lacks.

- Explicit device, soft placement off (TensorFlow's behaviour, no PDK code):
  an op or a dtype without a PDK kernel fails with TensorFlow's message, which
  names the op, the dtype and the kernels registered for device 'PDK'.
- PDK_STRICT=1, tf.function (src/graph/strict_placement.cc): a compute op
  placed on the CPU in a graph that runs on PDK fails the call with
  InvalidArgumentError naming the node, the op, its dtype and PDK's dtypes.
- PDK_STRICT=1, any mode: a dtype PDK lacks for an op it implements runs a
  failing PDK kernel (src/graph/strict_placement.cc, RegisterStrictTypeGuards)
  whose message names the op, the dtype and PDK's dtypes.

Each PDK_STRICT case runs in a subprocess (the variable is read when the
plugin registers its kernels and when a graph is optimized); each also runs
without it, to show the same code then falls back silently (so the test can fail).
"""

import pytest
import tensorflow as tf

import tensorflow_pdk
from child_process import run_python
from tensorflow_pdk import placement

# Ops with no PDK kernel at all, and one PDK registers for float types only.
MISSING_OP = "Betainc"
FLOAT_ONLY_OP = "MatMul"


def _pdk_types(op, attr="T"):
    return sorted({dict(k.type_constraints).get(attr) for k in tensorflow_pdk.registered_kernels()
                   if k.op == op} - {None})


def test_premises():
    assert not _pdk_types(MISSING_OP), f"PDK now registers {MISSING_OP}: pick another op"
    assert "complex64" not in _pdk_types(FLOAT_ONLY_OP)
    assert "float32" in _pdk_types(FLOAT_ONLY_OP)


def _run(code, strict):
    return run_python(code, strict=strict)


def _ok(p):
    assert p.returncode == 0, p.stderr[-3000:]
    return p.stdout


# --------------------------------------------- soft placement off (TensorFlow)

@pytest.fixture
def hard_placement():
    old = tf.config.get_soft_device_placement()
    tf.config.set_soft_device_placement(False)
    yield
    tf.config.set_soft_device_placement(old)


def test_eager_soft_placement_off_names_op_not_dtype(hard_placement):
    """Eager, explicit /PDK scope, soft placement off: TensorFlow's message names
    the op and the device types that have a kernel for it, not the dtype nor
    PDK's dtypes. (PDK_STRICT=1 adds those: test_strict_eager_dtype_without_kernel.)"""
    c = tf.constant([[1 + 2j]], tf.complex64)
    x = tf.constant([0.5])
    for fn, op in ((lambda: tf.linalg.matmul(c, c), FLOAT_ONLY_OP),
                   (lambda: tf.math.betainc(x, x, x), MISSING_OP)):
        with pytest.raises(tf.errors.InvalidArgumentError) as e:
            with tf.device("/PDK:0"):
                fn()
        msg = str(e.value)
        assert f"[Op:{op}]" in msg and "Supported device types [CPU]" in msg, msg
        assert "complex64" not in msg.lower(), msg


def test_function_soft_placement_off_names_op_dtype_and_pdk_types(hard_placement):
    """In a tf.function, TensorFlow's placer error lists every kernel of the op."""
    @tf.function
    def f(a):
        with tf.device("/PDK:0"):
            return tf.linalg.matmul(a, a)

    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        f(tf.constant([[1 + 2j]], tf.complex64))
    msg = str(e.value)
    assert "Cannot assign a device for operation MatMul" in msg, msg
    assert "T=DT_COMPLEX64" in msg, msg
    for t in ("DT_FLOAT", "DT_DOUBLE", "DT_HALF", "DT_BFLOAT16"):
        assert f"device='PDK'; T in [{t}]" in msg, (t, msg)


# --------------------------------------------------------------- PDK_STRICT

MIXED_FUNCTION = """
@tf.function
def f(x):
    y = tf.math.square(x)                   # PDK
    z = tf.math.betainc(y, y, tf.ones_like(y) * 0.5)  # no PDK kernel: CPU
    return tf.math.sqrt(z)                  # PDK
try:
    print("RESULT", f(tf.constant([0.25, 0.5])).numpy())
except tf.errors.InvalidArgumentError as e:
    print("ERROR", e.message)
"""


def test_strict_function_op_without_kernel():
    out = _ok(_run(MIXED_FUNCTION, strict=True))
    assert "ERROR" in out, out
    msg = out.split("ERROR", 1)[1]
    assert "PDK_STRICT=1" in msg and "'Betainc'" in msg, msg
    assert "op Betainc, T=float32" in msg, msg
    assert "placed on CPU" in msg and "PDK registers no kernel for op Betainc" in msg, msg
    # Without PDK_STRICT the same function runs, Betainc on the CPU.
    out = _ok(_run(MIXED_FUNCTION, strict=False))
    assert "RESULT" in out, out


DTYPE_FUNCTION = """
@tf.function
def f(x, c):
    return tf.math.square(x), tf.linalg.matmul(c, c)
try:
    print("RESULT", f(tf.constant([1.5]), tf.constant([[1 + 2j]], tf.complex64))[1].numpy())
except tf.errors.InvalidArgumentError as e:
    print("ERROR", e.message)
"""


def _assert_names_pdk_matmul_types(msg):
    assert "PDK has no MatMul kernel for T=complex64" in msg, msg
    assert "PDK registers MatMul for T in [" in msg, msg
    listed = msg.split("T in [", 1)[1].split("]")[0]
    for t in _pdk_types("MatMul"):
        assert t in listed, (t, msg)
    assert "complex64" not in listed, msg


def test_strict_function_dtype_without_kernel():
    """A dtype PDK lacks for an op it implements: PDK_STRICT=1 registered a
    failing PDK kernel for it, so the node is placed on PDK and fails there."""
    out = _ok(_run(DTYPE_FUNCTION, strict=True))
    assert "ERROR" in out, out
    _assert_names_pdk_matmul_types(out.split("ERROR", 1)[1])
    out = _ok(_run(DTYPE_FUNCTION, strict=False))
    assert "RESULT" in out, out


EAGER_DTYPE = """
c = tf.constant([[1 + 2j]], tf.complex64)
for scope in ("/PDK:0", None):
    try:
        if scope:
            with tf.device(scope):
                r = tf.linalg.matmul(c, c)
        else:
            r = tf.linalg.matmul(c, c)
        print("RESULT", scope, r.device)
    except tf.errors.InvalidArgumentError as e:
        print("ERROR", scope, e.message)
"""


def test_strict_eager_dtype_without_kernel():
    """Eager ops too, with or without a device scope."""
    out = _ok(_run(EAGER_DTYPE, strict=True))
    errors = [line for line in out.splitlines() if line.startswith("ERROR")]
    assert len(errors) == 2, out
    for line in errors:
        _assert_names_pdk_matmul_types(line)
    out = _ok(_run(EAGER_DTYPE, strict=False))
    assert out.count("RESULT") == 2 and "CPU" in out, out


def test_strict_allows_graphs_entirely_on_pdk_or_cpu():
    code = """
    @tf.function
    def on_pdk(x):
        return tf.reduce_sum(tf.nn.relu(tf.linalg.matmul(x, x)))
    @tf.function
    def on_cpu(x):
        with tf.device("/CPU:0"):
            return tf.math.betainc(x, x, x)   # no compute op on PDK: not checked
    x = tf.constant([[0.5, 0.25], [0.125, 0.75]])
    tensorflow_pdk.reset_launch_counts()
    print("PDK", float(on_pdk(x)), tensorflow_pdk.launch_counts().get("MatMul", 0))
    print("CPU", on_cpu(x).numpy().tolist())
    """
    out = _ok(_run(code, strict=True))
    assert "PDK" in out and out.split("PDK", 1)[1].split()[1] == "1", out
    assert "CPU" in out, out


def test_strict_keras_default_jit_is_an_error_naming_the_step():
    """With PDK listed, Keras's jit_compile="auto" asks for XLA; under PDK_STRICT=1
    that request fails naming Keras's train step (without it, PDK runs the step
    with its own kernels: test_keras_defaults.py)."""
    code = """
    import keras
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(3)])
    model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    x = np.zeros((16, 8), "float32")
    model.fit(x, np.zeros(16, "int32"), verbose=0)
    """
    p = _run(code, strict=True)
    assert p.returncode != 0
    assert "PDK_STRICT=1: function 'one_step_on_data'" in p.stderr, p.stderr[-3000:]
    assert "asked for XLA (jit_compile=True)" in p.stderr
    _ok(_run(code, strict=False))


def test_strict_keras_training_runs_on_pdk():
    """A Keras model's fit (Dense, Adam, metrics) has no compute op on the CPU
    (jit_compile=False: under PDK_STRICT=1 Keras's automatic XLA request is an
    error, test above)."""
    code = """
    import keras
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"),
                              keras.layers.Dense(3)])
    model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"], jit_compile=False)
    x = np.random.default_rng(0).normal(size=(64, 8)).astype("float32")
    y = (x[:, 0] > 0).astype("int32")
    tensorflow_pdk.reset_launch_counts()
    h = model.fit(x, y, batch_size=16, epochs=2, verbose=0)
    print("LOSS", h.history["loss"][-1], tensorflow_pdk.launch_counts().get("MatMul", 0))
    """
    out = _ok(_run(code, strict=True))
    assert "LOSS" in out and int(out.split("LOSS", 1)[1].split()[1]) > 0, out


def test_strict_masked_lstm_and_a_cond_on_host_labels_train():
    """Two graphs strict mode once broke or refused: a masked LSTM (a guard
    in front of a loop-body node had no inputs, so the graph had "inputs from
    different frames"), and CategoricalHinge, whose cond passes the tf.data
    labels through a Switch and an Identity the placer puts on the CPU beside
    them (forwarding nodes of CPU values are not guarded)."""
    code = """
    import keras
    x = np.random.default_rng(0).integers(1, 30, size=(32, 6)).astype("int32")
    x[:, 4:] = 0
    y = np.eye(3, dtype="float32")[np.arange(32) % 3]
    model = keras.Sequential([keras.Input((6,), dtype="int32"),
                              keras.layers.Embedding(30, 4, mask_zero=True),
                              keras.layers.LSTM(5), keras.layers.Dense(3)])
    model.compile("adam", keras.losses.CategoricalHinge(), jit_compile=False)
    tensorflow_pdk.reset_launch_counts()
    h = model.fit(x, y, batch_size=8, epochs=2, verbose=0)
    print("LOSS", h.history["loss"][-1], tensorflow_pdk.launch_counts().get("MatMul", 0))
    """
    out = _ok(_run(code, strict=True))
    assert "LOSS" in out and int(out.split("LOSS", 1)[1].split()[1]) > 0, out


def test_strict_int32_variables_on_the_host_train():
    """Keras's Adafactor keeps int32 placeholder slots; TensorFlow keeps int32
    variables in host memory (no DEVICE_DEFAULT VarHandleOp for int32), so
    their assignments run on the CPU beside them: not a fallback."""
    code = """
    import keras
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"),
                              keras.layers.Dense(3)])
    model.compile(keras.optimizers.Adafactor(),
                  keras.losses.SparseCategoricalCrossentropy(from_logits=True), jit_compile=False)
    x = np.random.default_rng(0).normal(size=(64, 8)).astype("float32")
    y = (x[:, 0] > 0).astype("int32")
    tensorflow_pdk.reset_launch_counts()
    h = model.fit(x, y, batch_size=16, epochs=2, verbose=0)
    print("LOSS", h.history["loss"][-1], tensorflow_pdk.launch_counts().get("MatMul", 0))
    """
    out = _ok(_run(code, strict=True))
    assert "LOSS" in out and int(out.split("LOSS", 1)[1].split()[1]) > 0, out


def test_compute_op_classification_is_the_plugins():
    for op in ("Const", "_Arg", "_Retval", "Shape", "NoOp", "VarHandleOp", "IteratorGetNext",
               "TensorSliceDataset", "OptionalGetValue", "_PdkStrictFallback"):
        assert not placement.is_compute_op(op), op
    for op in ("MatMul", "Betainc", "Identity", "AddV2", "ReadVariableOp"):
        assert placement.is_compute_op(op), op
