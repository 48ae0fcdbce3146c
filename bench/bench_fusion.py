"""PDK's graph fusions: fused vs unfused on PDK vs stock TensorFlow CPU, in one
process, interleaved.

Per pattern, three tf.functions compute the same graph:
  - "fused":   on /PDK:0, optimized with PDK's rewrites (the default);
  - "unfused": on /PDK:0, optimized with PDK_GRAPH_REWRITES=0 (the
    environment variable is read when Grappler optimizes the function, i.e.
    at its first call, so it is set only around that call);
  - "CPU":     on /CPU:0 (stock TensorFlow, its own remapper fusions included).
The harness (bench/bench_pdk.py: measure, fmt) warms each up and alternates
them for `--repeats` rounds; reported: the median time of each and the ratios
fused/unfused (< 1: the fusion helps) and fused/CPU. The column "PDK nodes"
says which fused ops the fused graph ran (from tensorflow_pdk.placement), so a
pattern that did not fuse shows. Nothing here asserts a time.

Run:  python bench/bench_fusion.py [--repeats 20] [--cases matmul,conv,...] [--markdown FILE]
"""
from __future__ import annotations

import os
import platform
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import tensorflow_pdk  # noqa: E402
from tensorflow_pdk import placement  # noqa: E402
from bench_pdk import fmt, measure, parse_args  # noqa: E402

KEYS = ("fused", "unfused", "CPU")
FUSED_OPS = ("_PdkFusedMatMul", "_PdkFusedConv2D")


def _variables(device, arrays):
    with tf.device(device):
        return [tf.Variable(a) for a in arrays]


def _function(body, device, x, variables):
    @tf.function(jit_compile=False)
    def f():
        with tf.device(device):
            return body(x, *variables)
    return f


def _functions(body, arrays, x):
    """The three variants of `body(x, *variables)`; returns (fns, fused-node counts)."""
    fns, nodes = {}, ""
    for key in KEYS:
        device = "/CPU:0" if key == "CPU" else "/PDK:0"
        vs = _variables(device, arrays)
        with tf.device(device):
            xd = tf.identity(x)

        f = _function(body, device, xd, vs)

        old = os.environ.get("PDK_GRAPH_REWRITES")
        if key == "unfused":
            os.environ["PDK_GRAPH_REWRITES"] = "0"
        try:
            with placement.record() as p:
                f()  # first call: traced and optimized now
        finally:
            if old is None:
                os.environ.pop("PDK_GRAPH_REWRITES", None)
            else:
                os.environ["PDK_GRAPH_REWRITES"] = old
        if key == "fused":
            ops = p.ops_on("PDK")
            nodes = ", ".join(f"{ops[o]} {o}" for o in FUSED_OPS if ops[o]) or "none"

        def run(f=f):
            f().numpy()  # wait for the result
        fns[key] = run
    return fns, nodes


def _rng():
    return np.random.default_rng(0)


def _f32(rng, *shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype(np.float32)


def case_matmul():
    r = _rng()
    x = _f32(r, 256, 1024)
    return "MatMul+BiasAdd+Relu [256,1024]x[1024,1024]", _functions(
        lambda x, w, b: tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w), b)),
        [_f32(r, 1024, 1024), _f32(r, 1024)], x)


def _conv_input(r):
    return _f32(r, 8, 56, 56, 64)


def case_conv():
    r = _rng()
    return "Conv2D+BiasAdd+Relu [8,56,56,64] 3x3x64x64 SAME", _functions(
        lambda x, w, b: tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w, 1, "SAME"), b)),
        [_f32(r, 3, 3, 64, 64), _f32(r, 64)], _conv_input(r))


def case_conv_add():
    r = _rng()
    return "Conv2D+BiasAdd+AddV2+Relu (residual) same shapes", _functions(
        lambda x, w, b: tf.nn.relu(x + tf.nn.bias_add(tf.nn.conv2d(x, w, 1, "SAME"), b)),
        [_f32(r, 3, 3, 64, 64), _f32(r, 64)], _conv_input(r))


def case_conv1x1():
    r = _rng()
    return "Conv2D+BiasAdd+Relu 1x1 [8,56,56,64]->256", _functions(
        lambda x, w, b: tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w, 1, "SAME"), b)),
        [_f32(r, 1, 1, 64, 256), _f32(r, 256)], _conv_input(r))


def case_depthwise():
    r = _rng()
    return "DepthwiseConv2dNative+BiasAdd+Relu6 [8,56,56,128] 3x3", _functions(
        lambda x, w, b: tf.nn.relu6(tf.nn.bias_add(
            tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME"), b)),
        [_f32(r, 3, 3, 128, 1), _f32(r, 128)], _f32(r, 8, 56, 56, 128))


def case_conv_bn():
    r = _rng()

    def body(x, w, scale, offset, mean, var):
        y = tf.raw_ops.FusedBatchNormV3(x=tf.nn.conv2d(x, w, 1, "SAME"), scale=scale,
                                        offset=offset, mean=mean, variance=var,
                                        epsilon=1e-3, is_training=False)[0]
        return tf.nn.relu(y)
    return "Conv2D+FusedBatchNormV3(inference)+Relu", _functions(
        body, [_f32(r, 3, 3, 64, 64), _f32(r, 64), _f32(r, 64), _f32(r, 64),
               _f32(r, 64, lo=0.5, hi=2.0)], _conv_input(r))


def case_pad_conv():
    r = _rng()
    return "Pad+Conv2D(VALID)+BiasAdd+Relu -> EXPLICIT", _functions(
        lambda x, w, b: tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(
            tf.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]]), w, 1, "VALID"), b)),
        [_f32(r, 3, 3, 64, 64), _f32(r, 64)], _conv_input(r))


CASES = {
    "matmul": case_matmul,
    "conv": case_conv,
    "conv_add": case_conv_add,
    "conv1x1": case_conv1x1,
    "depthwise": case_depthwise,
    "conv_bn": case_conv_bn,
    "pad_conv": case_pad_conv,
}


def main(argv=None):
    args = parse_args(__doc__, CASES, argv)
    rows = []
    for key in args.cases.split(","):
        name, (fns, nodes) = CASES[key]()
        med = measure(fns, 1, args.repeats, keys=KEYS)
        r_unf = med["fused"] / med["unfused"]
        r_cpu = med["fused"] / med["CPU"]
        rows.append((name, fmt(med["fused"]), fmt(med["unfused"]), fmt(med["CPU"]),
                     f"{r_unf:.2f}", f"{r_cpu:.2f}", nodes))
        print(f"{name:<52s} fused {rows[-1][1]:>9s}  unfused {rows[-1][2]:>9s}  "
              f"CPU {rows[-1][3]:>9s}  fused/unfused {r_unf:.2f}  fused/CPU {r_cpu:.2f}  "
              f"[{nodes}]", flush=True)
    if args.markdown:
        lines = [
            "| pattern | PDK fused | PDK unfused | stock CPU | fused/unfused | fused/CPU "
            "| PDK nodes |",
            "|---|---|---|---|---|---|---|",
        ] + [f"| {' | '.join(r)} |" for r in rows]
        header = (f"Machine: {platform.machine()}, {os.cpu_count()} logical CPUs; "
                  f"TensorFlow {tf.__version__}; PDK {tensorflow_pdk.version()}; "
                  f"{args.repeats} interleaved rounds, medians.\n\n")
        with open(args.markdown, "w") as f:
            f.write(header + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
