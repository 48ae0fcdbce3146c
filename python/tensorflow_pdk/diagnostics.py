"""``python -m tensorflow_pdk``: what PDK sees and whether it works.

Prints, one section each: PDK's version and the TensorFlow it runs in; whether
the plugin loaded (else why: ``disabled_reason()``); the PDK devices with their
memory limit and pool threads; the CPU's instruction sets that PDK's kernels
use (AVX2, FMA, AVX-512, AVX512_BF16, AMX); the oneDNN and OpenBLAS libraries
the plugin loaded; every ``PDK_*`` variable set and the settings in force; the
ops and (op, dtype) kernels PDK registers; the features on or off; then a
self-test of about ten seconds: a few kernels (MatMul, Conv2D, Softmax, Sum)
and one Keras training step on ``/PDK:0``, each compared with TensorFlow's CPU
(``testing.TOLERANCES``) and checked to have launched PDK kernels.

Exit code: 0 when the plugin loaded, a device exists and the self-test passes;
1 otherwise (the failing line says why). ``--json`` prints the report as JSON;
``--no-self-test`` skips the self-test.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Dict, List, Tuple

ISA_FLAGS = [("AVX2", "avx2"), ("FMA", "fma"), ("AVX-512", "avx512f"),
             ("AVX512_BF16", "avx512_bf16"), ("AMX", "amx_tile")]


def cpu_isa() -> Dict[str, bool]:
    """{ISA name: present}, from /proc/cpuinfo's flags (Linux)."""
    flags = set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    return {name: flag in flags for name, flag in ISA_FLAGS}


def math_libraries() -> Dict[str, str]:
    """The oneDNN and OpenBLAS the PDK core runs with and the code path each
    chose at run time (``{"oneDNN": "2.6.3 (ISA AVX512_CORE_AMX)", "OpenBLAS":
    "... (core SapphireRapids)"}``), as the core itself reports them: a wheel
    bundles its own copies, so loading them by soname here could find others."""
    from tensorflow_pdk import _native

    out = {}
    for line in _native.read_text(_native.lib().PDK_MathLibraries).splitlines():
        name, _, text = line.partition("\t")
        out[name] = text.strip()
    return out


def _config() -> Dict[str, int]:
    from tensorflow_pdk import _native
    text = _native.read_text(_native.lib().PDK_ConfigText)
    return {k: int(v) for k, v in (ln.split("\t") for ln in text.splitlines() if ln)}


def _self_test() -> List[Tuple[str, bool, str]]:
    """[(check, passed, detail)]: kernels and a training step, PDK vs CPU."""
    import numpy as np
    import tensorflow as tf

    from tensorflow_pdk.testing import TOLERANCES, keras_compile_args, launches

    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 16, 16, 4)).astype(np.float32)
    w = rng.standard_normal((3, 3, 4, 8)).astype(np.float32)
    a = rng.standard_normal((64, 96)).astype(np.float32)
    b = rng.standard_normal((96, 32)).astype(np.float32)
    cases = [
        ("MatMul", lambda: tf.linalg.matmul(a, b)),
        ("Conv2D", lambda: tf.nn.conv2d(x, w, 1, "SAME")),
        ("Softmax", lambda: tf.nn.softmax(a)),
        ("Sum", lambda: tf.reduce_sum(a, axis=0)),
    ]
    rtol, atol = TOLERANCES["float32"]
    results = []
    for op, fn in cases:
        with tf.device("/CPU:0"):
            want = fn().numpy()
        with launches() as n, tf.device("/PDK:0"):
            got = fn().numpy()
        # Relative to the output's scale: sums of many products near zero.
        err = float(np.max(np.abs(got - want)))
        ok = n.get(op, 0) > 0 and err <= atol + rtol * float(np.max(np.abs(want)))
        results.append((op, ok, f"max |PDK - CPU| {err:.2e}, PDK launches {n.get(op, 0)}"))

    # One Keras training step (Dense + Adam), the same weights on both devices.
    import keras

    xs = rng.standard_normal((32, 20)).astype(np.float32)
    ys = rng.integers(0, 4, 32)

    def step(device, weights=None):
        with tf.device(device):
            keras.utils.set_random_seed(0)
            m = keras.Sequential([keras.Input((20,)), keras.layers.Dense(32, activation="relu"),
                                  keras.layers.Dense(4)])
            if weights is not None:
                m.set_weights(weights)
            m.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      **keras_compile_args(device))
            loss = m.train_on_batch(xs, ys)
            return m.get_weights(), float(np.asarray(loss).ravel()[0])

    w0 = step("/CPU:0")[0]
    cpu_w, cpu_loss = step("/CPU:0", w0)
    with launches() as n:
        pdk_w, pdk_loss = step("/PDK:0", w0)
    werr = max(float(np.max(np.abs(p - c))) for p, c in zip(pdk_w, cpu_w))
    ok = sum(n.values()) > 0 and abs(pdk_loss - cpu_loss) <= 1e-4 + 1e-4 * abs(cpu_loss) \
        and werr <= 1e-4
    results.append(("Keras training step", ok,
                     f"loss PDK {pdk_loss:.6f} CPU {cpu_loss:.6f}, max |weight diff| {werr:.2e}, "
                     f"PDK launches {sum(n.values())}"))
    return results


def _xla_hook_installed() -> bool:
    from tensorflow.python.eager.polymorphic_function import polymorphic_function
    return getattr(polymorphic_function.Function.__call__, "_pdk_wrapped", False)


def report(self_test: bool = True) -> Dict:
    """Collects the report (a dict); ``report["ok"]`` is the verdict."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    import tensorflow_pdk
    from tensorflow.python.client import device_lib
    from tensorflow_pdk import _native

    r: Dict = {"pdk_version": tensorflow_pdk.__version__,
               "tensorflow": tf.__version__,
               "built_for_tensorflow": tensorflow_pdk.built_for_tensorflow(),
               "plugin": str(tensorflow_pdk.plugin_path()),
               "core": _native.core_path(),
               "core_isa": _native.cpu_isa(),
               "disabled_reason": tensorflow_pdk.disabled_reason(),
               "problems": []}
    r["config"] = _config()
    # The limit from PDK's own pool: TensorFlow's simple allocator, which
    # serves PDK, reports 0 as the device's memory_limit (docs/architecture.md, "Memory").
    r["devices"] = [{"name": d.name,
                     "memory_limit_bytes":
                         tensorflow_pdk.device_allocator_stats(i)["bytes_limit"],
                     "threads": r["config"]["num_threads"]}
                    for i, d in enumerate(d for d in device_lib.list_local_devices()
                                          if d.device_type == "PDK")]
    r["isa"] = cpu_isa()
    r["libraries"] = math_libraries()
    r["environment"] = {k: v for k, v in sorted(os.environ.items()) if k.startswith("PDK_")
                        and k not in ("PDK_PLUGIN_REGISTERED_PID", "PDK_PLUGIN_DUPLICATES")}
    kernels = tensorflow_pdk.registered_kernels()
    r["ops"] = len({k.op for k in kernels})
    r["kernels"] = len(kernels)
    env = r["environment"]
    r["features"] = {
        "asynchronous kernels (PDK_ASYNC)": tensorflow_pdk.async_status(),
        "strict placement (PDK_STRICT)": "on" if env.get("PDK_STRICT", "").lower() in
        ("1", "true") else "off",
        "graph rewrites (PDK_GRAPH_REWRITES)": "off" if env.get("PDK_GRAPH_REWRITES", "").lower()
        in ("0", "false") else "on" + (f", except {env['PDK_GRAPH_DISABLE']}"
                                       if env.get("PDK_GRAPH_DISABLE") else ""),
        "pluggable profiler (TF_InitProfiler)": "on: PDK's kernels appear in TensorFlow "
                                                 "profiles as /device:CUSTOM:PDK:<n>",
        "jit_compile=True on PDK runs with PDK kernels (tensorflow_pdk._xla)":
            "on" if _xla_hook_installed() else "off (the hook did not install; see stderr)",
    }
    if r["disabled_reason"]:
        r["problems"].append(f"PDK is disabled: {r['disabled_reason']}")
    elif not r["devices"]:
        r["problems"].append("no PDK device is listed (tf.config.set_visible_devices?)")
    if r["kernels"] == 0 and not r["disabled_reason"]:
        r["problems"].append("no kernel is registered")
    r["self_test"] = []
    if self_test and r["devices"]:
        t0 = time.time()
        try:
            r["self_test"] = [{"check": c, "ok": ok, "detail": d} for c, ok, d in _self_test()]
        except Exception as e:  # noqa: BLE001 - reported, exit code 1
            r["self_test"] = [{"check": "self-test", "ok": False, "detail": repr(e)}]
        r["self_test_seconds"] = round(time.time() - t0, 1)
        r["problems"] += [f"self-test {t['check']} failed: {t['detail']}"
                          for t in r["self_test"] if not t["ok"]]
    r["ok"] = not r["problems"]
    return r


def format_report(r: Dict) -> str:
    yes = lambda b: "yes" if b else "no"  # noqa: E731
    lines = [f"PDK {r['pdk_version']} (built against TensorFlow {r['built_for_tensorflow']}) "
             f"in TensorFlow {r['tensorflow']}",
             f"plugin: {r['plugin']}",
             f"PDK core: {r['core_isa']} ({r['core']})",
             "loaded: " + ("no — " + r["disabled_reason"] if r["disabled_reason"] else "yes"),
             "devices:"]
    lines += [f"  {d['name']}: memory limit {d['memory_limit_bytes'] >> 20} MiB, "
              f"{d['threads']} pool threads" for d in r["devices"]] or ["  none"]
    lines.append("CPU: " + ", ".join(f"{k} {yes(v)}" for k, v in r["isa"].items()))
    lines += [f"{k}: {v}" for k, v in r["libraries"].items()]
    lines.append("settings: " + ", ".join(f"{k}={v}" for k, v in r["config"].items()))
    lines.append("PDK_* variables set: " + (", ".join(f"{k}={v}" for k, v in
                                                     r["environment"].items()) or "none"))
    lines.append(f"kernels: {r['ops']} ops, {r['kernels']} (op, dtype) kernels")
    lines.append("features:")
    lines += [f"  {k}: {v}" for k, v in r["features"].items()]
    if r["self_test"]:
        lines.append(f"self-test ({r.get('self_test_seconds', 0)} s):")
        lines += [f"  {'ok  ' if t['ok'] else 'FAIL'} {t['check']}: {t['detail']}"
                  for t in r["self_test"]]
    lines.append("verdict: " + ("ok" if r["ok"] else "PROBLEMS\n  " + "\n  ".join(r["problems"])))
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m tensorflow_pdk", description=__doc__.split("\n")[0])
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--no-self-test", action="store_true")
    args = p.parse_args(argv)
    r = report(self_test=not args.no_self_test)
    print(json.dumps(r, indent=1) if args.json else format_report(r))
    return 0 if r["ok"] else 1
