"""TensorFlow kernel tests (test_tf_kernel_tests.py) that pass with PDK disabled
and fail with PDK as the default device, each with its cause: test id -> reason.

A key without ``::`` names a whole file (``<folder>/<file>``) whose PDK run may
launch no PDK kernel. An entry whose test passes with PDK (or no longer passes
without it) fails the suite: remove it when PDK is fixed.
"""

EXPECTED = {
    # Missing kernel on TensorFlow 2.19-2.21: the legacy ResourceApply* training ops need
    # kernels_experimental.h's variable functions, which these releases do not export (PDK
    # registers them on 2.16-2.18 and tf-nightly; README, "TensorFlow versions"); the op is
    # placed with its PDK-resident variable and fails.
    "nn_ops/relu_op_test.py::LeakyReluTest.testGradientScalar": "ResourceApplyGradientDescent float32 (v1 GradientDescentOptimizer.minimize on a PDK variable): no PDK kernel, 'Cannot assign a device for operation ResourceApplyGradientDescent ... no supported kernel for PDK devices'",
    "nn_ops/relu_op_test.py::ReluTest.testGradientScalar": "ResourceApplyGradientDescent float32 (v1 GradientDescentOptimizer.minimize on a PDK variable): no PDK kernel, 'Cannot assign a device for operation ResourceApplyGradientDescent ... no supported kernel for PDK devices'",
}
