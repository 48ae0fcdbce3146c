"""The kit's TF-style layer (include/pdk/tf, docs/kit.md) against the real
TensorFlow: the ZeroOut port of docs/kit.md compiles as it stands and runs on
/PDK:0; TF-style ops and kernels (tests/python/kit_plugin/probe_ops.cc) get
every attr type, infer shapes, forward buffers; examples/hello_device builds
against the installed kit and runs beside PDK, its graph rewrite next to PDK's;
and the plugin defines none of TensorFlow's C++ symbols.

The kernel library is built here with g++ from the repository's include/ and
TensorFlow's headers, and loaded next to PDK with
load_pluggable_device_library (a kernel-only plugin: TF_InitKernel alone).
"""
import difflib
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from child_process import run_python

ROOT = pathlib.Path(__file__).resolve().parents[2]
KIT_MD = ROOT / "docs" / "kit.md"
PLUGIN_SRC = pathlib.Path(__file__).resolve().parent / "kit_plugin"


def doc_block(tag: str) -> str:
    m = re.search(r"<!-- zero_out: %s -->\n```cpp\n(.*?)```" % tag, KIT_MD.read_text(), re.S)
    assert m, f"docs/kit.md has no ZeroOut block tagged {tag!r}"
    return m.group(1)


def tensorflow_dir() -> pathlib.Path:
    out = subprocess.run([sys.executable, str(ROOT / "cmake" / "find_tensorflow.py")],
                         capture_output=True, text=True, check=True).stdout
    return pathlib.Path(out.splitlines()[0])


def test_zero_out_port_changes_only_the_device():
    before, after = doc_block("tensorflow").splitlines(), doc_block("pdk").splitlines()
    changed = [l for l in difflib.unified_diff(before, after, lineterm="", n=0)
               if l[:1] in "+-" and not l.startswith(("+++", "---"))]
    removed = [l[1:] for l in changed if l.startswith("-")]
    added = [l[1:] for l in changed if l.startswith("+")]
    assert len(removed) == 1 and "DEVICE_CPU" in removed[0], changed
    assert added == [removed[0].replace("DEVICE_CPU", "DEVICE_PDK")], changed


@pytest.fixture(scope="module")
def kit_library(tmp_path_factory):
    """libkit_probe.so: the ZeroOut block of docs/kit.md as it stands, the
    probe ops, and a TF_InitKernel."""
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed")
    out = tmp_path_factory.mktemp("kit")
    (out / "zero_out.cc").write_text(doc_block("pdk"))
    tf_dir = tensorflow_dir()
    lib = out / "libkit_probe.so"
    cmd = ["g++", "-std=c++17", "-O1", "-shared", "-fPIC", "-fvisibility=hidden",
           "-fvisibility-inlines-hidden", "-Wall", "-Werror", "-Wno-unused-parameter",
           # TensorFlow's own headers trip these; the kit's do not.
           "-Wno-ignored-attributes", "-Wno-class-memaccess",
           "-I", str(ROOT / "include"), "-I", str(ROOT / "include" / "pdk" / "tfcompat"),
           "-isystem", str(tf_dir / "include"),
           "-D_GLIBCXX_USE_CXX11_ABI=1", "-DEIGEN_MAX_ALIGN_BYTES=64",
           # The kit names no device: a library for PDK's defines its name.
           '-DDEVICE_PDK="PDK"',
           str(out / "zero_out.cc"), str(PLUGIN_SRC / "probe_ops.cc"), str(PLUGIN_SRC / "entry.cc"),
           "-o", str(lib), "-L", str(tf_dir), "-l:libtensorflow_framework.so.2",
           "-Wl,--no-undefined", f"-Wl,-rpath,{tf_dir}"]
    build = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert build.returncode == 0, build.stderr[-4000:]
    return lib


def run_with_kit(lib, code: str):
    prelude = (
        "import tensorflow as tf, numpy as np, tensorflow_pdk\n"
        "from tensorflow.python.eager import context, execute\n"
        "from tensorflow.python.framework import load_library, op_def_library\n"
        f"load_library.load_pluggable_device_library({str(lib)!r})\n"
        "def call(op, n, inputs):  # eager\n"
        "    return execute.execute(op.encode(), n, inputs=inputs, attrs=(),\n"
        "                           ctx=context.context())\n"
        "def node(op, **args):  # in a graph: the op's outputs\n"
        "    return op_def_library._apply_op_helper(op, name=op.lstrip('_'), **args)[3]\n")
    r = run_python(code, prelude=prelude)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-4000:]
    return r.stdout


def test_zero_out_from_the_docs_runs_on_pdk(kit_library):
    out = run_with_kit(kit_library, """
        with tf.device("/PDK:0"):
            x = tf.constant([5, 2, 3], tf.int32)
            (z,) = call("ZeroOut", 1, [x])
        print("DEVICE", z.device)
        print("VALUE", z.numpy().tolist())
        @tf.function
        def f(x):
            with tf.device("/PDK:0"):
                (z,) = node("ZeroOut", to_zero=x)
            print("STATIC", z.shape.as_list())
            return z
        print("GRAPH", f(tf.constant([[7, 1], [2, 3]], tf.int32)).numpy().tolist())
    """)
    assert "DEVICE /job:localhost/replica:0/task:0/device:PDK:0" in out
    assert "VALUE [5, 0, 0]" in out
    assert "STATIC [2, 2]" in out  # the shape function: the input's shape
    assert "GRAPH [[7, 0], [0, 0]]" in out


def test_borrowed_inputs_let_tensorflow_forward_buffers(kit_library):
    # Eager: the Python tensor holds x, so y cannot reuse it. In a function,
    # relu's output is read by _KitForward alone: its buffer becomes y (the
    # kit's own view of x must not hold it).
    out = run_with_kit(kit_library, """
        x = tf.constant([1.0, -2.0, 3.0])
        with tf.device("/PDK:0"):
            y, fwd = call("_KitForward", 2, [x])
        print("EAGER", y.numpy().tolist(), bool(fwd))
        @tf.function
        def f(a):
            with tf.device("/PDK:0"):
                return node("_KitForward", x=tf.nn.relu(a))
        y, fwd = f(x)
        print("GRAPH", y.numpy().tolist(), bool(fwd))
    """)
    assert "EAGER [2.0, -4.0, 6.0] False" in out
    assert "GRAPH [2.0, 0.0, 6.0] True" in out


def test_a_kernel_for_another_device_is_reported_and_skipped(kit_library):
    r = run_python(f"""
        from tensorflow.python.framework import load_library
        load_library.load_pluggable_device_library({str(kit_library)!r})
        from tensorflow.python.framework import op_def_registry
        print("ZEROOUT_DEFINED", op_def_registry.get("ZeroOut") is not None)
    """)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "ZEROOUT_DEFINED True" in r.stdout
    assert ('PDK: REGISTER_KERNEL_BUILDER(Name("_KitForward")...) skipped: Device("GPU"), '
            'but this plugin\'s kernels are for device "PDK"') in r.stderr


def test_ops_named_with_an_underscore_are_private_as_in_tensorflow(kit_library):
    # tensorflow_pdk.load_op_library (test_op_wrappers.py) on this library: ZeroOut
    # and the _Kit* probe ops, on PDK.
    r = run_python(f"""
        m = tensorflow_pdk.load_op_library({str(kit_library)!r})
        print("OPS", sorted(m.OP_NAMES))
        names = [n for n, f in vars(m).items() if callable(f) and getattr(f, "__module__", "") == m.__name__]
        print("PUBLIC", sorted(n for n in names if not n.startswith("_")))
        print("PRIVATE", sorted(n for n in names if n.startswith("_")))
        with tf.device("/PDK:0"):
            z = m.zero_out(tf.constant([5, 2, 3], tf.int32))
            y, forwarded = getattr(m, "__kit_forward")(tf.constant([1.0, -2.0]))
        print("ZERO_OUT", z.device.rsplit("/", 1)[-1], z.numpy().tolist())
        print("KIT_FORWARD", y.numpy().tolist())
    """)
    assert r.returncode == 0, r.stderr[-4000:]
    out = r.stdout
    assert ("OPS ['ZeroOut', '_KitAttrs', '_KitBroadcastShape', '_KitForward', "
            "'_KitMatMulShape', '_KitShapes', '_KitUnchangedShape']") in out
    # (TensorFlow's generator adds an <op>_eager_fallback helper per op.)
    assert "PUBLIC ['ZeroOut', 'zero_out', 'zero_out_eager_fallback']" in out, out
    private = eval(re.search(r"^PRIVATE (.*)$", out, re.M).group(1))
    assert {"_KitAttrs", "_KitForward", "_KitShapes", "__kit_attrs", "__kit_forward",
            "__kit_shapes"} <= set(private), private
    assert "ZERO_OUT device:PDK:0 [5, 0, 0]" in out
    assert "KIT_FORWARD [2.0, -4.0]" in out


def test_every_attr_type_reaches_the_kernel(kit_library):
    out = run_with_kit(kit_library, """
        args = dict(i=7, f=1.5, b=True, t=tf.float64, s="abcd", li=[1, 2], lf=[0.25],
                    lb=[True, False], lt=[tf.int32], ls=["x", "yz"], shape=[2, 3],
                    shapes=[[4], []], tensor=tf.make_tensor_proto(np.array([9.0, 8.0], np.float32)))
        def run(**changes):
            @tf.function
            def f():
                with tf.device("/PDK:0"):
                    return node("_KitAttrs", **{**args, **changes})[0]
            return f()
        print("VALUES", run().numpy().tolist())
        try:
            run(shape=[None, 3])
        except tf.errors.InvalidArgumentError as e:
            print("ERROR", e.message.replace("\\n", " "))
    """)
    assert "VALUES [7.0, 1.5, 1.0, 2.0, 4.0, 1.0, 2.0, 0.25, 1.0, 0.0, 3.0, 1.0, 2.0, " \
           "2.0, 3.0, 4.0, 9.0, 8.0]" in out
    assert "ERROR" in out and "Attr 'shape' has an unknown dimension" in out


def test_shape_functions_merge_make_and_fail_like_tensorflow(kit_library):
    out = run_with_kit(kit_library, """
        @tf.function(input_signature=[tf.TensorSpec([None, 3]), tf.TensorSpec([2, None])])
        def f(a, b):
            with tf.device("/PDK:0"):
                merged, made, ident = node("_KitShapes", a=a, b=b)
            print("MERGED", merged.shape.as_list())
            print("MADE", made.shape.as_list())
            return merged, made, ident
        m, made, ident = f(tf.ones([2, 3]), tf.ones([2, 3]))
        print("RUN", m.shape.as_list(), made.shape.as_list(), ident.numpy().tolist())
        @tf.function
        def g(a, b):
            with tf.device("/PDK:0"):
                return node("_KitShapes", a=a, b=b)
        try:
            g(tf.ones([2, 3]), tf.ones([3, 3]))
        except (ValueError, tf.errors.InvalidArgumentError) as e:
            print("ERROR", str(e).replace("\\n", " "))
    """)
    assert "MERGED [2, 3]" in out
    assert "MADE [None, 7, None]" in out
    assert "RUN [2, 3] [2, 7, 1] [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]" in out
    assert ("Dimension 0 in both shapes must be equal, but are 2 and 3. "
            "Shapes are [2,3] and [3,3].") in out


def test_common_shape_fns_agree_with_tensorflows(kit_library):
    # BroadcastBinaryOpShapeFn / UnchangedShape / MatMulShape of the kit
    # (pdk/tf/common_shape_fns.h) against TensorFlow's AddV2, Identity, MatMul.
    out = run_with_kit(kit_library, """
        cases = [([None, 3], [2, 1]), ([2, 1, 3], [4, 1]), ([None], [None, 5]),
                 ([1, None], [None, 1]), (None, [2, 3]), ([], [3, 2])]
        for sa, sb in cases:
            g = tf.Graph()
            with g.as_default():
                a = tf.compat.v1.placeholder(tf.float32, sa)
                b = tf.compat.v1.placeholder(tf.float32, sb)
                kit = node("_KitBroadcastShape", a=a, b=b)[0].shape
                ref = tf.raw_ops.AddV2(x=a, y=b).shape
                print("BCAST", sa, sb, kit == ref, kit.as_list() if kit.rank is not None else None,
                      ref.as_list() if ref.rank is not None else None)
                kit = node("_KitUnchangedShape", a=a)[0].shape
                print("SAME", sa, kit.rank == tf.identity(a).shape.rank and
                      (kit.rank is None or kit.as_list() == tf.identity(a).shape.as_list()))
        g = tf.Graph()
        with g.as_default():
            a = tf.compat.v1.placeholder(tf.float32, [2, 3])
            b = tf.compat.v1.placeholder(tf.float32, [3, 4])
            print("MATMUL", node("_KitMatMulShape", a=a, b=b)[0].shape.as_list())
            for op, args in [("_KitBroadcastShape", dict(a=tf.zeros([2, 3]), b=tf.zeros([4, 3]))),
                             ("_KitMatMulShape", dict(a=tf.zeros([2, 3, 1]), b=b))]:
                try:
                    node(op, **args)
                except ValueError as e:
                    print("ERROR", op, str(e).replace("\\n", " "))
            try:
                tf.raw_ops.AddV2(x=tf.zeros([2, 3]), y=tf.zeros([4, 3]))
            except ValueError as e:
                print("TF", str(e).replace("\\n", " "))
    """)
    for line in out.splitlines():
        if line.startswith("BCAST"):
            assert " True " in line, line
        if line.startswith("SAME"):
            assert line.endswith("True"), line
    assert out.count("BCAST") == 6 and out.count("SAME") == 6, out
    assert "MATMUL [None, None]" in out  # the C API gives no bool attr to a shape fn
    words = "Dimensions must be equal, but are 2 and 4"
    tf_line = next(l for l in out.splitlines() if l.startswith("TF"))
    assert words in tf_line  # TensorFlow's own wording for AddV2
    assert any(l.startswith("ERROR _KitBroadcastShape") and words in l for l in out.splitlines())
    assert "ERROR _KitMatMulShape" in out and "Shape must be rank 2 but is rank 3" in out


def test_hello_device_builds_against_the_installed_kit_and_runs_beside_pdk(hello_library):
    """Its own device type HELLO, loaded into the process PDK runs in."""
    r = run_python(f"""
        hello_ops = tensorflow_pdk.load_op_library({str(hello_library)!r})
        print("DEVICES", sorted({{d.device_type for d in tf.config.list_physical_devices()}}))
        with tf.device("/HELLO:0"):
            y = tf.math.square(tf.constant([1.0, -2.0, 3.0]))
            z = hello_ops.hello_scale(y, factor=0.5)
        print("HELLO", y.device.rsplit("/", 1)[-1], y.numpy().tolist(), z.numpy().tolist())
        with tf.device("/PDK:0"):
            r = tf.nn.relu(tf.constant([1.0, -2.0]))
        print("PDK", r.device.rsplit("/", 1)[-1], r.numpy().tolist())
    """)
    assert r.returncode == 0, r.stderr[-4000:]
    assert "DEVICES ['CPU', 'HELLO', 'PDK']" in r.stdout
    assert "HELLO device:HELLO:0 [1.0, 4.0, 9.0] [0.5, 2.0, 4.5]" in r.stdout
    assert "PDK device:PDK:0 [1.0, 0.0]" in r.stdout


def cache_entry(build: pathlib.Path, name: str) -> str:
    m = re.search(r"^%s:\w+=(.*)$" % name, (build / "CMakeCache.txt").read_text(), re.M)
    assert m, f"no {name} in {build}/CMakeCache.txt"
    return m.group(1)


def test_the_cmake_package_builds_release_when_no_build_type_is_given(hello_library):
    # hello_library is configured without CMAKE_BUILD_TYPE.
    build = hello_library.parent
    assert cache_entry(build, "CMAKE_BUILD_TYPE") == "Release"
    flags = (build / "CMakeFiles" / "hello_device.dir" / "flags.make").read_text()
    assert re.search(r"^CXX_FLAGS = -O3 -DNDEBUG ", flags, re.M), flags


def test_the_cmake_package_keeps_a_build_type_that_is_given(tmp_path, cmake_env):
    import tensorflow_pdk

    if not pathlib.Path(tensorflow_pdk.get_cmake_dir()).is_dir():
        pytest.skip("the kit is not installed: tensorflow_pdk comes from the source tree")
    if shutil.which("cmake") is None:
        pytest.skip("cmake is not installed")
    r = subprocess.run(
        ["cmake", "-S", str(ROOT / "examples" / "hello_device"), "-B", str(tmp_path),
         "-DCMAKE_BUILD_TYPE=Debug", f"-DPython3_EXECUTABLE={sys.executable}",
         f"-DPDK_DIR={tensorflow_pdk.get_cmake_dir()}"],
        capture_output=True, text=True, timeout=600, env=cmake_env)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert cache_entry(tmp_path, "CMAKE_BUILD_TYPE") == "Debug"
    flags = (tmp_path / "CMakeFiles" / "hello_device.dir" / "flags.make").read_text()
    assert re.search(r"^CXX_FLAGS = -g ", flags, re.M) and "-O3" not in flags, flags


def test_hello_device_graph_rewrite_folds_scales_beside_pdks_rewrites(hello_library):
    """Two plugin optimizers in one process, each on its own nodes: HELLO's
    fold of HelloScale chains (examples/hello_device/graph.cc) and PDK's
    MatMul+BiasAdd+Relu fusion run on one graph; the partition graphs
    TensorFlow executes show both, and the values equal the CPU's."""
    r = run_python("""
        import ctypes
        LIB = %r
        scale = tensorflow_pdk.load_op_library(LIB).hello_scale
        folds = ctypes.CDLL(LIB).hello_scale_folds  # the library TensorFlow loaded
        folds.restype = ctypes.c_uint64
        x_val = np.array([1.0, -2.5, 3.25, 1e-3], np.float32)
        a_val, w_val = np.ones([2, 3], np.float32), np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
        g = tf.Graph()
        with g.as_default():
            x = tf.compat.v1.placeholder(tf.float32, [4])
            a = tf.compat.v1.placeholder(tf.float32, [2, 3])
            with tf.device("/HELLO:0"):
                kept = scale(x, 3.0, name="kept")       # fetched: must stay
                chain = scale(scale(kept, 0.5, name="mid"), 4.0, name="out")
            with tf.device("/PDK:0"):
                dense = tf.nn.relu(tf.nn.bias_add(tf.matmul(a, tf.constant(w_val)),
                                                  tf.constant([0.5, -0.5, 0.0, 1.0])))
        before = folds()
        tensorflow_pdk.reset_graph_rewrite_counts()
        md = tf.compat.v1.RunMetadata()
        with tf.compat.v1.Session(graph=g) as sess:
            k, c, d = sess.run([kept, chain, dense], {x: x_val, a: a_val},
                               options=tf.compat.v1.RunOptions(output_partition_graphs=True),
                               run_metadata=md)
        nodes = [n for pg in md.partition_graphs for n in pg.node]
        print("SCALES", sorted((n.name, n.attr["factor"].f) for n in nodes if n.op == "HelloScale"))
        print("SCALE_DEVICES", sorted({n.device.rsplit("/", 1)[-1] for n in nodes if n.op == "HelloScale"}))
        print("FUSED", [n.device.rsplit("/", 1)[-1] for n in nodes if n.op == "_PdkFusedMatMul"])
        print("FOLDS", folds() - before)
        print("PDK_COUNT", tensorflow_pdk.graph_rewrite_counts().get("MatMul+BiasAdd+Relu", 0))
        with tf.device("/CPU:0"):
            ref_k = tf.constant(x_val) * 3.0
            ref_c = ref_k * 0.5 * 4.0
            ref_d = tf.nn.relu(tf.matmul(a_val, w_val) + [0.5, -0.5, 0.0, 1.0])
        np.testing.assert_array_equal(k, ref_k.numpy())
        np.testing.assert_array_equal(c, ref_c.numpy())  # x*6 == ((x*3)*0.5)*4 in float32: powers of 2
        np.testing.assert_allclose(d, ref_d.numpy(), rtol=1e-6)

        @tf.function
        def f(v):
            with tf.device("/HELLO:0"):
                return scale(scale(v, 3.0), 0.5)
        before = folds()
        y = f(tf.constant(x_val))
        print("FUNCTION", y.device.rsplit("/", 1)[-1], folds() - before)
        np.testing.assert_array_equal(y.numpy(), (tf.constant(x_val) * 3.0 * 0.5).numpy())
    """ % str(hello_library))
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-4000:]
    # The chain folded into "out" (x * 3 * 0.5 * 4: factor 6); "mid" went,
    # "kept" is a fetch, so it stays.
    assert "SCALES [('kept', 3.0), ('out', 6.0)]" in r.stdout, r.stdout
    assert "SCALE_DEVICES ['device:HELLO:0']" in r.stdout
    assert "FUSED ['device:PDK:0']" in r.stdout  # PDK's optimizer, same graph
    assert int(re.search(r"FOLDS (\d+)", r.stdout).group(1)) >= 2
    assert int(re.search(r"PDK_COUNT (\d+)", r.stdout).group(1)) >= 1
    m = re.search(r"FUNCTION (\S+) (\d+)", r.stdout)
    assert m.group(1) == "device:HELLO:0" and int(m.group(2)) >= 1, r.stdout


# ---- symbols ------------------------------------------------------------------

def defined_symbols(path, dynamic: bool) -> set:
    args = ["nm", "--defined-only"] + (["-D"] if dynamic else []) + [str(path)]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if len(line.split()) >= 3}


def undefined_symbols(path) -> set:
    out = subprocess.run(["nm", "-D", "--undefined-only", str(path)], capture_output=True,
                         text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.split()}


def is_tensorflow_cpp(sym: str) -> bool:
    # Itanium mangling: a name, vtable, typeinfo, ... in namespace tensorflow.
    return re.match(r"_Z(T[VIS])?N?K?10tensorflow", sym) is not None


def collisions(plugin_symbols: set, tensorflow_symbols: set) -> set:
    return {s for s in plugin_symbols & tensorflow_symbols if is_tensorflow_cpp(s)}


@pytest.fixture(scope="module")
def tensorflow_exports():
    tf_dir = tensorflow_dir()
    syms = set()
    for lib in ("libtensorflow_framework.so.2", "libtensorflow_cc.so.2"):
        if (tf_dir / lib).exists():
            syms |= defined_symbols(tf_dir / lib, dynamic=True)
    return syms


def test_collision_check_sees_tensorflows_own_kernel_classes(tensorflow_exports):
    # The check below is only as good as this: TensorFlow does export the
    # classes the TF-style layer re-creates, so a plugin that defined them
    # outside the inline namespace would be caught.
    kernel_dtor = "_ZN10tensorflow8OpKernelD2Ev"  # tensorflow::OpKernel::~OpKernel()
    assert kernel_dtor in tensorflow_exports
    assert collisions({kernel_dtor, "_ZN10tensorflow7pdk_kit8OpKernelD2Ev"},
                      tensorflow_exports) == {kernel_dtor}


def check_symbols(lib: pathlib.Path, tensorflow_exports: set, need_symtab: bool):
    exported = defined_symbols(lib, dynamic=True)
    assert not {s for s in exported if is_tensorflow_cpp(s)}, \
        f"{lib.name} exports C++ symbols of namespace tensorflow"
    assert not {s for s in undefined_symbols(lib) if is_tensorflow_cpp(s)}, \
        f"{lib.name} depends on TensorFlow's C++ ABI"
    every = defined_symbols(lib, dynamic=False) | exported
    if need_symtab or any(s.startswith("_Z") and s not in exported for s in every):
        # Hidden definitions too (a stripped library has none to read).
        assert any(s.startswith("_ZN10tensorflow7pdk_kit") for s in every), \
            f"no symbol of the TF-style layer in {lib.name}'s symbol table"
        clash = collisions(every, tensorflow_exports)
        assert not clash, f"{lib.name} defines TensorFlow's own symbols (collisions): {sorted(clash)[:5]}"


def test_symbol_check_catches_a_library_defining_tensorflows_classes(tmp_path,
                                                                     tensorflow_exports):
    # What the inline namespace prevents: a hidden tensorflow::OpKernel of our own.
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed")
    src = tmp_path / "clash.cc"
    src.write_text("namespace tensorflow { namespace pdk_kit { struct OpKernel { virtual ~OpKernel(); };\n"
                   "OpKernel::~OpKernel() {} }\n"
                   "struct OpKernel { virtual ~OpKernel(); }; OpKernel::~OpKernel() {} }\n")
    lib = tmp_path / "libclash.so"
    subprocess.run(["g++", "-shared", "-fPIC", "-fvisibility=hidden", str(src), "-o", str(lib)],
                   check=True)
    with pytest.raises(AssertionError, match="collisions"):
        check_symbols(lib, tensorflow_exports, need_symtab=True)


def test_plugin_defines_none_of_tensorflows_cpp_symbols(tensorflow_exports):
    import tensorflow_pdk

    # The installed wheel's copy is stripped: its exports and imports are checked.
    check_symbols(pathlib.Path(tensorflow_pdk.plugin_path()), tensorflow_exports,
                  need_symtab=False)


def test_kit_library_defines_none_of_tensorflows_cpp_symbols(kit_library, tensorflow_exports):
    # Unstripped: every definition, hidden ones included (TF-style kernels, ops, the layer).
    check_symbols(kit_library, tensorflow_exports, need_symtab=True)
