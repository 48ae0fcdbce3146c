"""TensorFlow's own python kernel tests as a conformance suite.

Runs the TensorFlow test files in ``../shared/tf_kernel_tests/`` (read from
there, never copied; ``PDK_TF_TESTS_DIR`` names another folder) through
``scripts/tf_kernel_tests.py``: each file in a child process with PDK disabled
(``PDK_DEVICE_COUNT=0``, stock TensorFlow: the reference) and with PDK as the
default device, test_util's implicit CPU pins lifted in both. Asserts, per file:

- every test that passes without PDK passes with it, unless
  ``tf_kernel_tests_expected.EXPECTED`` lists it with its cause;
- every listed test still fails only with PDK (a stale entry fails);
- the PDK run launched PDK kernels (``tensorflow_pdk.launch_counts()``), and
  the reference run passed tests (a harness that ran nothing fails).

Modes: by default (fast), ``FAST_TESTS_PER_FILE`` tests of each file, a fixed
sample (the ids with the smallest CRC32 among those ``FAST_SKIP`` does not
name, plus every listed test of the file), so the module runs in a few
minutes; ``PDK_TF_TESTS=full`` runs every test of every file (about an hour
on 2 cores). The reference results are cached in ``build/tf_kernel_tests/``,
keyed on the TensorFlow version, the file's (and its helpers') digest, the
selection and the harness's own digest; the PDK run is never cached.

``test_harness_attributes_crashes_hangs_and_lifts_pins`` checks the harness
itself on a small test file it writes: test_util's pins lifted, an explicit
``/CPU:0`` kept, an abort and a hang attributed to their tests.

Run: ``.venv/bin/python -m pytest tests/python/test_tf_kernel_tests.py``;
``scripts/tf_kernel_tests.py FILE`` runs one file by hand and prints each
PDK-only failure.
"""
from __future__ import annotations

import importlib.util
import os
import pathlib

import pytest

from tf_kernel_tests_expected import EXPECTED

ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("tf_kernel_tests",
                                               ROOT / "scripts" / "tf_kernel_tests.py")
tfk = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tfk)

TESTS_DIR = pathlib.Path(os.environ.get("PDK_TF_TESTS_DIR",
                                        ROOT.parent / "shared" / "tf_kernel_tests"))
FULL = os.environ.get("PDK_TF_TESTS", "").lower() == "full"
FAST_TESTS_PER_FILE = 20
# Left out of the fast sample: 208 tests taking 2 s to 5 min each on 2 cores (full run).
FAST_SKIP = "|".join([
    r"StatelessOpsTest\.testDeterminism",  # 18-324 s
    r"TransposeTest\.testComplex",  # 110-133 s
    r"BiasAddTestBase\.testGradientTensor[345]D",  # 8-122 s
    r"BinaryOpTest\.testBCast_",  # 4-10 s, 64 tests
    r"QrGradOpTest\.test_QrGrad_\w*_3_(10|5|2)_",  # 2-13 s
    r"SumReductionTest\.testFloat32",  # 8-11 s
])
# Always in the fast sample: tests that once failed only with PDK (fixed; they
# stay as regression checks), and for files whose CRC32 sample would launch no
# PDK kernel (qr_op_test's real-dtype cases are complex-only) one that does.
FAST_ALWAYS = [
    "linalg/qr_op_test.py::QrOpTest.testWrongDimensions",
    "math_ops/cwise_ops_binary_test.py::BinaryOpTest.testPowNegativeExponentCpu",
    "math_ops/cwise_ops_binary_test.py::ComparisonOpTest.testShapeMismatch",
    "math_ops/matmul_op_test.py::MatMulInfixOperatorTest.testMismatchedDimensions",
    "math_ops/matmul_op_test.py::MatMulInfixOperatorTest.testMismatchedShape",
    "math_ops/reduction_ops_test.py::SumReductionTest.testInvalidRepeatedReductionIndices",
    "math_ops/transpose_op_test.py::TransposeTest.testNegativePerm",
]
CACHE = ROOT / "build" / "tf_kernel_tests"
FILES = tfk.collect([str(TESTS_DIR)]) if TESTS_DIR.is_dir() else []

pytestmark = pytest.mark.skipif(not FILES, reason=f"no TensorFlow kernel tests in {TESTS_DIR}")


def _check(prefix: str, cpu: dict, pdk_run: dict, expected: dict) -> list:
    """Problems of one file: PDK-only failures not listed, stale entries, no PDK launch."""
    pdk = pdk_run["tests"]
    problems = [f"{t}: fails only with PDK: {r['outcome']}: {r['message']}"
                for t, r in tfk.pdk_only_failures(cpu, pdk).items() if t not in expected]
    for t, reason in expected.items():
        if "::" not in t:
            continue
        if t not in cpu:
            problems.append(f"stale entry {t}: the test did not run ({reason})")
        elif cpu[t]["outcome"] not in tfk.PASSING:
            problems.append(f"stale entry {t}: it does not pass without PDK either "
                            f"({cpu[t]['outcome']}: {cpu[t]['message']})")
        elif pdk.get(t, {}).get("outcome") in tfk.PASSING:
            problems.append(f"stale entry {t}: it passes with PDK now ({reason})")
    file_key = prefix[:-2]
    if not pdk_run["launches"] and file_key not in expected:
        problems.append(f"{file_key}: the PDK run launched no PDK kernel")
    if pdk_run["launches"] and file_key in expected:
        problems.append(f"stale entry {file_key}: the PDK run launched "
                        f"{pdk_run['launches']} PDK kernels")
    return problems


@pytest.mark.parametrize("path", FILES, ids=lambda p: tfk.test_id_prefix(p)[:-2])
def test_tensorflow_kernel_test_file(path):
    prefix = tfk.test_id_prefix(path)
    expected = {t: r for t, r in EXPECTED.items() if t == prefix[:-2] or t.startswith(prefix)}
    sample = {} if FULL else {"max_tests": FAST_TESTS_PER_FILE, "skip": FAST_SKIP,
                              "include": sorted(set(expected) | {
                                  t for t in FAST_ALWAYS if t.startswith(prefix)})}
    cpu = tfk.cached_run_file(path, "cpu", CACHE, **sample)["tests"]
    assert tfk.count(cpu, tfk.PASSING), f"no test of {path} passed with PDK disabled: {cpu}"
    pdk_run = tfk.run_file(path, "pdk", **sample)
    problems = _check(prefix, cpu, pdk_run, expected)
    assert not problems, "\n".join(problems)


SYNTHETIC = """
import os, time
from tensorflow.python.eager import context
from tensorflow.python.framework import constant_op, ops, test_util
from tensorflow.python.platform import test


def add_one():
  return constant_op.constant(1.0) + 1.0


class Synthetic(test.TestCase):

  def testAPinsLifted(self):
    with test_util.device(use_gpu=False):
      self.assertIn("PDK", add_one().device)
    with test_util.force_cpu():
      self.assertIn("PDK", add_one().device)
    with ops.Graph().as_default(), self.session(use_gpu=False):
      x = add_one()
      self.assertEqual(x.op.device, "")
      self.assertEqual(self.evaluate(x), 2.0)

  @test_util.run_in_graph_and_eager_modes(use_gpu=False)
  def testBGraphAndEagerLifted(self):
    x = add_one()
    self.assertNotIn("CPU", x.device if context.executing_eagerly() else x.op.device)

  def testCExplicitCpuKept(self):
    with ops.device("/CPU:0"):
      self.assertIn("CPU", add_one().device)

  def testDAborts(self):
    os.abort()

  def testEHangs(self):
    time.sleep(600)

  def testFFails(self):
    self.assertEqual(1, 2)

  def testGSkips(self):
    self.skipTest("on purpose")


if __name__ == "__main__":
  test.main()
"""


def test_harness_attributes_crashes_hangs_and_lifts_pins(tmp_path):
    path = tmp_path / "synthetic" / "synthetic_test.py"
    path.parent.mkdir()
    path.write_text(SYNTHETIC)
    run = tfk.run_file(str(path), "pdk", test_timeout=10, log=lambda s: None)
    got = {t.split("::")[1]: r for t, r in run["tests"].items()}
    outcomes = {t: r["outcome"] for t, r in got.items() if t != "Synthetic.test_session"}
    assert outcomes == {
        "Synthetic.testAPinsLifted": "pass", "Synthetic.testBGraphAndEagerLifted": "pass",
        "Synthetic.testCExplicitCpuKept": "pass", "Synthetic.testDAborts": "crash",
        "Synthetic.testEHangs": "timeout", "Synthetic.testFFails": "fail",
        "Synthetic.testGSkips": "skip"}, got
    assert run["runs"] == 3, run
    assert got["Synthetic.testAPinsLifted"]["launches"] >= 3, got
    assert got["Synthetic.testCExplicitCpuKept"]["launches"] == 0, got
    assert "SIGABRT" in got["Synthetic.testDAborts"]["message"], got
    assert got["Synthetic.testFFails"]["message"] == "AssertionError: 1 != 2", got
