"""The wheel's loader (src/plugin_loader.cc): one PDK core per x86-64 level,
the highest this CPU supports picked at load time, PDK_MAX_CPU_ISA capping it,
and a broken installation that leaves `import tensorflow` working."""
import pathlib
import shutil

import pytest
import tensorflow_pdk
from tensorflow_pdk import _native

from child_process import run_python

LEVELS = ["x86-64-v2", "x86-64-v3"]


def _cores():
    core = pathlib.Path(_native.core_path())
    return sorted(core.parent.glob("libtensorflow_pdk_core.*.so"))


def _cpu_flags():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    return set()


requires_loader = pytest.mark.skipif(
    not hasattr(_native.lib(), "PDK_CoreIsa") or _native._loader is None,
    reason="a -DPDK_NATIVE=ON build has no loader")


@requires_loader
def test_the_wheel_has_one_core_per_level_and_runs_the_highest_this_cpu_supports():
    assert [p.name for p in _cores()] == [f"libtensorflow_pdk_core.{lv}.so" for lv in LEVELS]
    flags = _cpu_flags()
    v3 = {"avx2", "fma", "f16c", "bmi2", "movbe"} <= flags
    want = "x86-64-v3" if v3 else "x86-64-v2"
    assert tensorflow_pdk.cpu_isa() == want
    # The core says what it was compiled for (its predefined macros), and the
    # loader loaded that file.
    assert _native.lib().PDK_CoreIsa().decode() == want
    assert _native.core_path().endswith(f"libtensorflow_pdk_core.{want}.so")


@requires_loader
@pytest.mark.parametrize("cap,level", [("x86-64-v2", "x86-64-v2"), ("SSE4_2", "x86-64-v2"),
                                       ("avx2", "x86-64-v3")])
def test_pdk_max_cpu_isa_caps_the_core(cap, level):
    r = run_python("""
        from tensorflow_pdk import _native
        x = np.random.default_rng(0).standard_normal((64, 48)).astype(np.float32)
        y = np.random.default_rng(1).standard_normal((48, 32)).astype(np.float32)
        tensorflow_pdk.reset_launch_counts()
        with tf.device("/PDK:0"):
            got = tf.linalg.matmul(x, y) + tf.nn.relu(tf.constant(x[:, :32]))
        with tf.device("/CPU:0"):
            want = tf.linalg.matmul(x, y) + tf.nn.relu(tf.constant(x[:, :32]))
        print("ISA", tensorflow_pdk.cpu_isa(), _native.lib().PDK_CoreIsa().decode())
        print("MATMUL", tensorflow_pdk.launch_counts().get("MatMul", 0))
        print("ERR", float(np.max(np.abs(got.numpy() - want.numpy()))))
    """, env_extra={"PDK_MAX_CPU_ISA": cap, "TF_CPP_MIN_LOG_LEVEL": "2"})
    assert r.returncode == 0, r.stderr
    out = dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)
    isa, core = out["ISA"].rsplit(" ", 1)
    assert core == level and isa.startswith(level), out
    if level != "x86-64-v3" and "avx2" in _cpu_flags():
        assert "capped by PDK_MAX_CPU_ISA" in isa, out
    assert int(out["MATMUL"]) == 1 and float(out["ERR"]) < 1e-4, out


@requires_loader
def test_an_unknown_pdk_max_cpu_isa_warns_and_uses_the_highest():
    r = run_python("print('ISA', tensorflow_pdk.cpu_isa())",
                   env_extra={"PDK_MAX_CPU_ISA": "avx1024", "TF_CPP_MIN_LOG_LEVEL": "2"})
    assert r.returncode == 0, r.stderr
    assert "PDK: PDK_MAX_CPU_ISA=avx1024 is not one of x86-64-v2 (SSE4_2), x86-64-v3 (AVX2)" \
        in r.stderr
    assert ("ISA " + tensorflow_pdk.cpu_isa()) in r.stdout


@requires_loader
def test_a_loader_without_its_cores_leaves_tensorflow_working(tmp_path):
    # A broken installation: the loader alone. TensorFlow must still import and
    # compute on the CPU; the loader says why PDK is missing.
    lone = tmp_path / "libtensorflow_pdk_plugin.so"
    shutil.copy(tensorflow_pdk.plugin_path(), lone)
    r = run_python("""
        from tensorflow.python.framework import load_library
        load_library.load_pluggable_device_library(%r)
        print("SUM", float(tf.reduce_sum(tf.constant([1.0, 2.0]))))
        print("PDK", len(tf.config.list_physical_devices("PDK")))
    """ % str(lone), env_extra={"TF_CPP_MIN_LOG_LEVEL": "2"})
    assert r.returncode == 0, r.stderr
    assert "SUM 3.0" in r.stdout
    assert "PDK 1" in r.stdout  # the installed copy's device, loaded first
    assert "no PDK core could be loaded" in r.stderr
    assert "x86-64-v3 not built" in r.stderr or "x86-64-v2 not built" in r.stderr


@requires_loader
def test_the_wheels_libraries_need_nothing_tensorflow_has_not_loaded():
    # The loader refers to no TensorFlow symbol (TensorFlow 2.16/2.17 open
    # plugins before their C API is global); the cores need no
    # libtensorflow_framework.so.2 entry (manylinux), the loader promotes it.
    import subprocess
    und = subprocess.run(["nm", "-D", "--undefined-only", tensorflow_pdk.plugin_path()],
                         capture_output=True, text=True, check=True).stdout
    assert not [ln for ln in und.splitlines() if ln.split()[-1].startswith(("TF_", "SE_", "TP_"))]
    for core in _cores():
        needed = subprocess.run(["readelf", "-d", str(core)], capture_output=True, text=True,
                                check=True).stdout
        assert "libtensorflow_framework" not in needed, core
