"""One PDK wheel for every TensorFlow from 2.16 on (scripts/tf_versions.py).

Installs the wheel that scripts/setup.sh built (build/dist/, the same file the
suite's own venv runs, TensorFlow 2.21) into a venv per TensorFlow release and
checks there: no C API symbol missing, PDK loads with its device and all its
kernels (and the legacy ResourceApply* kernels where that release exports
what they need), the graph optimizer rewrites, variables live on PDK, the digits main
job trains on PDK with no compute op on the CPU, the conformance sweep's
fast subset passes, and no library of the kinds the wheel bundles (oneDNN,
OpenBLAS, libgomp, libgfortran, ...) comes from outside the venv, with Debian's
copies hidden from the process (a private mount namespace binds /dev/null over
them). The same file also runs on Python 3.10, 3.12 and 3.13 (pyenv's), and
on a masked CPU (PDK_MAX_CPU_ISA, ONEDNN_MAX_CPU_ISA, OPENBLAS_CORETYPE capped
to AVX2, and to the x86-64-v2 baseline) with the same digits results.

CI runs the oldest release (2.16), the pinned tf-nightly, the three Pythons and
the two CPU masks (2.21 on Python 3.11 is this suite's venv); ``PDK_TF_VERSIONS=all`` runs every release in
scripts/tf_versions.py's VERSIONS, ``PDK_TF_VERSIONS=2.18,2.19`` a choice.
The README's table comes from ``python scripts/tf_versions.py --wheel ...
--markdown README.md``.
"""
import glob
import os
import pathlib
import sys

import pytest
import tensorflow_pdk

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import tf_versions  # noqa: E402

_sel = os.environ.get("PDK_TF_VERSIONS", "ci")
NAMES = (list(tf_versions.VERSIONS) if _sel == "all" else tf_versions.CI_VERSIONS if _sel == "ci"
         else [v.strip() for v in _sel.split(",")])


def _wheel():
    wheels = sorted(glob.glob(str(ROOT / "build" / "dist" / "tensorflow_pdk-*.whl")))
    if not wheels:
        pytest.skip("no PDK wheel in build/dist (scripts/setup.sh builds it)")
    return wheels[-1]


_results = {}


def _check(name):
    if name not in _results:
        root = pathlib.Path(os.environ.get("PDK_TF_VENVS", ROOT / "build" / "tf-venvs"))
        root.mkdir(parents=True, exist_ok=True)
        _results[name] = tf_versions.check(name, tf_versions.VERSIONS[name], _wheel(), root,
                                           conformance=True)
    return _results[name]


@pytest.mark.parametrize("name", NAMES)
def test_the_same_wheel_runs_on(name):
    r = _check(name)
    # The wheel's own copies of oneDNN, OpenBLAS, libgomp, ... serve, with
    # Debian's copies hidden (bound over with /dev/null) where the machine allows.
    assert not tf_versions.bundled_from_outside(r), r["outside_libraries"]
    if os.geteuid() == 0:
        assert r["hidden_system_libraries"] > 0, r
    if name in tf_versions.PYTHON_OF:
        assert r["python"] == tf_versions.PYTHON_OF[name], r
    if name in tf_versions.MASKS:
        # The masked CPU runs the capped core and library paths, with the same results.
        want = tf_versions.MASKS[name]
        assert r["core_isa"].startswith(want["PDK_MAX_CPU_ISA"]), r
        assert f"(ISA {want['ONEDNN_MAX_CPU_ISA']})" in r["libraries"]["oneDNN"], r
        ref = _check(tf_versions.MASK_VENV)
        assert abs(r["digits_accuracy"] - ref["digits_accuracy"]) <= 0.01, (r, ref)
        assert r["digits_losses"] == pytest.approx(ref["digits_losses"], rel=1e-3), (r, ref)
    assert not r["missing_symbols"], f"C API symbols this TensorFlow lacks: {r['missing_symbols']}"
    assert "probe_error" not in r, r["probe_error"]
    assert r["disabled_reason"] == "" and r["devices"] == 1, r
    # Every kernel of this suite's TensorFlow (2.21) registers on every release;
    # where TensorFlow exports kernels_experimental.h's variable functions
    # (2.16-2.18, tf-nightly), the legacy ResourceApply* kernels (4 dtypes each) too, and
    # they match the CPU.
    legacy = r["legacy_apply_kernels"]
    assert bool(legacy) == r["variable_api"], r
    assert r["kernels"] == len(tensorflow_pdk.registered_kernels()) + 4 * len(legacy), r
    if legacy:
        assert r["legacy_apply_launches"] == 3 and r["legacy_apply_max_error"] < 1e-5, r
    assert r["variables"], r
    assert r["rewrites"], f"PDK's graph optimizer did not rewrite the digits step: {r}"
    assert r["digits_accuracy"] > 0.9 and r["digits_cpu_ops"] == 0, r
    if name not in tf_versions.NO_CONFORMANCE:
        conf = r["conformance"]
        assert conf["failed"] == 0 and conf["passed"] > 1000, "\n".join(conf["tail"])
