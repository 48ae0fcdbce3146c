"""Conformance sweep: every (op, type constraints) pair PDK registers against
TensorFlow's own CPU kernel.

The cases are in conformance_cases.py. Each runs ``tf.raw_ops.<Op>`` (so
exactly that op runs) on /CPU:0 and on /PDK:0 with the same inputs and checks:

- the op launched a PDK kernel (``testing.launches()``): no silent CPU fallback;
- the outputs match the CPU's: ``testing.TOLERANCES`` per output dtype unless
  the case states its own next to it; integer and bool outputs, and ``exact``
  cases, bit for bit;
- a second PDK run on the same inputs is bitwise identical to the first
  (determinism, also of the outputs not compared with the CPU); for a
  ``stateful`` case (the seeded stateful random ops), it matches the CPU's
  second run instead.

Gradients are covered by the per-family tests (test_kernels_*.py); here the
gradient *ops* (ReluGrad, Conv2DBackpropInput, ...) run as ops like any other.

``test_every_registered_pair_has_a_case`` fails when PDK registers a pair no
case covers and ``conformance_cases.EXEMPT`` does not list: a new kernel needs
a case.

Modes: by default (the fast subset) every registered pair runs once, with the
first case in the table that covers it (the small shapes); ``PDK_SWEEP=full``
runs every case for every registered pair it covers (scalars, empty,
broadcasting, odd sizes, attribute variants, one large shape per op).

``PDK_WRITE_CONFORMANCE=build/conformance.json`` writes, at the end, the
largest |PDK - CPU| seen per (op, type constraints) pair;
``scripts/gen_ops_md.py`` turns it into the "max |error|" column of
docs/ops.md.
"""
from __future__ import annotations

import json
import os
import pathlib

import pytest
import tensorflow as tf

import conformance_cases as cc
import conformance_run as cr
import tensorflow_pdk
from tensorflow_pdk.testing import launches

FULL = os.environ.get("PDK_SWEEP", "").lower() == "full"

# ------------------------------------------------------------------ planning

REGISTERED = cr.registered()
ITEMS, COVERED = cr.plan(FULL, REGISTERED)

# (op, constraints) -> largest |error| seen; filled by the tests, written at the end.
MAX_ERRORS: dict = {}


@pytest.fixture(scope="module", autouse=True)
def _write_conformance():
    yield
    path = os.environ.get("PDK_WRITE_CONFORMANCE")
    if not path:
        return
    errors = {}
    for (op, key), err in sorted(MAX_ERRORS.items()):
        errors.setdefault(op, {})[key] = err
    data = {
        "mode": "full" if FULL else "fast",
        "tensorflow": tf.__version__,
        "pdk": tensorflow_pdk.version(),
        "cases_run": sum(1 for _ in ITEMS),
        "max_abs_error": errors,
    }
    p = pathlib.Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


# ----------------------------------------------------------------- coverage


def test_every_registered_pair_has_a_case():
    missing = []
    for op, regs in sorted(REGISTERED.items()):
        if op in cc.EXEMPT:
            continue
        for r in regs:
            if (op, cr.pair_key(r)) not in COVERED:
                missing.append(f"{op} [{cr.pair_key(r)}]")
    assert not missing, (
        f"{len(missing)} registered (op, type constraints) pairs have no conformance case "
        "(add one to tests/python/conformance_cases.py, or an EXEMPT entry naming the test "
        "that covers it):\n  " + "\n  ".join(missing))


def test_exemptions_name_their_test():
    root = pathlib.Path(__file__).resolve().parent
    for op, why in cc.EXEMPT.items():
        test = why.split(":")[0].strip()
        assert (root.parents[1] / test).is_file(), f"EXEMPT[{op!r}] names no test file: {why}"


# -------------------------------------------------------------------- sweep


def _id(item):
    c, b, key = item
    return f"{c.op}-{key or 'any'}-{c.index}"


@pytest.mark.parametrize("item", ITEMS, ids=[_id(i) for i in ITEMS])
def test_conformance(item):
    c, binding, key = item
    arrays = cr.inputs(c, binding, key)
    what = f"{c.describe()} [{key}]"

    expected = cr.call(c, binding, arrays, "/CPU:0", reference=True)
    with launches() as delta:
        actual = cr.call(c, binding, arrays, "/PDK:0")
    assert delta.get(c.op, 0) > 0, f"{what}: {c.op} did not run on PDK (launches: {delta})"
    again = cr.call(c, binding, arrays, "/PDK:0")

    failures, worst = cr.compare(c, expected, actual)
    k = (c.op, key)
    MAX_ERRORS[k] = max(MAX_ERRORS.get(k, 0.0), worst)

    if c.stateful:  # the second call goes on along the generator: as the CPU's
        expected_again = cr.call(c, binding, arrays, "/CPU:0", reference=True)
        failures += [f"second call: {f}" for f in cr.compare(c, expected_again, again)[0]]
    else:
        for i, (a, b) in enumerate(zip(actual, again)):
            if a.shape != b.shape or a.tobytes() != b.tobytes():
                failures.append(f"output {i}: a second PDK run differs (not deterministic)")
    assert not failures, what + "\n" + "\n".join(failures)
