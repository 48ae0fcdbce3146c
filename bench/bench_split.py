"""Memory-bound kernels split over the device pool or not: a tf.function of
20 dependent steps on one float32 tensor (cache-resident between steps), on
PDK and on TensorFlow's CPU device, with one inter-op thread.

Steps: `y * 1.0001`; `y - reduce_mean(y, -1, keepdims=True)` (LayerNorm's
centring); `y + 1e-6 * reduce_sum(y, [0, 1])` (a gradient's column sums).
Compare a run with PDK_NUM_THREADS=1 against the default pool to see what a
split costs at each size (docs/benchmarks.md, "Splitting small kernels").
Prints the median time per step over `--repeats` calls. Nothing here
asserts a time.

Run:  python bench/bench_split.py [--shapes 8x64x128,32x64x128,32x64x512] [--repeats 30]
"""
import argparse
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--shapes", default="8x64x128,32x64x128,32x64x512")
    p.add_argument("--repeats", type=int, default=30)
    args = p.parse_args()
    import numpy as np
    import tensorflow as tf

    tf.config.threading.set_inter_op_parallelism_threads(1)
    steps = {
        "y * 1.0001": lambda y: y * 1.0001,
        "y - mean(y, -1)": lambda y: y - tf.reduce_mean(y, axis=-1, keepdims=True),
        "y + sum(y, (0, 1))": lambda y: y + 1e-6 * tf.reduce_sum(y, axis=[0, 1]),
    }
    for shape in [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")]:
        x = np.random.default_rng(0).random(shape).astype(np.float32)
        for device in ("/CPU:0", "/PDK:0"):
            with tf.device(device):
                a = tf.identity(x)
                for label, step in steps.items():
                    @tf.function
                    def chain(y, step=step):
                        for _ in range(20):
                            y = step(y)
                        return y

                    for _ in range(3):
                        chain(a).numpy()
                    times = []
                    for _ in range(args.repeats):
                        t0 = time.perf_counter()
                        chain(a).numpy()
                        times.append((time.perf_counter() - t0) / 20)
                    print(f"{str(list(shape)):16s} {device:7s} {label:20s} "
                          f"{statistics.median(times) * 1e6:8.1f} us per step")


if __name__ == "__main__":
    main()
