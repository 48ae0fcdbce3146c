"""XLA requests (tf.function(jit_compile=True)) on PDK run with PDK's kernels.

XLA has no PDK backend. Three layers keep such functions off XLA on PDK:
- a tf.function first called where it runs on PDK is traced as an ordinary
  function (python/tensorflow_pdk/_xla.py, Function.__call__);
- a traced function that still carries _XlaMustCompile=true (a concrete
  function traced beforehand, a loaded one) called eagerly runs a copy without
  it (Context.call_function);
- called from another function, its call node reaches PDK's graph optimizer,
  which clears the attribute (src/graph/rewrites/xla_must_compile.cc).
Each runs the function on PDK instead of failing with "No JIT device
registered for PDK", prints one notice per function, and under PDK_STRICT=1
fails naming the function. A call placed on the CPU keeps XLA. Results are
compared with the same function run on the CPU without XLA.

Cases that look at stderr or set PDK_STRICT run in a child process.
"""
import numpy as np
import pytest
import tensorflow as tf

import tensorflow_pdk
from child_process import run_python


def _dense(x, w):
    return tf.nn.relu(tf.linalg.matmul(x, w)) * 2.0 + 1.0


def _inputs():
    rng = np.random.default_rng(7)
    return (tf.constant(rng.normal(size=(16, 32)).astype(np.float32)),
            tf.constant(rng.normal(size=(32, 8)).astype(np.float32)))


def _cpu_reference(x, w):
    with tf.device("/CPU:0"):
        return tf.function(_dense)(x, w).numpy()


def _traced_with_xla(x, w):
    """A concrete function traced with jit_compile=True (its FunctionDef and
    call nodes keep _XlaMustCompile=true: tracing is not a call)."""
    return tf.function(_dense, jit_compile=True).get_concrete_function(x, w)


@pytest.mark.parametrize("traced", [False, True])
def test_nested_xla_call_runs_on_pdk(traced):
    x, w = _inputs()
    inner = _traced_with_xla(x, w) if traced else tf.function(_dense, jit_compile=True)
    outer = tf.function(lambda x, w: inner(x, w) - 1.0)
    tensorflow_pdk.reset_launch_counts()
    tensorflow_pdk.reset_graph_rewrite_counts()
    with tf.device("/PDK:0"):
        y = outer(x, w)
    np.testing.assert_allclose(y.numpy(), _cpu_reference(x, w) - 1.0, rtol=1e-5, atol=1e-5)
    counts = tensorflow_pdk.launch_counts()
    assert counts.get("MatMul", 0) + counts.get("_PdkFusedMatMul", 0) >= 1, counts
    # The traced function's call node is rewritten by the graph optimizer.
    rewrites = tensorflow_pdk.graph_rewrite_counts().get("XlaMustCompile->PdkKernels", 0)
    assert (rewrites >= 1) == traced


@pytest.mark.parametrize("traced", [False, True])
def test_eager_xla_call_runs_on_pdk_without_a_scope(traced):
    x, w = _inputs()
    f = _traced_with_xla(x, w) if traced else tf.function(_dense, jit_compile=True)
    tensorflow_pdk.reset_launch_counts()
    y = f(x, w)
    assert "PDK" in y.device
    np.testing.assert_allclose(y.numpy(), _cpu_reference(x, w), rtol=1e-5, atol=1e-5)
    counts = tensorflow_pdk.launch_counts()
    assert counts.get("MatMul", 0) + counts.get("_PdkFusedMatMul", 0) >= 1, counts


def test_eager_xla_call_on_cpu_keeps_xla():
    x, w = _inputs()
    f = tf.function(_dense, jit_compile=True)
    tensorflow_pdk.reset_launch_counts()
    with tf.device("/CPU:0"):
        y = f(x, w)
    assert "CPU" in y.device
    np.testing.assert_allclose(y.numpy(), _cpu_reference(x, w), rtol=1e-5, atol=1e-5)
    assert sum(tensorflow_pdk.launch_counts().values()) == 0


def test_gradient_of_an_eager_xla_call_on_pdk():
    x, w = _inputs()
    f = tf.function(_dense, jit_compile=True)
    wv = tf.Variable(w)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(f(x, wv))
    g = tape.gradient(loss, wv)
    with tf.device("/CPU:0"):
        wc = tf.Variable(w)
        with tf.GradientTape() as tape:
            loss_c = tf.reduce_sum(_dense(x, wc))
        g_ref = tape.gradient(loss_c, wc)
    np.testing.assert_allclose(g.numpy(), g_ref.numpy(), rtol=1e-5, atol=1e-5)


def _run(code, strict=False):
    return run_python(code, strict=strict)


CODE = """
@tf.function(jit_compile=True)
def my_step(x):
    return tf.linalg.matmul(x, x) + 1.0

x = tf.ones((4, 4))
traced = my_step.get_concrete_function(x)  # keeps _XlaMustCompile=true
outer = tf.function(lambda x: my_step(x) * 2.0)
outer_traced = tf.function(lambda x: traced(x) * 2.0)
for _ in range(3):
    {call}
print("RESULT", float(tf.reduce_sum({call})))
"""


CALLS = ["my_step(x)", "outer(x)", "traced(x)", "outer_traced(x)"]


@pytest.mark.parametrize("call", CALLS)
def test_one_notice_per_function(call):
    p = _run(CODE.format(call=call))
    assert p.returncode == 0, p.stderr[-3000:]
    assert float(p.stdout.split("RESULT")[1]) == pytest.approx(16 * 5 * (2 if "outer" in call
                                                                         else 1))
    notice = "PDK: my_step asked for XLA (jit_compile=True); PDK has no XLA backend, " \
             "running it with PDK kernels"
    assert p.stderr.count(notice) == 1, p.stderr[-3000:]
    assert "No JIT device registered" not in p.stderr


@pytest.mark.parametrize("call", CALLS)
def test_strict_names_the_function(call):
    p = _run(CODE.format(call=call), strict=True)
    assert p.returncode != 0
    assert "InvalidArgumentError" in p.stderr, p.stderr[-3000:]
    assert "PDK_STRICT=1: function 'my_step'" in p.stderr, p.stderr[-3000:]
    assert "asked for XLA (jit_compile=True)" in p.stderr
    assert "No JIT device registered" not in p.stderr
