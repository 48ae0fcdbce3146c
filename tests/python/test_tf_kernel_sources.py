"""TensorFlow's own CPU kernel sources on a kit-built device (issue 23).

Each file of TF_FILES, in the shared copy of TensorFlow 2.20/2.21's kernel
sources (../shared/tf_kernel_sources, or $PDK_TF_KERNEL_SOURCES), is compiled
where it lies, unmodified, with DEVICE_CPU defined as "HELLO" (nothing else),
against the installed kit (its headers at TensorFlow's include paths come
before TensorFlow's), into one plugin with examples/hello_device's device
runtime and the kit's framework sources (tests/python/tf_kernel_sources_plugin). Every case then runs the op on
/HELLO:0 and on TensorFlow's CPU kernel, in a child process, and must give the
same values bit for bit, or the same error class and message.
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

from child_process import run_python

ROOT = pathlib.Path(__file__).resolve().parents[2]
PLUGIN_SRC = pathlib.Path(__file__).resolve().parent / "tf_kernel_sources_plugin"
# The files that compile unchanged today; docs/kit.md counts them.
TF_FILES = ["argmax_op.cc", "bias_op.cc", "concat_op.cc", "cwise_op_add_1.cc",
            "dynamic_stitch_op.cc", "gather_op.cc", "histogram_op.cc", "pad_op.cc",
            "population_count_op.cc", "reverse_sequence_op.cc", "roll_op.cc", "where_op.cc"]


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
# and tf, np in scope. Each runs on the CPU and on HELLO. A reduction may sum
# in another order than TensorFlow's own build of the same source (its
# vector width differs): such a case also gives a float64 NumPy reference,
# and where the two float32 results differ, HELLO's must be no farther from
# it than the CPU's.
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
    "BiasAdd NHWC": "tf.raw_ops.BiasAdd(value=tf.constant(f), bias=tf.constant(f[0, 0]))",
    "BiasAdd NCHW": "tf.raw_ops.BiasAdd(value=tf.constant(f), bias=tf.constant(f[:, 0, 0]), data_format='NCHW')",
    "BiasAdd half": "tf.raw_ops.BiasAdd(value=tf.constant(f.astype(np.float16)), bias=tf.constant(f[0, 0].astype(np.float16)))",
    "BiasAdd bias size mismatch": "tf.raw_ops.BiasAdd(value=tf.constant(f), bias=tf.constant(f[0]))",
    "BiasAdd rank 1 value": "tf.raw_ops.BiasAdd(value=tf.constant(f[0, 0]), bias=tf.constant(f[0, 0]))",
    "BiasAddV1": "tf.raw_ops.BiasAddV1(value=tf.constant(x), bias=tf.constant(x[0]))",
    "BiasAddGrad NHWC": ("tf.raw_ops.BiasAddGrad(out_backprop=tf.constant(f))",
                         "f.astype(np.float64).sum(axis=(0, 1))"),
    "BiasAddGrad NCHW": ("tf.raw_ops.BiasAddGrad(out_backprop=tf.constant(f), data_format='NCHW')",
                         "f.astype(np.float64).sum(axis=(0, 2))"),
    "BiasAddGrad bfloat16": "tf.raw_ops.BiasAddGrad(out_backprop=tf.cast(tf.constant(f), tf.bfloat16))",
    "ConcatV2 axis 1": "tf.raw_ops.ConcatV2(values=[tf.constant(f), tf.constant(f[:, :2])], axis=tf.constant(1))",
    "ConcatV2 axis -1 int64": "tf.raw_ops.ConcatV2(values=[tf.constant(x.astype(np.int64))] * 3, axis=tf.constant(-1, tf.int64))",
    "ConcatV2 bool": "tf.raw_ops.ConcatV2(values=[tf.constant(f > 0), tf.constant(f < 0)], axis=tf.constant(0))",
    "ConcatV2 large": "tf.raw_ops.ConcatV2(values=[tf.ones([300, 70]), tf.zeros([300, 50])], axis=tf.constant(1))",
    "ConcatV2 rank mismatch": "tf.raw_ops.ConcatV2(values=[tf.constant(f), tf.constant(x)], axis=tf.constant(0))",
    "ConcatV2 shape mismatch": "tf.raw_ops.ConcatV2(values=[tf.constant(f), tf.constant(f[:, :2])], axis=tf.constant(0))",
    "ConcatV2 axis out of range": "tf.raw_ops.ConcatV2(values=[tf.constant(f), tf.constant(f)], axis=tf.constant(3))",
    "Concat": "tf.raw_ops.Concat(concat_dim=tf.constant(2), values=[tf.constant(f), tf.constant(f)])",
    "ConcatOffset": "tf.raw_ops.ConcatOffset(concat_dim=tf.constant(1), shape=[tf.constant([2, 3, 5]), tf.constant([2, 7, 5])])",
    "ConcatOffset mismatch": "tf.raw_ops.ConcatOffset(concat_dim=tf.constant(1), shape=[tf.constant([2, 3, 5]), tf.constant([2, 7, 4])])",
    "AddV2 same shape": "tf.raw_ops.AddV2(x=tf.constant(f), y=tf.constant(f * 3))",
    "AddV2 broadcast": "tf.raw_ops.AddV2(x=tf.constant(f), y=tf.constant(f[0, :, :1]))",
    "AddV2 scalar int64": "tf.raw_ops.AddV2(x=tf.constant(x.astype(np.int64)), y=tf.constant(np.int64(7)))",
    "AddV2 bfloat16 broadcast": "tf.raw_ops.AddV2(x=tf.cast(tf.constant(f), tf.bfloat16), y=tf.cast(tf.constant(f[:, :1]), tf.bfloat16))",
    "AddV2 half 5-D broadcast": "tf.raw_ops.AddV2(x=tf.constant(f.astype(np.float16).reshape(3, 1, 5, 1, 4)), y=tf.constant(f[0].astype(np.float16).reshape(1, 5, 1, 4, 1)))",
    "AddV2 incompatible": "tf.raw_ops.AddV2(x=tf.constant(f), y=tf.constant(f[:, :2]))",
    "Add int32": "tf.raw_ops.Add(x=tf.constant(x), y=tf.constant(x[:1]))",
    "DynamicStitch": "tf.raw_ops.DynamicStitch(indices=[tf.constant([0, 2]), tf.constant([[1], [3]])], data=[tf.constant(f[:2]), tf.constant(f[:2, None])])",
    "DynamicStitch int32 gaps": "tf.raw_ops.DynamicStitch(indices=[tf.constant([5, 1])], data=[tf.constant(x[:2])])",
    "DynamicStitch bad data shape": "tf.raw_ops.DynamicStitch(indices=[tf.constant([0, 1])], data=[tf.constant(f[:3])])",
    "DynamicStitch negative index": "tf.raw_ops.DynamicStitch(indices=[tf.constant([0, -1])], data=[tf.constant(f[:2])])",
    "ParallelDynamicStitch": "tf.raw_ops.ParallelDynamicStitch(indices=[tf.constant([0, 2]), tf.constant([1])], data=[tf.constant(f[:2]), tf.constant(f[2:])])",
    "GatherV2 axis 1": "tf.raw_ops.GatherV2(params=tf.constant(f), indices=tf.constant([4, 0, 2]), axis=tf.constant(1))",
    "GatherV2 int64 indices": "tf.raw_ops.GatherV2(params=tf.constant(x), indices=tf.constant([[1, 0], [2, 2]], tf.int64), axis=tf.constant(0))",
    "GatherV2 batch_dims": "tf.raw_ops.GatherV2(params=tf.constant(f), indices=tf.constant([[0, 4], [1, 1], [3, 2]]), axis=tf.constant(1), batch_dims=1)",
    "GatherV2 out of range": "tf.raw_ops.GatherV2(params=tf.constant(f), indices=tf.constant([5]), axis=tf.constant(1))",
    "GatherV2 bad axis": "tf.raw_ops.GatherV2(params=tf.constant(f), indices=tf.constant([0]), axis=tf.constant(3))",
    "Gather": "tf.raw_ops.Gather(params=tf.constant(f), indices=tf.constant([2, 0]))",
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
    if isinstance(expr, tuple):
        expr, ref = expr
        r["REF"] = np.asarray(eval(ref), np.float64).tolist()
    for dev in ("CPU", "HELLO"):
        try:
            with tf.device(f"/{dev}:0"):
                ts = eval(expr)
            ts = ts if isinstance(ts, list) else [ts]  # ops with a list output
            r[dev] = {"device": sorted({t.device.rsplit("/", 1)[-1] for t in ts}),
                      "dtype": [t.dtype.name for t in ts], "shape": [list(t.shape) for t in ts],
                      "bytes": [t.numpy().tobytes().hex() for t in ts]}
        except tf.errors.OpError as e:  # the class and TensorFlow's message, without the node name
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
        assert hello["device"] == ["device:HELLO:0"], hello["device"]
        assert (hello["dtype"], hello["shape"]) == (cpu["dtype"], cpu["shape"])
        if hello["bytes"] != cpu["bytes"] and "REF" in results[case]:
            ref = np.asarray(results[case]["REF"])
            got = [np.frombuffer(bytes.fromhex(d["bytes"][0]), np.dtype(d["dtype"][0]))
                   for d in (hello, cpu)]
            err_hello, err_cpu = (np.abs(g.astype(np.float64) - ref.ravel()).max() for g in got)
            assert err_hello <= err_cpu, (err_hello, err_cpu)
        else:
            assert hello["bytes"] == cpu["bytes"]


def test_the_plugin_exports_only_its_c_entry_points(plugin):
    """Every TensorFlow C++ name the sources use resolves inside the plugin
    (linked with --no-undefined) or in TensorFlow's exported absl; nothing of
    the kit is exported but its C entry point TFKit_OpNames (the plugin's
    REGISTER_OPs, none here; tensorflow_pdk.load_op_library)."""
    nm = subprocess.run(["nm", "-D", "--defined-only", str(plugin)], capture_output=True,
                        text=True, check=True).stdout
    exported = sorted(l.split()[-1] for l in nm.splitlines() if l.split()[1] in "TBDVWu")
    assert exported == ["SE_InitPlugin", "TFKit_OpNames", "TF_InitKernel"], exported
