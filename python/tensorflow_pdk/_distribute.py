"""tf.distribute's strategies take PDK devices as their local devices.

TensorFlow 2.21 chooses a strategy's local devices by name, GPU or else CPU:

- ``MultiWorkerMirroredStrategy`` (``CollectiveAllReduceExtended.
  _initialize_local_devices`` in tensorflow/python/distribute/
  collective_all_reduce_strategy.py) counts ``context.num_gpus()`` (or the
  cluster resolver's ``num_accelerators()["GPU"]``) and, with none, makes
  ``/job:<task>/device:CPU:0`` the worker's only replica device;
- ``MirroredStrategy()`` without a device list (``all_local_devices`` in
  mirrored_strategy.py) takes the logical GPUs, or else the CPU;
- ``ParameterServerStrategy`` (``ParameterServerStrategyV2Extended``,
  parameter_server_strategy_v2.py) counts the GPUs of the worker tasks
  (``_set_num_gpus``) and, with none, runs each worker's replica on
  ``/device:CPU:0`` (``worker_devices``).

Every op of a replica then runs under an explicit ``tf.device(".../CPU:0")``,
so a PDK device is never used, and the strategy offers no argument to name
another device type for the multi-worker case. :func:`install` wraps both
choices: where TensorFlow would take the CPU and PDK devices are visible, the
local devices are the PDK devices (``/job:<task>/device:PDK:0..N-1``), as GPUs
would be; for ParameterServerStrategy, the PDK devices of the worker tasks when
every worker has the same number (its variables stay on the parameter servers'
CPU, where TensorFlow pins them). A GPU or TPU, when present, keeps priority; hiding PDK
(``tf.config.set_visible_devices([], "PDK")`` or ``PDK_DEVICE_COUNT=0``) gives
TensorFlow's own choice back.

The collectives the strategies emit (``CollectiveReduceV2``,
``CollectiveGatherV2``, ``CollectiveBcastSendV2``/``RecvV2``, ...) have
``DEVICE_DEFAULT`` kernels in TensorFlow, so they run on the PDK device, and
the reduction they instantiate for the device (``merge_op="Add"``) is PDK's
``Add`` kernel. See docs/distributed.md.

Installed by the plugin when TensorFlow loads it (tensorflow_pdk/_hooks.py).
"""
from __future__ import annotations


def _visible_pdk_count() -> int:
    from tensorflow.python.framework import config

    return len(config.get_visible_devices("PDK"))


def _pdk_per_worker_task() -> int:
    """The number of PDK devices each worker task of the cluster has (0 if
    none, or if the workers differ)."""
    from tensorflow.python.framework import config
    from tensorflow.python.framework import device as tf_device

    per_task = {}
    for d in config.list_logical_devices("PDK"):
        spec = tf_device.DeviceSpec.from_string(d.name)
        if spec.job == "worker":
            per_task[spec.task] = per_task.get(spec.task, 0) + 1
    counts = set(per_task.values())
    return counts.pop() if len(counts) == 1 else 0


def _install_parameter_server() -> None:
    from tensorflow.python.distribute import parameter_server_strategy_v2 as pss

    extended = pss.ParameterServerStrategyV2Extended
    original_set = extended._set_num_gpus  # noqa: SLF001
    if getattr(original_set, "_pdk_wrapped", False):
        return
    original_devices = extended.worker_devices
    original_replicas = extended._num_replicas_in_sync  # noqa: SLF001

    def _set_num_gpus(self):
        original_set(self)
        self._pdk_per_worker = 0 if self._num_gpus_per_worker else _pdk_per_worker_task()

    def worker_devices(self):
        n = getattr(self, "_pdk_per_worker", 0)
        if n:
            return tuple(f"/device:PDK:{i}" for i in range(n))
        return original_devices.fget(self)

    def _num_replicas_in_sync(self):
        return getattr(self, "_pdk_per_worker", 0) or original_replicas.fget(self)

    _set_num_gpus._pdk_wrapped = True  # type: ignore[attr-defined]
    extended._set_num_gpus = _set_num_gpus  # noqa: SLF001
    extended.worker_devices = property(worker_devices, doc=original_devices.__doc__)
    extended._num_replicas_in_sync = property(_num_replicas_in_sync)  # noqa: SLF001


def _install_multi_worker() -> None:
    from tensorflow.python.distribute import collective_all_reduce_strategy as cars

    extended = cars.CollectiveAllReduceExtended
    original = extended._initialize_local_devices  # noqa: SLF001
    if getattr(original, "_pdk_wrapped", False):
        return

    def _initialize_local_devices(self, cluster_resolver, worker_device):
        devices, device_type = original(self, cluster_resolver, worker_device)
        if device_type == "CPU":
            n = _visible_pdk_count()
            if n:
                devices = tuple(f"{worker_device}/device:PDK:{i}" for i in range(n))
                device_type = "PDK"
        return devices, device_type

    _initialize_local_devices._pdk_wrapped = True  # type: ignore[attr-defined]
    _initialize_local_devices.__wrapped__ = original  # type: ignore[attr-defined]
    extended._initialize_local_devices = _initialize_local_devices  # noqa: SLF001


def _install_mirrored() -> None:
    from tensorflow.python.distribute import mirrored_strategy
    from tensorflow.python.framework import config

    original = mirrored_strategy.all_local_devices
    if getattr(original, "_pdk_wrapped", False):
        return

    def all_local_devices(num_gpus=None):
        devices = original(num_gpus)
        if config.list_logical_devices("GPU"):
            return devices
        return config.list_logical_devices("PDK") or devices

    all_local_devices._pdk_wrapped = True  # type: ignore[attr-defined]
    all_local_devices.__wrapped__ = original  # type: ignore[attr-defined]
    all_local_devices.__doc__ = original.__doc__
    mirrored_strategy.all_local_devices = all_local_devices


def install() -> bool:
    """Wraps the three choices once per process (idempotent), each on its
    own: one TensorFlow moved prints one line and leaves that strategy with
    TensorFlow's choice. Returns whether all three are in place."""
    import sys

    ok = True
    for name, fn in (("MultiWorkerMirroredStrategy", _install_multi_worker),
                     ("MirroredStrategy", _install_mirrored),
                     ("ParameterServerStrategy", _install_parameter_server)):
        try:
            fn()
        except Exception as e:  # noqa: BLE001 -- never break `import tensorflow`
            ok = False
            print(f"PDK: {name} keeps TensorFlow's device choice (CPU), PDK's hook "
                  f"failed: {e!r}", file=sys.stderr)
    return ok
