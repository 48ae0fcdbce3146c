r"""One PDK wheel, every TensorFlow from 2.16 on: the compatibility matrix.

For each TensorFlow release in VERSIONS, installs that TensorFlow and the given
PDK wheel (the same file for all, ``--no-deps``) into a venv of its own under
``$PDK_TF_VENVS`` (default ``build/tf-venvs``; pip's cache is shared, and a
venv is reused while its TensorFlow spec is unchanged), then measures:

- **symbols**: the plugin's undefined ``TF_*``/``SE_*``/``TP_*`` symbols
  (``nm -D --undefined-only``) that no shared library of that TensorFlow
  exports (``nm -D --defined-only``); PDK resolves nothing else from
  TensorFlow at run time but ``TF_Version`` (dlsym), so any symbol listed is a
  load failure;
- **loads / devices / kernels**: ``tensorflow_pdk.disabled_reason()``, the PDK
  devices TensorFlow lists, the (op, dtype) kernels PDK registered;
- **optimizer**: PDK's Grappler rewrites fired in the digits job
  (``graph_rewrite_counts``: MatMul+BiasAdd+Relu fusion, the Adam update);
- **variables**: a ``tf.Variable`` created under ``/PDK:0`` has its resource
  there and ``assign_add`` updates it;
- **legacy ResourceApply\* kernels**: registered where TensorFlow exports the
  variable functions of kernels_experimental.h (pdk/variables.h), and then
  compared with the CPU (ResourceApplyGradientDescent, Momentum, Adam);
- **digits**: the main job (``tensorflow_pdk.examples.digits``, 10 epochs):
  test accuracy and the training-step compute ops placed on the CPU (must be 0);
- **conformance**: the conformance sweep's fast subset
  (tests/python/test_conformance.py) run in that venv.

Usage::

    python scripts/tf_versions.py --wheel build/dist/tensorflow_pdk-*.whl \\
        [--versions 2.16,nightly | all] [--no-conformance] [--json out.json] \\
        [--markdown README.md]

``--markdown`` rewrites the table between the ``<!-- tf-versions -->`` markers
of that file. tests/python/test_tf_versions.py runs it (oldest and nightly in
CI; ``PDK_TF_VERSIONS=all`` for the full matrix).
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import pathlib
import re
import subprocess
import sys
import time

import venvs

ROOT = pathlib.Path(__file__).resolve().parent.parent

# Release -> pip requirement. "nightly" is pinned to the tf-nightly build
# current when the matrix was last run (override: PDK_TF_NIGHTLY=<pip spec>).
VERSIONS = {
    "2.16": "tensorflow-cpu==2.16.2",
    "2.17": "tensorflow-cpu==2.17.1",
    "2.18": "tensorflow-cpu==2.18.1",
    "2.19": "tensorflow-cpu==2.19.1",
    "2.20": "tensorflow-cpu==2.20.0",
    "2.21": "tensorflow-cpu==2.21.0",
    "2.21 (tensorflow)": "tensorflow==2.21.0",
    "nightly": os.environ.get("PDK_TF_NIGHTLY", "tf-nightly==2.23.0.dev20261026"),
}
# The same wheel on other Pythons than the suite's (it is tagged py3-none, one
# file for all): TensorFlow 2.21 in a venv of pyenv's interpreter of each.
for _py in ("3.10", "3.12", "3.13"):
    VERSIONS[f"2.21 py{_py}"] = "tensorflow-cpu==2.21.0"
PYTHON_OF = {name: name.split(" py")[1] for name in VERSIONS if " py" in name}
# The same wheel on a CPU with fewer features, masked: PDK's loader capped to a
# core level (PDK_MAX_CPU_ISA), oneDNN's and OpenBLAS's run-time dispatch capped
# to match. Runs in the "2.21 py3.12" venv; digits must match the unmasked row.
MASKS = {
    "2.21 AVX2": {"PDK_MAX_CPU_ISA": "x86-64-v3", "ONEDNN_MAX_CPU_ISA": "AVX2",
                  "OPENBLAS_CORETYPE": "Haswell"},
    "2.21 x86-64-v2": {"PDK_MAX_CPU_ISA": "x86-64-v2", "ONEDNN_MAX_CPU_ISA": "SSE41",
                       "OPENBLAS_CORETYPE": "Nehalem"},
}
MASK_VENV = "2.21 py3.12"
for _name in MASKS:
    VERSIONS[_name] = VERSIONS[MASK_VENV]
CI_VERSIONS = ["2.16", "nightly", "2.21 py3.10", "2.21 py3.12", "2.21 py3.13",
               *MASKS]  # 2.21 / py3.11 is the suite's own venv
# Rows that skip the conformance sweep (the digits job and the probe still run):
# the Python and CPU-mask rows run the same TensorFlow as the suite.
NO_CONFORMANCE = set(PYTHON_OF) | set(MASKS)
EXTRA_PACKAGES = ["scikit-learn", "pytest"]

# Shared libraries the wheel bundles (scripts/build_wheel.sh) whose Debian
# copies (the -dev packages setup.sh installs) the probe hides: bound over
# with /dev/null in a private mount namespace, so a load of one fails.
BUNDLED = re.compile(r"^lib(dnnl|openblas|gomp|gfortran|quadmath|OpenCL)")
SYSTEM_LIB_DIRS = ["/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu",
                   "/usr/lib/x86_64-linux-gnu/openblas-pthread"]

# Runs inside a version's venv; prints one JSON line.
PROBE = r"""
import json, os, sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf, tensorflow_pdk
from tensorflow_pdk import diagnostics
out = {"tensorflow": tf.__version__, "disabled_reason": tensorflow_pdk.disabled_reason(),
       "devices": len(tf.config.list_logical_devices("PDK")),
       "kernels": len(tensorflow_pdk.registered_kernels()),
       "python": "%d.%d" % sys.version_info[:2], "core_isa": tensorflow_pdk.cpu_isa(),
       "libraries": diagnostics.math_libraries()}
if out["devices"]:
    with tf.device("/PDK:0"):
        v = tf.Variable(tf.ones([4]))
        v.assign_add(tf.ones([4]) * v)  # TensorFlow's resource kernels, on PDK's device
    out["variable_device"] = v.handle.device
    out["variables"] = "PDK:0" in v.handle.device and float(v.numpy().sum()) == 8.0
    # The legacy in-place training ops: registered where TensorFlow exports
    # kernels_experimental.h's variable functions (2.16-2.18, tf-nightly); PDK vs CPU.
    import numpy as np
    out["legacy_apply_kernels"] = sorted({k.op for k in tensorflow_pdk.registered_kernels()
                                          if k.op.startswith("ResourceApply")})
    if out["legacy_apply_kernels"]:
        rng = np.random.default_rng(0)
        w0, g = rng.standard_normal((2, 64)).astype(np.float32)
        def apply(dev):
            with tf.device(dev):
                v, a, b = (tf.Variable(x) for x in (w0, np.abs(w0) * 0.1, np.abs(w0) * 0.2))
                tf.raw_ops.ResourceApplyGradientDescent(var=v.handle, alpha=0.1, delta=g)
                tf.raw_ops.ResourceApplyMomentum(var=v.handle, accum=a.handle, lr=0.1, grad=g,
                                                 momentum=0.9, use_nesterov=True)
                tf.raw_ops.ResourceApplyAdam(var=v.handle, m=a.handle, v=b.handle,
                                             beta1_power=0.9, beta2_power=0.999, lr=0.01,
                                             beta1=0.9, beta2=0.999, epsilon=1e-7, grad=g)
                return [x.numpy() for x in (v, a, b)]
        want = apply("/CPU:0")
        tensorflow_pdk.reset_launch_counts()
        got = apply("/PDK:0")
        out["legacy_apply_launches"] = sum(n for op, n in tensorflow_pdk.launch_counts().items()
                                           if op.startswith("ResourceApply"))
        out["legacy_apply_max_error"] = max(float(np.max(np.abs(x - y)))
                                            for x, y in zip(got, want))
    from tensorflow_pdk.examples import digits
    tensorflow_pdk.reset_graph_rewrite_counts()
    r = digits.train("/PDK:0", epochs=10, batch_size=32, seed=0, verbose=0)
    out["rewrites"] = tensorflow_pdk.graph_rewrite_counts()
    out["digits_accuracy"] = r.test_accuracy
    out["digits_cpu_ops"] = sum(r.cpu_compute_ops.values())
    out["digits_pdk_launches"] = sum(r.pdk_launches.values())
    out["digits_losses"] = r.losses
# Every shared library mapped into this process: none of the bundled kinds may
# come from outside this venv (sys.prefix) or the interpreter's own tree.
libs = set()
with open("/proc/self/maps") as f:
    for line in f:
        p = line.split()[-1]
        if ".so" in p and p.startswith("/"):
            libs.add(p)
out["libraries_loaded"] = len(libs)
out["outside_libraries"] = sorted(p for p in libs if not p.startswith(sys.prefix)
                                  and not p.startswith(sys.base_prefix))
print("PROBE " + json.dumps(out))
"""


def log(msg: str) -> None:
    print(f"[tf_versions] {msg}", file=sys.stderr, flush=True)


def interpreter(version: str) -> str:
    """pyenv's python<version> ($PYENV_ROOT, default ~/.pyenv), else one on PATH."""
    pyenv = pathlib.Path(os.environ.get("PYENV_ROOT", pathlib.Path.home() / ".pyenv"))
    found = sorted(glob.glob(str(pyenv / "versions" / f"{version}.*" / "bin" / f"python{version}")))
    if found:
        return found[-1]
    import shutil
    exe = shutil.which(f"python{version}")
    if exe is None:
        raise FileNotFoundError(f"no Python {version} interpreter (pyenv install {version})")
    return exe


def venv_for(name: str, spec: str, root: pathlib.Path) -> pathlib.Path:
    """The venv of one TensorFlow release (created or reused); returns its python."""
    name = MASK_VENV if name in MASKS else name
    base = interpreter(PYTHON_OF[name]) if name in PYTHON_OF else sys.executable
    return venvs.venv_with(root / re.sub(r"[^A-Za-z0-9.]+", "_", name),
                           spec.split() + EXTRA_PACKAGES, python=base, log=log)


def install_wheel(py: pathlib.Path, wheel: str) -> None:
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall",
                    wheel], check=True)


def _nm(path: str, flag: str) -> set:
    # Names without their symbol version (tf-nightly exports TF_X@@tensorflow;
    # an unversioned reference binds to the default version).
    r = subprocess.run(["nm", "-D", flag, path], capture_output=True, text=True)
    return {line.split()[-1].split("@")[0] for line in r.stdout.splitlines() if line.strip()}


# kernels_experimental.h functions PDK resolves at run time (pdk/variables.h).
VARIABLE_API = {"TF_MaybeLockVariableInputMutexesInOrder", "TF_GetInputTensorFromVariable",
                "TF_ReleaseVariableInputLockHolder"}


def tf_exports(py: pathlib.Path) -> tuple:
    """(the PDK plugin's libraries: the loader and its cores, every dynamic symbol
    this TensorFlow's libraries export)."""
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    plugin = [os.path.join(site, "tensorflow-plugins", "libtensorflow_pdk_plugin.so"),
              *sorted(glob.glob(os.path.join(site, "tensorflow_pdk", "lib", "*.so")))]
    exported = set()
    for lib in glob.glob(os.path.join(site, "tensorflow", "**", "*.so*"), recursive=True):
        exported |= _nm(lib, "--defined-only")
    return plugin, exported


def missing_symbols(plugin: list, exported: set) -> list:
    """The plugin's TF_/SE_/TP_ imports that this TensorFlow does not export."""
    wanted = {s for lib in plugin for s in _nm(lib, "--undefined-only")
              if re.match(r"(TF|SE|TP)_", s)}
    return sorted(wanted - exported)


def hide_system_copies() -> list:
    """The Debian copies of the libraries the wheel bundles (real files)."""
    found = set()
    for d in SYSTEM_LIB_DIRS:
        for p in glob.glob(os.path.join(d, "*.so*")):
            if BUNDLED.search(os.path.basename(p)) and os.path.isfile(p):
                found.add(os.path.realpath(p))
    return sorted(found)


def hidden_command(hidden: list) -> list:
    """A command prefix that runs the rest with `hidden` replaced by /dev/null in
    a private mount namespace (unshare, as root); [] where that is not possible."""
    if not hidden or os.geteuid() != 0 or subprocess.run(
            ["unshare", "-m", "true"], capture_output=True).returncode != 0:
        return []
    script = "".join(f"mount --bind /dev/null '{p}' && " for p in hidden) + 'exec "$@"'
    return ["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh"]


def run_conformance(py: pathlib.Path) -> dict:
    r = subprocess.run([str(py), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "test_conformance.py"], cwd=ROOT / "tests" / "python",
                       capture_output=True, text=True,
                       env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"})
    counts = {k: int(n) for n, k in re.findall(r"(\d+) (passed|failed|error|errors|skipped)",
                                               r.stdout.splitlines()[-1] if r.stdout else "")}
    return {"passed": counts.get("passed", 0),
            "failed": counts.get("failed", 0) + counts.get("error", 0) + counts.get("errors", 0),
            "tail": r.stdout.splitlines()[-15:] if r.returncode else []}


def check(name: str, spec: str, wheel: str, root: pathlib.Path, conformance: bool) -> dict:
    t0 = time.time()
    py = venv_for(name, spec, root)
    install_wheel(py, wheel)
    plugin, exported = tf_exports(py)
    res = {"name": name, "spec": spec, "missing_symbols": missing_symbols(plugin, exported),
           "variable_api": VARIABLE_API <= exported}
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PDK_") and k != "TF_PLUGGABLE_DEVICE_LIBRARY_PATH"
           and k not in ("ONEDNN_MAX_CPU_ISA", "OPENBLAS_CORETYPE")}
    env.update(MASKS.get(name, {}))
    hidden = hide_system_copies()
    res["hidden_system_libraries"] = len(hidden)
    r = subprocess.run([*hidden_command(hidden), str(py), "-c", PROBE], capture_output=True,
                       text=True, env=env, cwd=root)
    line = next((ln for ln in r.stdout.splitlines() if ln.startswith("PROBE ")), None)
    if line is None:
        res["probe_error"] = (r.stderr or r.stdout)[-3000:]
    else:
        res.update(json.loads(line[len("PROBE "):]))
    if conformance and res.get("devices") and name not in NO_CONFORMANCE:
        res["conformance"] = run_conformance(py)
    res["seconds"] = round(time.time() - t0, 1)
    res["ok"] = ok(res, conformance)
    return res


def ok(r: dict, conformance: bool) -> bool:
    conformance = conformance and r["name"] not in NO_CONFORMANCE
    return (not bundled_from_outside(r) and not r["missing_symbols"] and "probe_error" not in r and r.get("devices") == 1
            and r.get("disabled_reason") == "" and r.get("variables") is True
            and r.get("digits_accuracy", 0) > 0.9 and r.get("digits_cpu_ops") == 0
            and bool(r.get("rewrites"))
            and bool(r.get("legacy_apply_kernels")) == r["variable_api"]
            and (not r["variable_api"] or (r.get("legacy_apply_launches") == 3
                                           and r.get("legacy_apply_max_error", 1) < 1e-5))
            and (not conformance or (r["conformance"]["failed"] == 0
                                     and r["conformance"]["passed"] > 0)))


def bundled_from_outside(r: dict) -> list:
    """Libraries of the kinds the wheel bundles that the probe's process mapped
    from outside its venv (must be none: the wheel's copies serve)."""
    return [p for p in r.get("outside_libraries", []) if BUNDLED.search(os.path.basename(p))]


def markdown(results: list) -> str:
    rows = ["| TensorFlow | Python | PDK core; oneDNN ISA; OpenBLAS core | loads | PDK devices "
            "| kernels | graph optimizer | variables on PDK "
            "| legacy ResourceApply* kernels | digits job (accuracy, CPU ops) "
            "| conformance fast subset |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        yes = lambda b: "yes" if b else "**no**"  # noqa: E731
        conf = r.get("conformance")
        legacy = ("yes (max \\|PDK − CPU\\| {:.1e})".format(r["legacy_apply_max_error"])
                  if r.get("legacy_apply_kernels") else "no (not exported)")
        libs = r.get("libraries", {})
        isa = "{}; {}; {}".format(
            r.get("core_isa", "—").split(" (")[0],
            re.sub(r".*\(ISA (\w+)\).*", r"\1", libs.get("oneDNN", "—")),
            re.sub(r".*\(core (\w+)\).*", r"\1", libs.get("OpenBLAS", "—")))
        masked = " ".join(f"{k}={v}" for k, v in MASKS.get(r["name"], {}).items())
        rows.append("| {} (`{}`{}) | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
            r.get("tensorflow", r["name"]), r["spec"], ", " + masked if masked else "",
            r.get("python", "—"), isa,
            yes(not r["missing_symbols"] and "probe_error" not in r and not r.get("disabled_reason")
                and not bundled_from_outside(r)),
            r.get("devices", 0), r.get("kernels", "—"),
            "yes ({} rewrites)".format(sum(r["rewrites"].values())) if r.get("rewrites") else "**no**",
            yes(r.get("variables")), legacy,
            "{:.4f}, {}".format(r["digits_accuracy"], r["digits_cpu_ops"])
            if "digits_accuracy" in r else "—",
            "{} passed, {} failed".format(conf["passed"], conf["failed"]) if conf
            else "not run (same TensorFlow as the 2.21 row)" if r["name"] in NO_CONFORMANCE
            else "not run"))
    return "\n".join(rows)


def write_markdown(path: str, table: str) -> None:
    text = pathlib.Path(path).read_text()
    new, n = re.subn(r"(<!-- tf-versions -->\n)(?:.*?\n)?(<!-- /tf-versions -->)",
                     lambda m: m.group(1) + table + "\n" + m.group(2), text, flags=re.S)
    if n != 1:
        raise SystemExit(f"{path}: no <!-- tf-versions --> ... <!-- /tf-versions --> markers")
    pathlib.Path(path).write_text(new)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--wheel", required=True, help="the PDK wheel file to install everywhere")
    p.add_argument("--versions", default="all",
                   help="comma-separated keys of VERSIONS, 'ci' or 'all' (default)")
    p.add_argument("--no-conformance", action="store_true")
    p.add_argument("--json")
    p.add_argument("--markdown")
    args = p.parse_args(argv)
    names = (list(VERSIONS) if args.versions == "all" else CI_VERSIONS if args.versions == "ci"
             else [v.strip() for v in args.versions.split(",")])
    root = pathlib.Path(os.environ.get("PDK_TF_VENVS", ROOT / "build" / "tf-venvs"))
    root.mkdir(parents=True, exist_ok=True)
    results = []
    for name in names:
        log(f"{name}: {VERSIONS[name]}")
        results.append(check(name, VERSIONS[name], args.wheel, root, not args.no_conformance))
        log(f"{name}: {'ok' if results[-1]['ok'] else 'FAILED'} ({results[-1]['seconds']} s)")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=1))
    if args.markdown:
        write_markdown(args.markdown, markdown(results))
    print(markdown(results))
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
