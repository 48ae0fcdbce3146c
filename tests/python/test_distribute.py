"""tf.distribute.MirroredStrategy over two PDK devices, with its default
cross-device ops (an all-reduce that sums the replicas' gradients with the v1
`Add` op on the devices): Keras fit trains as on one device with the global
batch. Runs in a child process (PDK_DEVICE_COUNT=2 is read when the plugin
loads). Multi-worker strategies are not covered yet (issue 16)."""
from child_process import run_python

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


def test_mirrored_strategy_over_two_pdk_devices_matches_one_device():
    p = run_python(CODE, {"PDK_DEVICE_COUNT": "2"})
    assert p.returncode == 0, p.stderr[-3000:]
    words = p.stdout.split()
    assert int(words[words.index("ADD") + 1]) > 0, p.stdout      # the all-reduce ran on PDK
    assert int(words[words.index("MATMUL") + 1]) > 0, p.stdout
    assert float(words[words.index("MAXERR") + 1]) < 1e-5, p.stdout
