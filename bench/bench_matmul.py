"""Eager float32 MatMul and Einsum per call on PDK and on stock TensorFlow CPU
(oneDNN on and off), for the products of a training step: forward (NN), input
gradient (NT, transpose_b) and weight gradient (TN, transpose_a), and Keras
MultiHeadAttention's einsums (batch 32, 64 positions, 4 heads of 32).

Each setup runs in its own process (TF_ENABLE_ONEDNN_OPTS is read when
TensorFlow loads; stock runs with PDK_DEVICE_COUNT=0). Per shape: 100 eager
calls per round, then one read of an element (the calls queue behind it),
best of 5 rounds, in µs per product. Results: docs/benchmarks.md, "float32
GEMM".

    .venv/bin/python bench/bench_matmul.py
    .venv/bin/python bench/bench_matmul.py --shapes 2048x128x256:ta  # m x k x n[:ta][:tb]
    .venv/bin/python bench/bench_matmul.py --shapes "aecd,abcd->acbe=32x64x4x32,32x64x4x32" 256x784x512
"""
import argparse
import json
import os
import subprocess
import sys
import time

# m x k x n: C[m,n] = op(A) op(B), op(A) [m,k], op(B) [k,n].
DEFAULT_SHAPES = [
    "128x2048x256:ta", "128x2048x128:ta", "256x2048x128:ta",   # Transformer / ViT weight gradients
    "784x256x512:ta", "512x256x512:ta",                        # MLP 784-512-512-10 weight gradients
    "1024x64x1024:ta", "1024x4096x64:ta", "1024x1024x1024:ta", "256x32x256:ta",
    "256x784x512", "256x512x512", "256x512x512:tb",            # MLP forward and input gradient
    # Keras MultiHeadAttention (query [32,64,128], 4 heads of 32): projection,
    # its kernel gradient, scores, scores x value, output projection.
    "abc,cde->abde=32x64x128,128x4x32", "abc,abde->cde=32x64x128,32x64x4x32",
    "aecd,abcd->acbe=32x64x4x32,32x64x4x32", "acbe,aecd->abcd=32x4x64x64,32x64x4x32",
    "abcd,cde->abe=32x64x4x32,4x32x128",
]


def call(spec):
    """The function and its two operands' shapes for `spec`."""
    import tensorflow as tf
    if "=" in spec:  # an einsum: "equation=shape_a,shape_b"
        eq, shapes = spec.split("=")
        sa, sb = ([int(d) for d in s.split("x")] for s in shapes.split(","))
        return (lambda a, b: tf.einsum(eq, a, b)), sa, sb
    m, k, n, ta, tb = parse(spec)
    return ((lambda a, b: tf.linalg.matmul(a, b, transpose_a=ta, transpose_b=tb)),
            (k, m) if ta else (m, k), (n, k) if tb else (k, n))


def parse(spec):
    dims, *flags = spec.split(":")
    m, k, n = (int(d) for d in dims.split("x"))
    return m, k, n, "ta" in flags, "tb" in flags


def worker(device, shapes):
    import numpy as np
    import tensorflow as tf
    out = {}
    with tf.device(device):
        for spec in shapes:
            fn, sa, sb = call(spec)
            a, b = tf.random.uniform(sa), tf.random.uniform(sb)
            best = float("inf")
            for _ in range(5):
                c = fn(a, b)
                tf.reshape(c, [-1])[0].numpy()
                t = time.perf_counter()
                for _ in range(100):
                    c = fn(a, b)
                tf.reshape(c, [-1])[0].numpy()
                best = min(best, (time.perf_counter() - t) / 100 * 1e6)
            out[spec] = best
    print(json.dumps(out))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shapes", nargs="+", default=DEFAULT_SHAPES)
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args()
    shapes = args.shapes
    if args.worker:
        return worker(args.worker, shapes)
    setups = [("PDK", "/PDK:0", {}),
              ("stock, oneDNN on", "/CPU:0", {"PDK_DEVICE_COUNT": "0", "TF_ENABLE_ONEDNN_OPTS": "1"}),
              ("stock, oneDNN off", "/CPU:0", {"PDK_DEVICE_COUNT": "0", "TF_ENABLE_ONEDNN_OPTS": "0"})]
    results = []
    for _, device, env in setups:
        r = subprocess.run([sys.executable, __file__, "--worker", device, "--shapes", *shapes],
                           env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", **env),
                           capture_output=True, text=True, check=True)
        results.append(json.loads(r.stdout.strip().splitlines()[-1]))
    print("| product (m x k x n), or einsum | " + " | ".join(name for name, _, _ in setups) + " | PDK / better stock |")
    print("|---|" + "---|" * (len(setups) + 1))
    for spec in shapes:
        t = [r[spec] for r in results]
        print(f"| {spec} | " + " | ".join(f"{v:.0f} µs" for v in t) + f" | {t[0] / min(t[1:]):.2f} |")


if __name__ == "__main__":
    main()
