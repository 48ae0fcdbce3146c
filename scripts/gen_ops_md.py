"""Writes docs/ops.md: every op PDK registers, its dtypes, its kernel file, and
the largest error the conformance sweep measured per dtype.

Run: .venv/bin/python scripts/gen_ops_md.py [conformance.json]

The registration columns come from ``tensorflow_pdk.registered_kernels()``.
The "max |error|" column comes from the JSON the conformance sweep writes
(tests/python/test_conformance.py):

    PDK_SWEEP=full PDK_WRITE_CONFORMANCE=build/conformance.json \\
        .venv/bin/python -m pytest tests/python/test_conformance.py
    .venv/bin/python scripts/gen_ops_md.py            # reads build/conformance.json

Without a JSON (argument, ``PDK_CONFORMANCE_JSON`` or build/conformance.json)
the column keeps the values already in docs/ops.md, so regenerating after a
registration change does not need a sweep; cells never measured show "—". A
JSON replaces the cells of the ops it measured and keeps the others: a sweep of
new ops only (``pytest ... -k "Pool3D"``) fills in their cells.

Reproducibility: an error depends on the machine (OpenBLAS kernel, thread
count), so the column cannot be regenerated bit for bit in a test.
tests/python/test_docs.py therefore checks the op/dtype part only: it renders
the file with the error cells read back from the committed docs/ops.md
(:func:`parse_errors`) and compares the whole text, so the ops, their type
constraints, host-memory arguments, kernel files and the set of dtype cells
must match the plugin exactly, while the measured numbers are taken as
committed. Errors are rounded to one significant digit (``2e-07``), enough to
tell exact (0), rounding-level and suspicious cells apart. A cell is the
maximum over every registration whose first type attribute (T, SrcT, Tparams,
dtype, Tidx, ...) has that dtype, and over every case the sweep ran.
"""
from __future__ import annotations

import collections
import json
import os
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
OPS_MD = ROOT / "docs" / "ops.md"
DEFAULT_JSON = ROOT / "build" / "conformance.json"
DTYPE_ORDER = ["float32", "float64", "float16", "bfloat16", "int32", "int64", "bool", "uint8",
               "int8", "int16", "uint16", "uint32", "uint64"]
ERROR_HEADER = "max \\|error\\| vs TF CPU, per dtype"


def kernel_files(ops=None):
    """op name -> the kernel source file that names it as a string literal."""
    if ops is None:
        import tensorflow_pdk

        ops = {k.op for k in tensorflow_pdk.registered_kernels()}
    sources = {p.relative_to(ROOT).as_posix(): p.read_text()
               for p in sorted((ROOT / "src" / "kernels").rglob("*.cc"))}
    files = {}
    for op in ops:
        for name, text in sources.items():
            if re.search(r'"%s"' % re.escape(op), text):
                files[op] = name
                break
    return files


def _group(constraints: str) -> str:
    """The dtype a registration's error is filed under: its first type attribute's."""
    first = constraints.split(",")[0]
    return first.split("=", 1)[1] if "=" in first else "any"


def _dtype_key(d: str):
    return (DTYPE_ORDER.index(d) if d in DTYPE_ORDER else len(DTYPE_ORDER), d)


def _fmt(err: float) -> str:
    if err == 0:
        return "0"
    if err == float("inf"):
        return "inf"
    return f"{err:.0e}"


def _product(regs):
    """{attr: values} when `regs` (tuples of (attr, dtype) pairs, same attrs in the
    same order) is every combination of those values, else None."""
    attrs = [a for a, _ in regs[0]]
    values = {a: sorted({dict(r)[a] for r in regs}, key=_dtype_key) for a in attrs}
    size = 1
    for v in values.values():
        size *= len(v)
    return values if size == len(set(regs)) else None


def _render_product(values) -> str:
    """'T: float32, int32 × Tidx: int32, int64'; attributes with the same list
    share it: 'T, type (each): float32, float64'."""
    groups = []  # [(names, values)], in attribute order
    for a, v in values.items():
        for names, vals in groups:
            if vals == v:
                names.append(a)
                break
        else:
            groups.append(([a], v))
    return " × ".join(
        (f"{', '.join(n)} (each)" if len(n) > 1 else n[0]) + ": " + ", ".join(v)
        for n, v in groups)


def types_cell(regs) -> str:
    """The type-constraint cell of one op, compact enough to read: one list of
    dtypes per attribute when the registrations are every combination of them,
    else one such product per value of the first attribute's groups."""
    regs = sorted(set(regs))
    if not regs or not regs[0]:
        return ""
    attrs = [a for a, _ in regs[0]]
    if any([a for a, _ in r] != attrs for r in regs):
        return "; ".join(", ".join(f"{a}={d}" for a, d in r) for r in regs)
    values = _product(regs)
    if values is not None:
        return _render_product(values)
    # Not a full product: group the first attribute's values by the rest they
    # combine with, and render each group as a product (or list it).
    rest = collections.defaultdict(set)
    for r in regs:
        rest[r[0][1]].add(r[1:])
    groups = collections.defaultdict(list)
    for v in sorted(rest, key=_dtype_key):
        groups[frozenset(rest[v])].append(v)
    parts = []
    for tails, firsts in groups.items():
        sub = [((attrs[0], f),) + t for f in firsts for t in tails]
        values = _product(sub)
        parts.append(_render_product(values) if values is not None else
                     "; ".join(", ".join(f"{a}={d}" for a, d in r) for r in sorted(sub)))
    return "; ".join(parts)


def errors_from_json(path) -> dict:
    """{op: {dtype: rounded error text}} from the sweep's JSON."""
    data = json.loads(pathlib.Path(path).read_text())
    if data.get("mode") != "full":
        print(f"note: {path} comes from the fast subset, not PDK_SWEEP=full", file=sys.stderr)
    out = {}
    for op, per_key in data["max_abs_error"].items():
        worst = {}
        for key, err in per_key.items():
            g = _group(key)
            worst[g] = max(worst.get(g, 0.0), float(err))
        out[op] = {g: _fmt(e) for g, e in worst.items()}
    return out


def parse_errors(text: str) -> dict:
    """{op: {dtype: error text}} read back from a rendered docs/ops.md."""
    out = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 5 or not line.startswith("| ") or cells[0] in ("op", "---"):
            continue
        errs = {}
        for part in cells[4].split(";"):
            if ":" in part:
                d, e = part.split(":", 1)
                if e.strip() != "—":
                    errs[d.strip()] = e.strip()
        out[cells[0]] = errs
    return out


def host_memory_cell(regs) -> str:
    """The host-memory args of one op's registrations [(type_constraints,
    host_memory)]: those every registration has, then those only some have
    (int32 kernels keep int32 on the host), each with the type attribute value
    that selects them: ``axis; values, output (int32)``, or for an op with
    several type attributes ``x (SrcT=int32); y (DstT=int32)``."""
    common = set.intersection(*(set(h) for _, h in regs))
    order = [a for _, h in regs for a in h]
    first = lambda xs: sorted(set(xs), key=order.index)  # noqa: E731
    attrs = [a for a, _ in regs[0][0]]
    by_label = collections.defaultdict(list)
    for arg in first(set(order) - common):
        label = "some"
        for attr in attrs:
            values = {dict(c).get(attr) for c, h in regs if arg in h}
            if len(values) == 1:
                (value,) = values
                if all(arg in h for c, h in regs if dict(c).get(attr) == value):
                    label = value if len(attrs) == 1 else f"{attr}={value}"
                    break
        by_label[label].append(arg)
    parts = [", ".join(first(common))] if common else []
    parts += [f"{', '.join(args)} ({label})" for label, args in by_label.items()]
    return "; ".join(parts)


def render(errors=None) -> str:
    """docs/ops.md's text; ``errors`` as from errors_from_json / parse_errors."""
    import tensorflow_pdk

    errors = errors or {}
    by_op = collections.defaultdict(set)
    host_sets = collections.defaultdict(list)
    for k in tensorflow_pdk.registered_kernels():
        by_op[k.op].add(tuple((a, d) for a, d in k.type_constraints))
        host_sets[k.op].append((k.type_constraints, tuple(k.host_memory)))
    host = {op: host_memory_cell(regs) for op, regs in host_sets.items()}
    files = kernel_files(set(by_op))
    lines = [
        "# Ops with PDK kernels",
        "",
        "Generated by `scripts/gen_ops_md.py` from `tensorflow_pdk.registered_kernels()`;",
        "`tests/python/test_docs.py` fails when this file and the plugin disagree.",
        "The last column is the largest |PDK − TensorFlow CPU| the conformance sweep",
        "(`PDK_SWEEP=full`, `tests/python/test_conformance.py`) measured over all its cases,",
        "per dtype of the op's first type attribute, rounded to one significant digit",
        "(0: bit-identical; — : not measured).",
        "Type constraints give each type attribute's dtypes; ` × ` joins attributes whose",
        "dtypes combine freely, and `A, B (each)` means two attributes each taking any",
        "dtype of one list.",
        "",
        f"{len(by_op)} ops, {sum(len(v) for v in by_op.values())} (op, dtype) registrations.",
        "",
        f"| op | type constraints | host-memory args | kernel | {ERROR_HEADER} |",
        "|---|---|---|---|---|",
    ]
    for op in sorted(by_op):
        types = types_cell(by_op[op])
        groups = sorted({r[0][1] if r else "any" for r in by_op[op]}, key=_dtype_key)
        errs = errors.get(op, {})
        cell = "; ".join(f"{g}: {errs.get(g, '—')}" for g in groups)
        lines.append(f"| {op} | {types} | {host.get(op, '')} | {files.get(op, '')} | {cell} |")
    return "\n".join(lines) + "\n"


def _json_path():
    if len(sys.argv) > 1:
        return pathlib.Path(sys.argv[1])
    if os.environ.get("PDK_CONFORMANCE_JSON"):
        return pathlib.Path(os.environ["PDK_CONFORMANCE_JSON"])
    return DEFAULT_JSON


if __name__ == "__main__":
    path = _json_path()
    errors = parse_errors(OPS_MD.read_text()) if OPS_MD.is_file() else {}
    if path.is_file():
        # Ops the JSON measured replace their cells; the others keep theirs, so
        # a sweep of some ops (pytest -k) fills in just those.
        errors.update(errors_from_json(path))
        print(f"errors from {path} (other ops: kept from {OPS_MD})", file=sys.stderr)
    else:
        print(f"no {path}: keeping the error column of {OPS_MD}", file=sys.stderr)
    OPS_MD.write_text(render(errors))
    print(f"wrote {OPS_MD}", file=sys.stderr)
