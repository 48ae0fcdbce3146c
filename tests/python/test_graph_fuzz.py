"""Random graphs through PDK's graph optimizer (issue 4 §3).

Each seed builds a random tf.function on PDK from the ops the rewrites touch
(MatMul + BiasAdd + every fusable activation including both Gelu forms,
Identity, cancelling and non-cancelling Transpose pairs, Add, Reshape, and
Conv2D + BiasAdd when PDK has a Conv2D kernel), runs it with PDK's rewrites
on and off (PDK_GRAPH_REWRITES=0, read by the optimizer at each call) and
compares outputs and input gradients. Odd seeds run with TensorFlow's own
Identity/Transpose-removing passes switched off (test_graph_simplify._tf_passes),
so that PDK's Identity and Transpose rewrites get work too. Across the seeds,
the rewrites must have fired. Then: truncated and corrupted real GraphDefs handed straight to
optimize_func give an error status or a graph, never a crash.
"""
import os

import numpy as np
import pytest
import tensorflow as tf

import tensorflow_pdk as tp

from test_graph_rewrites import init_graph_optimizer
from test_graph_simplify import _tf_passes

SEEDS = range(40)
ACTIVATIONS = [None, "relu", "relu6", "elu", "leaky_relu", "tanh", "sigmoid", "gelu_exact",
               "gelu_tanh"]


def _activation(name, h):
    if name is None:
        return h
    if name == "gelu_exact":
        return tf.nn.gelu(h, approximate=False)
    if name == "gelu_tanh":
        return tf.nn.gelu(h, approximate=True)
    if name == "leaky_relu":
        return tf.nn.leaky_relu(h, alpha=0.1)
    return getattr(tf.nn, name)(h)


def _has_pdk_conv2d():
    return any(k.op == "Conv2D" for k in tp.registered_kernels())


def _random_model(seed, conv):
    """A list of steps (closures h -> h) and the input shape; weights are
    numpy constants drawn from `seed`."""
    rng = np.random.default_rng(seed)
    batch, width = int(rng.integers(2, 6)), int(rng.integers(3, 9))
    steps, w = [], width
    for _ in range(int(rng.integers(3, 8))):
        kind = rng.choice(["dense", "dense", "dense", "identity", "transpose_pair",
                           "transpose_other", "add", "reshape", "conv"])
        if kind == "dense":
            n = int(rng.integers(2, 9))
            k = (rng.standard_normal((w, n)) / np.sqrt(w)).astype(np.float32)
            b = rng.standard_normal(n).astype(np.float32) * 0.1
            act = ACTIVATIONS[int(rng.integers(len(ACTIVATIONS)))]
            tb = bool(rng.integers(2))
            kk = k.T.copy() if tb else k
            steps.append(lambda h, kk=kk, b=b, act=act, tb=tb: _activation(
                act, tf.nn.bias_add(tf.matmul(h, kk, transpose_b=tb), b)))
            w = n
        elif kind == "identity":
            steps.append(lambda h: tf.identity(tf.identity(h) * 1.5))
        elif kind == "transpose_pair":
            steps.append(lambda h: tf.transpose(tf.transpose(h, [1, 0]), [1, 0]) + 0.25)
        elif kind == "transpose_other":  # rank 3, permutations that do not cancel
            def t(h, w=w):
                r = tf.reshape(h, [-1, 1, w])
                r = tf.transpose(tf.transpose(r, [1, 2, 0]), [1, 2, 0])  # = [2, 0, 1] composed
                return tf.reshape(tf.transpose(r, [1, 2, 0]), [-1, w])  # back to [B, 1, w]
            steps.append(t)
        elif kind == "add":
            c = rng.standard_normal(w).astype(np.float32)
            steps.append(lambda h, c=c: h + tf.nn.relu(h) + c)
        elif kind == "reshape":
            steps.append(lambda h, w=w: tf.reshape(tf.reshape(h, [-1]), [-1, w]) * 0.5)
        elif kind == "conv" and conv:
            ch = int(rng.integers(1, 4))
            f = rng.standard_normal((1, 3, 1, ch)).astype(np.float32) * 0.5
            b = rng.standard_normal(ch).astype(np.float32) * 0.1

            def cv(h, w=w, f=f, b=b, ch=ch):
                r = tf.reshape(h, [-1, 1, w, 1])
                r = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(r, f, 1, "SAME"), b))
                return tf.reshape(r, [-1, w * ch])
            steps.append(cv)
            w = w * ch
    x = rng.standard_normal((batch, width)).astype(np.float32)
    return steps, x


def _run(steps, x, rewrites):
    os.environ["PDK_GRAPH_REWRITES"] = "1" if rewrites else "0"
    try:
        @tf.function
        def f(x):
            with tf.device("/PDK:0"):
                with tf.GradientTape() as tape:
                    tape.watch(x)
                    h = x
                    for s in steps:
                        h = s(h)
                    loss = tf.reduce_sum(h * h)
                return h, tape.gradient(loss, x)

        @tf.function
        def forward(x):  # inference graph: the Gelu fusion may fire here
            with tf.device("/PDK:0"):
                h = x
                for s in steps:
                    h = s(h)
                return h

        y, g = f(x)
        return y.numpy(), g.numpy(), forward(x).numpy()
    finally:
        del os.environ["PDK_GRAPH_REWRITES"]


def test_random_graphs_same_with_and_without_rewrites():
    conv = _has_pdk_conv2d()
    tp.reset_graph_rewrite_counts()
    for seed in SEEDS:
        steps, x = _random_model(seed, conv)
        with _tf_passes(seed % 2 == 0):
            y_off, g_off, f_off = _run(steps, x, rewrites=False)
            y_on, g_on, f_on = _run(steps, x, rewrites=True)
        for a, b, what in ((y_on, y_off, "output"), (g_on, g_off, "gradient"),
                           (f_on, f_off, "inference output")):
            np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5,
                                       err_msg=f"seed {seed}: {what}")
    counts = tp.graph_rewrite_counts()
    fused = {k: v for k, v in counts.items() if k.startswith("MatMul+BiasAdd")}
    assert sum(fused.values()) >= len(SEEDS) // 2, counts
    assert any(k.endswith(("GeluExact", "GeluApproximate")) for k in fused), counts
    assert len(fused) >= 5, counts  # many activations, not one pattern over and over
    assert counts.get("Identity", 0) > 0 and counts.get("Transpose+Transpose", 0) > 0, counts


def test_truncated_and_corrupted_graphdefs_are_errors_not_crashes():
    """A real GraphDef (a dense layer on PDK with Gelu, a Transpose pair and
    Identities, function library included) cut at every length and with
    random bytes overwritten: optimize_func gives OK (a prefix ending on a
    field boundary is a valid, smaller GraphDef) or INVALID_ARGUMENT."""
    w = np.ones((4, 3), np.float32)
    b = np.ones((3,), np.float32)

    @tf.function
    def f(x):
        with tf.device("/PDK:0"):
            h = tf.nn.gelu(tf.nn.bias_add(tf.matmul(x, w), b))
            h = tf.transpose(tf.transpose(tf.identity(h), [1, 0]), [1, 0])
            return tf.while_loop(lambda i, h: i < 2, lambda i, h: (i + 1, h * 2.0),
                                 (tf.constant(0), h))[1]

    graph = f.get_concrete_function(tf.TensorSpec((None, 4), tf.float32)).graph
    data = graph.as_graph_def().SerializeToString()
    _, _, call = init_graph_optimizer()
    code, out = call(data)
    assert code == 0 and out is not None
    tf.compat.v1.GraphDef.FromString(out)  # protobuf reads what PDK wrote
    codes = set()
    for cut in range(0, len(data), max(1, len(data) // 400)):
        code, out = call(data[:cut])
        assert code in (0, 3), (cut, code)
        codes.add(code)
        if out is not None:
            tf.compat.v1.GraphDef.FromString(out)
    assert 3 in codes
    rng = np.random.default_rng(3)
    for _ in range(300):
        bad = bytearray(data)
        for _ in range(int(rng.integers(1, 6))):
            bad[int(rng.integers(len(bad)))] = int(rng.integers(256))
        code, out = call(bytes(bad))
        assert code in (0, 3), code
