"""``tf.function(jit_compile=True)`` on PDK, without XLA.

XLA has no PDK backend, and a plugin cannot give it one through the C APIs:
a function that asks for XLA and is placed on PDK fails in TensorFlow's
XlaLaunch kernel with "No JIT device registered for PDK". Keras 3 asks for XLA
whenever a non-CPU device is listed (``jit_compile="auto"``), and for its
grouped convolutions always. PDK runs such functions with its own kernels
instead, at three levels:

1. ``Function.__call__`` (this module): a ``tf.function`` with
   ``jit_compile=True`` whose first call is placed on PDK (a ``tf.device``
   scope naming PDK, or no scope while a PDK device is visible) is traced as an
   ordinary function: no ``_XlaMustCompile`` attribute, and no
   ``XLAControlFlowContext`` while tracing, so its loops are lowered like any
   function's (traced for XLA, Keras's LSTM gradient loop kept a functional
   While whose body PDK's graph optimizer never sees, with a variant AddN that
   has no PDK kernel). The decision is made once, before the first trace:
   TensorFlow fixes a Function's tracing options then.
2. ``Context.call_function`` (this module): a traced function that still
   carries ``_XlaMustCompile=true`` on its FunctionDef (traced by
   ``get_concrete_function`` before any call, or loaded from a SavedModel)
   called eagerly on PDK runs a copy whose FunctionDef says
   ``_XlaMustCompile=false`` (``<name>_pdk_no_xla``, added to the eager context
   on first use and kept for the process). TensorFlow's eager runtime
   (tensorflow/core/common_runtime/eager/execute.cc, ``MustCompileWithXLA``)
   reads the attribute from the call, then from the FunctionDef; an eager call
   cannot carry it itself (TensorFlow's Python binding rejects attributes a
   function call does not declare).
3. A call node inside a graph carrying ``_XlaMustCompile=true`` placed on PDK
   is rewritten by PDK's graph optimizer (src/graph/rewrites/xla_must_compile.cc).

Each prints one line per function on stderr; under ``PDK_STRICT=1`` each
raises ``InvalidArgumentError`` naming the function instead. Calls placed on
another device keep XLA.

The plugin installs these wrappers when TensorFlow loads it (``import
tensorflow``; tensorflow_pdk/_hooks.py), so users need not import this
package.
"""
from __future__ import annotations

import os
import re
import sys
import threading

_lock = threading.Lock()
_twins: dict = {}         # function name (bytes) -> name of its copy without XLA, or None
_noticed: set = set()     # Python names already reported
TWIN_SUFFIX = "_pdk_no_xla"


def python_name(function: str) -> str:
    """'__inference_one_step_on_data_123' -> 'one_step_on_data', also through
    the nesting of gradient functions ('__inference___backward__conv_xla_7_9'
    -> '_conv_xla'); the same rule as the graph rewrite's notice
    (src/graph/rewrites/xla_must_compile.cc, PythonName)."""
    name, previous = function, None
    while name != previous:
        previous = name
        name = re.sub(r"^__(inference|forward|backward)_(?=.)", "", name)
        name = re.sub(r"(?<=.)_\d+$", "", name)
    return name or function


def _twin(ctx, name: bytes):
    """The name of a copy of function `name` whose FunctionDef says
    ``_XlaMustCompile=false`` (added to the context on first use), or None if
    the function does not ask for XLA."""
    with _lock:
        if name in _twins:
            return _twins[name]
    twin = None
    try:
        fdef = ctx.get_function_def(name.decode())
    except Exception:  # noqa: BLE001 -- not a library function: leave the call alone
        fdef = None
    if fdef is not None and "_XlaMustCompile" in fdef.attr and fdef.attr["_XlaMustCompile"].b:
        fdef.attr["_XlaMustCompile"].b = False
        fdef.signature.name += TWIN_SUFFIX
        ctx.add_function_def(fdef)
        twin = fdef.signature.name.encode()
    with _lock:
        _twins[name] = twin
    return twin


def _requested_device_type(ctx) -> str:
    """The device type the innermost tf.device scope names, '' if none: the
    scope of the graph being traced (a tf.device inside a tf.function), else
    the eager scope (which also covers a function traced inside it)."""
    from tensorflow.python.framework import device_spec, ops

    scope = ""
    if not ctx.executing_eagerly():
        try:  # Graph._device_function_stack: TensorFlow's own record of tf.device scopes
            for obj in reversed(ops.get_default_graph()._device_function_stack.peek_objs()):
                name = getattr(obj, "display_name", None)
                if isinstance(name, str) and name:
                    scope = name
                    break
        except Exception:  # noqa: BLE001 -- private API changed: fall back to the eager scope
            scope = ""
    scope = scope or ctx.device_name or ""
    return (device_spec.DeviceSpecV2.from_string(scope).device_type or "") if scope else ""


def _runs_on_pdk(ctx) -> bool:
    """Whether a function call made now is placed on a PDK device: the
    innermost tf.device scope names one, or there is no device scope and a PDK
    device is visible (TensorFlow's placement prefers a PluggableDevice over
    the CPU for a function call)."""
    requested = _requested_device_type(ctx)
    if requested:
        return requested == "PDK"
    try:
        return bool(ctx.list_logical_devices("PDK"))
    except Exception:  # noqa: BLE001 -- context not initialized: no PDK device yet
        return False


def _strict() -> bool:
    """PDK_STRICT as the plugin reads it (pdk::env::Flag: "1" or "true")."""
    return os.environ.get("PDK_STRICT", "").lower() in ("1", "true")


def _notice(function: str) -> None:
    """The once-per-function line on stderr; under PDK_STRICT=1 an
    InvalidArgumentError naming the function instead."""
    pyname = python_name(function)
    if _strict():
        from tensorflow.python.framework import errors

        raise errors.InvalidArgumentError(
            None, None,
            f"PDK_STRICT=1: function '{pyname}' ({function}) asked for XLA "
            "(jit_compile=True) on PDK; PDK has no XLA backend. Unset PDK_STRICT to run it "
            "with PDK kernels, or pass jit_compile=False.")
    with _lock:
        first = pyname not in _noticed
        _noticed.add(pyname)
    if first:
        print(f"PDK: {pyname} asked for XLA (jit_compile=True); PDK has no XLA backend, "
              "running it with PDK kernels", file=sys.stderr)


def install() -> bool:
    """Wraps ``tf.function``'s ``Function.__call__`` and
    ``Context.call_function`` once per process (idempotent). Returns whether
    the wrappers are in place."""
    from tensorflow.python.eager import context
    from tensorflow.python.eager.polymorphic_function import polymorphic_function

    function_cls = polymorphic_function.Function
    original_call = function_cls.__call__
    if not getattr(original_call, "_pdk_wrapped", False):

        def __call__(self, *args, **kwds):  # noqa: N807
            # Before the first trace only: the tracing options (XLA attributes,
            # XLAControlFlowContext) are fixed when a Function is initialized.
            if (self._jit_compile and self._variable_creation_config is None
                    and self._no_variable_creation_config is None
                    and _runs_on_pdk(context.context())):
                _notice(getattr(self, "_name", "") or "tf.function")
                self._jit_compile = None
            return original_call(self, *args, **kwds)

        __call__._pdk_wrapped = True  # type: ignore[attr-defined]
        __call__.__wrapped__ = original_call  # type: ignore[attr-defined]
        __call__.__doc__ = original_call.__doc__
        function_cls.__call__ = __call__

    original = context.Context.call_function
    if not getattr(original, "_pdk_wrapped", False):

        def call_function(self, name, tensor_inputs, num_outputs):
            # Every eager function call passes here (Keras's step, each step):
            # the cached per-name answer first, the placement check only for
            # functions that ask for XLA.
            twin = _twin(self, name)
            if twin is None or not _runs_on_pdk(self):
                return original(self, name, tensor_inputs, num_outputs)
            _notice(name.decode())
            return original(self, twin, tensor_inputs, num_outputs)

        call_function._pdk_wrapped = True  # type: ignore[attr-defined]
        call_function.__wrapped__ = original  # type: ignore[attr-defined]
        call_function.__doc__ = original.__doc__
        context.Context.call_function = call_function
    return True
