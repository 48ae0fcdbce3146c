"""Python-side fixes the OPENCL plugin installs when TensorFlow loads it
(``pdk::RunPythonHook`` in src/plugin.cc, at TF_InitKernel).

Eager ``assign_add`` / ``assign_sub`` of a variable in OPENCL memory: the op's
kernel must update the variable's buffer in place, which a plugin kernel can
not reach in TensorFlow 2.20 and 2.21 (kernels_experimental.h is not exported,
tensorflow issue 126374), and TensorFlow's own kernel for pluggable devices
adds on the host, where OPENCL memory is not addressable. Inside a tf.function
the plugin's graph optimizer rewrites the op into ReadVariableOp + AddV2/Sub +
AssignVariableOp; eagerly no graph optimizer runs, so this hook does the same
in Python: TensorFlow's op wrappers ``assign_add_variable_op`` and
``assign_sub_variable_op`` (which ``Variable.assign_add`` / ``assign_sub`` and
Keras call) run ``read_variable_op``, ``add`` / ``sub`` and
``assign_variable_op`` on the variable's device when executing eagerly on a
variable whose handle is on OPENCL. Anything else goes to TensorFlow's own.
"""

_installed = False


def install() -> None:
    global _installed
    if _installed:
        return
    from tensorflow.python.eager import context
    from tensorflow.python.framework import ops
    from tensorflow.python.ops import gen_math_ops
    from tensorflow.python.ops import gen_resource_variable_ops as gen

    def wrap(orig, math_op):
        def update(resource, value, name=None):
            if context.executing_eagerly() and ":OPENCL:" in (getattr(resource, "device", "") or ""):
                with ops.device(resource.device):
                    value = ops.convert_to_tensor(value)
                    old = gen.read_variable_op(resource, value.dtype)
                    return gen.assign_variable_op(resource, math_op(old, value), name=name)
            return orig(resource, value, name=name)

        update.__doc__ = orig.__doc__
        update.__name__ = orig.__name__
        return update

    gen.assign_add_variable_op = wrap(gen.assign_add_variable_op, gen_math_ops.add_v2)
    gen.assign_sub_variable_op = wrap(gen.assign_sub_variable_op, gen_math_ops.sub)
    _installed = True
