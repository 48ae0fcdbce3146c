"""Reading a PDK tensor from eager code (python/tensorflow_pdk/_fetch.py):
``t.numpy()``, ``float(t)``, ``print(t)`` go through one ``_PdkToHost``
dispatch (src/kernels/array/to_host.cc) instead of TensorFlow's copy through
its EventMgr threads, and give what the CPU's read gives."""
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

import tensorflow_pdk

DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int8, tf.int16, tf.int32,
          tf.int64, tf.uint8, tf.uint16, tf.uint32, tf.uint64, tf.bool, tf.complex64,
          tf.complex128]
SHAPES = [(), (0,), (1,), (3,), (2, 3, 5), (7, 0, 2)]


def _value(dtype, shape):
    rng = np.random.default_rng(len(shape))
    v = rng.integers(-100, 100, shape) if dtype.is_integer else rng.standard_normal(shape)
    if dtype == tf.bool:
        v = v > 0
    elif dtype.is_unsigned:
        v = np.abs(v)
    elif dtype.is_complex:
        v = v + 1j * rng.standard_normal(shape)
    return np.asarray(v).astype(dtype.as_numpy_dtype)


def _reads():
    return tensorflow_pdk.launch_counts().get("_PdkToHost", 0)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_numpy_of_a_pdk_tensor_is_the_cpus_and_runs_pdk_to_host(dtype, shape):
    v = _value(dtype, shape)
    with tf.device("/CPU:0"):
        want = tf.constant(v)._numpy()
    with tf.device("/PDK:0"):
        t = tf.identity(tf.constant(v))
    # int32 tensors of PDK live in host memory (docs/architecture.md): TensorFlow
    # reads them in place, as a CPU tensor.
    on_pdk = dtype != tf.int32
    assert t.backing_device.endswith("device:PDK:0" if on_pdk else "device:CPU:0")
    before = _reads()
    got = t._numpy()
    assert _reads() == before + on_pdk
    assert type(got) is type(want)  # a NumPy scalar for rank 0, as TensorFlow gives
    assert got.dtype == want.dtype and np.shape(got) == np.shape(want)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    np.testing.assert_array_equal(t.numpy(), v)


def test_scalar_conversions_and_printing_read_through_pdk_to_host():
    with tf.device("/PDK:0"):
        s = tf.identity(tf.constant(2.5)) * 2
        i = tf.identity(tf.constant(7, tf.int64)) + 1
        b = tf.logical_not(tf.identity(tf.constant(False)))
        m = tf.identity(tf.constant([[1.5, -2.0]]))
    before = _reads()
    assert float(s) == 5.0 and int(i) == 8 and bool(b) is True
    assert f"{s:.1f}" == "5.0"
    assert repr(m) == "<tf.Tensor: shape=(1, 2), dtype=float32, numpy=array([[ 1.5, -2. ]], " \
                      "dtype=float32)>"
    assert str(s) == "tf.Tensor(5.0, shape=(), dtype=float32)"
    assert _reads() - before >= 5


def test_numpy_is_a_copy_the_tensor_keeps_its_value():
    with tf.device("/PDK:0"):
        t = tf.identity(tf.constant([1.0, 2.0, 3.0]))
    a = t.numpy()
    a[0] = 99.0
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0, 3.0])


def test_variables_and_cpu_tensors_read_as_before():
    with tf.device("/PDK:0"):
        v = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(v.numpy(), [[1.0, 2.0], [3.0, 4.0]])
    with tf.device("/CPU:0"):
        c = tf.constant([1.0, 2.0]) + 1
    before = _reads()
    np.testing.assert_array_equal(c.numpy(), [2.0, 3.0])
    assert _reads() == before  # a CPU tensor is TensorFlow's to read


def _prints_true_in_a_fresh_process(code):
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=300, env={**__import__("os").environ, "TF_CPP_MIN_LOG_LEVEL": "2"})
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split()[-1] == "True", r.stdout


def test_the_read_is_installed_when_tensorflow_loads_the_plugin():
    code = ("import tensorflow as tf\n"
            "from tensorflow.python.framework import ops\n"
            "print(getattr(ops._EagerTensorBase._numpy, '_pdk_wrapped', False))\n")
    _prints_true_in_a_fresh_process(code)


# ------------------------------------------------------- NumPy arrays into PDK

MOVED = [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int64, tf.uint8]


def _launches(op):
    return tensorflow_pdk.launch_counts().get(op, 0)


@pytest.mark.parametrize("dtype", MOVED, ids=lambda d: d.name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_numpy_array_under_a_pdk_scope_goes_in_through_pdk_from_host(dtype, shape):
    v = _value(dtype, shape)
    before = _launches("_PdkFromHost")
    with tf.device("/PDK:0"):
        t = tf.constant(v)
    assert _launches("_PdkFromHost") == before + 1
    assert t.backing_device.endswith("device:PDK:0") and t.dtype == dtype
    assert t.shape == shape
    with tf.device("/CPU:0"):
        want = tf.constant(v)
    np.testing.assert_array_equal(t.numpy(), want.numpy())


def test_numpy_array_without_a_scope_lands_on_pdk_as_before():
    v = _value(tf.float32, (4, 5))
    before = _launches("_PdkFromHost")
    t = tf.convert_to_tensor(v)
    assert t.backing_device.endswith("device:PDK:0")  # where TensorFlow itself puts it
    assert _launches("_PdkFromHost") == before + 1
    np.testing.assert_array_equal(t.numpy(), v)


def test_conversion_keeps_tensorflows_semantics():
    v = np.array([[1.25, -2.5], [3.0, 4.5]])
    with tf.device("/PDK:0"):
        t = tf.constant(v, dtype=tf.float32)   # float64 array, float32 tensor
        v[0, 0] = 99.0                          # the tensor is a copy
        u = tf.constant(np.array([1, 2, 3], np.int32))      # int32: host memory, TensorFlow's path
        b = tf.constant(np.array([True, False]))             # not moved: TensorFlow's path
        s = tf.constant(np.array([b"a", b"bc"]))
        with pytest.raises(ValueError, match="Failed to convert a NumPy array to a Tensor"):
            tf.constant(np.array([object()]))   # TensorFlow's own error
    assert t.dtype == tf.float32
    np.testing.assert_array_equal(t.numpy(), np.array([[1.25, -2.5], [3.0, 4.5]], np.float32))
    assert u.backing_device.endswith("CPU:0") and list(u.numpy()) == [1, 2, 3]
    assert list(b.numpy()) == [True, False] and list(s.numpy()) == [b"a", b"bc"]


def test_large_arrays_keep_tensorflows_copy():
    v = np.ones((1024, 1025), np.float32)  # > 4 MiB
    before = _launches("_PdkFromHost")
    with tf.device("/PDK:0"):
        t = tf.constant(v)
    assert _launches("_PdkFromHost") == before
    assert t.backing_device.endswith("device:PDK:0") and float(tf.reduce_sum(t)) == v.size


def test_tf_function_with_numpy_arguments_on_pdk_matches_the_cpu():
    x = _value(tf.float32, (32, 64))
    y = np.arange(32, dtype=np.int64) % 10

    @tf.function
    def step(a, b):
        return tf.reduce_sum(a * 2.0) + tf.cast(tf.reduce_sum(b), tf.float32)

    with tf.device("/CPU:0"):
        want = float(step(x, y))
    before, sums = _launches("_PdkFromHost"), _launches("Sum")
    with tf.device("/PDK:0"):
        got = float(step(x, y))
    # The arguments stay host tensors (TensorSpec.cast): the function copies
    # them to PDK itself, where its ops run.
    assert _launches("_PdkFromHost") == before
    assert _launches("Sum") >= sums + 2
    assert got == pytest.approx(want, rel=1e-6)


def test_pdk_from_host_checks_its_bytes():
    from tensorflow.python.eager import execute

    with tf.device("/CPU:0"):
        raw = tf.constant(np.zeros(3, np.int32))
    with tf.device("/PDK:0"):
        with pytest.raises(tf.errors.InvalidArgumentError, match="bytes holds 12 bytes"):
            execute.execute(b"_PdkFromHost", 1, inputs=[raw],
                            attrs=("T", tf.float32.as_datatype_enum, "shape", [2, 2]),
                            ctx=__import__("tensorflow.python.eager.context",
                                           fromlist=["context"]).context())


# ------------------------------------------------ Keras's convert_to_numpy

def test_keras_convert_to_numpy_reads_pdk_tensors_through_pdk_to_host():
    import keras
    from keras.src import backend

    for dtype in (tf.float32, tf.float16, tf.int64, tf.uint8, tf.bool, tf.complex64):
        for shape in ((), (3,), (2, 3, 5), (7, 0, 2)):
            v = _value(dtype, shape)
            with tf.device("/CPU:0"):
                want = np.array(tf.constant(v))
            with tf.device("/PDK:0"):
                t = tf.identity(tf.constant(v))
            before = _reads()
            for convert in (keras.ops.convert_to_numpy, backend.convert_to_numpy):
                got = convert(t)
                assert type(got) is np.ndarray and got.flags.writeable and got.flags.owndata
                assert got.dtype == want.dtype and got.shape == want.shape
                np.testing.assert_array_equal(got, want)
            assert _reads() == before + 2, (dtype, shape)
    with tf.device("/CPU:0"):
        c = tf.constant([1.0, 2.0])
    before = _reads()
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(c), [1.0, 2.0])
    assert _reads() == before  # a CPU tensor is Keras's own conversion
    # Other values keep Keras's behaviour and errors. bfloat16 is left to Keras's
    # np.array on PDK too: it converts rank >= 1 (through TensorFlow's __array__,
    # i.e. numpy()) and raises on rank 0, as on the CPU.
    np.testing.assert_array_equal(keras.ops.convert_to_numpy([1, 2]), [1, 2])
    for device in ("/CPU:0", "/PDK:0"):
        with tf.device(device):
            b = tf.identity(tf.constant([1.5, -2.0], tf.bfloat16))
            b0 = tf.identity(tf.constant(1.5, tf.bfloat16))
        before = _reads()
        got = keras.ops.convert_to_numpy(b)
        assert got.dtype == b.dtype.as_numpy_dtype and got.tolist() == [1.5, -2.0]
        with pytest.raises(ValueError, match="__array__"):
            keras.ops.convert_to_numpy(b0)


def test_train_on_batch_logs_read_through_pdk_to_host_and_match_the_cpu():
    import keras

    from tensorflow_pdk.testing import keras_compile_args

    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 8)).astype(np.float32)
    y = rng.integers(0, 3, 32).astype(np.int64)
    logs = {}
    for device in ("/CPU:0", "/PDK:0"):
        keras.utils.set_random_seed(1)
        with tf.device(device):
            m = keras.Sequential([keras.Input((8,)), keras.layers.Dense(3)])
            m.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"], **keras_compile_args(device))
            xd, yd = tf.identity(x), tf.identity(y)
            logs[device] = m.train_on_batch(xd, yd, return_dict=True)  # builds the step
            before = _reads()
            logs[device] = m.train_on_batch(xd, yd, return_dict=True)
            reads = _reads() - before
    assert reads == 2  # loss and accuracy, each one _PdkToHost
    assert logs["/PDK:0"].keys() == logs["/CPU:0"].keys()
    for k, v in logs["/CPU:0"].items():
        assert type(logs["/PDK:0"][k]) is float
        np.testing.assert_allclose(logs["/PDK:0"][k], v, rtol=1e-5)


def test_the_keras_read_is_installed_when_keras_is_imported_after_tensorflow():
    code = ("import tensorflow as tf\n"
            "import keras\n"
            "from keras.src import backend\n"
            "import keras.src.backend.tensorflow as kt\n"
            "import keras.src.backend.tensorflow.core as core\n"
            "f = core.convert_to_numpy\n"
            "print(getattr(f, '_pdk_wrapped', False) and backend.convert_to_numpy is f"
            " and kt.convert_to_numpy is f)\n")
    _prints_true_in_a_fresh_process(code)
