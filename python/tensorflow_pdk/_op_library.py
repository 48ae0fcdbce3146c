"""Python wrappers for the ops of a plugin built with the kit.

``tf.load_op_library`` returns wrappers for the ops a kernel library
registers while it is being opened. A PluggableDevice library built with the
kit defines its ops later, in ``TF_InitKernel``, and TensorFlow opens the
library itself, so that function finds none. The kit lists them instead:
every ``REGISTER_OP`` records its name, and the library exports
``TFKit_OpNames`` (``include/pdk/op_names.h``). :func:`load_op_library` reads
that list from the loaded library, takes each op's ``OpDef`` from
TensorFlow's registry and has TensorFlow's own generator
(``_pywrap_python_op_gen.GetPythonWrappers``, the one behind the
``gen_*_ops`` modules and ``tf.load_op_library``) write the wrappers.
"""
from __future__ import annotations

import ctypes
import hashlib
import importlib.machinery
import importlib.util
import os
import sys
import types

from tensorflow_pdk import _native

OP_NAMES_SYMBOL = "TFKit_OpNames"


def _is_open(path: str) -> bool:
    """Whether this process has the library at ``path`` open already."""
    try:
        ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
    except OSError:
        return False
    return True


def _op_names(path: str) -> list:
    """The ops the library at ``path`` defines with the kit's REGISTER_OP.
    Opening a library TensorFlow loaded returns TensorFlow's handle."""
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise ValueError(f"{path} is not a plugin built with the kit: it cannot be "
                         f"opened as a shared library ({e})") from None
    try:
        fn = getattr(lib, OP_NAMES_SYMBOL)
    except AttributeError:
        raise ValueError(
            f"{path} is not a plugin built with the kit: it exports no {OP_NAMES_SYMBOL} "
            f"(a library whose ops are defined with the kit's REGISTER_OP, "
            f"pdk/tf/op.h, exports it)") from None
    fn.restype = ctypes.c_size_t
    fn.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return _native.read_text(fn).split()


def _op_defs(path: str, names: list, was_open: bool) -> list:
    """Each op's OpDef from TensorFlow's registry, loading the plugin into
    TensorFlow first if TensorFlow lacks one of them (or, for a plugin that
    defines no op, if the process did not have it open). Ops TensorFlow has
    are not defined again by loading another copy of the plugin: TensorFlow
    2.21 aborts on an op defined twice."""
    from tensorflow.python.framework import load_library, op_def_registry

    defs = [op_def_registry.get(n) for n in names]
    if any(d is None for d in defs) or not (names or was_open):
        load_library.load_pluggable_device_library(path)
        defs = [op_def_registry.get(n) for n in names]
    missing = [n for n, d in zip(names, defs) if d is None]
    if missing:
        raise RuntimeError(
            f"{path} was loaded, but TensorFlow has no definition of its op(s) "
            f"{', '.join(missing)}: the plugin's TF_InitKernel did not define them "
            f"(see its messages on stderr)")
    return defs


def load_op_library(path) -> types.ModuleType:
    """A module with one Python function per op the plugin at ``path``
    defines with the kit's ``REGISTER_OP``, as TensorFlow's generated
    ``gen_*_ops`` modules have: ``HelloScale`` gives ``hello_scale(x,
    factor=2.0, name=None)``, which runs eagerly or adds a node in a
    ``tf.function``; ``tf.RegisterGradient("HelloScale")`` gives it a
    gradient. The module also has the raw op, ``HelloScale``, keyword
    arguments only (as ``tf.raw_ops``).

    Loads the plugin into TensorFlow (``load_pluggable_device_library``)
    unless TensorFlow has defined its ops already (a plugin in
    ``site-packages/tensorflow-plugins`` is loaded by ``import tensorflow``;
    one loaded by ``load_pluggable_device_library`` before is not loaded
    twice); a plugin that defines no op is loaded unless the process has it
    open.

    Ops whose names start with ``_`` are kept private as TensorFlow's
    generator keeps them: ``_KitForward`` gives ``__kit_forward`` (and the raw
    op ``_KitForward``), left out of ``from module import *``.

    Raises ``FileNotFoundError`` if ``path`` does not exist, ``ValueError``
    if it is not a plugin built with the kit, ``RuntimeError`` if TensorFlow
    did not define its ops (or TensorFlow's own error if it cannot load it);
    each message names ``path``. Loading the same library again returns the
    same module.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: no such plugin library")
    was_open = _is_open(path)
    names = _op_names(path)
    from tensorflow.core.framework import op_def_pb2
    from tensorflow.python.framework import _pywrap_python_op_gen

    op_list = op_def_pb2.OpList()
    op_list.op.extend(_op_defs(path, names, was_open))
    code = _pywrap_python_op_gen.GetPythonWrappers(op_list.SerializeToString())
    # Named after the library and the code, in sys.modules: AutoGraph finds
    # the functions' module there and, seeing _IS_TENSORFLOW_PLUGIN, calls
    # them as they are.
    stem = os.path.basename(path).split(".")[0].replace("-", "_")
    name = f"tensorflow_pdk.ops_{stem}_{hashlib.sha1(code).hexdigest()[:12]}"
    if name not in sys.modules:
        spec = importlib.machinery.ModuleSpec(name, None, origin=os.path.abspath(path))
        module = importlib.util.module_from_spec(spec)
        exec(compile(code, f"<ops of {path}>", "exec"), module.__dict__)
        module._IS_TENSORFLOW_PLUGIN = True
        module.OP_NAMES = tuple(names)
        sys.modules[name] = module
    return sys.modules[name]
