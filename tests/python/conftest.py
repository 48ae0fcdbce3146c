import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Keep TensorFlow's log noise out of test output.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# The reference is TensorFlow's Eigen CPU kernels on every machine. On a CPU
# with AVX-512, TensorFlow 2.21 switches its CPU kernels to oneDNN by default
# (on AVX2-only CPUs they stay Eigen); those word some errors differently, and
# crash the process on some inputs a kernel must reject (SIGFPE in MaxPool
# with a window larger than its input; a segfault in tf-nightly's bfloat16
# MatMul on AMX). Set before TensorFlow loads; child processes inherit it.
# PDK's own kernels do not read it; tests about oneDNN-on stock (bench/) set
# it themselves.
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@pytest.fixture
def without_elementwise_fusion(monkeypatch):
    """PDK_GRAPH_DISABLE plus elementwise_fusion: for tests of other graph
    rewrites, whose elementwise nodes the generic elementwise fusion
    (test_graph_elementwise_fusion.py) would take over."""
    have = os.environ.get("PDK_GRAPH_DISABLE", "")
    monkeypatch.setenv("PDK_GRAPH_DISABLE", ",".join(x for x in (have, "elementwise_fusion") if x))


def _cmake_env() -> dict:
    env = dict(os.environ)
    if shutil.which("ccache") is not None:
        env.setdefault("CMAKE_CXX_COMPILER_LAUNCHER", "ccache")
    return env


@pytest.fixture
def cmake_env():
    """The environment for building a plugin with CMake in a test: this one,
    with ccache as the compiler launcher where it is installed (CMake reads
    CMAKE_CXX_COMPILER_LAUNCHER from the environment), so a rebuild of the
    same sources is a cache hit."""
    return _cmake_env()


@pytest.fixture(scope="session")
def hello_library(tmp_path_factory):
    """examples/hello_device built with its own CMakeLists.txt and
    find_package(PDK CONFIG) from the installed wheel (not this tree's include/),
    with no CMAKE_BUILD_TYPE (the package's default); returns the library."""
    import tensorflow_pdk

    if not (pathlib.Path(tensorflow_pdk.get_include()) / "pdk" / "tf" / "op_kernel.h").exists():
        pytest.skip("the kit is not installed: tensorflow_pdk comes from the source tree")
    if shutil.which("cmake") is None:
        pytest.skip("cmake is not installed")
    build = tmp_path_factory.mktemp("hello") / "build"
    configure = subprocess.run(
        ["cmake", "-S", str(ROOT / "examples" / "hello_device"), "-B", str(build),
         f"-DPython3_EXECUTABLE={sys.executable}", f"-DPDK_DIR={tensorflow_pdk.get_cmake_dir()}"],
        capture_output=True, text=True, timeout=600, env=_cmake_env())
    assert configure.returncode == 0, configure.stdout[-2000:] + configure.stderr[-2000:]
    made = subprocess.run(["cmake", "--build", str(build)], capture_output=True, text=True,
                          timeout=900, env=_cmake_env())
    assert made.returncode == 0, made.stdout[-4000:]
    flags = (build / "CMakeFiles" / "hello_device.dir" / "flags.make").read_text()
    assert f" {tensorflow_pdk.get_include()} " in flags and f"{ROOT}/include" not in flags, flags
    return build / "libhello_device.so"
