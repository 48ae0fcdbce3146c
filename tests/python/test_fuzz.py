"""The fuzzer: malformed calls of every registered (op, dtype) pair on /CPU:0
and /PDK:0, in child processes (fuzz_cases.py makes the cases,
fuzz_runner.py runs them and gives each a verdict).

Rules (fuzz_runner.verdict): PDK never crashes or hangs; where the CPU
crashes or hangs, that is all that is asked; where the CPU raises, PDK
raises the same error class; where the CPU computes, PDK computes the same
values (conformance_run.compare: the conformance case's tolerances, NaN
positions equal) and launched its kernel. A case that breaks them fails the
test unless fuzz_exceptions.EXCEPTIONS lists it with its reason, or the op
is one of PDK's own (``_Pdk*``: raising where its reference computes, or
another class, is accepted; see fuzz_exceptions.py).

Modes (fuzz_cases.py): by default the fast subset, ``FAST_PER_PAIR``
mutations per pair drawn with seed ``PDK_FUZZ_SEED`` (0), plus the crash
corpus; ``PDK_FUZZ=long`` every mutation of every pair, plus the corpus, and
then also: every "PDK bug, open" exception must still match a failing case.
``PDK_FUZZ_REPORT=path.json`` writes the figures, every case that did not
pass and the cases where both raised the same class but PDK's message does
not start with the first words of the CPU's (``first_words``). A case that
crashes PDK, or raises another error class than the CPU with no exception
for it, is appended to the corpus (fuzz_corpus.json) by the run that finds it.

    .venv/bin/python -m pytest tests/python/test_fuzz.py                 # fast
    PDK_FUZZ=long PDK_FUZZ_REPORT=build/fuzz.json .venv/bin/python -m pytest tests/python/test_fuzz.py
"""
from __future__ import annotations

import collections
import functools
import json
import os
import pathlib
import re
import time

import pytest

import conformance_run as cr
import fuzz_cases as fz
import fuzz_runner as fr
from fuzz_exceptions import EXCEPTIONS

REGISTERED = cr.registered()
OWN_OP_ACCEPTED = ("class_mismatch", "pdk_raises_where_cpu_computes")


def _pattern(glob: str):
    return re.compile(".*".join(re.escape(p) for p in glob.split("*")) + r"\Z")


PATTERNS = {glob: _pattern(glob) for glob in EXCEPTIONS}


@functools.lru_cache(maxsize=None)
def _generated():
    return fz.generated(reg=REGISTERED)


def _exception(r: dict):
    """The exception entry allowing ``r``'s verdict, or None."""
    case_id = r["id"].removeprefix("corpus/")
    for glob, (verdicts, _) in EXCEPTIONS.items():
        if r["verdict"] in verdicts and PATTERNS[glob].match(case_id):
            return glob
    return None


def _meets_rules(r: dict) -> bool:
    if r["verdict"] in fr.ACCEPTED:
        return True
    if r["op"].startswith("_Pdk") and r["verdict"] in OWN_OP_ACCEPTED:
        return True
    return _exception(r) is not None


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    corpus = fz.corpus(REGISTERED)
    generated, pairs = _generated()
    known_crashes = {fc.id for fc in corpus + generated
                     if _exception({"id": fc.id, "verdict": "pdk_crash"})}
    t0 = time.monotonic()
    res = fr.run(corpus + generated, tmp_path_factory.mktemp("fuzz"), alone=known_crashes)
    seconds = time.monotonic() - t0
    crashed = {r["id"] for r in res if r["verdict"] in ("pdk_crash", "pdk_hang")}
    added = fz.add_to_corpus([fc for fc in generated if fc.id in crashed],
                             "crashed or hung PDK in a fuzz run")
    # An error class other than the CPU's that no exception explains joins the
    # corpus too, so that the fast subset keeps checking it once it is fixed.
    mismatched = {r["id"] for r in res if r["verdict"] == "class_mismatch" and not _meets_rules(r)}
    added += fz.add_to_corpus([fc for fc in generated if fc.id in mismatched],
                              "raised another error class than TensorFlow's CPU kernel in a fuzz "
                              "run")
    by_id = {fc.id: fc for fc in corpus + generated}
    for r in res:
        r["own_reference"] = by_id[r["id"]].case.reference is not None
    path = os.environ.get("PDK_FUZZ_REPORT")
    if path:
        verdicts = collections.Counter(r["verdict"] for r in res)
        worded = _both_raise_same_class(res)
        words_differ = [r for r in worded
                        if not fr.same_first_words(r["cpu"]["message"], r["pdk"]["message"])]
        report = {
            "mode": "long" if fz.LONG else "fast", "seed": fz.SEED, "seconds": round(seconds),
            "cases": len(res), "corpus_cases": len(corpus), "pairs": len(pairs),
            "registered_pairs": sum(len(v) for v in REGISTERED.values()),
            "verdicts": dict(verdicts),
            "excepted": dict(collections.Counter(
                r["verdict"] for r in res if r["verdict"] not in fr.ACCEPTED and _meets_rules(r))),
            "added_to_corpus": added,
            "first_words": {"compared": len(worded), "differ": len(words_differ),
                            "cases": [{"id": r["id"], "cpu": r["cpu"]["message"],
                                       "pdk": r["pdk"]["message"]} for r in words_differ]},
            "not_pass": [r for r in res if r["verdict"] != "pass"],
        }
        pathlib.Path(path).parent.mkdir(parents=True, exist_ok=True)
        pathlib.Path(path).write_text(json.dumps(report, indent=1, default=str) + "\n")
    return res


def _both_raise_same_class(rs) -> list:
    """The cases where both devices raised the same error class and the CPU
    ran the op itself (not the conformance case's reference function)."""
    return [r for r in rs if r["verdict"] == "pass" and r["cpu"]["status"] == "error"
            and not r["own_reference"] and not r["op"].startswith("_Pdk")]


def _describe(r: dict) -> str:
    def side(d):
        if d["status"] in ("crash", "hang"):
            return f"{d['status']} (rc {d.get('rc')}, alone: {d.get('alone', '-')}) " + \
                d.get("stderr", "")[-300:].replace("\n", " | ")
        if d["status"] == "error":
            return f"{d['error']}: {d.get('message', '')[:200]}"
        return "computed" + (f", {d['mismatch'][:300]}" if d.get("mismatch") else "")
    return f"{r['verdict']}: {r['id']}\n    CPU {side(r['cpu'])}\n    PDK {side(r['pdk'])}"


def _failures(rs) -> str:
    bad = sorted((r for r in rs if not _meets_rules(r)),
                 key=lambda r: (fr.VERDICTS.index(r["verdict"]), r["id"]))
    return f"{len(bad)} cases break the rules:\n" + "\n".join(map(_describe, bad[:40])) \
        if bad else ""


def test_crash_corpus(results):
    """Every case that ever crashed PDK or raised another error class than the
    CPU (fuzz_corpus.json) meets the rules."""
    msg = _failures(r for r in results if r["id"].startswith("corpus/"))
    assert not msg, msg


def test_fuzz_cases(results):
    msg = _failures(r for r in results if not r["id"].startswith("corpus/"))
    assert not msg, msg + "\n(PDK crashes were added to tests/python/fuzz_corpus.json)"


def test_every_registered_pair_is_fuzzed():
    """Each pair with a conformance case gets fuzz cases, unless its call has
    nothing to mutate (no inputs, no attributes)."""
    items, _ = cr.plan(False, REGISTERED)
    _, fuzzed = _generated()
    missing = [f"{c.op}[{key}]" for c, _, key in items
               if (c.op, key) not in fuzzed and (c.inputs or c.attrs)]
    assert not missing, "pairs without fuzz cases: " + ", ".join(missing)


def test_open_pdk_bugs_are_still_open(results):
    """In the long run (every mutation): each "PDK bug, open" exception still
    matches a case with a verdict it allows; one that does not was fixed (or
    its pattern is wrong): remove or correct it."""
    if not fz.LONG:
        pytest.skip("the fast subset runs only some cases per pair: PDK_FUZZ=long")
    stale = []
    for glob, (verdicts, why) in EXCEPTIONS.items():
        if not why.startswith("PDK bug, open"):
            continue
        hits = [r for r in results if PATTERNS[glob].match(r["id"].removeprefix("corpus/"))]
        if not any(r["verdict"] in verdicts for r in hits):
            stale.append(f"{glob}: {len(hits)} cases match, none {'/'.join(verdicts)}")
    assert not stale, "exceptions for bugs no case shows any more:\n" + "\n".join(stale)


def test_exception_patterns_name_registered_ops():
    ops = set(REGISTERED)
    for glob in EXCEPTIONS:
        head = glob.split("[", 1)[0]
        assert any(_pattern(head).match(op) for op in ops), f"{glob}: no registered op matches"
