"""What PDK changes in TensorFlow's Python side, installed by the plugin itself
when TensorFlow loads it (src/plugin.cc, ``InstallPythonHooks``, through
Python's stable C API), so a user never has to import ``tensorflow_pdk``:

- :mod:`tensorflow_pdk._xla`: ``tf.function(jit_compile=True)`` placed on PDK
  runs with PDK's kernels (XLA has no PDK backend);
- :mod:`tensorflow_pdk._visible_devices`: ``tf.config.set_visible_devices([],
  "PDK")`` really hides PDK;
- :mod:`tensorflow_pdk._distribute`: tf.distribute's MultiWorkerMirroredStrategy,
  ``MirroredStrategy()`` and ParameterServerStrategy take the PDK devices as
  their local (worker) devices;
- :mod:`tensorflow_pdk._memory_info`: ``tf.config.experimental.get_memory_info``
  and ``reset_memory_stats`` answer for PDK devices from PDK's memory pool
  (TensorFlow's simple allocator, which serves PDK, keeps no statistics);
- :mod:`tensorflow_pdk._fetch`: ``t.numpy()``, ``float(t)`` and ``print(t)`` of a
  PDK tensor read it through one PDK op instead of TensorFlow's copy through
  its EventMgr threads (about 10 µs instead of 100 µs), and host data handed
  to PDK (NumPy arrays under a PDK scope, host tensors passed to a
  ``tf.function`` on PDK) goes in the same way; Keras 3's
  ``convert_to_numpy``, through which ``train_on_batch`` and ``fit`` read
  their logs every step, reads PDK tensors that way too.

Each hook is installed on its own: one failing (a TensorFlow whose private
Python API moved) prints one line and leaves the others in place.
"""
from __future__ import annotations

import sys


def install() -> None:
    from tensorflow_pdk import _distribute, _fetch, _memory_info, _visible_devices, _xla

    for hook in (_xla.install, _visible_devices.install, _distribute.install,
                 _memory_info.install, _fetch.install, _fetch.install_conversions,
                 _fetch.install_keras):
        try:
            hook()
        except Exception as e:  # noqa: BLE001 -- never break `import tensorflow`
            print(f"PDK: {hook.__module__}.{hook.__name__}() failed, its fix is off: {e!r}",
                  file=sys.stderr)
