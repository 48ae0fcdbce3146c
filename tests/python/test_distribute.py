"""tf.distribute on PDK devices (docs/distributed.md).

- MirroredStrategy over two PDK devices, with its default cross-device ops
  (CollectiveReduceV2 on the devices, whose sum is the v1 `Add` op), and MultiWorkerMirroredStrategy with one worker and two PDK
  devices (CollectiveReduceV2): Keras fit trains as on one device with the
  global batch.
- MirroredStrategy() and MultiWorkerMirroredStrategy() without a device list
  take the PDK devices (tensorflow_pdk/_distribute.py), the CPU when PDK is
  hidden.
- MultiWorkerMirroredStrategy with two worker processes on 127.0.0.1, one or
  two PDK devices each, a custom training loop: the same weights as one device
  with the global batch; compute and all-reduce (CollectiveReduceV2 and its
  `Add`) on PDK. A worker killed or stopped mid-training makes the other
  fail with TensorFlow's error, no hang.
- ParameterServerStrategy with two worker processes and one parameter
  server, a ClusterCoordinator and a custom step: the replicas' compute runs
  on the workers' PDK devices.
- Keras BackupAndRestore under MirroredStrategy over two PDK devices: a run
  interrupted after epoch 2 resumes at epoch 3 and ends with the weights of an
  uninterrupted run.

Each case runs in child processes (PDK_DEVICE_COUNT is read when the plugin
loads; a cluster needs one process per worker), killed if they overrun."""
import json
import signal
import subprocess

import numpy as np
import pytest

from child_process import run_python
from multi_worker import Cluster

CODE = """
import keras

def train(strategy):
    keras.utils.set_random_seed(0)
    with strategy.scope():
        m = keras.Sequential([keras.Input((20,)), keras.layers.Dense(32, activation="relu"),
                              keras.layers.Dense(3)])
        m.compile(keras.optimizers.SGD(0.1),
                  keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    rng = np.random.default_rng(0)
    x = rng.random((64, 20)).astype("float32")
    y = rng.integers(0, 3, 64)
    tensorflow_pdk.reset_launch_counts()
    m.fit(x, y, epochs=2, batch_size=16, shuffle=False, verbose=0)
    return m.get_weights(), tensorflow_pdk.launch_counts()

mirrored, counts = train(tf.distribute.MirroredStrategy(["/PDK:0", "/PDK:1"]))
single, _ = train(tf.distribute.OneDeviceStrategy("/PDK:0"))
err = max(float(np.max(np.abs(a - b))) for a, b in zip(mirrored, single))
print("ADD", counts.get("Add", 0), "MATMUL", counts.get("MatMul", 0) + counts.get("_PdkFusedMatMul", 0))
print("MAXERR", err)
"""


@pytest.mark.parametrize("strategy", [
    'tf.distribute.MirroredStrategy(["/PDK:0", "/PDK:1"])',
    # One worker, its local devices PDK:0 and PDK:1, the gradients summed by
    # CollectiveReduceV2 on them. (Keras fit fails with two or more workers on
    # TF 2.21 + Keras 3.15, PDK or not: docs/distributed.md.) In a process of
    # its own: after a MirroredStrategy in the same process its collective keys
    # collide (TensorFlow does the same on two CPU devices).
    "tf.distribute.MultiWorkerMirroredStrategy()",
])
def test_mirrored_strategy_over_two_pdk_devices_matches_one_device(strategy):
    p = run_python(CODE.replace('tf.distribute.MirroredStrategy(["/PDK:0", "/PDK:1"])', strategy),
                   {"PDK_DEVICE_COUNT": "2"})
    assert p.returncode == 0, p.stderr[-3000:]
    words = p.stdout.split()
    assert int(words[words.index("ADD") + 1]) > 0, p.stdout      # the all-reduce ran on PDK
    assert int(words[words.index("MATMUL") + 1]) > 0, p.stdout
    assert float(words[words.index("MAXERR") + 1]) < 1e-5, p.stdout


def test_collective_reduce_v2_with_final_op_div_runs_on_pdk():
    """A CollectiveReduceV2 written by hand with final_op="Div" (a mean over
    two PDK devices, one thread per device as in TensorFlow's
    collective_ops_test): TensorFlow builds its merge op (Add) and final op
    (the v1 Div) as kernels of the device the collective runs on."""
    p = run_python("""
    import threading
    from tensorflow.python.ops import collective_ops
    vals = [np.arange(6, dtype=np.float32) * (i + 1) - 2 for i in range(2)]
    out = [None, None]

    def run(i):
        with tf.device(f"/PDK:{i}"):
            out[i] = collective_ops.all_reduce_v2(
                tf.constant(vals[i]), group_size=2, group_key=7, instance_key=1,
                merge_op="Add", final_op="Div", timeout=60)

    tensorflow_pdk.reset_launch_counts()
    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    counts = tensorflow_pdk.launch_counts()
    print("DIV", counts.get("Div", 0), "ADD", counts.get("Add", 0))
    print("DEV", out[0].device, out[1].device)
    print("ERR", float(np.abs(out[0].numpy() - (vals[0] + vals[1]) / 2).max()),
          float(np.abs(out[1].numpy() - out[0].numpy()).max()))
    """, {"PDK_DEVICE_COUNT": "2"}, timeout=120)
    assert p.returncode == 0, p.stderr[-3000:]
    words = p.stdout.split()
    assert int(words[words.index("DIV") + 1]) >= 1, p.stdout   # the final op ran on PDK
    assert int(words[words.index("ADD") + 1]) >= 1, p.stdout
    assert "device:PDK:0" in p.stdout and "device:PDK:1" in p.stdout, p.stdout
    assert float(words[words.index("ERR") + 1]) == 0.0, p.stdout
    assert float(words[words.index("ERR") + 2]) == 0.0, p.stdout


def _device_choice(hide_pdk):
    code = """
    import json
    if HIDE:
        tf.config.set_visible_devices([], "PDK")
    m = tf.distribute.MirroredStrategy().extended.worker_devices
    w = tf.distribute.MultiWorkerMirroredStrategy().extended.worker_devices
    print("DEVICES", json.dumps([[d.rsplit("/", 1)[-1] for d in m], [d.rsplit("/", 1)[-1] for d in w]]))
    """.replace("HIDE", str(hide_pdk))
    p = run_python(code, {"PDK_DEVICE_COUNT": "2"}, timeout=120)
    assert p.returncode == 0, p.stderr[-3000:]
    line = [l for l in p.stdout.splitlines() if l.startswith("DEVICES")][0]
    return json.loads(line.split(" ", 1)[1])


def test_strategies_without_a_device_list_take_the_pdk_devices():
    pdk = ["device:PDK:0", "device:PDK:1"]
    assert _device_choice(hide_pdk=False) == [pdk, pdk]


def test_strategies_take_the_cpu_when_pdk_is_hidden():
    assert _device_choice(hide_pdk=True) == [["device:CPU:0"], ["device:CPU:0"]]


def test_a_moved_tensorflow_name_leaves_the_other_strategies_wrapped():
    """_distribute.install() wraps each strategy on its own: a TensorFlow whose
    private name moved gets one line and TensorFlow's choice for that one."""
    p = run_python("""
    from tensorflow.python.distribute import collective_all_reduce_strategy as cars
    from tensorflow.python.distribute import mirrored_strategy
    from tensorflow_pdk import _distribute
    # The plugin's hooks are in place; undo two wrappers as a new TensorFlow would have
    # them missing: MirroredStrategy's name gone, MultiWorkerMirroredStrategy's unwrapped.
    del mirrored_strategy.all_local_devices
    ext = cars.CollectiveAllReduceExtended
    ext._initialize_local_devices = ext._initialize_local_devices.__wrapped__
    print("INSTALLED", _distribute.install())
    print("MWMS", tf.distribute.MultiWorkerMirroredStrategy().extended.worker_devices[0])
    """, {"PDK_DEVICE_COUNT": "1"}, timeout=120)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "INSTALLED False" in p.stdout, p.stdout
    assert "MWMS /job:localhost/replica:0/task:0/device:PDK:0" in p.stdout, p.stdout
    assert p.stderr.count("PDK: MirroredStrategy keeps TensorFlow's device choice (CPU), "
                          "PDK's hook failed: AttributeError") == 1, p.stderr[-3000:]


# One training, two ways: under MultiWorkerMirroredStrategy when TF_CONFIG names
# a cluster, else on /PDK:0 alone (OneDeviceStrategy) with the global batch.
# Each worker's input pipeline yields its share of every global batch, so a
# step sees the same 16 rows either way and the summed gradients agree.
TRAIN = """
import json, os
import keras
import tensorflow_pdk.placement
GLOBAL_BATCH = 16
if "TF_CONFIG" in os.environ:
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    name = "worker%d" % json.loads(os.environ["TF_CONFIG"])["task"]["index"]
else:
    strategy = tf.distribute.OneDeviceStrategy("/PDK:0")
    name = "single"
keras.utils.set_random_seed(0)
with strategy.scope():
    model = keras.Sequential([keras.Input((20,)), keras.layers.Dense(32, activation="relu"),
                              keras.layers.Dense(3)])
    optimizer = keras.optimizers.SGD(0.1)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=None)
rng = np.random.default_rng(0)
x = rng.random((64, 20)).astype("float32")
y = rng.integers(0, 3, 64)
steps = len(x) // GLOBAL_BATCH

def dataset_fn(ctx):
    share = GLOBAL_BATCH // ctx.num_input_pipelines
    rows = np.concatenate([np.arange(s * GLOBAL_BATCH + ctx.input_pipeline_id * share,
                                     s * GLOBAL_BATCH + (ctx.input_pipeline_id + 1) * share)
                           for s in range(steps)])
    return tf.data.Dataset.from_tensor_slices((x[rows], y[rows])).batch(
        ctx.get_per_replica_batch_size(GLOBAL_BATCH))

dataset = strategy.distribute_datasets_from_function(dataset_fn)

@tf.function
def train_step(iterator):
    def replica_step(xb, yb):
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(loss_fn(yb, model(xb, training=True)),
                                              global_batch_size=GLOBAL_BATCH)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))  # all-reduces
        return loss
    return strategy.run(replica_step, next(iterator))

from tensorflow.python.eager import context
tensorflow_pdk.reset_launch_counts()
for epoch in range(2):
    iterator = iter(dataset)
    for step in range(steps):
        if epoch == 0 and step == 0:  # the first call instantiates the function
            context.context().enable_run_metadata()
            train_step(iterator)
            metadata = context.context().export_run_metadata()
            context.context().disable_run_metadata()
        else:
            train_step(iterator)
np.save(name + ".npy", np.concatenate([w.ravel() for w in model.get_weights()]))
counts = tensorflow_pdk.launch_counts()
collectives = sorted({(n.op, tensorflow_pdk.placement.device_type_of(n.device),
                       tf.dtypes.as_dtype(n.attr["T"].type).name)
                      for g in metadata.function_graphs for pg in g.partition_graphs
                      for n in pg.node if n.op.startswith("Collective")})
print("RESULT", json.dumps({
    "devices": [d.rsplit("/", 1)[-1] for d in strategy.extended.worker_devices],
    "add": counts.get("Add", 0),
    "matmul": counts.get("MatMul", 0) + counts.get("_PdkFusedMatMul", 0),
    "collectives": collectives}))
"""


def _result(stdout):
    line = [l for l in stdout.splitlines() if l.startswith("RESULT ")]
    assert line, stdout[-2000:]
    return json.loads(line[-1][len("RESULT "):])


@pytest.mark.parametrize("devices_per_worker", [1, 2])
def test_multi_worker_mirrored_trains_on_pdk_like_one_device(tmp_path, devices_per_worker):
    single = run_python(f"import os; os.chdir({str(tmp_path)!r})\n" + TRAIN, timeout=120)
    assert single.returncode == 0, single.stderr[-3000:]
    ref = _result(single.stdout)
    assert ref["devices"] == ["device:PDK:0"] and ref["matmul"] > 0, ref
    assert ref["add"] == 0, ref  # so an Add on a worker is the all-reduce's
    with Cluster(TRAIN, tmp_path, jobs={"worker": 2},
                 env={"PDK_DEVICE_COUNT": str(devices_per_worker)}) as cluster:
        codes = cluster.wait(timeout=120)
        assert codes == [0, 0], [cluster.stderr(i)[-3000:] for i in range(2)]
        results = [_result(cluster.stdout(i)) for i in range(2)]
    expected_devices = [f"device:PDK:{i}" for i in range(devices_per_worker)]
    for r in results:
        assert r["devices"] == expected_devices, r
        assert r["matmul"] > 0, r                     # the replicas' compute ran on PDK
        assert r["add"] > 0, r                        # the all-reduce's merge_op ran on PDK
        # The gradients' all-reduce on PDK. With several local devices the
        # input pipeline also sums, across workers, how many replicas still
        # have data: an int64 scalar TensorFlow keeps on the worker's CPU.
        assert ["CollectiveReduceV2", "PDK", "float32"] in r["collectives"], r
        assert all(d == "PDK" for _, d, t in r["collectives"] if t == "float32"), r
        assert all(t == "int64" for _, d, t in r["collectives"] if d != "PDK"), r
    single_w = np.load(tmp_path / "single.npy")
    w0, w1 = np.load(tmp_path / "worker0.npy"), np.load(tmp_path / "worker1.npy")
    np.testing.assert_array_equal(w0, w1)
    assert float(np.max(np.abs(w0 - single_w))) < 1e-5


LOOP = """
strategy = tf.distribute.MultiWorkerMirroredStrategy()
with strategy.scope():
    v = tf.Variable(tf.zeros([1000]))

@tf.function
def step():
    def replica_step():
        v.assign_add(tf.distribute.get_replica_context().all_reduce("sum", tf.ones([1000])))
    strategy.run(replica_step)

for i in range(1000000):
    step()
    if i % 10 == 0:
        print("STEP", i, flush=True)
"""


@pytest.mark.parametrize("victim,how", [(1, "kill"), (0, "kill"), (1, "stop")])
def test_worker_killed_or_stopped_mid_training_fails_the_other(tmp_path, victim, how):
    """A dead worker (SIGKILL; worker 0 also hosts the coordination service)
    breaks the other's next collective at once; a hung one (SIGSTOP) once the
    coordination service misses its heartbeats (10 s by default)."""
    with Cluster(LOOP, tmp_path, jobs={"worker": 2}) as cluster:
        survivor = 1 - victim
        assert cluster.wait_for_output(survivor, "STEP 20", timeout=90), (
            cluster.stdout(survivor)[-1000:], cluster.stderr(survivor)[-3000:])
        cluster.procs[victim].send_signal(signal.SIGKILL if how == "kill" else signal.SIGSTOP)
        try:
            code = cluster.procs[survivor].wait(timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail("the surviving worker hung: " + cluster.stderr(survivor)[-3000:])
        err = cluster.stderr(survivor)
    assert code != 0
    assert "Collective ops is aborted" in err, err[-3000:]
    if how == "kill":
        assert "UnavailableError" in err, err[-3000:]
    else:
        assert "stopped sending heartbeats" in err, err[-3000:]


BACKUP = """
import sys
import keras
strategy = tf.distribute.MirroredStrategy()  # PDK:0 and PDK:1
print("DEVICES", [d.rsplit("/", 1)[-1] for d in strategy.extended.worker_devices])
rng = np.random.default_rng(0)
x = rng.random((64, 20)).astype("float32")
y = rng.integers(0, 3, 64)

class Interrupt(Exception):
    pass

def train(phase):
    keras.utils.set_random_seed(0)
    with strategy.scope():
        model = keras.Sequential([keras.Input((20,)), keras.layers.Dense(32, activation="relu"),
                                  keras.layers.Dense(3)])
        model.compile(keras.optimizers.Adam(0.01),
                      keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    epochs = []

    class Record(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            epochs.append(epoch)

        def on_epoch_end(self, epoch, logs=None):
            if phase == "interrupted" and epoch == 1:
                raise Interrupt()  # after BackupAndRestore saved epoch 2

    callbacks = [Record()] if phase == "uninterrupted" else [
        keras.callbacks.BackupAndRestore("backup"), Record()]
    tensorflow_pdk.reset_launch_counts()
    try:
        model.fit(x, y, epochs=4, batch_size=16, shuffle=False, verbose=0, callbacks=callbacks)
    except Interrupt:
        pass
    np.save(phase + ".npy", np.concatenate([w.ravel() for w in model.get_weights()]))
    print(phase, "EPOCHS", epochs, "ADD", tensorflow_pdk.launch_counts().get("Add", 0))

for phase in sys.argv[1:]:
    train(phase)
"""


def test_backup_and_restore_resumes_from_the_last_epoch(tmp_path):
    out = ""
    # The interrupted run and its resumption in separate processes, as after a crash.
    for phases in (["uninterrupted", "interrupted"], ["resumed"]):
        code = f"import os, sys; os.chdir({str(tmp_path)!r}); sys.argv = ['x', *{phases!r}]\n"
        p = run_python(code + BACKUP, {"PDK_DEVICE_COUNT": "2"}, timeout=120)
        assert p.returncode == 0, p.stderr[-3000:]
        out += p.stdout
    assert "DEVICES ['device:PDK:0', 'device:PDK:1']" in out, out
    assert "uninterrupted EPOCHS [0, 1, 2, 3] " in out, out
    assert "interrupted EPOCHS [0, 1] " in out, out
    assert "resumed EPOCHS [2, 3] " in out, out   # continued after epoch 2
    assert "resumed EPOCHS [2, 3] ADD 0" not in out, out  # the all-reduce ran on PDK
    full, resumed = np.load(tmp_path / "uninterrupted.npy"), np.load(tmp_path / "resumed.npy")
    assert float(np.max(np.abs(full - resumed))) < 1e-6
    assert not (tmp_path / "backup").exists()  # removed once training completed


SERVER = """
import json, os, time
config = json.loads(os.environ["TF_CONFIG"])
name = config["task"]["type"] + str(config["task"]["index"])
server = tf.distribute.Server(tf.train.ClusterSpec(config["cluster"]), protocol="grpc",
                              job_name=config["task"]["type"], task_index=config["task"]["index"])
while True:  # until the test kills it; its PDK launches in a file
    time.sleep(0.2)
    with open(name + ".tmp", "w") as f:
        json.dump(tensorflow_pdk.launch_counts(), f)
    os.replace(name + ".tmp", name + ".json")
"""

COORDINATOR = """
import time
import keras
strategy = tf.distribute.ParameterServerStrategy(
    tf.distribute.cluster_resolver.TFConfigClusterResolver())
coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
with strategy.scope():
    model = keras.Sequential([keras.Input((20,)), keras.layers.Dense(32, activation="relu"),
                              keras.layers.Dense(3)])
    optimizer = keras.optimizers.SGD(0.1)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
rng = np.random.default_rng(0)
x = rng.random((64, 20)).astype("float32")
y = rng.integers(0, 3, 64)
dataset = coordinator.create_per_worker_dataset(
    lambda: tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(16))
iterator = iter(dataset)

@tf.function
def train_step(iterator):
    def replica_step(xb, yb):
        with tf.GradientTape() as tape:
            loss = loss_fn(yb, model(xb, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    return strategy.run(replica_step, next(iterator))

losses = [coordinator.schedule(train_step, args=(iterator,)) for _ in range(16)]
coordinator.join()
print("LOSS", float(losses[-1].fetch()))
print("DEVICES", list(strategy.extended.worker_devices), strategy.num_replicas_in_sync)
print("VARIABLES", sorted({v.value.device.rsplit("/", 1)[-1] for v in model.trainable_variables}))
time.sleep(1)  # the servers write their launch counts every 0.2 s
"""


def test_parameter_server_strategy_runs_the_workers_replicas_on_pdk(tmp_path):
    with Cluster(SERVER, tmp_path, jobs={"chief": 1, "worker": 2, "ps": 1},
                 start=("worker", "ps")) as cluster:
        env = dict(cluster.env, TF_CONFIG=cluster.tf_config("chief", 0))
        p = run_python(COORDINATOR, env, timeout=120)
        assert p.returncode == 0, p.stderr[-3000:]
        assert all(q.poll() is None for q in cluster.procs), [
            cluster.stderr(i)[-2000:] for i in range(len(cluster.procs))]
        counts = {name: json.loads((tmp_path / f"{name}.json").read_text())
                  for name in cluster.names}
    assert "DEVICES ['/device:PDK:0'] 1" in p.stdout, p.stdout
    # TensorFlow pins a parameter server's variables to its CPU (so does a GPU cluster).
    assert "VARIABLES ['device:CPU:0']" in p.stdout, p.stdout
    matmuls = {n: c.get("MatMul", 0) + c.get("_PdkFusedMatMul", 0) for n, c in counts.items()}
    assert matmuls["worker0"] + matmuls["worker1"] > 0, counts  # closures ran on a worker's PDK
    assert matmuls["ps0"] == 0, counts
    loss = float(p.stdout.split("LOSS ")[1].split()[0])
    assert np.isfinite(loss), p.stdout
