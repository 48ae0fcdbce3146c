"""Per-iteration cost of a while loop of small products (a recurrent cell's
shape), or of a loop's bookkeeping alone, on PDK and on TensorFlow's CPU
device.

`--body products` (default): `tanh(acc @ w + acc @ wᵀ)` on float32 acc
[32, 64] and w [64, 64], in a tf.function with the iteration count as an
int32 argument. `--body counter`: two int32 counters, the condition
`i < n and j < 2n` (two Less, a LogicalAnd) and an Identity of a float32
[4] loop variable — what every lowered loop runs per iteration besides its
work (docs/architecture.md, "Left to TensorFlow's DEVICE_DEFAULT kernels").
Small products like these run on PDK's synchronous MatMul kernel
(docs/architecture.md, "Asynchronous kernels"); with PDK_ASYNC_MIN_BYTES=0
every product gets the asynchronous one, whose successors TensorFlow's
executor hands to its inter-op pool. Prints, per device, the median time per
iteration over `--repeats` calls of `--iters` iterations and the voluntary
context switches per iteration (getrusage). Nothing here asserts a time.

Run:  python bench/bench_loop.py [--body products|counter] [--iters 2000] [--repeats 5]
"""
import argparse
import os
import resource
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--iters", type=int, default=2000)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--body", choices=("products", "counter"), default="products")
    args = p.parse_args()
    import numpy as np
    import tensorflow as tf
    import tensorflow_pdk  # noqa: F401  (the plugin's Python side)

    rng = np.random.default_rng(0)
    for dev in ("/CPU:0", "/PDK:0"):
        with tf.device(dev):
            x = tf.identity(tf.constant(rng.random((32, 64)).astype(np.float32)))
            w = tf.identity(tf.constant(rng.random((64, 64)).astype(np.float32) * 0.01))

        @tf.function
        def products(x, n, w=w, dev=dev):
            with tf.device(dev):
                def body(i, acc):
                    return i + 1, tf.tanh(tf.matmul(acc, w) + tf.matmul(acc, w, transpose_b=True))
                return tf.while_loop(lambda i, acc: i < n, body, (tf.constant(0), x))[1]

        @tf.function
        def counter(x, n, dev=dev):
            with tf.device(dev):
                def body(i, j, v):
                    return i + 1, j + 2, tf.identity(v)
                return tf.while_loop(lambda i, j, v: tf.logical_and(i < n, j < 2 * n), body,
                                     (tf.constant(0), tf.constant(0), x[0, :4]))[2]

        loop = products if args.body == "products" else counter

        n = tf.constant(args.iters)
        loop(x, n).numpy()
        times, switches = [], []
        for _ in range(args.repeats):
            r0 = resource.getrusage(resource.RUSAGE_SELF)
            t = time.perf_counter()
            loop(x, n).numpy()
            times.append((time.perf_counter() - t) / args.iters)
            r1 = resource.getrusage(resource.RUSAGE_SELF)
            switches.append((r1.ru_nvcsw - r0.ru_nvcsw) / args.iters)
        print(f"{dev}: {statistics.median(times) * 1e6:.2f} us per iteration, "
              f"{statistics.median(switches):.2f} voluntary context switches per iteration")


if __name__ == "__main__":
    main()
