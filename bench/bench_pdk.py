"""PDK vs stock TensorFlow CPU, in one process, interleaved.

Each case is a callable per device; the harness warms both up, then alternates
A B A B ... for `--repeats` rounds and reports the median time of each and
the PDK/CPU ratio (< 1: PDK faster). Nothing here asserts a time.

Run:  python bench/bench_pdk.py [--repeats 30] [--markdown docs/benchmarks.md]
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import tensorflow_pdk  # noqa: E402

DEVICES = ("/CPU:0", "/PDK:0")


def case_tiny_add():
    fns = {}
    for d in DEVICES:
        with tf.device(d):
            a = tf.constant([1.0, 2.0, 3.0, 4.0])
            b = tf.constant([4.0, 3.0, 2.0, 1.0])

        def run(a=a, b=b, d=d):
            with tf.device(d):
                for _ in range(100):
                    tf.raw_ops.AddV2(x=a, y=b)
        fns[d] = run
    return "eager AddV2 [4] (per op)", fns, 100


def case_matmul(n):
    rng = np.random.default_rng(0)
    a_np = rng.standard_normal((n, n)).astype(np.float32)
    b_np = rng.standard_normal((n, n)).astype(np.float32)
    fns = {}
    for d in DEVICES:
        with tf.device(d):
            a = tf.identity(tf.constant(a_np))
            b = tf.identity(tf.constant(b_np))

        def run(a=a, b=b, d=d):
            with tf.device(d):
                tf.linalg.matmul(a, b)
        fns[d] = run
    return f"eager MatMul {n}x{n}x{n} float32", fns, 1


def case_digits_step():
    from tensorflow_pdk.examples import digits

    x, y, _, _ = digits.load_data(0)
    x, y = x[:32], y[:32]
    fns = {}
    for d in DEVICES:
        with tf.device(d):
            model = digits.build_model(0)
            xd, yd = tf.identity(tf.constant(x)), tf.identity(tf.constant(y))

        def run(model=model, xd=xd, yd=yd, d=d):
            with tf.device(d):
                model.train_on_batch(xd, yd)
        fns[d] = run
    return "digits MLP train step (batch 32, Adam)", fns, 1


def measure(fns, per_call, repeats, warmup=3):
    for d in DEVICES:
        for _ in range(warmup):
            fns[d]()
    times = {d: [] for d in DEVICES}
    for _ in range(repeats):
        for d in DEVICES:
            t0 = time.perf_counter()
            fns[d]()
            times[d].append((time.perf_counter() - t0) / per_call)
    return {d: statistics.median(v) for d, v in times.items()}


def fmt(seconds):
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    return f"{seconds * 1e3:.2f} ms"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=30)
    p.add_argument("--markdown", help="also write the results table to this file")
    args = p.parse_args(argv)
    if not tf.config.list_physical_devices("PDK"):
        sys.exit("no PDK device registered")
    cases = [case_tiny_add(), case_matmul(1024), case_digits_step()]
    rows = []
    for name, fns, per_call in cases:
        med = measure(fns, per_call, args.repeats)
        ratio = med["/PDK:0"] / med["/CPU:0"]
        rows.append((name, fmt(med["/CPU:0"]), fmt(med["/PDK:0"]), f"{ratio:.2f}"))
        print(f"{name:<45s} CPU {rows[-1][1]:>10s}  PDK {rows[-1][2]:>10s}  PDK/CPU {ratio:.2f}",
              flush=True)
    if args.markdown:
        lines = [
            "| case | stock CPU (median) | PDK (median) | PDK/CPU |",
            "|---|---|---|---|",
        ] + [f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} |" for r in rows]
        header = (f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs; "
                  f"TensorFlow {tf.__version__}; PDK {tensorflow_pdk.version()}; "
                  f"{args.repeats} interleaved rounds.\n\n")
        with open(args.markdown, "w") as f:
            f.write(header + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
