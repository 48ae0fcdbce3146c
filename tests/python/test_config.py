"""PDK_* environment variables, tried as a user would: a value a variable does
not take gives one warning line naming the variable, the value and what is
used instead (include/pdk/env.h), and the plugin goes on with that.

Each case runs in a child process: the variables are read when the plugin
loads or when a graph is optimized.
"""
import textwrap

import pytest

from child_process import run_python

CODE = textwrap.dedent("""
    import tensorflow as tf, tensorflow_pdk
    devices = tf.config.list_physical_devices("PDK")
    print("DEVICES", len(devices))
    print("REASON", repr(tensorflow_pdk.disabled_reason()))
    if devices:
        with tf.device("/PDK:0"):
            y = tf.function(lambda a: tf.nn.relu(tf.linalg.matmul(a, a)))(tf.ones((4, 4)))
        print("RESULT", float(tf.reduce_sum(y)))
""")


def _run(env_extra):
    return run_python(CODE, env_extra, prelude="")


@pytest.mark.parametrize("var,value,warning", [
    ("PDK_DEVICE_COUNT", "abc", "PDK: PDK_DEVICE_COUNT=abc is not an integer; using 1"),
    ("PDK_DEVICE_COUNT", "-3", "PDK: PDK_DEVICE_COUNT=-3 is below 0; using 0"),
    ("PDK_STRICT", "yes", "PDK: PDK_STRICT=yes is not 0 or 1; using 0"),
    ("PDK_GRAPH_REWRITES", "maybe", "PDK: PDK_GRAPH_REWRITES=maybe is not 0 or 1; using 1"),
    ("PDK_GRAPH_REPORT", "loud", "PDK: PDK_GRAPH_REPORT=loud is not 0 or 1; using 0"),
    ("PDK_GRAPH_DISABLE", "nonsense",
     "PDK: PDK_GRAPH_DISABLE=nonsense names no rewrite 'nonsense' (known: identity_removal"),
    ("PDK_MEMORY_LIMIT_MB", "lots", "PDK: PDK_MEMORY_LIMIT_MB=lots is not an integer; using 0"),
    ("PDK_NUM_THREADS", "100000", "PDK: PDK_NUM_THREADS=100000 is above "),
])
def test_invalid_value_warns_once_and_runs(var, value, warning):
    p = _run({var: value})
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stderr.count(warning) == 1, p.stderr[-3000:]
    if var == "PDK_DEVICE_COUNT" and value == "-3":
        assert "DEVICES 0" in p.stdout
        return
    assert "DEVICES 1" in p.stdout and "RESULT 64.0" in p.stdout, p.stdout + p.stderr[-2000:]


def test_valid_values_are_silent():
    p = _run({"PDK_STRICT": "0", "PDK_GRAPH_REWRITES": "true", "PDK_DEVICE_COUNT": "1",
              "PDK_GRAPH_DISABLE": "matmul_fusion, pad_conv", "PDK_NUM_THREADS": "2"})
    assert p.returncode == 0, p.stderr[-3000:]
    assert "PDK: PDK_" not in p.stderr, p.stderr[-3000:]
    assert "RESULT 64.0" in p.stdout


def test_device_count_zero_says_why():
    p = _run({"PDK_DEVICE_COUNT": "0"})
    assert p.returncode == 0, p.stderr[-3000:]
    assert "DEVICES 0" in p.stdout
    assert "REASON 'PDK_DEVICE_COUNT=0" in p.stdout, p.stdout


def test_set_visible_devices_switches_pdk_off():
    """TensorFlow 2.21 alone keeps creating PDK:0 after set_visible_devices([],
    "PDK") (tensorflow_pdk/_visible_devices.py); with PDK's hook the ops run on
    the CPU and no PDK kernel launches."""
    code = textwrap.dedent("""
        import tensorflow as tf, tensorflow_pdk
        tf.config.set_visible_devices([], "PDK")
        print("VISIBLE", [d.device_type for d in tf.config.get_visible_devices()])
        print("LOGICAL", [d.device_type for d in tf.config.list_logical_devices()])
        tensorflow_pdk.reset_launch_counts()
        y = tf.function(lambda a: tf.linalg.matmul(a, a))(tf.ones((3, 3)))
        print("DEVICE", y.device.rsplit(":", 2)[-2], sum(tensorflow_pdk.launch_counts().values()))
    """)
    p = run_python(code, prelude="")
    assert p.returncode == 0, p.stderr[-3000:]
    assert "VISIBLE ['CPU']" in p.stdout and "LOGICAL ['CPU']" in p.stdout, p.stdout
    assert "DEVICE CPU 0" in p.stdout, p.stdout
