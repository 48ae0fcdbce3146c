"""``tf.config.experimental.get_memory_info`` and ``reset_memory_stats`` for PDK.

PDK declines TensorFlow's BFC allocator, whose retry made every out-of-memory
wait 10 s (docs/architecture.md, "Memory"). TensorFlow then serves a PDK
device with its ``PluggableDeviceSimpleAllocator``, which keeps no statistics:
alone, TensorFlow would answer ``get_memory_info("PDK:0")`` with
``{'current': 0, 'peak': 0}`` and ``reset_memory_stats("PDK:0")`` with
``ValueError: Cannot reset memory stats for device 'PDK:0'``. The device's
memory pool keeps them (``tensorflow_pdk.device_allocator_stats``):
:func:`install` wraps ``Context.get_memory_info`` and
``Context.reset_memory_stats`` (what the ``tf.config.experimental`` functions
call) so that a PDK device's name is answered from the pool — ``current``:
bytes held by tensors, ``peak``: their peak since the device was created or
the last reset — with the same semantics BFC had. Other devices, and names
TensorFlow rejects, go to TensorFlow unchanged.

Installed by the plugin when TensorFlow loads it (tensorflow_pdk/_hooks.py).
"""
from __future__ import annotations


def _pdk_ordinal(ctx, original_info, dev):
    """The plugin ordinal of the PDK device `dev` names, or None when `dev`
    names no PDK device (then TensorFlow answers). Raises as TensorFlow does
    for a name it cannot match."""
    from tensorflow.python.framework import device_spec

    if not isinstance(dev, str):
        return None
    try:
        spec = device_spec.DeviceSpecV2.from_string(dev)
    except (ValueError, TypeError):
        return None
    if spec.device_type != "PDK":
        return None
    original_info(ctx, dev)  # TensorFlow's own check of the name (ValueError if none matches)
    index = spec.device_index or 0
    # Logical PDK:i is the i-th visible physical PDK device (visible_device_list).
    visible = ctx.get_visible_devices("PDK")
    if index < len(visible):
        return int(visible[index].name.rsplit(":", 1)[1])
    return index


def install() -> bool:
    """Wraps the two Context methods once per process (idempotent)."""
    from tensorflow.python.eager import context

    cls = context.Context
    if getattr(cls.get_memory_info, "_pdk_wrapped", False):
        return True
    original_info, original_reset = cls.get_memory_info, cls.reset_memory_stats

    def get_memory_info(self, dev):
        ordinal = _pdk_ordinal(self, original_info, dev)
        if ordinal is None:
            return original_info(self, dev)
        import tensorflow_pdk

        s = tensorflow_pdk.device_allocator_stats(ordinal)
        return {"current": s["bytes_in_use"], "peak": s["peak_bytes_in_use"]}

    def reset_memory_stats(self, dev):
        ordinal = _pdk_ordinal(self, original_info, dev)
        if ordinal is None:
            return original_reset(self, dev)
        import tensorflow_pdk

        tensorflow_pdk.reset_device_allocator_stats(ordinal)
        return None

    for fn, orig in ((get_memory_info, original_info), (reset_memory_stats, original_reset)):
        fn._pdk_wrapped = True  # type: ignore[attr-defined]
        fn.__doc__ = orig.__doc__
    cls.get_memory_info = get_memory_info
    cls.reset_memory_stats = reset_memory_stats
    return True
