"""The fuzzer's cases: malformed calls of every (op, type constraints) pair
PDK registers, made from the pair's conformance case (conformance_cases.py).

For each registered pair, the first conformance case covering it gives the
op, the type binding, the valid inputs (``conformance_run.inputs``: the same
arrays as in the sweep) and the attributes; each *mutation* changes one
input or one attribute of that call:

- data tensors: rank + 1, rank - 1, a scalar, rank + 5, one dimension + 1
  (mismatched against the other operands), one dimension 0 (empty), special
  values (NaN, +-inf, +-0, the largest float; for integers their min, max, -1
  and 0);
- index tensors (axes, shapes, sizes, paddings, multiples, indices, seeds):
  one element -1, the dtype's min, its max, + 1, + 100 (out of range), every
  element 2**31 - 1 (element counts that overflow int64, as in
  ``Tile(input=[2, 3], multiples=[2**31 - 1] * 2)``: 4294967294 x 6442450941),
  rank + 1, a scalar, one element more, one less, empty;
- list inputs (AddN, ConcatV2, Pack, ...): one element less or more, one
  element's rank + 1, one dimension + 1, special values;
- attributes: bools flipped (not ``NO_FLIP``); ints -1, + 1, + 100, - 100 and 2**31 - 1 (not for
  output counts: ``num``, ``num_split``); floats NaN, inf, -1, 0; strings an
  unknown value ("BOGUS"), padding switched between SAME / VALID / EXPLICIT,
  an equation cut short; int lists (strides, ksize, dilations, paddings) one
  element -1, 0 or 2**31 - 1, one element more or less, empty.

A case's id reads ``Op[T=float32,Tidx=int32]/input:mutation`` (e.g.
``Tile[T=int8,Tmultiples=int64]/multiples:all=2147483647``); fuzz_exceptions.py
matches these ids. Which mutations run (the seed, ``PDK_FUZZ_SEED``, picks
them; 0 by default):

- fast (default): ``FAST_PER_PAIR`` mutations per pair, drawn with the seed,
  plus the whole crash corpus (``corpus()``);
- ``PDK_FUZZ=long``: every mutation of every pair (element positions drawn
  with the seed), plus the corpus.

The crash corpus, fuzz_corpus.json, keeps every case that ever crashed PDK
with explicit inputs, as regression cases: ``corpus_entry()`` writes an
entry, ``corpus()`` reads them back (the conformance case of the entry's pair
gives the comparison rules).
"""
from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import zlib
from typing import Any, Dict, Iterator, List, Tuple

import numpy as np

import conformance_cases as cc
import conformance_run as cr

LONG = os.environ.get("PDK_FUZZ", "").lower() == "long"
SEED = int(os.environ.get("PDK_FUZZ_SEED", "0"))
FAST_PER_PAIR = 3
CORPUS = pathlib.Path(__file__).with_name("fuzz_corpus.json")

I32_MAX = 2**31 - 1
COUNT_ATTRS = ("num", "num_split", "N")     # output counts: huge values exhaust memory in TF's eager runtime
# Bools not flipped: the other value leaves the result unspecified (Empty
# init=False: uninitialized memory; TopKV2 sorted=False: any order;
# FusedBatchNorm* is_training: which outputs the case compares depends on it).
NO_FLIP = ("init", "sorted", "is_training")


@dataclasses.dataclass
class FuzzCase:
    id: str
    op: str
    key: str                  # the pair's type constraints, "T=float32,Tidx=int32"
    case_index: int           # the conformance case (comparison rules, run / reference)
    binding: Dict[str, str]
    inputs: Dict[str, Any]    # name -> np.ndarray or a list of them
    attrs: Dict[str, Any]

    @property
    def case(self) -> cc.Case:
        return cc.CASES[self.case_index]


# --------------------------------------------------------------- mutations

def _cast(values, dt: np.dtype) -> np.ndarray:
    """Python ints in the integer dtype ``dt``, wrapping as C does (-1 -> 255 in uint8)."""
    bits = dt.itemsize * 8
    u = np.array([int(v) % (1 << bits) for v in values], dtype=f"uint{bits}")
    return u.view(dt) if dt.kind == "i" else u


def _special_values(x: np.ndarray, rng) -> np.ndarray:
    if x.size == 0 or x.dtype == np.bool_:
        return None
    if x.dtype.kind in "iu":
        info = np.iinfo(x.dtype)
        picks = [info.min, info.max, 0, -1]
        return _cast([picks[i] for i in rng.integers(0, len(picks), size=x.size)],
                     x.dtype).reshape(x.shape)
    # NaN, +-inf, +-0 (no finite overflow: where a product overflows in
    # float32 depends on FMA contraction and summation order, unspecified).
    picks = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0]).astype(x.dtype)
    y = x.copy().reshape(-1)
    where = rng.random(y.shape) < 0.4
    y[where] = picks[rng.integers(0, len(picks), size=int(where.sum()))]
    return y.reshape(x.shape)


def _data_mutations(x: np.ndarray, rng) -> Iterator[Tuple[str, np.ndarray]]:
    """Malformed versions of a data tensor: (label, array)."""
    yield "rank+1", x[None]
    if x.ndim:
        yield "rank-1", np.resize(x, x.shape[1:])
        yield "scalar", np.resize(x, ())
    yield "rank+5", x.reshape((1,) * 5 + x.shape)
    if x.ndim:
        ax = int(rng.integers(x.ndim))
        yield f"dim{ax}+1", np.resize(x, x.shape[:ax] + (x.shape[ax] + 1,) + x.shape[ax + 1:])
        if x.shape[ax]:
            yield f"dim{ax}=0", np.resize(x, x.shape[:ax] + (0,) + x.shape[ax + 1:])
    special = _special_values(x, rng)
    if special is not None:
        yield "specials", special


def _index_mutations(v: np.ndarray, rng) -> Iterator[Tuple[str, np.ndarray]]:
    """Malformed versions of an index tensor (axes, shapes, indices, ...)."""
    info = np.iinfo(v.dtype)
    if v.size:
        p = int(rng.integers(v.size))
        e = int(v.reshape(-1)[p])
        for label, value in (("-1", -1), ("min", info.min), ("max", info.max),
                             ("e+1", e + 1), ("e+100", e + 100)):
            y = v.copy().reshape(-1)
            y[p] = _cast([value], v.dtype)[0]
            yield f"[{p}]={label}", y.reshape(v.shape)
        yield f"all={I32_MAX}", np.full(v.shape, min(I32_MAX, info.max), v.dtype)
    yield "rank+1", v[None]
    if v.ndim:
        yield "scalar", np.resize(v, ())
        yield "len+1", np.concatenate([v, np.resize(v, (1,) + v.shape[1:])])
        if v.shape[0]:
            yield "len-1", v[:-1]
    if v.size:
        yield "empty", v[:0] if v.ndim else np.zeros([0], v.dtype)


def _list_mutations(xs: List[np.ndarray], rng) -> Iterator[Tuple[str, List[np.ndarray]]]:
    if len(xs) > 1:
        yield "len-1", xs[:-1]
    yield "len+1", xs + xs[-1:]
    i = int(rng.integers(len(xs)))
    for label, y in _data_mutations(xs[i], rng):
        if label in ("rank+1", "specials") or label.startswith("dim"):
            yield f"[{i}]{label}", xs[:i] + [y] + xs[i + 1:]


def _attr_mutations(name: str, value, rng) -> Iterator[Tuple[str, Any]]:
    if isinstance(value, bool):
        if name not in NO_FLIP:
            yield "flip", not value
    elif isinstance(value, int):
        for label, v in (("-1", -1), ("+1", value + 1), ("+100", value + 100),
                         ("-100", value - 100), ("huge", I32_MAX)):
            if not (label == "huge" and name in COUNT_ATTRS):
                yield label, v
    elif isinstance(value, float):
        for v in (float("nan"), float("inf"), -1.0, 0.0):
            yield str(v), v
    elif isinstance(value, str):
        yield "BOGUS", "BOGUS"
        if name == "padding":
            for other in ("SAME", "VALID", "EXPLICIT"):
                if other != value:
                    yield other, other
        if name == "equation" and value:
            yield "cut", value[:-1]
    elif isinstance(value, (list, tuple)) and all(isinstance(v, int) for v in value):
        value = list(value)
        if value:
            p = int(rng.integers(len(value)))
            for label, v in (("-1", -1), ("0", 0), ("huge", I32_MAX)):
                yield f"[{p}]={label}", value[:p] + [v] + value[p + 1:]
            yield "len-1", value[:-1]
        yield "len+1", value + [value[-1] if value else 1]


def _spec_role(c: cc.Case, spec) -> str:
    """data | index | list: how an input of the case is mutated."""
    if isinstance(spec, cc.Many):
        return "list"
    if isinstance(spec, cc.Const):
        return "index" if np.asarray(spec.value).dtype.kind in "iu" else "data"
    if isinstance(spec, cc.Arr) and spec.dtype not in (None, c.data_attr):
        if spec.dtype in cc._INDEX_DEFAULTS or spec.dtype in ("Tseed", "Tblock_shape", "Tcrops"):
            return "index"
    return "data"


def mutations(c: cc.Case, arrays: dict, rng) -> Iterator[Tuple[str, dict, dict]]:
    """Every mutation of one call: (label, inputs, attrs)."""
    for name, spec in c.inputs:
        if name.startswith("_"):
            continue
        role = _spec_role(c, spec)
        x = arrays[name]
        if role == "list":
            gen = _list_mutations(list(x), rng)
        elif role == "index" and np.asarray(x).dtype.kind in "iu":
            gen = _index_mutations(np.asarray(x), rng)
        else:
            gen = _data_mutations(np.asarray(x), rng)
        for label, y in gen:
            yield f"{name}:{label}", dict(arrays, **{name: y}), c.attrs
    for name, value in c.attrs.items():
        for label, v in _attr_mutations(name, value, rng):
            yield f"attr {name}:{label}", arrays, dict(c.attrs, **{name: v})


# ------------------------------------------------------------------- plans

def generated(seed: int = SEED, long: bool = LONG, reg=None) -> Tuple[List[FuzzCase], set]:
    """The generated cases and the set of (op, pair key) they cover."""
    items, _ = cr.plan(False, reg)
    out, pairs = [], set()
    for c, binding, key in items:
        arrays = cr.inputs(c, binding, key)
        rng = np.random.default_rng(zlib.crc32(f"{seed}/{c.op}/{key}".encode()))
        muts = list(mutations(c, arrays, rng))
        if not long and len(muts) > FAST_PER_PAIR:
            picks = sorted(rng.choice(len(muts), size=FAST_PER_PAIR, replace=False))
            muts = [muts[i] for i in picks]
        for label, inputs, attrs in muts:
            out.append(FuzzCase(f"{c.op}[{key}]/{label}", c.op, key, c.index, binding, inputs,
                                attrs))
            pairs.add((c.op, key))
    return out, pairs


# ------------------------------------------------------------------ corpus

def _encode(v):
    if isinstance(v, list):
        return [_encode(x) for x in v]
    v = np.asarray(v)
    return {"dtype": v.dtype.name, "shape": list(v.shape),
            "values": [x if np.isfinite(x) else repr(x) for x in v.reshape(-1).tolist()]
            if v.dtype.kind == "f" else v.reshape(-1).tolist()}


def _decode(d):
    if isinstance(d, list):
        return [_decode(x) for x in d]
    dt = cc.npdt(d["dtype"])
    if dt.kind in "iu":
        return _cast(d["values"], dt).reshape(d["shape"])
    vals = [float(x) if isinstance(x, str) else x for x in d["values"]]
    return np.asarray(vals, dtype=np.bool_ if dt.kind == "b" else np.float64
                      ).astype(dt).reshape(d["shape"])


def corpus_entry(fc: FuzzCase, why: str) -> dict:
    """fc as a corpus entry: explicit inputs and attributes, and why it is kept."""
    return {"id": fc.id, "op": fc.op, "binding": fc.binding,
            "inputs": {k: _encode(v) for k, v in fc.inputs.items() if not k.startswith("_")},
            "attrs": {k: v for k, v in fc.attrs.items()}, "why": why}


def corpus(reg=None) -> List[FuzzCase]:
    """The crash corpus, each entry with the first conformance case of its pair."""
    entries = json.loads(CORPUS.read_text()) if CORPUS.exists() else []
    reg = cr.registered() if reg is None else reg
    first = {}
    for c, binding, key in cr.plan(False, reg)[0]:
        first.setdefault((c.op, key), c.index)
    out = []
    for e in entries:
        r = cr.covered_pair(e["binding"], reg.get(e["op"], []))
        key = cr.pair_key(r) if r is not None else None
        if (e["op"], key) not in first:
            raise ValueError(f"fuzz corpus entry {e['id']}: PDK registers no such pair")
        out.append(FuzzCase("corpus/" + e["id"], e["op"], key, first[(e["op"], key)],
                            e["binding"], {k: _decode(v) for k, v in e["inputs"].items()},
                            e["attrs"]))
    return out


def add_to_corpus(cases: List[FuzzCase], why: str) -> int:
    """Appends the cases not in the corpus yet; returns how many were added."""
    entries = json.loads(CORPUS.read_text()) if CORPUS.exists() else []
    known = {e["id"] for e in entries}
    new = [corpus_entry(fc, why) for fc in cases if fc.id not in known
           and not fc.id.startswith("corpus/")]
    if new:
        write_corpus(entries + new)
    return len(new)


def write_corpus(entries: List[dict]) -> None:
    """fuzz_corpus.json: one entry a line."""
    CORPUS.write_text("[\n" + ",\n".join(json.dumps(e) for e in entries) + "\n]\n")
