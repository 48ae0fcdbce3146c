"""Soft device placement kept at TensorFlow's documented default.

TensorFlow creates its eager context lazily, and takes the context's soft
placement from ``executing_eagerly()`` at that moment when nobody set it
(``Context.config`` in tensorflow/python/eager/context.py). When the first
thing a program runs is a ``tf.function`` whose trace needs the context (a
``tf.device`` block inside the function, called with a NumPy argument), the
context is created while tracing, with soft placement off for good, although
``tf.config.get_soft_device_placement()`` still says True (TensorFlow issue
#48559). From then on an eager op that has no kernel on the device of its
``tf.device`` scope fails instead of running on the CPU: Keras's ``fit`` under
``tf.device("/PDK:0")`` fails on tf.data's ``RangeDataset`` with
``Could not satisfy device specification '/job:localhost/replica:0/task:0/
device:PDK:0'. enable_soft_placement=0``.

:func:`apply` sets soft placement explicitly to True, TensorFlow's default,
when the program has not set it (a program that set it, to True or False,
keeps its choice): before the context exists, the context is then created
with it on; after, the running context is switched back on.
"""
from __future__ import annotations

import sys


def apply() -> bool:
    """Sets soft placement to True unless the program set it; True if it did.
    Does nothing (False) when tensorflow is not imported yet."""
    if "tensorflow" not in sys.modules:
        return False
    from tensorflow.python.eager import context

    ctx = context.context()
    if getattr(ctx, "_soft_device_placement", True) is not None:
        return False  # set by the program, or a TensorFlow without the attribute
    ctx.soft_device_placement = True
    return True
