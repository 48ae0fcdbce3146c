"""TensorFlow kernel tests (test_tf_kernel_tests.py) that pass with PDK disabled
and fail with PDK as the default device, each with its cause: test id -> reason.

A key without ``::`` names a whole file (``<folder>/<file>``) whose PDK run may
launch no PDK kernel. An entry whose test passes with PDK (or no longer passes
without it) fails the suite: remove it when PDK is fixed.
"""

EXPECTED = {
    # Error wording: PDK raises the same error class, but its message lacks TensorFlow's
    # wording, which the test (and users' code) matches on.
    "linalg/qr_op_test.py::QrOpTest.testWrongDimensions": "Qr of a scalar / vector: CPU 'Input tensor 0 must have rank >= 2, got 0', PDK 'Qr: input must be at least rank 2, got shape []' (test regex 'rank.* 2.*0')",
    "math_ops/cwise_ops_binary_test.py::BinaryOpTest.testPowNegativeExponentCpu": "Pow int8/16/32/64 with a negative exponent: CPU 'Integers to negative integer powers are not allowed', PDK 'Pow: integers to ...' (lower-case i; the test's regex is case-sensitive)",
    "math_ops/cwise_ops_binary_test.py::ComparisonOpTest.testShapeMismatch": "Less/LessEqual/Greater/GreaterEqual/Equal/NotEqual on [2,5] vs [5,2]: CPU 'Incompatible shapes: [2,5] vs. [5,2]', PDK 'Less: x.shape [2,5] and y.shape [5,2] are not broadcast-compatible ...' (assertRaisesIncompatibleShapesError wants 'Incompatible shapes')",
    "math_ops/matmul_op_test.py::MatMulInfixOperatorTest.testMismatchedDimensions": "MatMul float32 [1,3] x [2,2]: CPU 'Matrix size-incompatible: In[0]: [1,3], In[1]: [2,2]', PDK 'MatMul: matrix size-incompatible: a [1,3] ...' (lower-case m, no In[0]/In[1])",
    "math_ops/matmul_op_test.py::MatMulInfixOperatorTest.testMismatchedShape": "MatMul float32 [3] x [2,2]: CPU 'In[0] and In[1] has different ndims: [3] vs. [2,2]', PDK 'MatMul: a must be rank 2, got shape [3]'",
    "math_ops/reduction_ops_test.py::SumReductionTest.testInvalidRepeatedReductionIndices": "Sum float32 [2] over axes [0, 0]: CPU 'Invalid reduction arguments: Axes contains duplicate dimension: 0', PDK 'Sum: reduction_indices names dimension 0 more than once (input shape [2])'",
    # The CPU computes, PDK raises.
    "math_ops/transpose_op_test.py::TransposeTest.testNegativePerm": "Transpose int32 [100,37,15] with perm [-1,-3,-2]: CPU wraps negative entries (perm[i] + rank) and returns shape [15,100,37], PDK raises InvalidArgumentError '-1 is out of range [0 .. 3) (Transpose: perm[0], ...)'",
    # Missing kernel: PDK registers no ResourceApplyGradientDescent (the legacy ResourceApply*
    # training ops); the op is placed with its PDK-resident variable and fails.
    "nn_ops/relu_op_test.py::LeakyReluTest.testGradientScalar": "ResourceApplyGradientDescent float32 (v1 GradientDescentOptimizer.minimize on a PDK variable): no PDK kernel, 'Cannot assign a device for operation ResourceApplyGradientDescent ... no supported kernel for PDK devices'",
    "nn_ops/relu_op_test.py::ReluTest.testGradientScalar": "ResourceApplyGradientDescent float32 (v1 GradientDescentOptimizer.minimize on a PDK variable): no PDK kernel, 'Cannot assign a device for operation ResourceApplyGradientDescent ... no supported kernel for PDK devices'",
}
