"""Asynchronous kernels: where a hand-off to a launcher thread pays.

For each size n, two tf.functions of float32 n x n products on PDK: `parallel`
(4 independent products x @ w_i, summed) and `chain` (x @ w_1 @ w_2 @ w_3 @
w_4, no overlap possible: the hand-off is pure cost). Each runs in child
processes with asynchronous kernels off (PDK_ASYNC=0) and on for every launch
(PDK_ASYNC_MIN_BYTES=0), alternated `--rounds` times; every child also times
the same functions on TensorFlow's CPU device, and the table gives PDK's
median time divided by the CPU's from the same child (so the machine's load
cancels out), off and on. A product's inputs hold 8 n^2 bytes: the threshold
PDK_ASYNC_MIN_BYTES lies where `on` starts to beat `off` for `parallel`
without costing `chain` much. Nothing here asserts a time.

Run:  python bench/bench_async.py [--sizes 32,64,128,181,256,384] [--rounds 3]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = r"""
import json, os, sys, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np, tensorflow as tf, tensorflow_pdk
sizes = [int(s) for s in sys.argv[1].split(",")]
out = {}
for n in sizes:
    rng = np.random.default_rng(n)
    res = {}
    for dev in ("/CPU:0", "/PDK:0"):
        with tf.device(dev):
            x = tf.constant(rng.standard_normal((n, n)).astype("float32"))
            ws = [tf.constant(rng.standard_normal((n, n)).astype("float32") / n) for _ in range(4)]

        @tf.function
        def parallel(x):
            with tf.device(dev):
                return tf.add_n([tf.linalg.matmul(x, w) for w in ws])

        @tf.function
        def chain(x):
            with tf.device(dev):
                for w in ws:
                    x = tf.linalg.matmul(x, w)
                return x

        for name, fn in (("parallel", parallel), ("chain", chain)):
            fn(x).numpy()
            reps = max(20, min(2000, int(2e9 / (8 * n ** 3))))
            times = []
            for _ in range(5):
                t0 = time.perf_counter()
                for _ in range(reps):
                    y = fn(x)
                y.numpy()
                times.append((time.perf_counter() - t0) / reps)
            res[(dev, name)] = sorted(times)[2]
    out[n] = {name: res[("/PDK:0", name)] / res[("/CPU:0", name)] for name in ("parallel", "chain")}
    out[n]["pdk_us"] = {name: res[("/PDK:0", name)] * 1e6 for name in ("parallel", "chain")}
print("REPORT " + json.dumps(out))
"""


def run_child(sizes, env_extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PDK_")}
    env.update(env_extra)
    r = subprocess.run([sys.executable, "-c", CHILD, sizes], env=env, capture_output=True,
                       text=True, timeout=3600)
    if r.returncode != 0:
        sys.exit(r.stderr[-3000:])
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("REPORT "))
    return json.loads(line[len("REPORT "):])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sizes", default="32,64,128,181,256,384")
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    modes = {"off": {"PDK_ASYNC": "0"}, "on": {"PDK_ASYNC_MIN_BYTES": "0"}}
    results = {m: [] for m in modes}
    for _ in range(a.rounds):
        for m, env in modes.items():
            results[m].append(run_child(a.sizes, env))
    print("| n | input bytes | parallel off | parallel on | chain off | chain on "
          "| PDK us parallel off/on | PDK us chain off/on |")
    print("|---|---|---|---|---|---|---|---|")
    for n in a.sizes.split(","):
        med = {m: {k: statistics.median(r[n][k] for r in results[m]) for k in ("parallel", "chain")}
               for m in modes}
        us = {m: {k: statistics.median(r[n]["pdk_us"][k] for r in results[m])
                  for k in ("parallel", "chain")} for m in modes}
        print(f"| {n} | {8 * int(n) ** 2} | {med['off']['parallel']:.2f} | "
              f"{med['on']['parallel']:.2f} | {med['off']['chain']:.2f} | {med['on']['chain']:.2f} "
              f"| {us['off']['parallel']:.0f} / {us['on']['parallel']:.0f} "
              f"| {us['off']['chain']:.0f} / {us['on']['chain']:.0f} |")
    print(f"load average: {open('/proc/loadavg').read().split()[:3]}")


if __name__ == "__main__":
    main()
