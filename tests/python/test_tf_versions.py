"""One PDK wheel for every TensorFlow from 2.16 on (scripts/tf_versions.py).

Installs the wheel that scripts/setup.sh built (build/dist/, the same file the
suite's own venv runs, TensorFlow 2.21) into a venv per TensorFlow release and
checks there: no C API symbol missing, PDK loads with its device and all its
kernels (and the legacy ResourceApply* kernels where that release exports
what they need), the graph optimizer rewrites, variables live on PDK, the digits main
job trains on PDK with no compute op on the CPU, and the conformance sweep's
fast subset passes.

CI runs the oldest release (2.16) and the pinned tf-nightly (2.21 is this
suite's venv); ``PDK_TF_VERSIONS=all`` runs every release in
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


@pytest.mark.parametrize("name", NAMES)
def test_the_same_wheel_runs_on(name, tmp_path):
    root = pathlib.Path(os.environ.get("PDK_TF_VENVS", ROOT / "build" / "tf-venvs"))
    root.mkdir(parents=True, exist_ok=True)
    r = tf_versions.check(name, tf_versions.VERSIONS[name], _wheel(), root, conformance=True)
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
    conf = r["conformance"]
    assert conf["failed"] == 0 and conf["passed"] > 1000, "\n".join(conf["tail"])
