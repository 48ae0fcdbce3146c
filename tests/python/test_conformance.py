"""Conformance sweep: every (op, type constraints) pair PDK registers against
TensorFlow's own CPU kernel.

The cases are in conformance_cases.py. Each runs ``tf.raw_ops.<Op>`` (so
exactly that op runs) on /CPU:0 and on /PDK:0 with the same inputs and checks:

- the op launched a PDK kernel (``testing.launches()``): no silent CPU fallback;
- the outputs match the CPU's: ``testing.TOLERANCES`` per output dtype unless
  the case states its own next to it; integer and bool outputs, and ``exact``
  cases, bit for bit;
- a second PDK run on the same inputs is bitwise identical to the first
  (determinism, also of the outputs not compared with the CPU).

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
import zlib

import numpy as np
import pytest
import tensorflow as tf

import conformance_cases as cc
import tensorflow_pdk
from tensorflow_pdk.testing import TOLERANCES, launches

FULL = os.environ.get("PDK_SWEEP", "").lower() == "full"

# ------------------------------------------------------------------ planning


def _registered():
    """{op: [constraints dict]} of PDK's registrations."""
    out = {}
    for k in tensorflow_pdk.registered_kernels():
        out.setdefault(k.op, []).append(dict(k.type_constraints))
    return out


def _key(constraints: dict) -> str:
    return ",".join(f"{a}={d}" for a, d in constraints.items())


def _covered_pair(binding: dict, regs):
    """The registration a case binding runs, or None (PDK has no such kernel)."""
    for r in regs:
        if all(binding.get(a) == d for a, d in r.items()):
            return r
    return None


def _plan():
    reg = _registered()
    items, seen = [], set()
    for c in cc.CASES:
        regs = reg.get(c.op)
        if not regs:
            continue
        for b in c.bindings():
            r = _covered_pair(b, regs)
            if r is None:
                continue
            pair = (c.op, _key(r))
            if FULL or pair not in seen:
                items.append((c, b, pair[1]))
            seen.add(pair)
    return reg, items, seen


REGISTERED, ITEMS, COVERED = _plan()

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
            if (op, _key(r)) not in COVERED:
                missing.append(f"{op} [{_key(r)}]")
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


def _to_tensor(v):
    if isinstance(v, list):
        return [tf.constant(x) for x in v]
    return tf.constant(v)


def _call(c: cc.Case, binding: dict, arrays: dict, device: str, reference: bool = False):
    """Runs the case on ``device``; returns its outputs as numpy arrays."""
    kwargs = dict(c.attrs)
    with tf.device(device):
        for name, v in arrays.items():
            if not name.startswith("_"):
                kwargs[name] = _to_tensor(v)
        if reference and c.reference is not None:
            fn = c.reference
        elif c.run is not None:
            fn = c.run
        else:
            fn = getattr(tf.raw_ops, c.op)
            params = _params(c.op)
            for attr, dt in binding.items():     # type attrs the op takes as arguments
                if attr in params and attr not in arrays:
                    kwargs[attr] = tf.as_dtype(cc.npdt(dt))
        out = fn(**kwargs)
    if isinstance(out, (list, tuple)):
        outs = list(out)
    else:
        outs = [out]
    return [np.asarray(o.numpy() if hasattr(o, "numpy") else o) for o in outs]


_PARAMS = {}


def _params(op):
    if op not in _PARAMS:
        import inspect
        _PARAMS[op] = set(inspect.signature(getattr(tf.raw_ops, op)).parameters)
    return _PARAMS[op]


def _abs_error(a: np.ndarray, e: np.ndarray) -> float:
    if a.size == 0 or a.tobytes() == e.tobytes():
        return 0.0
    if a.dtype == np.bool_:
        return float(np.count_nonzero(a != e))
    with np.errstate(invalid="ignore"):
        a64 = a.astype(np.float64)
        e64 = e.astype(np.float64)
    same = (a64 == e64) | (np.isnan(a64) & np.isnan(e64))
    if same.all():
        return 0.0
    diff = np.where(same, 0.0, np.abs(a64 - e64))
    return float(np.nanmax(np.where(np.isnan(diff), np.inf, diff)))


def _id(item):
    c, b, key = item
    return f"{c.op}-{key or 'any'}-{c.index}"


@pytest.mark.parametrize("item", ITEMS, ids=[_id(i) for i in ITEMS])
def test_conformance(item):
    c, binding, key = item
    rng = np.random.default_rng(zlib.crc32(f"{c.index}/{key}".encode()))
    arrays = c.make_inputs(binding, rng)
    what = f"{c.describe()} [{key}]"

    expected = _call(c, binding, arrays, "/CPU:0", reference=True)
    with launches() as delta:
        actual = _call(c, binding, arrays, "/PDK:0")
    assert delta.get(c.op, 0) > 0, f"{what}: {c.op} did not run on PDK (launches: {delta})"
    again = _call(c, binding, arrays, "/PDK:0")

    assert len(actual) == len(expected), f"{what}: {len(actual)} outputs, CPU {len(expected)}"
    if c.canonical is not None:
        expected, actual_cmp = c.canonical(expected), c.canonical(actual)
    else:
        actual_cmp = actual
    compare = c.outputs if c.outputs is not None else range(len(expected))
    worst = 0.0
    failures = []
    for i in compare:
        a, e = actual_cmp[i], expected[i]
        if a.shape != e.shape or a.dtype != e.dtype:
            failures.append(f"output {i}: {a.dtype}{list(a.shape)} != CPU {e.dtype}{list(e.shape)}")
            worst = float("inf")
            continue
        err = _abs_error(a, e)
        worst = max(worst, err)
        if c.exact or e.dtype.kind in "biu":
            if a.tobytes() != e.tobytes():
                failures.append(f"output {i}: not bitwise equal to the CPU's (max |error| {err:g})")
            continue
        rtol, atol = c.tol.get(e.dtype.name, TOLERANCES.get(e.dtype.name, (0.0, 0.0)))
        try:
            np.testing.assert_allclose(a.astype(np.float64), e.astype(np.float64), rtol=rtol,
                                       atol=atol, equal_nan=True)
        except AssertionError as ex:
            failures.append(f"output {i} ({e.dtype.name}, rtol {rtol}, atol {atol}): {ex}")
    k = (c.op, key)
    MAX_ERRORS[k] = max(MAX_ERRORS.get(k, 0.0), worst)

    for i, (a, b) in enumerate(zip(actual, again)):
        if a.shape != b.shape or a.tobytes() != b.tobytes():
            failures.append(f"output {i}: a second PDK run differs (not deterministic)")
    assert not failures, what + "\n" + "\n".join(failures)
