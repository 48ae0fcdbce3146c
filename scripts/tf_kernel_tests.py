"""Runs TensorFlow's own python kernel tests (absltest / tf.test files such as
tensorflow/python/kernel_tests/nn_ops/conv_ops_test.py) with PDK as the default
device and with PDK disabled, and records every test's outcome.

    .venv/bin/python scripts/tf_kernel_tests.py FILE_OR_DIR... [--mode pdk|cpu|both]
        [--json OUT] [--select REGEX] [--skip REGEX] [--max-tests N] [--no-lift]
        [--test-timeout S] [--file-timeout S]

A directory stands for every ``*_test.py`` below it. Modes:

- ``pdk``: PDK installed and enabled (one device, ``/PDK:0``), so TensorFlow
  places every op PDK has a kernel for on PDK; no ``PDK_*`` variable is passed on.
- ``cpu``: the reference, ``PDK_DEVICE_COUNT=0`` (PDK registers no device and no
  kernel: stock TensorFlow).
- ``both`` (default): the two, then the tests that pass in ``cpu`` and not in ``pdk``.

Each file runs in a child process (this script with ``--child``), executed as
``__main__`` (some files generate their tests there) with its folder on
``sys.path`` (for its ``*_base.py`` helpers). ``tf.test.main()`` runs as usual
(absl flags, absltest's loader and runner), with a result object that writes
one JSON line per test to a progress file as it starts and as it ends:
outcome (``pass``, ``fail``, ``error``, ``skip``, ``xfail``, ``xpass``), the
first line of the message, seconds, and PDK kernel launches
(``tensorflow_pdk.launch_counts()``). A child that dies (abort, segfault)
leaves a started test without an end: that test is recorded ``crash`` (signal
and the last fatal stderr line), and the file is run again without the tests
already recorded. A test running longer than ``--test-timeout`` is killed,
recorded ``timeout``, and the rest run the same way; after ``--file-timeout``
(which also bounds importing the file) the file stops.

CPU pinning lifted: with no GPU, TensorFlow's ``test_util`` pins tests to the
CPU: ``test_util.device(use_gpu=...)``, ``use_gpu()``, ``force_cpu()``,
``session/cached_session/test_session(use_gpu=False)`` (through
``TensorFlowTestCase._constrain_devices_and_set_default``) and
``run_in_graph_and_eager_modes(use_gpu=False)`` (its eager run). The child
replaces those five so they place nothing: ops go where TensorFlow's placer puts
them, PDK first. An explicit ``ops.device("/CPU:0")`` / ``tf.device`` written in
a test stays. ``--no-lift`` runs the tests as they are; on stock TensorFlow
(``--mode cpu``) both give the same outcomes (docs/testing.md has the figures).

Test ids are ``<folder>/<file>::<Class>.<method>`` (the last folder of the
file's path, as in ``nn_ops/conv_ops_test.py::Conv2DTest.testConv2D1x1Filter``).
``--json`` writes ``{"meta": ..., "files": {file: {mode: {"tests": {id: {...}},
"launches": n, "seconds": s, "runs": k}}}}``.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
import time
import zlib

PASSING = ("pass", "xfail")


# ----------------------------------------------------------------------------
# The child: runs one test file, writes progress lines.

def _lift_cpu_pinning() -> None:
    """Makes test_util's implicit CPU pins place nothing (see the module docstring)."""
    import contextlib

    from tensorflow.python.framework import test_util

    @contextlib.contextmanager
    def no_pin(*_args, **_kwargs):
        yield

    test_util.device = no_pin
    test_util.use_gpu = no_pin
    test_util.force_cpu = no_pin

    cls = test_util.TensorFlowTestCase
    constrain = cls._constrain_devices_and_set_default

    def _constrain_devices_and_set_default(self, sess, use_gpu, force_gpu):
        return constrain(self, sess, True, force_gpu)

    cls._constrain_devices_and_set_default = _constrain_devices_and_set_default

    graph_and_eager = test_util.run_in_graph_and_eager_modes

    def run_in_graph_and_eager_modes(func=None, config=None, use_gpu=True,
                                     assert_no_eager_garbage=False):
        return graph_and_eager(func, config=config, use_gpu=True,
                               assert_no_eager_garbage=assert_no_eager_garbage)

    test_util.run_in_graph_and_eager_modes = run_in_graph_and_eager_modes


def _first_line(text: str) -> str:
    for line in str(text).splitlines():
        if line.strip():
            return line.strip()[:300]
    return ""


def _child(path: str, progress: str, lift: bool, exclude_file: str | None = None,
           max_tests: int | None = None, include_file: str | None = None,
           select: str | None = None, skip: str | None = None) -> None:
    sys.path.insert(0, os.path.dirname(path))
    sys.argv = [path]
    import runpy
    import unittest

    import tensorflow  # noqa: F401  (loads the plugin)
    from absl.testing import absltest
    from tensorflow.python.platform import googletest

    try:
        import tensorflow_pdk

        def launches() -> int:
            return sum(tensorflow_pdk.launch_counts().values())
    except ImportError:
        def launches() -> int:
            return 0

    if lift:
        _lift_cpu_pinning()

    def ids(f):
        return set(pathlib.Path(f).read_text().splitlines()) if f else set()

    exclude, include = ids(exclude_file), ids(include_file)
    prefix = test_id_prefix(path)
    out = open(progress, "a", buffering=1)

    def write(record):
        out.write(json.dumps(record) + "\n")
        out.flush()

    def tid(test) -> str:
        name = getattr(test, "_testMethodName", None)
        if name is None:  # setUpClass / module fixtures: an _ErrorHolder
            return prefix + str(test)
        return f"{prefix}{type(test).__name__}.{name}"

    class Result(unittest.TextTestResult):
        _rec = None  # the running test's record

        def startTest(self, test):
            self._rec = {"id": tid(test), "outcome": "pass", "message": ""}
            write({"started": self._rec["id"]})
            self._t0, self._l0 = time.time(), launches()
            super().startTest(test)

        def _set(self, test, outcome, err=None, message=""):
            if err is not None:
                message = f"{err[0].__name__}: {_first_line(err[1])}"
            rec = self._rec if self._rec and self._rec["id"] == tid(test) else None
            if rec is None:  # setUpClass / tearDownModule ... outside any test
                write({"id": tid(test), "outcome": outcome, "message": _first_line(message),
                       "seconds": 0.0, "launches": 0})
            elif rec["outcome"] not in ("fail", "error"):  # the first failure stays
                rec.update(outcome=outcome, message=_first_line(message))

        def addError(self, test, err):
            super().addError(test, err)
            self._set(test, "error", err)

        def addFailure(self, test, err):
            super().addFailure(test, err)
            self._set(test, "fail", err)

        def addSubTest(self, test, subtest, err):
            super().addSubTest(test, subtest, err)
            if err is not None:
                self._set(test, "fail" if issubclass(err[0], test.failureException) else "error",
                          err)

        def addSkip(self, test, reason):
            super().addSkip(test, reason)
            if not hasattr(test, "test_case"):  # a skipped subtest (one mode of several) is not
                self._set(test, "skip", message=reason)  # the test's outcome

        def addExpectedFailure(self, test, err):
            super().addExpectedFailure(test, err)
            self._set(test, "xfail", err)

        def addUnexpectedSuccess(self, test):
            super().addUnexpectedSuccess(test)
            self._set(test, "xpass")

        def stopTest(self, test):
            super().stopTest(test)
            write(dict(self._rec, seconds=round(time.time() - self._t0, 3),
                       launches=launches() - self._l0))
            self._rec = None

    class Runner(unittest.TextTestRunner):
        resultclass = Result

    def flat(suite):
        for t in suite:
            yield from flat(t) if isinstance(t, unittest.TestSuite) else (t,)

    def selected(suite):
        tests = list(flat(suite))
        keep = {tid(t) for t in tests if (not select or re.search(select, tid(t)))
                and not (skip and re.search(skip, tid(t)))}
        if max_tests is not None:  # a fixed sample: the smallest CRC32s
            keep = set(sorted(keep, key=lambda i: zlib.crc32(i.encode()))[:max_tests])
        keep = (keep | include) - exclude
        return unittest.TestSuite(t for t in tests if tid(t) in keep)

    class Loader(absltest.TestLoader):
        def loadTestsFromModule(self, module, *args, **kwargs):
            return selected(super().loadTestsFromModule(module, *args, **kwargs))

    absl_main = absltest.main
    called = []

    def main(*args, **kwargs):  # tf.test.main and absltest.main end here
        called.append(1)
        kwargs.update(testRunner=Runner, testLoader=Loader())
        return absl_main(*args, **kwargs)

    googletest.absltest_main = absltest.main = main
    try:
        namespace = runpy.run_path(path, run_name="__main__")
    except SystemExit:
        return
    if not called:  # a file without a `tf.test.main()` call
        import types

        module = types.ModuleType("__main__")
        module.__dict__.update(namespace)
        sys.modules["__main__"] = module
        from tensorflow.python.platform import test
        test.main()


# ----------------------------------------------------------------------------
# The parent: runs files in child processes, attributes crashes and hangs.

def test_id_prefix(path: str) -> str:
    p = pathlib.Path(path)
    return f"{p.parent.name}/{p.name}::"


def child_env(mode: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PDK_")}
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if mode == "cpu":
        env["PDK_DEVICE_COUNT"] = "0"
    return env


def _fatal_line(stderr: str) -> str:
    """The line of a dead child's output most likely to say why it died."""
    for pat in (r"Check failed.*", r"F\d{4} .*", r"Fatal Python error.*", r"terminate called.*"):
        m = re.search(pat, stderr)
        if m:
            return m.group(0).strip()[:300]
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""


def _read_progress(progress: pathlib.Path, tests: dict) -> str | None:
    """Adds the tests that ended to ``tests``; returns the id of one started and
    not ended (the one running when the child died), or None."""
    running = None
    lines = progress.read_text().splitlines() if progress.exists() else []
    for line in lines:
        try:
            rec = json.loads(line)
        except ValueError:
            continue  # a line cut short by a crash
        if "started" in rec:
            running = rec["started"]
        else:
            tid = rec.pop("id")
            tests[tid] = rec
            running = None if tid == running else running
    return running


def run_file(path: str, mode: str, lift: bool = True, test_timeout: float = 600,
             file_timeout: float = 3600, max_tests: int | None = None, include=(),
             select: str | None = None, skip: str | None = None, log=print) -> dict:
    """Runs one test file in ``mode`` ("pdk" or "cpu"): its tests whose id
    matches ``select`` and not ``skip`` (regular expressions), with
    ``max_tests`` a fixed sample of them (the ids with the smallest CRC32), and
    the ids in ``include``; returns
    ``{"tests": {id: {"outcome", "message", "seconds", "launches"}}, "launches",
    "seconds", "runs"}``."""
    path = os.path.abspath(path)
    tests: dict = {}
    t_file = time.time()
    runs = 0
    with tempfile.TemporaryDirectory(prefix="tfk_") as tmp:
        tmp = pathlib.Path(tmp)
        env = dict(child_env(mode), TEST_TMPDIR=str(tmp / "testtmp"))
        while True:
            runs += 1
            progress, exclude = tmp / f"progress{runs}.jsonl", tmp / f"exclude{runs}.txt"
            exclude.write_text("\n".join(tests))
            (tmp / "include.txt").write_text("\n".join(include))
            cmd = [sys.executable, os.path.abspath(__file__), "--child", path,
                   "--progress", str(progress), "--exclude", str(exclude),
                   "--include", str(tmp / "include.txt")]
            cmd += ["--no-lift"] if not lift else []
            cmd += ["--max-tests", str(max_tests)] if max_tests is not None else []
            cmd += ["--select", select] if select else []
            cmd += ["--skip", skip] if skip else []
            with open(tmp / "stderr.txt", "w+") as err:
                proc = subprocess.Popen(cmd, env=env, stdout=err, stderr=subprocess.STDOUT,
                                        start_new_session=True)
                hung = None
                last_change, last_size = None, 0  # the clock starts at the first test
                while proc.poll() is None:
                    time.sleep(0.5)
                    size = progress.stat().st_size if progress.exists() else 0
                    now = time.time()
                    if size != last_size:
                        last_change, last_size = now, size
                    if last_change and now - last_change > test_timeout:
                        hung = f"timeout: the test ran past {test_timeout:.0f} s"
                    elif now - t_file > file_timeout:
                        hung = f"timeout: the file ran past {file_timeout:.0f} s"
                    if hung:
                        os.killpg(proc.pid, signal.SIGKILL)
                        proc.wait()
                err.seek(0)
                stderr = err.read()
            running = _read_progress(progress, tests)
            rc = proc.returncode
            if hung is None and rc >= 0 and running is None:
                break  # finished (rc 1 when a test failed)
            if running is None:
                if not tests:  # died or hung before any test: the file as a whole
                    tests[f"{test_id_prefix(path)}<file>"] = {
                        "outcome": "timeout" if hung else "crash" if rc < 0 else "error",
                        "message": hung or f"exit {rc}: {_fatal_line(stderr)}",
                        "seconds": 0.0, "launches": 0}
                break  # died after its last test (at exit): nothing to attribute
            what = hung or (f"signal {signal.Signals(-rc).name}" if rc < 0 else f"exit {rc}")
            tests[running] = {"outcome": "timeout" if hung else "crash",
                              "message": f"{what}: {_fatal_line(stderr)}" if not hung else what,
                              "seconds": 0.0, "launches": 0}
            log(f"  {running}: {tests[running]['outcome']} ({tests[running]['message']})")
            if time.time() - t_file > file_timeout:
                break
    return {"tests": tests, "launches": sum(t["launches"] for t in tests.values()),
            "seconds": round(time.time() - t_file, 1), "runs": runs}


# ----------------------------------------------------------------------------
# Caching the reference run, summaries, the CLI.

def tf_version() -> str:
    """The installed TensorFlow's version, without importing it."""
    from importlib import metadata

    for dist in ("tensorflow", "tensorflow-cpu", "tf-nightly", "tf-nightly-cpu"):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    return "unknown"


def file_digest(path: str) -> str:
    """sha256 of a test file and the sibling modules it names (its ``*_base.py``)."""
    p = pathlib.Path(path)
    h = hashlib.sha256(p.read_bytes())
    text = p.read_text(errors="replace")
    for sib in sorted(p.parent.glob("*.py")):
        if sib != p and re.search(rf"\b{re.escape(sib.stem)}\b", text):
            h.update(sib.read_bytes())
    return h.hexdigest()


def cached_run_file(path: str, mode: str, cache_dir: pathlib.Path, **kwargs) -> dict:
    """``run_file`` with its result kept in ``cache_dir``, keyed on the TensorFlow
    version, the test file's (and helpers') digest, the mode, the selection and
    this script's digest."""
    sample = [kwargs.get(k) for k in ("lift", "max_tests", "select", "skip")]
    key = hashlib.sha256(json.dumps(
        [tf_version(), file_digest(path), file_digest(__file__), sys.version_info[:2], mode,
         sample, sorted(kwargs.get("include", ()))]).encode()).hexdigest()[:20]
    f = cache_dir / f"{pathlib.Path(path).stem}-{mode}-{key}.json"
    if f.exists():
        return json.loads(f.read_text())
    result = run_file(path, mode, **kwargs)
    cache_dir.mkdir(parents=True, exist_ok=True)
    f.write_text(json.dumps(result, indent=0, sort_keys=True))
    return result


def pdk_only_failures(cpu: dict, pdk: dict) -> dict:
    """Tests that pass in ``cpu`` and not in ``pdk``: id -> PDK's record."""
    return {t: pdk.get(t, {"outcome": "not run", "message": ""}) for t, r in cpu.items()
            if r["outcome"] in PASSING and pdk.get(t, {}).get("outcome") not in PASSING}


def collect(args: list) -> list:
    files = []
    for a in args:
        p = pathlib.Path(a)
        files += sorted(str(f) for f in p.rglob("*_test.py")) if p.is_dir() else [str(p)]
    return files


def count(tests: dict, outcome) -> int:
    outcomes = (outcome,) if isinstance(outcome, str) else outcome
    return sum(r["outcome"] in outcomes for r in tests.values())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", help="test files or folders (every *_test.py below)")
    ap.add_argument("--mode", choices=("pdk", "cpu", "both"), default="both")
    ap.add_argument("--json", help="write every outcome to this file")
    ap.add_argument("--no-lift", action="store_true", help="keep test_util's implicit CPU pins")
    ap.add_argument("--select", help="run only the tests whose id matches this regex")
    ap.add_argument("--skip", help="do not run the tests whose id matches this regex")
    ap.add_argument("--max-tests", type=int, help="run a fixed sample of N tests per file")
    ap.add_argument("--test-timeout", type=float, default=600)
    ap.add_argument("--file-timeout", type=float, default=3600)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--progress", help=argparse.SUPPRESS)
    ap.add_argument("--exclude", help=argparse.SUPPRESS)
    ap.add_argument("--include", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        _child(a.files[0], a.progress, not a.no_lift, a.exclude, a.max_tests, a.include,
               a.select, a.skip)
        return 0

    modes = ("cpu", "pdk") if a.mode == "both" else (a.mode,)
    out = {"meta": {"tensorflow": tf_version(), "lift": not a.no_lift, "modes": modes,
                    "command": " ".join([os.path.basename(sys.executable)] + sys.argv)},
           "files": {}}
    t0 = time.time()
    for f in collect(a.files):
        out["files"][f] = {}
        for mode in modes:
            r = run_file(f, mode, lift=not a.no_lift, test_timeout=a.test_timeout,
                         file_timeout=a.file_timeout, max_tests=a.max_tests, select=a.select,
                         skip=a.skip, log=lambda s: print(s, flush=True))
            out["files"][f][mode] = r
            t = r["tests"]
            print(f"{test_id_prefix(f)[:-2]} [{mode}] {len(t)} tests: {count(t, PASSING)} pass, "
                  f"{count(t, ('fail', 'error', 'xpass'))} fail, {count(t, 'skip')} skip, "
                  f"{count(t, ('crash', 'timeout'))} crash/timeout; {r['launches']} PDK launches, "
                  f"{r['seconds']} s", flush=True)
        if a.mode == "both":
            for tid, rec in pdk_only_failures(out["files"][f]["cpu"]["tests"],
                                              out["files"][f]["pdk"]["tests"]).items():
                print(f"  PDK only: {tid}: {rec['outcome']}: {rec['message']}")
    out["meta"]["seconds"] = round(time.time() - t0, 1)
    if a.mode == "both":
        cpu = {t: r for f in out["files"].values() for t, r in f["cpu"]["tests"].items()}
        pdk = {t: r for f in out["files"].values() for t, r in f["pdk"]["tests"].items()}
        only = pdk_only_failures(cpu, pdk)
        print(f"total: {len(set(cpu) | set(pdk))} tests, {count(cpu, PASSING)} pass without PDK, "
              f"{count(pdk, PASSING)} pass with PDK, {len(only)} fail only with PDK, "
              f"{count(pdk, 'crash')} crash with PDK, {out['meta']['seconds']} s")
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(out, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
