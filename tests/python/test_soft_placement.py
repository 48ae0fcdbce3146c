"""Soft placement stays on when TensorFlow's eager context is first created
inside a tf.function trace (TensorFlow issue #48559; tensorflow_pdk/
_soft_placement.py).

The program's first TensorFlow work is a tf.function with a ``tf.device``
block called with a NumPy array: TensorFlow creates its eager context while
tracing, with soft placement off, and Keras's ``fit`` under
``tf.device("/PDK:0")`` then fails on tf.data's CPU-only ``RangeDataset``
(``enable_soft_placement=0``). Each case runs in a fresh process, since the
context is created once per process.
"""
from child_process import run_python

FIRST_CALL = """
@tf.function
def f(x):
    with tf.device("/CPU:0"):
        return tf.nn.relu(x)
f(np.ones((8, 5), np.float32))
"""

FIT_ON_PDK = """
import keras
rng = np.random.default_rng(0)
x = rng.standard_normal((64, 8)).astype(np.float32)
y = (x.sum(axis=1) > 0).astype(np.int32)
tensorflow_pdk.reset_launch_counts()
with tf.device("/PDK:0"):
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"),
                              keras.layers.Dense(2)])
    model.compile(optimizer="sgd",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x, y, epochs=1, batch_size=16, verbose=0)
counts = tensorflow_pdk.launch_counts()
print("launches", counts.get("MatMul", 0) + counts.get("_PdkFusedMatMul", 0))
print("soft", tf.config.get_soft_device_placement())
"""


def _launches(out):
    return int(next(l for l in out.splitlines() if l.startswith("launches")).split()[1])


def test_keras_fit_on_pdk_after_a_first_traced_call_with_numpy():
    r = run_python(FIRST_CALL + FIT_ON_PDK)
    assert r.returncode == 0, r.stderr[-3000:]
    assert _launches(r.stdout) >= 4 * 2, r.stdout  # 4 steps, 2 Dense layers, on PDK
    assert "soft True" in r.stdout


def test_importing_tensorflow_pdk_first_also_keeps_it_on():
    """tensorflow_pdk imported before tensorflow: the first call into the
    plugin (launch_counts) applies the default, after the context exists."""
    r = run_python("import tensorflow_pdk\nimport tensorflow as tf, numpy as np\n" + FIRST_CALL
                   + "tensorflow_pdk.reset_launch_counts()\n" + FIT_ON_PDK, prelude="")
    assert r.returncode == 0, r.stderr[-3000:]
    assert _launches(r.stdout) >= 8, r.stdout


def test_a_program_that_turned_soft_placement_off_keeps_its_choice():
    r = run_python("tf.config.set_soft_device_placement(False)\n" + FIRST_CALL + """
with tf.device("/PDK:0"):
    try:
        tf.data.Dataset.range(3)
        print("placed")
    except tf.errors.InvalidArgumentError as e:
        print("refused", "enable_soft_placement=0" in str(e))
print("soft", tf.config.get_soft_device_placement())
""")
    assert r.returncode == 0, r.stderr[-3000:]
    assert "refused True" in r.stdout and "soft False" in r.stdout, r.stdout
