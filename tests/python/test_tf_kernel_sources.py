"""TensorFlow's own CPU kernel sources on a kit-built device (issue 23).

Each file of TF_FILES, read from the shared copy of TensorFlow 2.20/2.21's
kernel sources (../shared/tf_kernel_sources, or $PDK_TF_KERNEL_SOURCES), is
compiled with DEVICE_CPU replaced by DEVICE_HELLO and nothing else, against the
installed kit (its headers at TensorFlow's include paths come before
TensorFlow's), into one plugin with examples/hello_device's device runtime
(tests/python/tf_kernel_sources_plugin). Every case then runs the op on
/HELLO:0 and on TensorFlow's CPU kernel, in a child process, and must give the
same values bit for bit, or the same error class and message.
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from child_process import run_python

ROOT = pathlib.Path(__file__).resolve().parents[2]
PLUGIN_SRC = pathlib.Path(__file__).resolve().parent / "tf_kernel_sources_plugin"
# The files that compile unchanged today; docs/kit.md counts them.
TF_FILES = ["argmax_op.cc", "histogram_op.cc", "pad_op.cc", "population_count_op.cc",
            "reverse_sequence_op.cc", "roll_op.cc", "where_op.cc"]


def sources_dir() -> pathlib.Path:
    env = os.environ.get("PDK_TF_KERNEL_SOURCES")
    return pathlib.Path(env) if env else ROOT.parent / "shared" / "tf_kernel_sources"


@pytest.fixture(scope="module")
def plugin():
    import tensorflow_pdk

    src = sources_dir()
    if not (src / "tensorflow" / "core" / "kernels" / "roll_op.cc").exists():
        pytest.skip(f"TensorFlow's kernel sources are not at {src} (set PDK_TF_KERNEL_SOURCES)")
    if not (pathlib.Path(tensorflow_pdk.get_include()) / "pdk" / "tfcompat").exists():
        pytest.skip("the kit is not installed: tensorflow_pdk comes from the source tree")
    if shutil.which("cmake") is None:
        pytest.skip("cmake is not installed")
    build = ROOT / "build" / "tf-kernel-sources"  # kept: rebuilds are incremental
    env = dict(os.environ, CCACHE_BASEDIR=str(ROOT), CCACHE_NOHASHDIR="1")
    configure = subprocess.run(
        ["cmake", "-S", str(PLUGIN_SRC), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
         f"-DPython3_EXECUTABLE={sys.executable}", f"-DPDK_DIR={tensorflow_pdk.get_cmake_dir()}",
         f"-DTF_KERNEL_SOURCES={src}", f"-DTF_KERNEL_FILES={';'.join(TF_FILES)}",
         f"-DHELLO_DEVICE_DIR={ROOT / 'examples' / 'hello_device'}"],
        capture_output=True, text=True, timeout=600, env=env)
    assert configure.returncode == 0, configure.stdout[-2000:] + configure.stderr[-2000:]
    made = subprocess.run(["cmake", "--build", str(build), "-j", "2"], capture_output=True,
                          text=True, timeout=1800, env=env)
    assert made.returncode == 0, made.stdout[-6000:]
    return build / "libtf_kernels_on_hello.so"


# name -> Python expression of the op, with x (int32 [3,5]), f (float32 [3,5,4])
# and tf, np in scope. Each runs on the CPU and on HELLO.
CASES = {
    "PopulationCount int32": "tf.raw_ops.PopulationCount(x=tf.constant(x))",
    "PopulationCount uint64": "tf.raw_ops.PopulationCount(x=tf.constant(x.astype(np.uint64) * 977))",
    "PopulationCount int8": "tf.raw_ops.PopulationCount(x=tf.constant(x.astype(np.int8)))",
    "ArgMax float axis 1": "tf.raw_ops.ArgMax(input=tf.constant(f), dimension=tf.constant(1))",
    "ArgMin float axis -1 int32": "tf.raw_ops.ArgMin(input=tf.constant(f), dimension=tf.constant(-1), output_type=tf.int32)",
    "ArgMax half": "tf.raw_ops.ArgMax(input=tf.constant(f.astype(np.float16)), dimension=tf.constant(0))",
    "ArgMax bool": "tf.raw_ops.ArgMax(input=tf.constant(f > 0), dimension=tf.constant(2))",
    "ArgMax bad axis": "tf.raw_ops.ArgMax(input=tf.constant(f), dimension=tf.constant(5))",
    "ArgMax empty axis": "tf.raw_ops.ArgMax(input=tf.zeros([3, 0]), dimension=tf.constant(1))",
    "Roll float two axes": "tf.raw_ops.Roll(input=tf.constant(f), shift=tf.constant([1, -2]), axis=tf.constant([0, 2]))",
    "Roll int32 int64 shift": "tf.raw_ops.Roll(input=tf.constant(x), shift=tf.constant([7], tf.int64), axis=tf.constant([1], tf.int64))",
    "Roll complex64": "tf.raw_ops.Roll(input=tf.complex(tf.constant(f), -tf.constant(f)), shift=tf.constant(3), axis=tf.constant(1))",
    "Roll bfloat16": "tf.raw_ops.Roll(input=tf.cast(tf.constant(f), tf.bfloat16), shift=tf.constant(-1), axis=tf.constant(2))",
    "Roll shift/axis mismatch": "tf.raw_ops.Roll(input=tf.constant(f), shift=tf.constant([1]), axis=tf.constant([0, 2]))",
    "Roll axis out of range": "tf.raw_ops.Roll(input=tf.constant(f), shift=tf.constant([1]), axis=tf.constant([3]))",
    "ReverseSequence float": "tf.raw_ops.ReverseSequence(input=tf.constant(f), seq_lengths=tf.constant([1, 3, 5], tf.int64), seq_dim=1, batch_dim=0)",
    "ReverseSequence int32 seq_dim 2": "tf.raw_ops.ReverseSequence(input=tf.constant(f.astype(np.int32)), seq_lengths=tf.constant([4, 0, 2]), seq_dim=2, batch_dim=0)",
    "ReverseSequence too long": "tf.raw_ops.ReverseSequence(input=tf.constant(f), seq_lengths=tf.constant([1, 9, 5], tf.int64), seq_dim=1, batch_dim=0)",
    "ReverseSequence seq_dim == batch_dim": "tf.raw_ops.ReverseSequence(input=tf.constant(f), seq_lengths=tf.constant([1, 2, 3], tf.int64), seq_dim=0, batch_dim=0)",
    "Where bool": "tf.raw_ops.Where(condition=tf.constant(f > 0))",
    "Where float": "tf.raw_ops.Where(condition=tf.constant(np.where(f > 0.5, f, 0)))",
    "Where empty": "tf.raw_ops.Where(condition=tf.zeros([4, 0], tf.bool))",
    "HistogramFixedWidth float": "tf.raw_ops.HistogramFixedWidth(values=tf.constant(f), value_range=tf.constant([-1.0, 1.0]), nbins=tf.constant(7))",
    "HistogramFixedWidth int64 out": "tf.raw_ops.HistogramFixedWidth(values=tf.constant(x), value_range=tf.constant([-500, 500]), nbins=tf.constant(9), dtype=tf.int64)",
    "HistogramFixedWidth bad range": "tf.raw_ops.HistogramFixedWidth(values=tf.constant(f), value_range=tf.constant([1.0, -1.0]), nbins=tf.constant(7))",
    "HistogramFixedWidth nbins 0": "tf.raw_ops.HistogramFixedWidth(values=tf.constant(f), value_range=tf.constant([-1.0, 1.0]), nbins=tf.constant(0))",
    "Pad float": "tf.raw_ops.Pad(input=tf.constant(f), paddings=tf.constant([[1, 0], [0, 2], [3, 1]]))",
    "Pad int64 paddings": "tf.raw_ops.Pad(input=tf.constant(x), paddings=tf.constant([[0, 3], [2, 2]], tf.int64))",
    "PadV2 int32": "tf.raw_ops.PadV2(input=tf.constant(x), paddings=tf.constant([[1, 0], [0, 2]]), constant_values=tf.constant(7))",
    "Pad scalar": "tf.raw_ops.Pad(input=tf.constant(2.5), paddings=tf.zeros([0, 2], tf.int32))",
    "Pad negative": "tf.raw_ops.Pad(input=tf.constant(f), paddings=tf.constant([[1, 0], [0, -9], [3, 1]]))",
    "Pad wrong paddings shape": "tf.raw_ops.Pad(input=tf.constant(f), paddings=tf.constant([[1, 0], [0, 2]]))",
}

RUNNER = """
import json
from tensorflow.python.framework import load_library
load_library.load_pluggable_device_library(LIB)
rng = np.random.default_rng(0)
x = rng.integers(-1000, 1000, (3, 5)).astype(np.int32)
f = rng.standard_normal((3, 5, 4)).astype(np.float32)
out = {}
for name, expr in CASES.items():
    r = {}
    for dev in ("CPU", "HELLO"):
        try:
            with tf.device(f"/{dev}:0"):
                t = eval(expr)
            r[dev] = {"device": t.device.rsplit("/", 1)[-1], "dtype": t.dtype.name,
                      "shape": list(t.shape), "bytes": t.numpy().tobytes().hex()}
        except Exception as e:  # the class and TensorFlow's message, without the node name
            r[dev] = {"error": type(e).__name__, "message": e.message.split(" [Op:")[0].split("}} ")[-1]}
    out[name] = r
print("RESULTS" + json.dumps(out))
"""


@pytest.fixture(scope="module")
def results(plugin):
    r = run_python(f"LIB = {str(plugin)!r}\nCASES = {CASES!r}\n" + RUNNER, timeout=600)
    assert r.returncode == 0, r.stderr[-4000:]
    line = next(l for l in r.stdout.splitlines() if l.startswith("RESULTS"))
    return json.loads(line[len("RESULTS"):])


@pytest.mark.parametrize("case", sorted(CASES))
def test_tensorflow_kernel_source_on_a_kit_device_matches_the_cpu(results, case):
    cpu, hello = results[case]["CPU"], results[case]["HELLO"]
    if "error" in cpu:
        assert hello == cpu
    else:
        assert "error" not in hello, hello
        assert hello["device"] == "device:HELLO:0", hello["device"]
        assert (hello["dtype"], hello["shape"], hello["bytes"]) == (
            cpu["dtype"], cpu["shape"], cpu["bytes"])


def test_the_plugin_exports_only_its_c_entry_points(plugin):
    """Every TensorFlow C++ name the sources use resolves inside the plugin
    (linked with --no-undefined) or in TensorFlow's exported absl; nothing of
    the kit is exported but its C entry point TFKit_OpNames (the plugin's
    REGISTER_OPs, none here; tensorflow_pdk.load_op_library)."""
    nm = subprocess.run(["nm", "-D", "--defined-only", str(plugin)], capture_output=True,
                        text=True, check=True).stdout
    exported = sorted(l.split()[-1] for l in nm.splitlines() if l.split()[1] in "TBDVWu")
    assert exported == ["SE_InitPlugin", "TFKit_OpNames", "TF_InitKernel"], exported
