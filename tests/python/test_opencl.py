"""The OPENCL plugin (plugins/opencl, docs/opencl.md): a device whose memory
the host cannot read, built with the installed kit alone.

- its kernel and runtime tests (plugins/opencl/tests) run in a process of
  their own, with the plugin scripts/setup.sh built loaded (a TensorFlow
  process gets its devices once: this pytest process already has them);
- its wheel installs and runs on its own: a venv with tensorflow-cpu and the
  tensorflow-pdk-opencl wheel, no tensorflow-pdk, lists the OPENCL device and
  runs on it;
- a Keras model trains on it (plugins/opencl/tests/test_keras.py).

The OpenCL driver on CI is PoCL (Debian's pocl-opencl-icd, a CPU driver).
"""
import glob
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
LIBRARY = ROOT / "build" / "opencl-wheel" / "libpdk_opencl.so"
sys.path.insert(0, str(ROOT / "scripts"))
import venvs  # noqa: E402

TENSORFLOW = "tensorflow-cpu==2.21.0"


def _opencl_env() -> dict:
    env = dict(os.environ)
    env["PDK_OPENCL_LIBRARY"] = str(LIBRARY)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "plugins" / "opencl" / "python")] +
        ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return env


@pytest.fixture(scope="module")
def library():
    if not LIBRARY.exists():
        pytest.fail(f"{LIBRARY} is missing: scripts/setup.sh builds it")
    return LIBRARY


def test_plugin_suite(library):
    """plugins/opencl/tests in a child pytest; its failures are this test's."""
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
         str(ROOT / "plugins" / "opencl" / "tests")],
        cwd=ROOT / "plugins" / "opencl" / "tests", env=_opencl_env(), capture_output=True,
        text=True, timeout=3000)
    tail = "\n".join((r.stdout + r.stderr).splitlines()[-60:])
    assert r.returncode == 0, tail
    assert " passed" in r.stdout, tail


def test_wheel_installs_and_runs_without_tensorflow_pdk(tmp_path):
    wheels = sorted(glob.glob(str(ROOT / "build" / "dist-opencl" / "tensorflow_pdk_opencl-*.whl")))
    if not wheels:
        pytest.fail("build/dist-opencl has no wheel: scripts/setup.sh builds it")
    root = pathlib.Path(os.environ.get("PDK_TF_VENVS", ROOT / "build" / "tf-venvs"))
    py = venvs.venv_with(root / "opencl", [TENSORFLOW])
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall",
                    wheels[-1]], check=True)
    code = (
        "import tensorflow as tf, numpy as np\n"
        "import importlib.util\n"
        "assert importlib.util.find_spec('tensorflow_pdk') is None, 'tensorflow-pdk is installed'\n"
        "print('devices', [d.device_type for d in tf.config.list_physical_devices()])\n"
        "x = np.arange(12, dtype=np.float32).reshape(3, 4)\n"
        "with tf.device('/OPENCL:0'):\n"
        "    y = tf.nn.relu(tf.identity(x) - 5.0)\n"
        "print('device', y.device)\n"
        "np.testing.assert_array_equal(y.numpy(), np.maximum(x - 5, 0))\n"
        "print('ok')\n")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PDK_") and k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    r = subprocess.run([str(py), "-c", code], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=600)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    assert "'OPENCL'" in r.stdout and "'PDK'" not in r.stdout, out[-3000:]
    assert "device:OPENCL:0" in r.stdout, out[-3000:]
    assert "ok" in r.stdout.splitlines()[-1]

    # docs/tutorial.md chapter 6: its Python blocks, as written, print what it says.
    import test_tutorial

    chapter = test_tutorial.opencl_part()
    (tmp_path / "chapter6.py").write_text("\n".join(test_tutorial.blocks("python", chapter)))
    r = subprocess.run([str(py), "chapter6.py"], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    stated = re.findall(r"^prints `([^`]*)`", chapter, re.M)
    assert stated and r.stdout.splitlines() == stated, r.stdout + r.stderr[-3000:]


def test_no_opencl_device_is_reported_not_a_crash():
    """With no OpenCL device selected the plugin registers none and says why."""
    env = _opencl_env()
    env["PDK_OPENCL_DEVICES"] = "none"
    code = ("import os, tensorflow as tf\n"
            "from tensorflow.python.framework import load_library\n"
            "load_library.load_pluggable_device_library(os.environ['PDK_OPENCL_LIBRARY'])\n"
            "print('opencl', len(tf.config.list_physical_devices('OPENCL')))\n")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    assert "opencl 0" in r.stdout
    assert "no OPENCL device is registered: PDK_OPENCL_DEVICES=none" in r.stderr
