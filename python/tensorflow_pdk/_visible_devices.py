"""``tf.config.set_visible_devices([], "PDK")`` switches PDK off.

TensorFlow's ``Context.config`` (tensorflow/python/eager/context.py) turns the
visible-device list into ``ConfigProto.device_count`` and
``pluggable_device_options.visible_device_list``; for a PluggableDevice type
with no visible device it writes neither (device_count is preset to 0 for CPU
and GPU only, and an empty visible_device_list means "all"), so TensorFlow
2.21 creates every PDK device anyway and runs unscoped ops there, while
``tf.config.get_visible_devices()`` reports PDK hidden. :func:`install` wraps
the ``config`` property so that such a type gets ``device_count = 0``, which
TensorFlow's PluggableDevice factory honours: no PDK device is created, and
``tf.config.list_logical_devices()`` no longer lists one. Hiding some of
several PDK devices already works through visible_device_list.

Installed by the plugin when TensorFlow loads it (tensorflow_pdk/_hooks.py).
"""
from __future__ import annotations


def install() -> bool:
    """Wraps ``Context.config`` once per process (idempotent)."""
    from tensorflow.python.eager import context

    prop = context.Context.config
    if getattr(prop.fget, "_pdk_wrapped", False):
        return True
    original = prop.fget

    def config(self):
        cfg = original(self)
        visible = {d.device_type for d in self._visible_device_list}  # noqa: SLF001
        for dev in self._pluggable_devices or []:  # noqa: SLF001
            if dev.device_type not in visible:
                cfg.device_count[dev.device_type] = 0
        return cfg

    config._pdk_wrapped = True  # type: ignore[attr-defined]
    config.__doc__ = original.__doc__
    context.Context.config = property(config, prop.fset, prop.fdel, prop.__doc__)
    return True
