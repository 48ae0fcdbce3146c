"""PDK_* environment variables, tried as a user would: a value a variable does
not take gives one warning line naming the variable, the value and what is
used instead (include/pdk/env.h), and the plugin goes on with that.

Each case runs in a child process: the variables are read when the plugin
loads or when a graph is optimized.
"""
import os
import textwrap

import pytest

from child_process import run_python

CODE = textwrap.dedent("""
    import tensorflow as tf, tensorflow_pdk
    from tensorflow_pdk import _native
    devices = tf.config.list_physical_devices("PDK")
    print("DEVICES", len(devices))
    print("REASON", repr(tensorflow_pdk.disabled_reason()))
    if devices:
        with tf.device("/PDK:0"):
            y = tf.function(lambda a: tf.nn.relu(tf.linalg.matmul(a, a)))(tf.ones((4, 4)))
        print("RESULT", float(tf.reduce_sum(y)))
        print("LIMIT_MIB", tensorflow_pdk.device_allocator_stats(0)["bytes_limit"] >> 20)
        print("THREADS", _native.read_text(_native.lib().PDK_ConfigText)
              .split("num_threads\t")[1].split()[0])
        print("ASYNC", tensorflow_pdk.async_status())
""")

# What the defaults are on this machine (src/device/pdk_device.cc, Config).
PHYSICAL_MIB = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") >> 20
DEFAULT_LIMIT_MIB = PHYSICAL_MIB // 2


def _run(env_extra):
    return run_python(CODE, env_extra, prelude="")


def _value(stdout, key):
    return [ln.split(" ", 1)[1] for ln in stdout.splitlines() if ln.startswith(key + " ")][0]


# One rule for every variable (include/pdk/env.h): not a number or below the
# minimum -> the default, above the maximum -> the maximum; one warning
# naming the variable, the value, the problem and the value used.
@pytest.mark.parametrize("var,value,warning", [
    ("PDK_DEVICE_COUNT", "abc", "PDK: PDK_DEVICE_COUNT=abc is not an integer; using the default, 1"),
    ("PDK_DEVICE_COUNT", "-5", "PDK: PDK_DEVICE_COUNT=-5 is below 0; using the default, 1"),
    ("PDK_STRICT", "yes", "PDK: PDK_STRICT=yes is not 0 or 1; using the default, 0"),
    ("PDK_GRAPH_REWRITES", "maybe",
     "PDK: PDK_GRAPH_REWRITES=maybe is not 0 or 1; using the default, 1"),
    ("PDK_GRAPH_REPORT", "loud", "PDK: PDK_GRAPH_REPORT=loud is not 0 or 1; using the default, 0"),
    ("PDK_ASYNC", "perhaps", "PDK: PDK_ASYNC=perhaps is not 0 or 1; using the default, 1"),
    ("PDK_GRAPH_DISABLE", "nonsense",
     "PDK: PDK_GRAPH_DISABLE=nonsense names no rewrite 'nonsense' (known: identity_removal"),
    ("PDK_MEMORY_LIMIT_MB", "lots",
     f"PDK: PDK_MEMORY_LIMIT_MB=lots is not an integer; using the default, {DEFAULT_LIMIT_MIB} MiB"),
    ("PDK_MEMORY_LIMIT_MB", "-5",
     f"PDK: PDK_MEMORY_LIMIT_MB=-5 is below 1 MiB; using the default, {DEFAULT_LIMIT_MIB} MiB"),
    ("PDK_MEMORY_LIMIT_MB", "0",
     f"PDK: PDK_MEMORY_LIMIT_MB=0 is below 1 MiB; using the default, {DEFAULT_LIMIT_MIB} MiB"),
    ("PDK_MEMORY_LIMIT_MB", "99999999999",
     f"PDK: PDK_MEMORY_LIMIT_MB=99999999999 is above the physical memory, {PHYSICAL_MIB} MiB; "
     f"using {PHYSICAL_MIB} MiB"),
    ("PDK_NUM_THREADS", "-5", "PDK: PDK_NUM_THREADS=-5 is below 1; using the default, "),
    ("PDK_NUM_THREADS", "100000", "PDK: PDK_NUM_THREADS=100000 is above 4 per hardware thread, "),
    ("PDK_ASYNC_MIN_BYTES", "-1",
     "PDK: PDK_ASYNC_MIN_BYTES=-1 is below 0 bytes; using the default, 1048576 bytes"),
])
def test_invalid_value_warns_once_and_runs(var, value, warning):
    p = _run({var: value})
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stderr.count(warning) == 1, p.stderr[-3000:]
    assert "DEVICES 1" in p.stdout and "RESULT 64.0" in p.stdout, p.stdout + p.stderr[-2000:]
    # The value the warning names is the one in force.
    line = [ln for ln in p.stderr.splitlines() if ln.startswith(f"PDK: {var}={value} ")][0]
    used = line.rsplit("; using ", 1)[1].replace("the default, ", "")
    if var == "PDK_MEMORY_LIMIT_MB":
        assert used == f"{_value(p.stdout, 'LIMIT_MIB')} MiB", (line, p.stdout)
    if var == "PDK_NUM_THREADS":
        assert used == _value(p.stdout, "THREADS"), (line, p.stdout)
    if var == "PDK_DEVICE_COUNT":
        assert used == "1", line
    if var == "PDK_ASYNC_MIN_BYTES":
        assert f">= {used}" in _value(p.stdout, "ASYNC"), (line, p.stdout)


def test_graph_dump_directory_that_cannot_be_written_warns_once(tmp_path):
    missing = tmp_path / "no" / "such" / "dir"
    code = CODE + textwrap.dedent("""
        for n in (3, 5, 7):   # three more graphs optimized, three more dumps tried
            tf.function(lambda a: a * 2.0)(tf.ones((n,)))
        print("DONE")
    """)
    p = run_python(code, {"PDK_GRAPH_DUMP": str(missing)}, prelude="")
    assert p.returncode == 0, p.stderr[-3000:]
    assert "RESULT 64.0" in p.stdout and "DONE" in p.stdout
    warning = f"PDK: PDK_GRAPH_DUMP={missing} cannot be written ({missing}/pdk_graph_0_before.pb: " \
              "No such file or directory); using no dump"
    assert p.stderr.count(warning) == 1, p.stderr[-3000:]
    assert p.stderr.count("PDK_GRAPH_DUMP") == 1, p.stderr[-3000:]
    # A directory that exists gets the graphs, silently.
    p = run_python(code, {"PDK_GRAPH_DUMP": str(tmp_path)}, prelude="")
    assert p.returncode == 0 and "PDK_GRAPH_DUMP" not in p.stderr, p.stderr[-3000:]
    assert (tmp_path / "pdk_graph_0_before.pb").stat().st_size > 0


def test_graph_disable_names_the_rewrites_it_uses():
    p = _run({"PDK_GRAPH_DISABLE": "matmul_fusion, bogus,other"})
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stderr.count("PDK: PDK_GRAPH_DISABLE=matmul_fusion, bogus,other names no rewrite "
                          "'bogus', 'other' (known: ") == 1, p.stderr[-3000:]
    assert "; using PDK_GRAPH_DISABLE=matmul_fusion\n" in p.stderr, p.stderr[-3000:]


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
