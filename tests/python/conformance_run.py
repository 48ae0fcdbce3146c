"""Planning, calling and comparing conformance cases (conformance_cases.py):
the pieces the conformance sweep (test_conformance.py) and the fuzzer
(test_fuzz.py, fuzz_cases.py) share.

- ``registered()``, ``pair_key()``, ``covered_pair()``, ``plan(full)``: which
  case runs which registered (op, type constraints) pair;
- ``inputs()``: a case's input arrays for a pair, from a fixed seed;
- ``call()``: runs a case's op (or its ``run`` / ``reference``) on a device
  through ``tf.raw_ops``, with the case's attributes or others;
- ``compare()``: PDK's outputs against the CPU's under the case's rules
  (``testing.TOLERANCES`` or the case's ``tol``, ``exact``, ``outputs``,
  ``canonical``; integers and bools bit for bit; NaN positions must agree).
"""
from __future__ import annotations

import inspect
import zlib
from typing import Dict, List, Optional, Tuple

import numpy as np

import conformance_cases as cc


def registered() -> Dict[str, List[dict]]:
    """{op: [constraints dict]} of PDK's registrations."""
    import tensorflow_pdk
    out: Dict[str, List[dict]] = {}
    for k in tensorflow_pdk.registered_kernels():
        out.setdefault(k.op, []).append(dict(k.type_constraints))
    return out


def pair_key(constraints: dict) -> str:
    return ",".join(f"{a}={d}" for a, d in constraints.items())


def covered_pair(binding: dict, regs) -> Optional[dict]:
    """The registration a case binding runs, or None (PDK has no such kernel)."""
    for r in regs:
        if all(binding.get(a) == d for a, d in r.items()):
            return r
    return None


def plan(full: bool, reg=None) -> Tuple[list, set]:
    """[(case, binding, pair key)] and the set of covered (op, pair key): for
    every registered pair the first case covering it, or with ``full`` every
    case covering it."""
    reg = registered() if reg is None else reg
    items, seen = [], set()
    for c in cc.CASES:
        regs = reg.get(c.op)
        if not regs:
            continue
        for b in c.bindings():
            r = covered_pair(b, regs)
            if r is None:
                continue
            pair = (c.op, pair_key(r))
            if full or pair not in seen:
                items.append((c, b, pair[1]))
            seen.add(pair)
    return items, seen


def inputs(c: cc.Case, binding: dict, key: str) -> dict:
    """The case's inputs for the pair ``key``, drawn from a seed of the case
    and the pair (the same arrays in every run)."""
    return c.make_inputs(binding, np.random.default_rng(zlib.crc32(f"{c.index}/{key}".encode())))


def _to_tensor(v):
    import tensorflow as tf
    if isinstance(v, list):
        return [tf.constant(x) for x in v]
    return tf.constant(v)


_PARAMS: Dict[str, set] = {}


def _params(op):
    import tensorflow as tf
    if op not in _PARAMS:
        _PARAMS[op] = set(inspect.signature(getattr(tf.raw_ops, op)).parameters)
    return _PARAMS[op]


def call(c: cc.Case, binding: dict, arrays: dict, device: str, reference: bool = False,
         attrs: Optional[dict] = None) -> List[np.ndarray]:
    """Runs the case on ``device`` (its ``reference`` instead of the op if
    ``reference`` and it has one), with ``attrs`` in place of the case's;
    returns its outputs as numpy arrays. Inputs named ``_x`` are not passed."""
    import tensorflow as tf
    kwargs = dict(c.attrs if attrs is None else attrs)
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
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    return [np.asarray(o.numpy() if hasattr(o, "numpy") else o) for o in outs]


def abs_error(a: np.ndarray, e: np.ndarray) -> float:
    """max |a - e| over positions that differ (NaN against NaN agrees; NaN
    against a number is inf); bools: the count of differing elements."""
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


def _canonical_nan(x: np.ndarray) -> np.ndarray:
    """``x`` with every NaN replaced by one NaN of its dtype."""
    nan = np.isnan(x.astype(np.float64))
    if not nan.any():
        return x
    x = x.copy()
    x[nan] = np.array(np.nan, dtype=np.float64).astype(x.dtype)
    return x


def compare(c: cc.Case, expected: List[np.ndarray], actual: List[np.ndarray]
            ) -> Tuple[List[str], float]:
    """PDK's outputs ``actual`` against the CPU's ``expected`` under the case's
    rules; returns (failure descriptions, largest |error|)."""
    from tensorflow_pdk.testing import TOLERANCES
    if len(actual) != len(expected):
        return [f"{len(actual)} outputs, CPU {len(expected)}"], float("inf")
    if c.canonical is not None:
        expected, actual = c.canonical(expected), c.canonical(actual)
    compared = c.outputs if c.outputs is not None else range(len(expected))
    worst = 0.0
    failures = []
    for i in compared:
        a, e = actual[i], expected[i]
        if a.shape != e.shape or a.dtype != e.dtype:
            failures.append(f"output {i}: {a.dtype}{list(a.shape)} != CPU {e.dtype}{list(e.shape)}")
            worst = float("inf")
            continue
        err = abs_error(a, e)
        worst = max(worst, err)
        if c.exact or e.dtype.kind in "biu":
            if e.dtype.kind not in "biu":
                # A NaN's sign and payload are not part of a result (x86's
                # generated NaN is negative, a propagated one keeps its input's
                # sign): NaNs compare by position, every other value by its bits.
                a, e = _canonical_nan(a), _canonical_nan(e)
            if a.tobytes() != e.tobytes():
                failures.append(f"output {i}: not bitwise equal to the CPU's (max |error| {err:g})")
            continue
        rtol, atol = c.tol.get(e.dtype.name, TOLERANCES.get(e.dtype.name, (0.0, 0.0)))
        try:
            np.testing.assert_allclose(a.astype(np.float64), e.astype(np.float64), rtol=rtol,
                                       atol=atol, equal_nan=True)
        except AssertionError as ex:
            failures.append(f"output {i} ({e.dtype.name}, rtol {rtol}, atol {atol}): {ex}")
    return failures, worst
