"""Eager calls of ``tf.function(jit_compile=True)`` on PDK, without XLA.

A ``tf.function(jit_compile=True)`` carries ``_XlaMustCompile=true`` on its
FunctionDef. Called from another function, it is a call node of that
function's graph, and PDK's graph optimizer runs it with PDK's kernels
(src/graph/rewrites/xla_must_compile.cc). Called eagerly, at top level, it
never reaches a graph optimizer: TensorFlow's eager runtime
(tensorflow/core/common_runtime/eager/execute.cc, ``MustCompileWithXLA``)
reads the attribute from the call's own attributes first, then from the
FunctionDef, and creates an XlaLaunch kernel, which fails on PDK with "No JIT
device registered for PDK" (XLA has no PDK backend, and a plugin cannot add
one through the C APIs).

:func:`install` wraps ``Context.call_function`` (the eager call of a traced
function) so that a call that asks for XLA and would run on PDK calls a copy
of the function whose FunctionDef says ``_XlaMustCompile=false`` instead
(named ``<function>_pdk_no_xla``, added to the eager context on the first such
call; an eager call cannot carry the attribute itself: TensorFlow's Python
binding rejects attributes a function call does not declare). TensorFlow's
function runtime then runs the function's graph on PDK (PDK's graph optimizer
included), as it does for a call inside a graph. The copy lives as long as the
process.
The first such call of each function prints one line on stderr; under
``PDK_STRICT=1`` the call raises ``InvalidArgumentError`` naming the function
instead.

The plugin calls :func:`install` when TensorFlow loads it (``import
tensorflow``; see src/plugin.cc), and ``import tensorflow_pdk`` calls it too.
Calls placed on another device (``tf.device("/CPU:0")``) keep XLA.
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


def _runs_on_pdk(ctx) -> bool:
    """Whether an eager function call made now is placed on a PDK device: the
    innermost tf.device scope names one, or there is no device scope and a PDK
    device is visible (TensorFlow's eager placement prefers a PluggableDevice
    over the CPU for a function call)."""
    from tensorflow.python.framework import device_spec

    scope = ctx.device_name
    if scope:
        return (device_spec.DeviceSpecV2.from_string(scope).device_type or "") == "PDK"
    try:
        return bool(ctx.list_logical_devices("PDK"))
    except Exception:  # noqa: BLE001 -- context not initialized: no PDK device yet
        return False


def _strict() -> bool:
    v = os.environ.get("PDK_STRICT", "")
    return v not in ("", "0")


def install() -> bool:
    """Wraps ``Context.call_function`` once per process (idempotent). Returns
    whether the wrapper is in place."""
    from tensorflow.python.eager import context

    original = context.Context.call_function
    if getattr(original, "_pdk_wrapped", False):
        return True

    def call_function(self, name, tensor_inputs, num_outputs):
        twin = _twin(self, name) if _runs_on_pdk(self) else None
        if twin is None:
            return original(self, name, tensor_inputs, num_outputs)
        function = name.decode()
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
        return original(self, twin, tensor_inputs, num_outputs)

    call_function._pdk_wrapped = True  # type: ignore[attr-defined]
    call_function.__wrapped__ = original  # type: ignore[attr-defined]
    call_function.__doc__ = original.__doc__
    context.Context.call_function = call_function
    return True
