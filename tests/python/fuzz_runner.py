"""Runs fuzz cases (fuzz_cases.FuzzCase) in child processes, so that a crash
or a hang is caught and attributed to the case and the device.

Each case is two *attempts*: the op on /CPU:0 (the conformance case's
reference where it has one) and on /PDK:0, in separate processes, so that a
TensorFlow CPU kernel that corrupts memory (some do, on malformed inputs)
cannot take a PDK attempt down with it. Three passes:

1. every CPU attempt, in order; the children store the outputs;
2. every PDK attempt, in order, compared with the stored CPU outputs
   (conformance_run.compare) and checked against PDK's launch counts;
3. at the same time as 2, the PDK attempts whose CPU attempt raised
   ResourceExhaustedError, split among ``OOM_WORKERS`` children: PDK's
   allocation fails too and raises at once (PDK's own memory pool serves the
   device, not TensorFlow's BFC allocator with its 10 s retry). (Not threads
   of one child: PDK kernels running at once in one process can report each
   other's errors.)

A child runs a chunk of attempts, writing ``{"start": n}`` before attempt n
and its result after it, one JSON line each, flushed. If the child dies
(abort, segfault: "crash") or makes no progress for ``timeout`` seconds
("hang"), the supervisor records the attempt(s) in progress as such, with the
tail of the child's stderr, and resumes after it in a new child. A PDK
attempt that crashed or hung among others runs again alone, in a fresh child
(``"alone"``: its status there): only PDK ran in that process, but an earlier
attempt could have corrupted it.

Children run with one thread per pool, ``PDK_MEMORY_LIMIT_MB=1024``, their
address space limited to 3 GiB beyond what TensorFlow maps at start (a huge
allocation fails on both devices instead of exhausting the machine) and no
core files.

``verdict(cpu, pdk)`` turns a case's two attempts into one of VERDICTS.
"""
from __future__ import annotations

import functools
import json
import os
import pathlib
import pickle
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, List

HERE = pathlib.Path(__file__).resolve().parent
OOM_WORKERS = 6
ADDRESS_SPACE_HEADROOM = 3 << 30

# Verdicts, worst first. Only "pass", "cpu_crash" and "cpu_hang" meet the
# rules without an entry in fuzz_exceptions.py.
VERDICTS = ("pdk_crash", "pdk_hang", "value_mismatch", "pdk_computes_where_cpu_raises",
            "pdk_raises_where_cpu_computes", "class_mismatch", "no_launch", "cpu_crash",
            "cpu_hang", "pass")
ACCEPTED = ("pass", "cpu_crash", "cpu_hang")


def verdict(cpu: dict, pdk: dict) -> str:
    """The rules: PDK never crashes or hangs; where the CPU crashed or hung
    that is all; where the CPU raises, PDK raises the same error class; where
    it computes, PDK computes the same values (and launched its kernel)."""
    if pdk["status"] in ("crash", "hang"):
        return "pdk_" + pdk["status"]
    if cpu["status"] in ("crash", "hang"):
        return "cpu_" + cpu["status"]
    if cpu["status"] == "error":
        if pdk["status"] == "error":
            return "pass" if pdk["error"] == cpu["error"] else "class_mismatch"
        return "pdk_computes_where_cpu_raises"
    if pdk["status"] == "error":
        return "pdk_raises_where_cpu_computes"
    if not pdk["launched"]:
        return "no_launch"
    return "value_mismatch" if pdk["mismatch"] else "pass"


def kernel_message(msg: str) -> str:
    """The kernel's own words: TensorFlow's "{{function_node ...}} " prefix
    and " [Op:...]" suffix removed."""
    msg = msg or ""
    if msg.startswith("{{function_node"):
        msg = msg.split("}} ", 1)[-1]
    return msg.split(" [Op:")[0].strip()


FIRST_WORDS = 3


def same_first_words(cpu_msg: str, pdk_msg: str, n: int = FIRST_WORDS) -> bool:
    """Whether PDK's message starts with the first ``n`` words of the CPU's
    (TensorFlow's wording first, PDK's detail after)."""
    want = kernel_message(cpu_msg).split()[:n]
    return kernel_message(pdk_msg).split()[:len(want)] == want


# ------------------------------------------------------------------- child

def _load_cpu_outputs(workdir: pathlib.Path, wanted: set) -> dict:
    """{case number: CPU outputs} from the pickle streams the CPU children wrote."""
    found = {}
    for path in sorted(workdir.glob("cpu_*.pkl")):
        with open(path, "rb") as f:
            while True:
                try:
                    i, outs = pickle.load(f)
                except (EOFError, pickle.UnpicklingError):
                    break
                if i in wanted:
                    found[i] = outs
    return found


def _child(cases_path: str, out_path: str, attempts_path: str) -> None:
    """Runs the attempts listed in ``attempts_path`` (JSON), in order."""
    import resource
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    import tensorflow as tf
    import conformance_run as cr
    from tensorflow_pdk.testing import launches

    with tf.device("/PDK:0"):          # devices and thread pools up before the limit
        tf.constant(1.0) + 1.0
    vm = int(next(l for l in open("/proc/self/status") if l.startswith("VmSize")).split()[1])
    limit = vm * 1024 + ADDRESS_SPACE_HEADROOM
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    workdir = pathlib.Path(cases_path).parent
    with open(cases_path, "rb") as f:
        cases = pickle.load(f)
    attempts = json.loads(pathlib.Path(attempts_path).read_text())
    expected = _load_cpu_outputs(workdir, {n // 2 for n in attempts if n % 2})
    cpu_store = open(workdir / ("cpu_" + pathlib.Path(out_path).stem + ".pkl"), "ab") \
        if any(n % 2 == 0 for n in attempts) else None
    out = open(out_path, "a", buffering=1)

    def write(d):
        out.write(json.dumps(d) + "\n")
        out.flush()

    def attempt(n):
        i, side = divmod(n, 2)
        fc = cases[i]
        c = fc.case
        write({"start": n})
        rec = {"n": n, "status": "ok"}
        t0 = time.monotonic()
        try:
            if side == 0:
                outs = cr.call(c, fc.binding, fc.inputs, "/CPU:0", reference=True, attrs=fc.attrs)
                pickle.dump((i, outs), cpu_store)
                cpu_store.flush()
            else:
                with launches() as delta:
                    actual = cr.call(c, fc.binding, fc.inputs, "/PDK:0", attrs=fc.attrs)
                rec["launched"] = delta.get(c.op, 0) > 0
                rec["mismatch"] = None
                if i in expected:
                    rec["mismatch"] = "; ".join(cr.compare(c, expected[i], actual)[0])[:2000] or None
        except Exception as e:  # noqa: BLE001 - the error class is the result
            rec.update(status="error", error=type(e).__name__,
                       message=(str(e).strip().splitlines() or [""])[0][:300])
        rec["secs"] = round(time.monotonic() - t0, 3)
        write(rec)

    write({"ready": True})
    for n in attempts:
        attempt(n)


# -------------------------------------------------------------- supervisor

def _child_env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PDK_")}
    env.update(PDK_NUM_THREADS="1", PDK_MEMORY_LIMIT_MB="1024", TF_NUM_INTEROP_THREADS="1",
               TF_NUM_INTRAOP_THREADS="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH=os.pathsep.join(
                   [str(HERE)] + [p for p in [env.get("PYTHONPATH")] if p]))
    return env


def _run_child(workdir: pathlib.Path, attempts: List[int], timeout: float,
               records: Dict[int, dict]) -> List[int]:
    """Runs ``attempts`` in one child, filling ``records``; returns the
    attempts it had started when it died or hung (empty: it finished)."""
    tag = f"{attempts[0]}_{len(attempts)}_{time.monotonic_ns()}"
    out, err = workdir / f"out_{tag}.jsonl", workdir / f"err_{tag}.txt"
    todo = workdir / f"attempts_{tag}.json"
    todo.write_text(json.dumps(attempts))
    out.write_text("")
    with open(err, "w") as ef:
        proc = subprocess.Popen(
            [sys.executable, "-c", "import sys, fuzz_runner; fuzz_runner._child(*sys.argv[1:4])",
             str(workdir / "cases.pkl"), str(out), str(todo)],
            env=_child_env(), cwd=HERE, stdout=ef, stderr=ef, start_new_session=True)
    ready, started, hung = False, set(), False
    last, pending = time.monotonic(), ""
    with open(out) as f:
        while True:
            rc = proc.poll()
            text = f.read()
            if text:
                last = time.monotonic()
                lines = (pending + text).split("\n")
                pending = lines.pop()
                for line in lines:
                    d = json.loads(line)
                    if "ready" in d:
                        ready = True
                    elif "start" in d:
                        started.add(d["start"])
                    else:
                        records[d["n"]] = d
                        started.discard(d["n"])
            if rc is not None:
                break
            if time.monotonic() - last > (timeout if ready else max(300.0, timeout)):
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                hung = True
                break
            time.sleep(0.1)
    if not ready or (not started and rc != 0 and not all(n in records for n in attempts)):
        raise RuntimeError(f"fuzz child died outside any case (rc {rc}):\n"
                           + err.read_text()[-3000:])
    for n in started:
        records[n] = {"n": n, "status": "hang" if hung else "crash", "rc": None if hung else rc,
                      "stderr": err.read_text()[-1500:]}
    return sorted(started)


def _run_in_order(workdir, attempts: List[int], timeout: float, chunk: int,
                  records: Dict[int, dict], progress=None) -> None:
    """Runs ``attempts`` in order, ``chunk`` per child, resuming after a crash
    or hang; a PDK attempt that crashed or hung runs again alone."""
    todo = list(attempts)
    while todo:
        batch = todo[:chunk]
        lost = _run_child(workdir, batch, timeout, records)
        if lost:
            n = lost[0]
            if n % 2 == 1 and len(batch) > 1:
                alone: Dict[int, dict] = {}
                _run_child(workdir, [n], timeout, alone)
                records[n]["alone"] = alone[n]["status"]
            todo = todo[todo.index(n) + 1:]
        else:
            todo = todo[len(batch):]
        if progress:
            progress(len(attempts) - len(todo), len(attempts))


def run(cases: list, workdir: pathlib.Path, timeout: float = 60.0, chunk: int = 8000,
        alone: frozenset = frozenset(), progress=None) -> List[dict]:
    """Runs every case; returns per case {"id", "op", "key", "cpu", "pdk", "verdict"}.
    The PDK attempts of the cases whose id is in ``alone`` (known to crash
    PDK) run each in a child of its own."""
    workdir.mkdir(parents=True, exist_ok=True)
    for old in workdir.glob("cpu_*.pkl"):
        old.unlink()
    with open(workdir / "cases.pkl", "wb") as f:
        pickle.dump(cases, f)
    records: Dict[int, dict] = {}
    _run_in_order(workdir, [2 * i for i in range(len(cases))], timeout, chunk, records, progress)
    oom = {2 * i + 1 for i in range(len(cases)) if records[2 * i].get("error") ==
           "ResourceExhaustedError"}
    single = {2 * i + 1 for i, fc in enumerate(cases) if fc.id in alone} - oom
    in_order = [2 * i + 1 for i in range(len(cases)) if 2 * i + 1 not in oom | single]

    def pdk_pass():
        _run_in_order(workdir, in_order, timeout, chunk, records, progress)
        for n in sorted(single):
            _run_child(workdir, [n], timeout, records)

    oom = sorted(oom)
    jobs = [pdk_pass] + [functools.partial(_run_in_order, workdir, oom[k::OOM_WORKERS], timeout,
                                           chunk, records) for k in range(OOM_WORKERS)
                         if oom[k::OOM_WORKERS]]
    with ThreadPoolExecutor(len(jobs)) as pool:
        for job in [pool.submit(j) for j in jobs]:
            job.result()
    results = []
    for i, fc in enumerate(cases):
        cpu, pdk = records[2 * i], records[2 * i + 1]
        results.append({"id": fc.id, "op": fc.op, "key": fc.key, "cpu": cpu, "pdk": pdk,
                        "verdict": verdict(cpu, pdk)})
    return results
