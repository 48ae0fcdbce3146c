"""PDK's simplifying graph rewrites inside the real TensorFlow (src/graph/rewrites/):
Identity removal (identity_removal.cc), cancelling Transposes (transpose_pairs.cc),
and rewrites inside function bodies that stay functions.

Each rewrite: the PDK partition of the function contains the result and none of
the replaced nodes (by name: the partition graphs of the run metadata, as
tensorflow_pdk.placement.record() collects them), values and gradients equal
the same function on /CPU:0, and it leaves alone what it must not touch.

TensorFlow's own Grappler passes run before PDK's optimizer in each
meta-optimizer iteration, and some do the same job on any device: the
dependency optimizer bypasses most Identity nodes, the arithmetic optimizer
removes Transposes whose permutations cancel. So each Identity/Transpose test
runs twice: with TensorFlow's passes (the end result) and with those
passes switched off (then PDK's rewrite must do the job:
graph_rewrite_counts() says it fired).
"""
import contextlib
import os

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.eager import context

import tensorflow_pdk as tp
from tensorflow_pdk import placement

# These tests look at the elementwise nodes around the rewrites they test; the
# generic elementwise fusion would take those nodes over (conftest.py).
pytestmark = pytest.mark.usefixtures("without_elementwise_fusion")


@contextlib.contextmanager
def _rewrites(enabled):
    old = os.environ.get("PDK_GRAPH_REWRITES")
    os.environ["PDK_GRAPH_REWRITES"] = "1" if enabled else "0"
    try:
        yield
    finally:
        if old is None:
            del os.environ["PDK_GRAPH_REWRITES"]
        else:
            os.environ["PDK_GRAPH_REWRITES"] = old


def _run(fn, *args):
    """Calls a fresh tf.function; returns its result and the (name, op) pairs of
    the nodes TensorFlow placed on PDK: the partition graphs of the run
    metadata, read as placement.record() reads them, keeping node names."""
    from tensorflow.python.eager import context
    ctx = context.context()
    ctx.export_run_metadata()  # drop graphs of earlier functions (see placement.record)
    ctx.enable_run_metadata()
    try:
        out = fn(*args)
        md = ctx.export_run_metadata()
    finally:
        ctx.disable_run_metadata()
    nodes = []
    for fg in md.function_graphs if md is not None else []:
        for pg in fg.partition_graphs:
            nodes += [(n.name, n.op) for n in pg.node
                      if placement.device_type_of(n.device) == "PDK"]
    return out, nodes, None


@contextlib.contextmanager
def _tf_passes(on):
    """TensorFlow's passes that also remove Identity and Transpose nodes on
    (as by default) or off: the model pruner (trivial Identities), the
    dependency optimizer (Identities), the arithmetic optimizer (cancelling
    Transposes) and constant folding (an identity-permutation Transpose
    becomes an Identity)."""
    if on:
        yield
        return
    off = {"dependency_optimization": False, "arithmetic_optimization": False,
           "constant_folding": False, "disable_model_pruning": True}
    ctx = context.context()
    old = dict(ctx._optimizer_experimental_options)
    tf.config.optimizer.set_experimental_options(off)
    try:
        yield
    finally:
        # Back to exactly the options that were set before, unset ones unset:
        # tf.config.optimizer has no way to unset an option, and setting one
        # explicitly to its default (a RewriterConfig toggle ON, not DEFAULT)
        # changes what Grappler runs for every later function in the process.
        ctx._optimizer_experimental_options = old
        ctx._thread_local_data.function_call_options = None


TF_PASSES = pytest.mark.parametrize("tf_passes", [True, False], ids=["tf_passes", "pdk_only"])


def _ops(nodes):
    return {op for _, op in nodes}


def _names(nodes):
    return {name for name, _ in nodes}


# --------------------------------------------------------------- Identity

def _identity_fn(device, with_control=False):
    @tf.function
    def f(x):
        with tf.device(device):
            a = tf.nn.relu(x, name="a")
            if with_control:
                with tf.control_dependencies([a]):
                    i = tf.identity(a * 2.0, name="mid")
            else:
                i = tf.identity(a, name="mid")
            return tf.nn.relu(i - 0.5, name="b")
    return f


@TF_PASSES
def test_identity_between_pdk_nodes_goes(rng, tf_passes):
    x = rng.standard_normal((8, 5)).astype(np.float32)
    expected = _identity_fn("/CPU:0")(x).numpy()
    for with_control in (False, True):
        tp.reset_graph_rewrite_counts()
        with _tf_passes(tf_passes):
            y, nodes, _ = _run(_identity_fn("/PDK:0", with_control), x)
        counts = tp.graph_rewrite_counts()
        if not with_control:
            np.testing.assert_allclose(y.numpy(), expected, rtol=1e-6)
        else:
            np.testing.assert_allclose(y.numpy(), np.maximum(2 * np.maximum(x, 0) - 0.5, 0),
                                       rtol=1e-6)
        assert not [n for n in _names(nodes) if n.endswith("mid")], sorted(_names(nodes))
        assert "Relu" in _ops(nodes)
        if not tf_passes:
            assert counts.get("Identity", 0) >= 1, counts


def test_identity_across_devices_stays(rng):
    """An Identity on PDK reading a CPU tensor is the copy to PDK: it stays."""
    x = rng.standard_normal((4, 3)).astype(np.float32)

    @tf.function
    def f(x):
        with tf.device("/CPU:0"):
            a = tf.nn.relu(x)
        with tf.device("/PDK:0"):
            return tf.nn.relu(tf.identity(a, name="copy") + 1.0)

    tp.reset_graph_rewrite_counts()
    y, nodes, _ = _run(f, x)
    assert "Identity" not in tp.graph_rewrite_counts(), tp.graph_rewrite_counts()
    np.testing.assert_allclose(y.numpy(), np.maximum(np.maximum(x, 0) + 1, 0), rtol=1e-6)


@TF_PASSES
def test_identity_of_a_variable_and_in_a_loop_stays_correct(rng, tf_passes):
    """Identities of a variable read and in a lowered while loop (after
    Switch, before NextIteration, in the gradient loop): results as on the
    CPU, gradients included; without TensorFlow's passes PDK's rewrite meets
    every one of them."""
    x = rng.standard_normal((4, 3)).astype(np.float32)
    with tf.device("/PDK:0"):
        v = tf.Variable(rng.standard_normal((3, 3)).astype(np.float32))
    vc = tf.Variable(v.numpy())

    def make(var, device):
        @tf.function
        def f(x):
            with tf.device(device):
                with tf.GradientTape() as tape:
                    def body(i, h):
                        return i + 1, tf.identity(tf.tanh(tf.matmul(h, tf.identity(var))))
                    _, h = tf.while_loop(lambda i, h: i < 3, body, (tf.constant(0), x))
                    loss = tf.reduce_sum(h * h)
                return loss, tape.gradient(loss, var)
        return f

    tp.reset_graph_rewrite_counts()
    with _tf_passes(tf_passes):
        (loss, g), nodes, _ = _run(make(v, "/PDK:0"), x)
    closs, cg = make(vc, "/CPU:0")(x)
    if not tf_passes:
        assert tp.graph_rewrite_counts().get("Identity", 0) >= 1, tp.graph_rewrite_counts()
        assert "Identity" in _ops(nodes)  # the loop's own Identities stay
    assert "MatMul" in _ops(nodes), sorted(_ops(nodes))
    np.testing.assert_allclose(loss.numpy(), closs.numpy(), rtol=1e-5)
    np.testing.assert_allclose(g.numpy(), cg.numpy(), rtol=1e-4, atol=1e-5)


# ------------------------------------------------------------- Transposes

def _transpose_fn(device, p1, p2, peek=False):
    @tf.function
    def f(x):
        with tf.device(device):
            with tf.GradientTape() as tape:
                tape.watch(x)
                t1 = tf.transpose(x, p1, name="t1")
                t2 = tf.transpose(t1, p2, name="t2")
                y = tf.nn.relu(t2 * 3.0, name="y")
                out = [y]
                if peek:
                    out.append(tf.nn.relu(t1, name="peek"))
                loss = sum(tf.reduce_sum(o * o) for o in out)
            return out, tape.gradient(loss, x)
    return f


@TF_PASSES
@pytest.mark.parametrize("p1,p2", [([0, 2, 3, 1], [0, 3, 1, 2]), ([1, 0], [1, 0]),
                                   ([2, 0, 1], [1, 2, 0])])
def test_transpose_pair_cancels(rng, p1, p2, tf_passes):
    x = rng.standard_normal([2, 3, 4, 5][:len(p1)]).astype(np.float32)
    tp.reset_graph_rewrite_counts()
    with _tf_passes(tf_passes):
        (y, g), nodes, _ = _run(_transpose_fn("/PDK:0", p1, p2), x)
    (cy, cg) = _transpose_fn("/CPU:0", p1, p2)(x)
    forward = [n for n in _names(nodes) if n.endswith(("t1", "t2"))]
    assert not forward, sorted(_names(nodes))
    if not tf_passes:
        assert tp.graph_rewrite_counts().get("Transpose+Transpose", 0) >= 1
    assert "Relu" in _ops(nodes)
    np.testing.assert_allclose(y[0].numpy(), cy[0].numpy(), rtol=1e-6)
    np.testing.assert_allclose(g.numpy(), cg.numpy(), rtol=1e-6)


@TF_PASSES
def test_transpose_pair_keeps_inner_with_another_consumer(rng, tf_passes):
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    p1, p2 = [0, 2, 3, 1], [0, 3, 1, 2]
    with _tf_passes(tf_passes):
        (y, g), nodes, _ = _run(_transpose_fn("/PDK:0", p1, p2, peek=True), x)
    (cy, cg) = _transpose_fn("/CPU:0", p1, p2, peek=True)(x)
    names = _names(nodes)
    assert any(n.endswith("/t1") or n == "t1" for n in names), sorted(names)  # read by peek
    assert not any(n.endswith("/t2") or n == "t2" for n in names), sorted(names)
    for a, b in zip(y, cy):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
    np.testing.assert_allclose(g.numpy(), cg.numpy(), rtol=1e-6)


@TF_PASSES
def test_transposes_that_do_not_cancel_stay(rng, tf_passes):
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    p = [0, 2, 3, 1]
    with _tf_passes(tf_passes):
        (y, g), nodes, _ = _run(_transpose_fn("/PDK:0", p, p), x)
    (cy, cg) = _transpose_fn("/CPU:0", p, p)(x)
    assert "Transpose" in _ops(nodes), sorted(_ops(nodes))
    np.testing.assert_allclose(y[0].numpy(), cy[0].numpy(), rtol=1e-6)
    np.testing.assert_allclose(g.numpy(), cg.numpy(), rtol=1e-6)


@TF_PASSES
def test_identity_permutation_goes(rng, tf_passes):
    x = rng.standard_normal((3, 4)).astype(np.float32)

    @tf.function
    def f(x):
        with tf.device("/PDK:0"):
            return tf.nn.relu(tf.transpose(x, [0, 1], name="noop_t") + 1.0)

    tp.reset_graph_rewrite_counts()
    with _tf_passes(tf_passes):
        y, nodes, _ = _run(f, x)
    assert "Transpose" not in _ops(nodes), sorted(_ops(nodes))
    if not tf_passes:
        assert tp.graph_rewrite_counts().get("Transpose(identity)", 0) >= 1
    np.testing.assert_allclose(y.numpy(), np.maximum(x + 1, 0), rtol=1e-6)


def test_permutation_known_only_at_run_time_stays(rng):
    """A permutation captured from outside the function is an input, not a
    Const: nothing is known about it, the Transpose stays."""
    x = rng.standard_normal((3, 4)).astype(np.float32)
    perm = tf.constant([0, 1])

    @tf.function
    def f(x):
        with tf.device("/PDK:0"):
            return tf.nn.relu(tf.transpose(x, perm, name="runtime_t") + 1.0)

    tp.reset_graph_rewrite_counts()
    y, nodes, _ = _run(f, x)
    assert "Transpose" in _ops(nodes), sorted(_ops(nodes))
    assert not [k for k in tp.graph_rewrite_counts() if k.startswith("Transpose")]
    np.testing.assert_allclose(y.numpy(), np.maximum(x + 1, 0), rtol=1e-6)


# ---------------------------------------------------- function bodies

def test_while_loop_body_fuses(rng):
    """tf.while_loop inside a tf.function is lowered into the caller's graph
    (Enter/Merge/Switch/NextIteration), so its body is optimized with it."""
    x = rng.standard_normal((4, 6)).astype(np.float32)
    w = rng.standard_normal((6, 6)).astype(np.float32) * 0.3
    b = rng.standard_normal((6,)).astype(np.float32)

    def make(device):
        @tf.function
        def f(x):
            with tf.device(device):
                def body(i, h):
                    return i + 1, tf.nn.relu(tf.nn.bias_add(tf.matmul(h, w), b))
                return tf.while_loop(lambda i, h: i < 4, body, (tf.constant(0), x))[1]
        return f

    tp.reset_graph_rewrite_counts()
    y, nodes, _ = _run(make("/PDK:0"), x)
    assert "_PdkFusedMatMul" in _ops(nodes), sorted(_ops(nodes))
    assert not {"MatMul", "BiasAdd"} & _ops(nodes), sorted(_ops(nodes))
    assert tp.graph_rewrite_counts().get("MatMul+BiasAdd+Relu", 0) >= 1
    np.testing.assert_allclose(y.numpy(), make("/CPU:0")(x).numpy(), rtol=1e-5, atol=1e-6)


def test_function_body_that_stays_a_function_is_optimized_separately(rng):
    """A tf.function called from another one and marked _noinline stays a
    PartitionedCall: TensorFlow instantiates its body as a function of its
    own and runs Grappler, PDK's optimizer included, on that body. PDK never
    has to walk GraphDef.library itself."""
    x = rng.standard_normal((5, 6)).astype(np.float32)
    w = rng.standard_normal((6, 3)).astype(np.float32)
    b = rng.standard_normal((3,)).astype(np.float32)

    @tf.function(experimental_attributes={"_noinline": True})
    def dense(h):
        return tf.nn.relu(tf.nn.bias_add(tf.matmul(h, w), b))

    @tf.function
    def f(x):
        with tf.device("/PDK:0"):
            return dense(x) * 2.0

    tp.reset_graph_rewrite_counts()
    tp.reset_launch_counts()
    y, nodes, p = _run(f, x)
    assert "PartitionedCall" in _ops(nodes) or "StatefulPartitionedCall" in _ops(nodes), \
        sorted(_ops(nodes))  # the body really stayed a function
    assert tp.graph_rewrite_counts().get("MatMul+BiasAdd+Relu", 0) >= 1, tp.graph_rewrite_counts()
    launched = tp.launch_counts()
    assert launched.get("_PdkFusedMatMul", 0) >= 1 and not launched.get("MatMul"), launched
    np.testing.assert_allclose(y.numpy(), np.maximum(x @ w + b, 0) * 2, rtol=1e-5, atol=1e-5)
