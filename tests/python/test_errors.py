"""Bad input gives InvalidArgumentError naming the operands' shapes, never a crash."""
import numpy as np
import pytest
import tensorflow as tf

import tensorflow_pdk
from tensorflow_pdk.testing import launches


def _on_pdk(fn):
    with tf.device("/PDK:0"):
        return fn()


def test_matmul_shape_mismatch():
    a = np.ones((3, 4), np.float32)
    b = np.ones((5, 6), np.float32)
    with launches() as n, pytest.raises(tf.errors.InvalidArgumentError) as e:
        _on_pdk(lambda: tf.linalg.matmul(tf.constant(a), tf.constant(b)))
    msg = str(e.value)
    assert "MatMul" in msg and "4" in msg and "5" in msg
    assert n.get("MatMul", 0) == 1, "the error must come from the PDK kernel"


def test_reshape_to_wrong_size():
    with launches() as n, pytest.raises(tf.errors.InvalidArgumentError) as e:
        _on_pdk(lambda: tf.reshape(tf.constant(np.ones((2, 3), np.float32)), [4]))
    assert "6" in str(e.value) and "4" in str(e.value)
    assert n.get("Reshape", 0) == 1


def test_broadcast_mismatch():
    with launches() as n, pytest.raises(tf.errors.InvalidArgumentError) as e:
        _on_pdk(lambda: tf.add(tf.constant(np.ones((2, 3), np.float32)),
                               tf.constant(np.ones((4,), np.float32))))
    assert "[2,3]" in str(e.value) and "[4]" in str(e.value)
    assert n.get("AddV2", 0) == 1


def test_device_keeps_working_after_errors():
    with pytest.raises(tf.errors.InvalidArgumentError):
        _on_pdk(lambda: tf.add(tf.ones((2, 3)), tf.ones((4,))))
    out = _on_pdk(lambda: tf.add(tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])))
    np.testing.assert_array_equal(out.numpy(), [4.0, 6.0])


# Output shapes whose element count overflows int64: TensorFlow's TensorShape
# aborts the process on them (a CHECK), so the kit validates every shape
# before it allocates (pdk::CheckAllocatable). Each case runs in a child
# process, so an abort is caught and attributed instead of killing pytest.
OVERFLOW_CASES = {
    "Tile": "tf.raw_ops.Tile(input=tf.ones([2, 3], {dt}), multiples=tf.constant([2**31 - 1, "
            "2**31 - 1], tf.int64))",
    "Pad": "tf.raw_ops.Pad(input=tf.ones([2, 3], {dt}), paddings=tf.constant([[0, 2**40], "
           "[0, 2**40]], tf.int64))",
    "PadV2": "tf.raw_ops.PadV2(input=tf.ones([2, 3], {dt}), paddings=tf.constant([[0, 2**40], "
             "[0, 2**40]], tf.int64), constant_values=tf.constant(1, {dt}))",
}


@pytest.mark.parametrize("op", sorted(OVERFLOW_CASES))
@pytest.mark.parametrize("dt", ["tf.float32", "tf.int32", "tf.bool"])
def test_overflowing_output_shape_is_an_error_not_an_abort(op, dt):
    import subprocess
    import sys
    import textwrap

    if op == "PadV2" and dt == "tf.bool":
        dt = "tf.int8"
    code = textwrap.dedent(f"""
        import tensorflow as tf, tensorflow_pdk
        from tensorflow_pdk.testing import launches
        with tf.device("/PDK:0"), launches() as n:
            try:
                {OVERFLOW_CASES[op].format(dt=dt)}
                print("NO ERROR")
            except tf.errors.InvalidArgumentError as e:
                print("INVALID_ARGUMENT", n.get("{op}", 0), str(e).splitlines()[0])
    """)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, f"the process died ({p.returncode}):\n{p.stderr[-2000:]}"
    assert "INVALID_ARGUMENT 1" in p.stdout, p.stdout + p.stderr[-2000:]
    assert "Encountered overflow when multiplying" in p.stdout
    assert f"PDK {op}: output 0" in p.stdout
