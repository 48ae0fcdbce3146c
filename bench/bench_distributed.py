"""A training step under MultiWorkerMirroredStrategy: one worker process vs two
on this machine, each worker on its PDK device, the same global batch.

Every configuration launches its worker processes on 127.0.0.1 (TF_CONFIG; one
worker is a cluster of one, so it runs the same collectives with a group of
one). Each worker trains an MLP (784-512-512-10, SGD) with a custom loop
(`strategy.run`, Keras's optimizer all-reduces the gradients), warms up, then
times `--steps` steps, waiting for each step's result, then as many
all-reduces alone of one tensor the size of the gradients (669,706 floats, a
variable's copy; each replica returns its sum, so no large result is fetched);
it prints both medians. Reported per configuration: worker 0's median over `--rounds`
launches (the workers step in lockstep), the examples per second that gives,
and the speed-up over one PDK worker. The same on TensorFlow's CPU device
(PDK switched off) for comparison. Nothing here asserts a time.

The configurations run one after another, not interleaved (each is a set of
processes), so run it on a quiet machine and read the load average printed
with the table.

Run:  python bench/bench_distributed.py [--steps 40] [--rounds 3] [--global-batch 256]
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import textwrap

WORKER = """
import json, os, statistics, time
import numpy as np, tensorflow as tf, keras, tensorflow_pdk
STEPS, GLOBAL_BATCH = int(os.environ["BENCH_STEPS"]), int(os.environ["BENCH_GLOBAL_BATCH"])
strategy = tf.distribute.MultiWorkerMirroredStrategy()
keras.utils.set_random_seed(0)
with strategy.scope():
    model = keras.Sequential([keras.Input((784,)), keras.layers.Dense(512, activation="relu"),
                              keras.layers.Dense(512, activation="relu"), keras.layers.Dense(10)])
    optimizer = keras.optimizers.SGD(0.01)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=None)
rng = np.random.default_rng(0)
x = rng.random((GLOBAL_BATCH, 784)).astype("float32")
y = rng.integers(0, 10, GLOBAL_BATCH)

def dataset_fn(ctx):
    return tf.data.Dataset.from_tensors((x[:ctx.get_per_replica_batch_size(GLOBAL_BATCH)],
                                         y[:ctx.get_per_replica_batch_size(GLOBAL_BATCH)])).repeat()

iterator = iter(strategy.distribute_datasets_from_function(dataset_fn))

@tf.function
def train_step(iterator):
    def replica_step(xb, yb):
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(loss_fn(yb, model(xb, training=True)),
                                              global_batch_size=GLOBAL_BATCH)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    return strategy.run(replica_step, next(iterator))

def run():
    return [t.numpy() for t in strategy.experimental_local_results(train_step(iterator))]

for _ in range(5):
    run()
tensorflow_pdk.reset_launch_counts()
times = []
for _ in range(STEPS):
    t0 = time.perf_counter()
    run()
    times.append(time.perf_counter() - t0)
counts = tensorflow_pdk.launch_counts()
size = sum(int(np.prod(v.shape)) for v in model.trainable_variables)

with strategy.scope():
    flat = tf.Variable(tf.ones([size]), trainable=False)

@tf.function
def all_reduce_only():  # the gradients' all-reduce alone: one tensor of their size
    return strategy.run(lambda: tf.reduce_sum(tf.distribute.get_replica_context().all_reduce(
        "sum", flat * 1.0)))

def run_reduce():
    return [t.numpy() for t in strategy.experimental_local_results(all_reduce_only())]

for _ in range(3):
    run_reduce()
reduce_times = []
for _ in range(STEPS):
    t0 = time.perf_counter()
    run_reduce()
    reduce_times.append(time.perf_counter() - t0)
print("BENCH", json.dumps({"median_ms": 1e3 * statistics.median(times),
                           "all_reduce_ms": 1e3 * statistics.median(reduce_times),
                           "devices": list(strategy.extended.worker_devices),
                           "matmul_launches": counts.get("MatMul", 0) + counts.get("_PdkFusedMatMul", 0),
                           "add_launches": counts.get("Add", 0)}))
"""


def _ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def launch(workers, steps, global_batch, env_extra):
    """Runs one cluster; returns each worker's BENCH record."""
    cluster = {"worker": [f"127.0.0.1:{p}" for p in _ports(workers)]}
    env = {k: v for k, v in os.environ.items() if not k.startswith("PDK_")}
    env.update(env_extra, TF_CPP_MIN_LOG_LEVEL="2", BENCH_STEPS=str(steps),
               BENCH_GLOBAL_BATCH=str(global_batch))
    procs = []
    try:
        for i in range(workers):
            cfg = json.dumps({"cluster": cluster, "task": {"type": "worker", "index": i}})
            procs.append(subprocess.Popen([sys.executable, "-c", textwrap.dedent(WORKER)],
                                          env=dict(env, TF_CONFIG=cfg), text=True,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE))
        records = []
        for p in procs:
            out, err = p.communicate(timeout=600)
            lines = [l for l in out.splitlines() if l.startswith("BENCH ")]
            if p.returncode != 0 or not lines:
                raise RuntimeError(f"worker failed ({p.returncode}):\n{err[-3000:]}")
            records.append(json.loads(lines[-1][len("BENCH "):]))
        return records
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


CONFIGS = [
    ("1 worker", 1, {}),
    ("2 workers", 2, {}),
    ("2 workers, PDK_NUM_THREADS=1", 2, {"PDK_NUM_THREADS": "1"}),
    ("1 worker, 2 PDK devices (PDK_DEVICE_COUNT=2)", 1, {"PDK_DEVICE_COUNT": "2"}),
    ("1 worker, stock CPU (PDK_DEVICE_COUNT=0)", 1, {"PDK_DEVICE_COUNT": "0"}),
    ("2 workers, stock CPU (PDK_DEVICE_COUNT=0)", 2, {"PDK_DEVICE_COUNT": "0"}),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--global-batch", type=int, default=256)
    args = ap.parse_args()
    results = {name: [] for name, _, _ in CONFIGS}
    reduces = {name: [] for name, _, _ in CONFIGS}
    devices = {}
    for _ in range(args.rounds):
        for name, workers, env in CONFIGS:
            recs = launch(workers, args.steps, args.global_batch, env)
            results[name].append(recs[0]["median_ms"])
            reduces[name].append(recs[0]["all_reduce_ms"])
            devices[name] = (recs[0]["devices"], recs[0]["matmul_launches"], recs[0]["add_launches"])
    load = os.getloadavg()
    print(f"cores: {os.cpu_count()}, load average after: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; "
          f"global batch {args.global_batch}, {args.steps} steps x {args.rounds} rounds")
    print("| configuration | step (median ms) | examples/s | vs 1 PDK worker | all-reduce alone (ms) "
          "| worker 0's devices, MatMul / Add launches |")
    print("|---|---:|---:|---:|---:|---|")
    base = statistics.median(results[CONFIGS[0][0]])
    for name, _, _ in CONFIGS:
        ms = statistics.median(results[name])
        devs, mm, add = devices[name]
        red = statistics.median(reduces[name])
        print(f"| {name} | {ms:.1f} | {args.global_batch / ms * 1e3:.0f} | {base / ms:.2f}x | {red:.1f} | "
              f"{', '.join(d.rsplit('/', 1)[-1] for d in devs)}; {mm} / {add} |")


if __name__ == "__main__":
    main()
