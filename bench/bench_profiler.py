"""Overhead of an open profile session on PDK (src/profiler/profiler.cc).

A Keras MLP (784-512-512-10, batch 128, Adam) trains on /PDK:0 with Keras's
defaults. Each round times `--steps` train_on_batch calls with no profile
session, then the same with tf.profiler.experimental.start/stop around them
(start and stop themselves, which write the profile, are not timed), and the
same steps on /CPU:0 without a session as the stock reference. Reported: the
median time per step of each, and the ratios open/closed (the profiler's cost
per step: one record per PDK kernel launch) and closed/CPU. With no session
the recording hook is one atomic load per launch. Nothing here asserts a time.

Run:  python bench/bench_profiler.py [--repeats 10] [--steps 20]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from bench_pdk import fmt  # noqa: E402
from tensorflow_pdk.testing import keras_compile_args  # noqa: E402


def model_on(device):
    import keras

    with tf.device(device):
        keras.utils.set_random_seed(0)
        m = keras.Sequential([keras.Input((784,)), keras.layers.Dense(512, activation="relu"),
                              keras.layers.Dense(512, activation="relu"), keras.layers.Dense(10)])
        m.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  **keras_compile_args(device))
    return m


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args(argv)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((128, 784)).astype(np.float32)
    y = rng.integers(0, 10, 128)
    models = {d: model_on(d) for d in ("/PDK:0", "/CPU:0")}

    def steps(device):
        t0 = time.perf_counter()
        with tf.device(device):
            for _ in range(args.steps):
                models[device].train_on_batch(x, y)
        return (time.perf_counter() - t0) / args.steps

    for d in models:  # warm-up: tracing, the optimizer's slots
        steps(d)
    logdir = tempfile.mkdtemp()
    times = {"PDK, no session": [], "PDK, session open": [], "CPU": []}
    for _ in range(args.repeats):
        times["PDK, no session"].append(steps("/PDK:0"))
        tf.profiler.experimental.start(logdir)
        times["PDK, session open"].append(steps("/PDK:0"))
        tf.profiler.experimental.stop()
        times["CPU"].append(steps("/CPU:0"))
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"MLP 784-512-512-10, batch 128, {args.steps} steps x {args.repeats} rounds, medians")
    print("| case | time per step | vs PDK without a session |")
    print("|---|---|---|")
    for k, v in med.items():
        print(f"| {k} | {fmt(v)} | {v / med['PDK, no session']:.3f} |")


if __name__ == "__main__":
    main()
