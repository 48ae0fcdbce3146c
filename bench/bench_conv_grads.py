"""Convolution gradients of ResNet50 64x64, batch 16, one shape at a time: PDK
against stock TensorFlow CPU, interleaved.

Each row is one Conv2D of the ResNet50 step in bench_pdk.py (`--cases
resnet50`): Keras's ResNet50 on 64x64 inputs, batch 16, so the stages run at
32x32 (the 7x7 stride-2 stem), 16x16, 8x8, 4x4 and 2x2. Per shape and op
(Conv2DBackpropFilter, Conv2DBackpropInput; NHWC, float32, padding SAME,
random inputs) both devices get 3 warm-up calls, then `--repeats` rounds of
one call each, alternating; reported: the medians (milliseconds, including
the copy of the result to the host, `.numpy()`) and PDK / CPU. Nothing here
asserts a time.

Run: python bench/bench_conv_grads.py [--repeats 15] [--ops filter,input]

The stock CPU runs with this process's TF_ENABLE_ONEDNN_OPTS (unset:
TensorFlow's default for the CPU; on the AVX-512/AMX development VM, oneDNN on).
"""
import argparse
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import tensorflow_pdk  # noqa: E402,F401  (registers nothing itself; PDK loads as a plugin)

# (N, H, W, C, K, F, stride): input [N,H,W,C], filter [K,K,C,F], output [N,H/s,W/s,F].
SHAPES = [(16, 64, 64, 3, 7, 64, 2),
          (16, 16, 16, 64, 1, 64, 1), (16, 16, 16, 64, 3, 64, 1), (16, 16, 16, 64, 1, 256, 1),
          (16, 8, 8, 128, 3, 128, 1), (16, 8, 8, 128, 1, 512, 1),
          (16, 4, 4, 256, 3, 256, 1), (16, 4, 4, 256, 1, 1024, 1),
          (16, 2, 2, 512, 3, 512, 1), (16, 2, 2, 512, 1, 2048, 1), (16, 2, 2, 2048, 1, 512, 1)]
DEVICES = ("/PDK:0", "/CPU:0")


def _timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def calls(op, shape):
    """{device: a function running one `op` gradient of `shape` on it}."""
    n, h, w, c, k, f, s = shape
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, h, w, c)).astype(np.float32)
    dy = rng.standard_normal((n, -(-h // s), -(-w // s), f)).astype(np.float32)
    wt = rng.standard_normal((k, k, c, f)).astype(np.float32)
    out = {}
    for d in DEVICES:
        with tf.device(d):
            xt, dyt, wtt = tf.identity(x), tf.identity(dy), tf.identity(wt)
        strides = [1, s, s, 1]
        if op == "filter":
            def run(d=d, xt=xt, dyt=dyt):
                with tf.device(d):
                    return tf.raw_ops.Conv2DBackpropFilter(
                        input=xt, filter_sizes=[k, k, c, f], out_backprop=dyt,
                        strides=strides, padding="SAME").numpy()
        else:
            def run(d=d, wtt=wtt, dyt=dyt):
                with tf.device(d):
                    return tf.raw_ops.Conv2DBackpropInput(
                        input_sizes=[n, h, w, c], filter=wtt, out_backprop=dyt,
                        strides=strides, padding="SAME").numpy()
        out[d] = run
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("--ops", default="filter,input")
    args = p.parse_args()
    for op in args.ops.split(","):
        total = dict.fromkeys(DEVICES, 0.0)
        print(f"Conv2DBackprop{op.capitalize()}: shape (N, H, W, C, K, F, stride), "
              f"PDK / CPU medians in ms")
        for shape in SHAPES:
            fns = calls(op, shape)
            for d in DEVICES:
                for _ in range(3):
                    fns[d]()
            times = {d: [] for d in DEVICES}
            for _ in range(args.repeats):
                for d in DEVICES:
                    times[d].append(_timed(fns[d]))
            med = {d: statistics.median(v) for d, v in times.items()}
            for d in DEVICES:
                total[d] += med[d]
            print(f"  {str(shape):<30s} PDK {med['/PDK:0'] * 1e3:7.2f}  CPU "
                  f"{med['/CPU:0'] * 1e3:7.2f}  PDK/CPU {med['/PDK:0'] / med['/CPU:0']:.2f}",
                  flush=True)
        print(f"  {'sum of medians':<30s} PDK {total['/PDK:0'] * 1e3:7.2f}  CPU "
              f"{total['/CPU:0'] * 1e3:7.2f}  PDK/CPU {total['/PDK:0'] / total['/CPU:0']:.2f}",
              flush=True)


if __name__ == "__main__":
    main()
