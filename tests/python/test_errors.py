"""Bad input gives InvalidArgumentError naming the operands' shapes, never a crash."""
import re

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
        with tf.device("/PDK:0"):
            try:
                {OVERFLOW_CASES[op].format(dt=dt)}
                print("NO ERROR")
            except tf.errors.InvalidArgumentError as e:
                print("INVALID_ARGUMENT", str(e).splitlines()[0])
    """)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, f"the process died ({p.returncode}):\n{p.stderr[-2000:]}"
    # TensorFlow's wording, then the detail only PDK's kernel writes.
    assert "INVALID_ARGUMENT" in p.stdout, p.stdout + p.stderr[-2000:]
    assert "Encountered overflow when multiplying" in p.stdout
    assert f"({op}: output 0 of shape [" in p.stdout and "device:PDK:0" in p.stdout


# ---- TensorFlow's wording first (issue 14): users' code and TensorFlow's own
# kernel tests match on these messages; PDK's detail follows in parentheses.
# Each case runs on the CPU and on PDK: the same error class, and PDK's
# message contains the CPU's message (the part before " [Op:").

C = tf.constant

TF_WORDING = {
    "AddV2 broadcast": (lambda: tf.add(tf.ones([2, 5]), tf.ones([5, 2])),
                        "Incompatible shapes: [2,5] vs. [5,2]", "AddV2"),
    "Less broadcast": (lambda: tf.less(tf.ones([2, 5]), tf.ones([5, 2])),
                       "Incompatible shapes: [2,5] vs. [5,2]", "Less"),
    "MatMul sizes": (lambda: tf.matmul(tf.ones([1, 3]), tf.ones([2, 2])),
                     "Matrix size-incompatible: In[0]: [1,3], In[1]: [2,2]", "MatMul"),
    "MatMul ndims differ": (lambda: tf.raw_ops.MatMul(a=tf.ones([3]), b=tf.ones([2, 2])),
                            "In[0] and In[1] has different ndims: [3] vs. [2,2]", "MatMul"),
    "MatMul rank 3": (lambda: tf.raw_ops.MatMul(a=tf.ones([1, 2, 3]), b=tf.ones([1, 3, 2])),
                      "In[0] and In[1] ndims must be == 2: 3", "MatMul"),
    "BatchMatMulV2 sizes": (lambda: tf.raw_ops.BatchMatMulV2(x=tf.ones([2, 1, 3]),
                                                             y=tf.ones([2, 2, 2])),
                            "Matrix size-incompatible: In[0]: [2,1,3], In[1]: [2,2,2]",
                            "BatchMatMulV2"),
    "Sum duplicate axis": (lambda: tf.raw_ops.Sum(input=tf.ones([2]), axis=[0, 0]),
                           "Invalid reduction arguments: Axes contains duplicate dimension: 0",
                           "Sum"),
    "Sum axis out of range": (lambda: tf.raw_ops.Sum(input=tf.ones([2]), axis=[3]),
                              "Invalid reduction dimension (3 for input with 1 dimension(s)",
                              "Sum"),
    "Pow negative integer exponent": (lambda: tf.pow(C([2, 3]), C([-2, 1])),
                                      "Integers to negative integer powers are not allowed",
                                      "Pow"),
    "Qr rank": (lambda: tf.linalg.qr(tf.constant(1.0)),
                "Input tensor 0 must have rank >= 2, got 0", "Qr"),
    "TopKV2 k < 0": (lambda: tf.raw_ops.TopKV2(input=tf.ones([3, 4]), k=-1),
                     "Need k >= 0, got -1", "TopKV2"),
    "TopKV2 k > n": (lambda: tf.raw_ops.TopKV2(input=tf.ones([3, 4]), k=5),
                     "input must have at least k columns. Had 4, needed 5", "TopKV2"),
    "Conv2D filter depth 0": (lambda: tf.raw_ops.Conv2D(input=tf.ones([1, 5, 5, 0]),
                                                        filter=tf.ones([3, 3, 0, 4]),
                                                        strides=[1, 1, 1, 1], padding="VALID"),
                              "filter depth must be stricly positive, got 0", "Conv2D"),
    "Conv3D filter depth 0": (lambda: tf.raw_ops.Conv3D(input=tf.ones([1, 5, 5, 5, 0]),
                                                        filter=tf.ones([3, 3, 3, 0, 4]),
                                                        strides=[1, 1, 1, 1, 1], padding="VALID"),
                              "filter_depth must be non-zero", "Conv3D"),
    "Transpose perm rank": (lambda: tf.raw_ops.Transpose(x=tf.ones([2, 2]),
                                                         perm=C([[0, 1], [1, 0]])),
                            "perm must be rank 1, got shape [2,2]", "Transpose"),
    "Transpose perm size": (lambda: tf.raw_ops.Transpose(x=tf.ones([2, 2]), perm=C([0, 1, 2])),
                            "transpose expects a vector of size 2. But input(1) is a vector "
                            "of size 3", "Transpose"),
    "Transpose perm range": (lambda: tf.raw_ops.Transpose(x=tf.ones([2, 2]), perm=C([0, 2])),
                             "2 is out of range [0 .. 2)", "Transpose"),
    "Transpose perm dup": (lambda: tf.raw_ops.Transpose(x=tf.ones([2, 2]), perm=C([1, 1])),
                           "0 is missing from {1,1}.", "Transpose"),
    "Reshape size": (lambda: tf.raw_ops.Reshape(tensor=tf.ones([2, 3]), shape=C([4])),
                     "Input to reshape is a tensor with 6 values, but the requested shape has 4",
                     "Reshape"),
    "Reshape multiple": (lambda: tf.raw_ops.Reshape(tensor=tf.ones([2, 3]), shape=C([4, -1])),
                         "Input to reshape is a tensor with 6 values, but the requested shape "
                         "requires a multiple of 4", "Reshape"),
    "Reshape too many": (lambda: tf.raw_ops.Reshape(
        tensor=tf.ones([2, 3]), shape=C([2**31 - 1] * 3)),
        "Shape [2147483647, 2147483647, 2147483647] has too many elements", "Reshape"),
    "Reshape two -1": (lambda: tf.raw_ops.Reshape(tensor=tf.ones([2, 3]), shape=C([-1, -1])),
                       "Only one input size may be -1, not both 0 and 1", "Reshape"),
    "Reshape negative": (lambda: tf.raw_ops.Reshape(tensor=tf.ones([2, 3]), shape=C([-2, 3])),
                         "Size 0 must be non-negative, not -2", "Reshape"),
    "SplitV sum": (lambda: tf.raw_ops.SplitV(value=tf.ones([5]), size_splits=C([2, 2]),
                                             axis=0, num_split=2),
                   "Determined shape must either match input shape along split_dim exactly if "
                   "fully specified, or be less than the size of the input along split_dim if "
                   "not fully specified.  Got: 4", "SplitV"),
    "SplitV -1 too big": (lambda: tf.raw_ops.SplitV(value=tf.ones([5]), size_splits=C([6, -1]),
                                                    axis=0, num_split=2),
                          "Determined shape must either match input shape along split_dim "
                          "exactly", "SplitV"),
    "SplitV two -1": (lambda: tf.raw_ops.SplitV(value=tf.ones([5]), size_splits=C([-1, -1]),
                                                axis=0, num_split=2),
                      "There can only be one -1 in the input.", "SplitV"),
    "SplitV negative": (lambda: tf.raw_ops.SplitV(value=tf.ones([5]), size_splits=C([-2, 7]),
                                                  axis=0, num_split=2),
                        "Split size at index 0 must be >= 0. Got: -2", "SplitV"),
    "SplitV one output": (lambda: tf.raw_ops.SplitV(value=tf.ones([5]), size_splits=C([4]),
                                                    axis=0, num_split=1),
                          "If there is only one output, it must have the same size as the "
                          "input. Input size: 5 output size: 4", "SplitV"),
    "SplitV length": (lambda: tf.raw_ops.SplitV(value=tf.ones([5]), size_splits=C([2, 2, 1]),
                                                axis=0, num_split=2),
                      "size of the split_tensor must be 1-D and have the same elements as "
                      "outputs got 1 -D and 3 elements", "SplitV"),
    "Split axis not scalar": (lambda: tf.raw_ops.Split(value=tf.ones([5]), axis=C([0]),
                                                       num_split=1),
                              "split_dim must be a scalar but has rank 1", "Split"),
    "Split uneven": (lambda: tf.raw_ops.Split(value=tf.ones([5]), axis=0, num_split=2),
                     "Number of ways to split should evenly divide the split dimension, but got "
                     "split_dim 0 (size = 5) and num_split 2", "Split"),
    "Split axis": (lambda: tf.raw_ops.Split(value=tf.ones([5]), axis=3, num_split=1),
                   "-input rank(-1) <= split_dim < input rank (1), but got 3", "Split"),
    "Pad negative": (lambda: tf.raw_ops.Pad(input=tf.ones([2, 3]), paddings=C([[-1, 0], [0, 0]])),
                     "Paddings must be non-negative: -1 0", "Pad"),
    "Pad rows": (lambda: tf.raw_ops.Pad(input=tf.ones([2, 3]), paddings=C([[1, 0]])),
                 "The first dimension of paddings must be the rank of inputs[1,2] [2,3]", "Pad"),
    "Pad columns": (lambda: tf.raw_ops.Pad(input=tf.ones([2, 3]), paddings=C([1, 0, 0, 0])),
                    "paddings must be a matrix with 2 columns: [4]", "Pad"),
    "PadV2 constant": (lambda: tf.raw_ops.PadV2(input=tf.ones([2, 3]),
                                                paddings=C([[1, 0], [0, 0]]),
                                                constant_values=tf.ones([2])),
                       "constant_values must be a scalar. Found: [2]", "PadV2"),
    "MirrorPad REFLECT": (lambda: tf.raw_ops.MirrorPad(input=tf.ones([2, 3]),
                                                       paddings=C([[2, 0], [0, 0]]),
                                                       mode="REFLECT"),
                          "paddings must be less than the dimension size: 2, 0 not less than 2",
                          "MirrorPad"),
    "MirrorPad SYMMETRIC": (lambda: tf.raw_ops.MirrorPad(input=tf.ones([2, 3]),
                                                         paddings=C([[3, 0], [0, 0]]),
                                                         mode="SYMMETRIC"),
                            "paddings must be no greater than the dimension size: 3, 0 greater "
                            "than 2", "MirrorPad"),
    "MirrorPad negative": (lambda: tf.raw_ops.MirrorPad(input=tf.ones([2, 3]),
                                                        paddings=C([[-1, 0], [0, 0]]),
                                                        mode="REFLECT"),
                           "paddings must be non-negative: -1 0", "MirrorPad"),
    "TruncateDiv integer by zero": (lambda: tf.truncatediv(C([4, 5]), C([2, 0])),
                                    "Unexpected error in binary operator (only integer div and "
                                    "mod should have errors)", "TruncateDiv"),
    "Div integer by zero": (lambda: tf.raw_ops.Div(x=C([4, 5]), y=C([2, 0])),
                            "Integer division by zero", "Div"),
    "ArgMin empty axis": (lambda: tf.raw_ops.ArgMin(input=tf.ones([2, 0]), dimension=1),
                          "Reduction axis 1 is empty in shape [2,0]", "ArgMin"),
    "ArgMax empty axis, empty output": (lambda: tf.raw_ops.ArgMax(input=tf.ones([0, 0]),
                                                                  dimension=1),
                                        "Reduction axis 1 is empty in shape [0,0]", "ArgMax"),
    # Issue 25: TensorFlow's kernel tests match these (stack_op_test,
    # gather_op_test, slice_op_test, pooling_ops_test).
    "Pack shapes": (lambda: tf.raw_ops.Pack(values=[tf.zeros([0, 3]), tf.zeros([1, 3])]),
                    "Shapes of all inputs must match: values[0].shape = [0,3] != values[1].shape "
                    "= [1,3]", "Pack"),
    "Pack axis": (lambda: tf.raw_ops.Pack(values=[tf.zeros([2]), tf.zeros([2])], axis=3),
                  "axis = 3 not in [-2, 2)", "Pack"),
    "Unpack axis": (lambda: tf.raw_ops.Unpack(value=tf.zeros([2, 2]), num=2, axis=3),
                    "axis = 3 not in [-2, 2)", "Unpack"),
    "Unpack num": (lambda: tf.raw_ops.Unpack(value=tf.zeros([2, 2]), num=3, axis=0),
                   "Input shape axis 0 must equal 3, got shape [2,2]", "Unpack"),
    "GatherV2 axis": (lambda: tf.raw_ops.GatherV2(params=tf.ones([3]), indices=C(0), axis=1),
                      "Shape must be at least rank 2 but is rank 1", "GatherV2"),
    "GatherV2 negative axis": (lambda: tf.raw_ops.GatherV2(params=tf.ones([3]), indices=C(0),
                                                           axis=-2),
                               "Shape must be at least rank 2 but is rank 1", "GatherV2"),
    "GatherV2 index": (lambda: tf.raw_ops.GatherV2(params=tf.ones([2, 3]), indices=C([[7]]),
                                                   axis=0),
                       "indices[0,0] = 7 is not in [0, 2)", "GatherV2"),
    "GatherV2 batch_dims": (lambda: tf.raw_ops.GatherV2(params=tf.ones([1, 1]), indices=C([0]),
                                                        axis=1, batch_dims=2),
                            "Expected batch_dims in the range [-1, 1], but got 2", "GatherV2"),
    "GatherV2 axis max": (lambda: tf.raw_ops.GatherV2(params=tf.ones([1, 1]), indices=C([0]),
                                                      axis=C(2**63 - 1, tf.int64)),
                          "axis must be less than std::numeric_limits<int64_t>::max()",
                          "GatherV2"),
    "StridedSlice scalar": (lambda: tf.raw_ops.StridedSlice(
        input=tf.constant(0.0), begin=C([0]), end=C([0]), strides=C([1]), begin_mask=1,
        end_mask=1), "Attempting to slice scalar input.", "StridedSlice"),
    "StridedSlice spec too long": (lambda: tf.raw_ops.StridedSlice(
        input=tf.ones([2]), begin=C([1, 1]), end=C([0, 0]), strides=C([1, 1]), end_mask=3),
        "Index out of range using input dim 1; input has only 1 dims", "StridedSlice"),
    "StridedSlice shrink out of bounds": (lambda: tf.raw_ops.StridedSlice(
        input=tf.ones([2]), begin=C([5]), end=C([6]), strides=C([1]), shrink_axis_mask=1),
        "slice index 5 of dimension 0 out of bounds.", "StridedSlice"),
    "StridedSlice shrink negative stride": (lambda: tf.raw_ops.StridedSlice(
        input=tf.ones([2]), begin=C([1]), end=C([2]), strides=C([-1]), shrink_axis_mask=1),
        "only stride 1 allowed on non-range indexing.", "StridedSlice"),
    "StridedSlice zero stride": (lambda: tf.raw_ops.StridedSlice(
        input=tf.ones([2]), begin=C([1]), end=C([2]), strides=C([0])),
        "strides[0] must be non-zero", "StridedSlice"),
    "StridedSlice ellipses": (lambda: tf.raw_ops.StridedSlice(
        input=tf.ones([2]), begin=C([0, 0]), end=C([0, 0]), strides=C([1, 1]), ellipsis_mask=3),
        "Multiple ellipses in slice spec not allowed", "StridedSlice"),
    "MaxPool ksize -1": (lambda: tf.raw_ops.MaxPool(input=tf.ones([1, 4, 4, 2]),
                                                    ksize=[1, -1, 2, 1], strides=[1, 1, 1, 1],
                                                    padding="VALID"),
                         "Sliding window ksize must be positive. The specified or inferred ksize "
                         "is: 1,-1,2,1", "MaxPool"),
    "MaxPool batch ksize -1": (lambda: tf.raw_ops.MaxPool(input=tf.ones([1, 4, 4, 2]),
                                                          ksize=[-1, 2, 2, 1],
                                                          strides=[1, 1, 1, 1], padding="VALID"),
                               "Sliding window ksize must be positive. The specified or inferred "
                               "ksize is: -1,2,2,1", "MaxPool"),
    "MaxPool stride 0": (lambda: tf.raw_ops.MaxPool(input=tf.ones([1, 4, 4, 2]),
                                                    ksize=[1, 2, 2, 1], strides=[1, 0, 1, 1],
                                                    padding="VALID"),
                         "Stride must be > 0, but got 0", "MaxPool"),
    "MaxPoolGrad batch ksize -1": (lambda: tf.raw_ops.MaxPoolGrad(
        orig_input=tf.ones([1, 4, 4, 2]), orig_output=tf.ones([1, 3, 3, 2]),
        grad=tf.ones([1, 3, 3, 2]), ksize=[-1, 2, 2, 1], strides=[1, 1, 1, 1], padding="VALID"),
        "Pooling is not yet supported on the batch dimension.", "MaxPoolGrad"),
    "MaxPoolGrad depth window": (lambda: tf.raw_ops.MaxPoolGrad(
        orig_input=tf.ones([1, 4, 4, 2]), orig_output=tf.ones([1, 3, 3, 2]),
        grad=tf.ones([1, 3, 3, 2]), ksize=[1, 2, 2, -1], strides=[1, 1, 1, 1], padding="VALID"),
        "MaxPoolingGrad is not yet supported on the depth dimension.", "MaxPoolGrad"),
    "AvgPool ksize -1": (lambda: tf.raw_ops.AvgPool(
        value=tf.ones([1, 1, 1, 1]), ksize=[1, -1, 1, 1], strides=[1, 1, 1, 1], padding="SAME"),
        # TensorFlow's oneDNN kernel's words, then its Eigen kernel's (the CPU
        # kernel TensorFlow runs depends on the CPU and TF_ENABLE_ONEDNN_OPTS).
        ("Sliding window ksize must be positive. The specified or inferred ksize is: 1,-1,1,1",
         "ksize must be a positive int32 value, got:-1"),
        "AvgPool"),
    "AvgPool ksize out of int32": (lambda: tf.raw_ops.AvgPool(
        value=tf.ones([1, 1, 1, 1], tf.float64), ksize=[1, 2**40, 1, 1], strides=[1, 1, 1, 1],
        padding="SAME"), "Attr ksize has value 1099511627776 out of range for an int32",
        "AvgPool"),
    "AvgPoolGrad depth window (float64)": (lambda: tf.raw_ops.AvgPoolGrad(
        orig_input_shape=C([1, 4, 4, 2]), grad=tf.ones([1, 4, 4, 1], tf.float64),
        ksize=[1, 1, 1, 2], strides=[1, 1, 1, 2], padding="VALID"),
        "Non-spatial pooling is not yet supported. Volunteers? :)", "AvgPoolGrad"),
    "AvgPoolGrad depth and spatial window": (lambda: tf.raw_ops.AvgPoolGrad(
        orig_input_shape=C([1, 4, 4, 2]), grad=tf.ones([1, 2, 2, 2]), ksize=[1, 2, 2, 2],
        strides=[1, 2, 2, 1], padding="VALID"),
        ("MaxPooling supports exactly one of pooling across depth or pooling across width/height.",
         "Non-spatial pooling is not yet supported."),
        "AvgPoolGrad"),
    "AvgPoolGrad batch stride": (lambda: tf.raw_ops.AvgPoolGrad(
        orig_input_shape=C([1, 4, 4, 2]), grad=tf.ones([1, 2, 2, 2]), ksize=[1, 2, 2, 1],
        strides=[2, 2, 2, 1], padding="VALID"),
        "Pooling is not yet supported on the batch dimension.", "AvgPoolGrad"),
    "Conv2D batch stride": (lambda: tf.raw_ops.Conv2D(input=tf.ones([1, 5, 5, 2]),
                                                      filter=tf.ones([2, 2, 2, 3]),
                                                      strides=[2, 1, 1, 1], padding="VALID"),
                            "Current implementation does not yet support strides in the batch "
                            "and depth dimensions.", "Conv2D"),
    "Conv2D depth stride": (lambda: tf.raw_ops.Conv2D(input=tf.ones([1, 5, 5, 2]),
                                                      filter=tf.ones([2, 2, 2, 3]),
                                                      strides=[1, 1, 1, 2], padding="VALID"),
                            "Current implementation does not yet support strides in the batch "
                            "and depth dimensions.", "Conv2D"),
}


def _error_on(device, fn):
    with tf.device(device):
        try:
            fn()
        except tf.errors.OpError as e:
            return e
    return None


def _message(e):
    """The kernel's message: TensorFlow's "{{function_node ...}} " prefix and
    " [Op:...]" suffix removed."""
    msg = e.message
    if msg.startswith("{{function_node"):
        msg = msg.split("}} ", 1)[1]
    return msg.split(" [Op:")[0]


@pytest.mark.parametrize("name", list(TF_WORDING))
def test_tensorflow_wording_first(name):
    fn, wording, op = TF_WORDING[name]
    # A tuple: the words of TensorFlow's two CPU kernels for the op (oneDNN's,
    # Eigen's); PDK answers with one of them.
    wordings = wording if isinstance(wording, tuple) else (wording,)
    cpu = _error_on("/CPU:0", fn)
    assert cpu is not None and any(w in _message(cpu) for w in wordings), (
        f"the CPU's message changed: {cpu}")
    with launches() as n:
        pdk = _error_on("/PDK:0", fn)
    assert pdk is not None, "PDK raised nothing"
    assert type(pdk) is type(cpu), f"{type(pdk).__name__} != CPU's {type(cpu).__name__}"
    tf_words = _message(cpu) if len(wordings) == 1 else None
    assert (_message(pdk).startswith(tf_words) if tf_words is not None
            else any(_message(pdk).startswith(w) for w in wordings)), (
        f"PDK's message does not start with TensorFlow's:\n  PDK: {_message(pdk)}\n"
        f"  CPU: {_message(cpu)}")
    # A launch, or (an attribute TensorFlow's kernel rejects when it is
    # built) PDK's kernel failing to construct: the op was placed on PDK.
    assert n.get(op, 0) == 1 or "/device:PDK:0" in pdk.message, (
        f"the error must come from PDK's {op} kernel ({n}): {pdk.message}")


# ---- Missing validation (issue 14): where the CPU raises, PDK raises the
# same error class; where the CPU computes, PDK computes the same values.

def _outcome(device, fn):
    with tf.device(device):
        try:
            return fn().numpy()
        except tf.errors.OpError as e:
            return e


VALIDATION_CASES = {}
for _k in (3, 4, 5, 7):
    for _s in (1, 3):
        for _pad in ("VALID", "SAME"):
            VALIDATION_CASES[f"AvgPool k{_k} s{_s} {_pad}"] = (
                lambda k=_k, s=_s, pad=_pad: tf.raw_ops.AvgPool(
                    value=tf.reshape(tf.range(9.0), [1, 3, 3, 1]), ksize=[1, k, k, 1],
                    strides=[1, s, s, 1], padding=pad), "AvgPool")
            VALIDATION_CASES[f"MaxPool k{_k} s{_s} {_pad}"] = (
                lambda k=_k, s=_s, pad=_pad: tf.raw_ops.MaxPool(
                    input=tf.reshape(tf.range(9.0), [1, 3, 3, 1]), ksize=[1, k, k, 1],
                    strides=[1, s, s, 1], padding=pad), "MaxPool")
for _pads in ([0, 0, 2, 2, 2, 2, 0, 0], [0, 0, 0, 1, 0, 2, 0, 0], [0, 0, 1, 1, 1, 1, 0, 0],
              [0, 0, 0, 2, 0, 0, 0, 0], [0, 0, 0, 0, 2, 0, 0, 0]):
    VALIDATION_CASES[f"MaxPool EXPLICIT {_pads}"] = (
        lambda p=_pads: tf.raw_ops.MaxPool(
            input=tf.reshape(tf.range(9.0), [1, 3, 3, 1]), ksize=[1, 2, 2, 1],
            strides=[1, 2, 2, 1], padding="EXPLICIT", explicit_paddings=p), "MaxPool")

# (A depth stride with a depth window of 1, which TensorFlow's CPU computes,
# stays Unimplemented on PDK.)
for _ksize, _strides in (([2, 1, 1, 1], [1, 1, 1, 1]), ([1, 1, 1, 2], [1, 1, 1, 2]),
                         ([1, 2, 2, 1], [2, 1, 1, 1])):
    VALIDATION_CASES[f"AvgPool non-spatial {_ksize} {_strides}"] = (
        lambda k=_ksize, s=_strides: tf.raw_ops.AvgPool(
            value=tf.ones([2, 3, 3, 2]), ksize=k, strides=s, padding="VALID"), "AvgPool")
    VALIDATION_CASES[f"AvgPoolGrad non-spatial {_ksize} {_strides}"] = (
        lambda k=_ksize, s=_strides: tf.raw_ops.AvgPoolGrad(
            orig_input_shape=tf.constant([2, 3, 3, 2]), grad=tf.ones([2, 3, 3, 2]), ksize=k,
            strides=s, padding="VALID"), "AvgPoolGrad")
VALIDATION_CASES["MaxPool batch window"] = (
    lambda: tf.raw_ops.MaxPool(input=tf.ones([2, 3, 3, 2]), ksize=[2, 1, 1, 1],
                               strides=[1, 1, 1, 1], padding="VALID"), "MaxPool")
for _k in (3, 4, 5):
    VALIDATION_CASES[f"AvgPoolGrad k{_k} VALID"] = (
        lambda k=_k: tf.raw_ops.AvgPoolGrad(
            orig_input_shape=tf.constant([1, 3, 3, 1]),
            grad=tf.ones([1, max(4 - k, 0), max(4 - k, 0), 1]), ksize=[1, k, k, 1],
            strides=[1, 1, 1, 1], padding="VALID"), "AvgPoolGrad")

# Depth-only max pooling (TensorFlow's DepthwiseMaxPool): computed, or
# Unimplemented for the windows TensorFlow's CPU kernel rejects.
_DEPTH_X = lambda: tf.reshape(tf.range(48.0) * (-1.0) ** tf.range(48.0), [2, 2, 2, 6])  # noqa: E731
for _ksize, _strides in (([1, 1, 1, 2], [1, 1, 1, 2]), ([1, 1, 1, 3], [1, 2, 2, 3]),
                         ([1, 1, 1, 6], [1, 1, 1, 6]), ([1, 1, 1, 4], [1, 1, 1, 4]),
                         ([1, 1, 1, 3], [1, 1, 1, 2]), ([1, 2, 1, 3], [1, 1, 1, 3])):
    VALIDATION_CASES[f"MaxPool depth {_ksize} {_strides}"] = (
        lambda k=_ksize, s=_strides: tf.raw_ops.MaxPool(input=_DEPTH_X(), ksize=k, strides=s,
                                                        padding="VALID"), "MaxPool")
    VALIDATION_CASES[f"MaxPoolV2 depth {_ksize} {_strides}"] = (
        lambda k=_ksize, s=_strides: tf.raw_ops.MaxPoolV2(input=_DEPTH_X(), ksize=k, strides=s,
                                                          padding="SAME"), "MaxPoolV2")
VALIDATION_CASES["MaxPoolGrad depth"] = (
    lambda: tf.raw_ops.MaxPoolGrad(orig_input=_DEPTH_X(), orig_output=tf.ones([2, 2, 2, 3]),
                                   grad=tf.ones([2, 2, 2, 3]), ksize=[1, 1, 1, 2],
                                   strides=[1, 1, 1, 2], padding="VALID"), "MaxPoolGrad")
# A filter with in_depth 0: InvalidArgument from the CPU's convolutions.
VALIDATION_CASES["Conv2DBackpropInput filter depth 0"] = (
    lambda: tf.raw_ops.Conv2DBackpropInput(input_sizes=[1, 5, 5, 0], filter=tf.ones([3, 3, 0, 4]),
                                           out_backprop=tf.ones([1, 3, 3, 4]),
                                           strides=[1, 1, 1, 1], padding="VALID"),
    "Conv2DBackpropInput")
VALIDATION_CASES["Conv2DBackpropFilter filter depth 0"] = (
    lambda: tf.raw_ops.Conv2DBackpropFilter(input=tf.ones([1, 5, 5, 0]), filter_sizes=[3, 3, 0, 4],
                                            out_backprop=tf.ones([1, 3, 3, 4]),
                                            strides=[1, 1, 1, 1], padding="VALID"),
    "Conv2DBackpropFilter")
VALIDATION_CASES["Conv3DBackpropInputV2 filter depth 0"] = (
    lambda: tf.raw_ops.Conv3DBackpropInputV2(
        input_sizes=[1, 5, 5, 5, 0], filter=tf.ones([3, 3, 3, 0, 4]),
        out_backprop=tf.ones([1, 3, 3, 3, 4]), strides=[1, 1, 1, 1, 1], padding="VALID"),
    "Conv3DBackpropInputV2")


@pytest.mark.parametrize("name", list(VALIDATION_CASES))
def test_validation_matches_cpu(name):
    fn, op = VALIDATION_CASES[name]
    cpu = _outcome("/CPU:0", fn)
    with launches() as n:
        pdk = _outcome("/PDK:0", fn)
    if isinstance(cpu, Exception):
        assert isinstance(pdk, Exception), f"the CPU raises {type(cpu).__name__}, PDK computes"
        assert type(pdk) is type(cpu), f"{type(pdk).__name__} != CPU's {type(cpu).__name__}"
        # Raised by PDK's kernel: at construction (the window attributes; no
        # launch) or when it ran, then in TensorFlow's words first.
        assert "device:PDK:0" in str(pdk), pdk
        if n.get(op, 0):  # (less the CPU kernel's class label, "Conv2DCustomBackpropInput: ")
            wording = re.sub(r"^\w+: ", "", _message(cpu))
            assert _message(pdk).startswith(wording), (_message(pdk), _message(cpu))
    else:
        assert n.get(op, 0) == 1, n
        assert not isinstance(pdk, Exception), f"the CPU computes, PDK raises {pdk}"
        np.testing.assert_allclose(pdk, cpu, rtol=1e-6)


def test_avg_pool_grad_rejects_grad_not_of_the_pooled_shape():
    """TensorFlow 2.21's CPU AvgPoolGrad reads a grad of any shape whose windows
    stay inside orig_input (here [1,3,3,1] for a [1,5,5,1] input pooled to
    [1,2,2,1]); TensorFlow's later CPU kernel (avgpooling_op.cc, "Expected grad
    shape to be") rejects it, as PDK does."""
    fn = lambda: tf.raw_ops.AvgPoolGrad(orig_input_shape=[1, 5, 5, 1], grad=tf.ones([1, 3, 3, 1]),  # noqa
                                        ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
    with launches() as n:
        pdk = _outcome("/PDK:0", fn)
    assert isinstance(pdk, tf.errors.InvalidArgumentError), pdk
    assert _message(pdk).startswith("Expected grad shape to be [1,2,2,1], but got [1,3,3,1]"), pdk
    assert n.get("AvgPoolGrad", 0) == 1, n


@pytest.mark.parametrize("op", ["MaxPool3D", "AvgPool3D", "AvgPool3DGrad"])
@pytest.mark.parametrize("entry", [0, 4])
def test_3d_pooling_over_batch_or_depth_is_unimplemented_as_on_cpu(op, entry):
    """TensorFlow's 3-D pooling kernels refuse a ksize or stride other than 1
    over images or channels at construction, as UnimplementedError; so does
    PDK, with TensorFlow's message first."""
    strides = [1, 2, 2, 2, 1]
    strides[entry] = 2
    kw = dict(ksize=[1, 2, 2, 2, 1], strides=strides, padding="VALID")
    if op == "AvgPool3DGrad":
        fn = lambda: tf.raw_ops.AvgPool3DGrad(orig_input_shape=[2, 4, 4, 4, 2],  # noqa: E731
                                              grad=tf.ones([1, 2, 2, 2, 1]), **kw)
    else:
        fn = lambda: getattr(tf.raw_ops, op)(input=tf.ones([2, 4, 4, 4, 2]), **kw)  # noqa: E731
    cpu, pdk = _error_on("/CPU:0", fn), _error_on("/PDK:0", fn)
    assert cpu is not None and pdk is not None, (cpu, pdk)
    assert isinstance(cpu, tf.errors.UnimplementedError), cpu
    assert type(pdk) is type(cpu) and "device:PDK:0" in str(pdk), pdk
    assert _message(pdk).startswith(_message(cpu)), (_message(pdk), _message(cpu))


def test_output_whose_byte_count_overflows_is_out_of_memory_as_on_cpu():
    """An output of 2**62 float32 elements: its element count fits int64, its
    byte count does not. TensorFlow's allocator refuses it as out of memory
    (ResourceExhaustedError, "OOM when allocating tensor with shape[...]");
    PDK's kit reports the same class and words before it allocates."""
    fn = lambda: tf.raw_ops.Empty(shape=C([2147483647, 2147483647]), dtype=tf.float32)  # noqa
    cpu = _error_on("/CPU:0", fn)
    with launches() as n:
        pdk = _error_on("/PDK:0", fn)
    assert isinstance(cpu, tf.errors.ResourceExhaustedError), cpu
    assert isinstance(pdk, tf.errors.ResourceExhaustedError), pdk
    assert _message(pdk).startswith(
        "OOM when allocating tensor with shape[2147483647,2147483647] and type "), pdk
    assert n.get("Empty", 0) == 1, n
