"""The case table of the conformance sweep (tests/python/test_conformance.py).

Every entry reads as the op it runs through ``tf.raw_ops.<Op>``::

    case("MatMul", inputs=[("a", [3, 4]), ("b", [4, 5])],
         attrs={"transpose_a": False}, dtypes={"T": FLOAT + INT})

- ``inputs``: (argument name, spec) in the op's order. A spec is
  - a shape (list of ints; ``[]`` is a scalar): random data of the case's data
    dtype (the first attribute of ``dtypes``) drawn by the case's ``gen``;
  - ``arr(shape, dtype, gen)``: the same with another dtype (a type attribute
    of ``dtypes`` such as ``"Tindices"``, or a dtype name) or generator;
  - ``const(value, dtype)``: a fixed tensor (axes, shapes, paddings, seeds);
  - ``many(spec, ...)``: a list input (AddN, ConcatV2, Pack, ShapeN);
  - ``computed(fn)``: ``fn(dt, rng, prev)`` builds the input from the bound
    dtypes and the inputs before it (e.g. MaxPoolGrad's orig_output).
- ``attrs``: non-type attributes. Type attributes the op takes as arguments
  (``DstT``, ``output_type``, ``out_type``, ``index_type``, ``type``,
  ``dtype``) are passed from ``dtypes``; the others are inferred by TensorFlow
  from the inputs' dtypes.
- ``dtypes``: type attribute -> dtype names. The sweep runs each combination
  PDK registers a kernel for (``registered_kernels()``); combinations TF
  supports but PDK does not (yet) register are skipped, so listing them here
  makes a new registration covered the moment it appears.
- ``tol``: {dtype name: (rtol, atol)} replacing ``testing.TOLERANCES`` for
  that output dtype, with the reason in a comment next to the case.
- ``exact``: outputs must equal the CPU's bit for bit (data movement, random).
- ``outputs``: indices of the outputs compared with the CPU (the others are
  placeholders TF's CPU kernel fills differently; see the comment at the case).
- ``reference``: a function of the same keyword arguments run on /CPU:0 in
  place of the op itself (when TF's CPU kernel is wrong or missing).
- ``run``: how to call an op tf.raw_ops does not have (PDK's own ops).
- ``canonical``: maps both sides' outputs (numpy) to a canonical form before
  comparing, where the op leaves something unspecified (TopKV2's order when
  sorted=False).

Order matters: the fast subset (the default) runs, for every registered
(op, type constraints) pair, the FIRST case here that covers it, so each op's
first case is small but not degenerate; ``PDK_SWEEP=full`` runs them all
(scalars, empty tensors, broadcasting, odd sizes, attribute variants, one
large shape per op).

``EXEMPT`` lists the ops the sweep does not run, with the test that covers
them.
"""
from __future__ import annotations

import dataclasses
import itertools
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

# ----------------------------------------------------------------- dtypes

FLOAT = ["float32", "float64", "float16", "bfloat16"]
F32_64 = ["float32", "float64"]
INT = ["int32", "int64"]
SMALL_INT = ["uint8", "int8", "int16"]
# Every dtype PDK's data-movement kernels are written for.
ALL = FLOAT + INT + ["bool"] + SMALL_INT + ["uint16", "uint32", "uint64"]
NUMERIC = FLOAT + INT + SMALL_INT + ["uint16", "uint32", "uint64"]
IDX = ["int32", "int64"]           # index / shape / axis attributes
BITCAST = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
           "uint8", "uint16", "uint32", "uint64"]


def npdt(name: str) -> np.dtype:
    if name == "bfloat16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


# ------------------------------------------------------------- generators
# gen(shape, dtype, rng) -> np.ndarray of that numpy dtype.

def uniform(lo=-5.0, hi=5.0):
    """Floats in [lo, hi); integers in [lo, hi) (clipped at 0 for unsigned); bools 50/50."""
    def gen(shape, dt, rng):
        if dt == np.bool_:
            return rng.random(shape) < 0.5
        if dt.kind in "iu":
            lo_i = max(int(np.floor(lo)), 0) if dt.kind == "u" else int(np.floor(lo))
            return rng.integers(lo_i, max(lo_i + 1, int(np.ceil(hi))), size=shape).astype(dt)
        return rng.uniform(lo, hi, size=shape).astype(dt)
    return gen


DEFAULT = uniform()


def positive(lo=0.05, hi=10.0):
    """Log, Sqrt, Rsqrt, Pow's base."""
    return uniform(lo, hi)


def nonzero(lo=-10.0, hi=10.0):
    """Divisors: no zeros, nothing tiny (|x| >= 0.25 for floats)."""
    base = uniform(lo, hi)

    def gen(shape, dt, rng):
        a = np.array(base(shape, dt, rng))
        a[a == 0] = 1
        if dt.kind == "f" or dt.name == "bfloat16":
            a[np.abs(a.astype(np.float64)) < 0.25] = 0.5
        return a
    return gen


def specials(lo=-5.0, hi=5.0):
    """Floats with NaN, +-inf, +-0 and the dtype's largest value mixed in."""
    base = uniform(lo, hi)

    def gen(shape, dt, rng):
        a = np.array(base(shape, dt, rng))
        if a.size:
            flat = a.reshape(-1)
            picks = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0,
                              float(np.finfo(np.float32).max) if dt.itemsize >= 4 else 60000.0])
            where = rng.random(flat.shape) < 0.4
            flat[where] = picks[rng.integers(0, len(picks), size=int(where.sum()))].astype(dt)
        return a
    return gen


def discrete(lo=-3, hi=4):
    """Small integers in the dtype: ties, zeros and equal elements on purpose."""
    def gen(shape, dt, rng):
        if dt == np.bool_:
            return rng.random(shape) < 0.5
        if dt.kind == "u":
            return rng.integers(max(lo, 0), hi, size=shape).astype(dt)
        return rng.integers(lo, hi, size=shape).astype(dt)
    return gen


def halves(lo=-3.0, hi=3.0):
    """Multiples of 0.25: exact .5 ties for Round, zeros for Sign."""
    def gen(shape, dt, rng):
        if dt.kind in "iu":
            return rng.integers(int(lo) * 10, int(hi) * 10, size=shape).astype(dt)
        return (rng.integers(int(lo * 4), int(hi * 4) + 1, size=shape) / 4).astype(dt)
    return gen


def indices(n, lo=0):
    """Valid indices / labels / segment ids in [lo, n)."""
    def gen(shape, dt, rng):
        return rng.integers(lo, n, size=shape).astype(dt)
    return gen


def bits():
    """Random bytes reinterpreted as the dtype (Bitcast: NaN payloads included)."""
    def gen(shape, dt, rng):
        n = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
        return np.frombuffer(rng.bytes(n), dtype=np.uint8).view(dt).reshape(shape).copy()
    return gen


def distribution():
    """Rows summing to 1 (SoftmaxCrossEntropyWithLogits labels)."""
    def gen(shape, dt, rng):
        a = rng.uniform(0.0, 1.0, size=shape)
        s = a.sum(axis=-1, keepdims=True)
        return (a / np.where(s == 0, 1, s)).astype(dt)
    return gen


# ------------------------------------------------------------------ specs

@dataclasses.dataclass(frozen=True)
class Arr:
    shape: Tuple[int, ...]
    dtype: Optional[str] = None      # type attribute or dtype name; None: the case's data attr
    gen: Optional[Callable] = None   # None: the case's gen


@dataclasses.dataclass(frozen=True)
class Const:
    value: Any
    dtype: Optional[str] = None      # type attribute or dtype name; None: int32 / float32 / bool


@dataclasses.dataclass(frozen=True)
class Many:
    specs: Tuple[Any, ...]


@dataclasses.dataclass(frozen=True)
class Computed:
    fn: Callable                     # fn(dt: {attr: np.dtype}, rng, prev: {name: value}) -> array


def arr(shape, dtype=None, gen=None):
    return Arr(tuple(shape), dtype, gen)


def const(value, dtype=None):
    return Const(value, dtype)


def many(*specs):
    return Many(tuple(specs))


def computed(fn):
    return Computed(fn)


# ------------------------------------------------------------------- case

@dataclasses.dataclass
class Case:
    op: str
    inputs: List[Tuple[str, Any]]
    attrs: Dict[str, Any]
    dtypes: Dict[str, List[str]]
    gen: Callable = DEFAULT
    tol: Dict[str, Tuple[float, float]] = dataclasses.field(default_factory=dict)
    exact: bool = False
    outputs: Optional[Sequence[int]] = None
    reference: Optional[Callable] = None
    run: Optional[Callable] = None
    canonical: Optional[Callable] = None
    stateful: bool = False           # each call moves a generator on (random_ops.cc)
    index: int = 0                   # position in CASES (test ids, stable seeds)

    @property
    def data_attr(self) -> Optional[str]:
        return next(iter(self.dtypes), None)

    def bindings(self):
        """Every combination of the listed dtypes: [{attr: dtype name}]."""
        keys = list(self.dtypes)
        for values in itertools.product(*(self.dtypes[k] for k in keys)):
            yield dict(zip(keys, values))

    def describe(self) -> str:
        parts = []
        for name, spec in self.inputs:
            parts.append(f"{name}={_describe(spec)}")
        parts += [f"{k}={v}" for k, v in self.attrs.items()]
        return f"{self.op}({', '.join(parts)})"

    # -- inputs
    def make_inputs(self, binding: Dict[str, str], rng) -> Dict[str, Any]:
        dt = {k: npdt(v) for k, v in binding.items()}
        out: Dict[str, Any] = {}
        for name, spec in self.inputs:
            out[name] = self._resolve(spec, dt, rng, out)
        return out

    def _dtype(self, name, dt, default):
        if name is None:
            return default
        if name in dt:
            return dt[name]
        if name in _INDEX_DEFAULTS:          # an index attr the case does not vary
            return np.dtype(_INDEX_DEFAULTS[name])
        return npdt(name)

    def _resolve(self, spec, dt, rng, prev):
        if isinstance(spec, (list, tuple)) and all(isinstance(s, int) for s in spec):
            spec = Arr(tuple(spec))
        if isinstance(spec, Arr):
            d = self._dtype(spec.dtype, dt, dt.get(self.data_attr, np.dtype(np.float32)))
            return np.asarray((spec.gen or self.gen)(spec.shape, d, rng), dtype=d)
        if isinstance(spec, Const):
            v = np.asarray(spec.value)
            default = (np.dtype(np.int32) if v.dtype.kind in "iu" else
                       np.dtype(np.bool_) if v.dtype == np.bool_ else np.dtype(np.float32))
            return np.asarray(spec.value, dtype=self._dtype(spec.dtype, dt, default))
        if isinstance(spec, Many):
            return [self._resolve(s, dt, rng, prev) for s in spec.specs]
        if isinstance(spec, Computed):
            return spec.fn(dt, rng, prev)
        raise TypeError(f"{self.op}: bad input spec {spec!r}")


_INDEX_DEFAULTS = {"Tidx": "int32", "Tshape": "int32", "Tdim": "int32", "Tperm": "int32",
                   "Tpaddings": "int32", "Index": "int32", "Tmultiples": "int32",
                   "Tlen": "int32", "Tnumsegments": "int32", "Tindices": "int32",
                   "Taxis": "int32", "Tk": "int32", "TI": "int32", "index_type": "int32",
                   "Tlabels": "int32", "Tout": "int32", "out_type": "int32"}


def _describe(spec):
    if isinstance(spec, (list, tuple)):
        return "[" + ",".join(map(str, spec)) + "]"
    if isinstance(spec, Arr):
        return "[" + ",".join(map(str, spec.shape)) + "]" + (f":{spec.dtype}" if spec.dtype else "")
    if isinstance(spec, Const):
        return f"const({np.asarray(spec.value).tolist()})"
    if isinstance(spec, Many):
        return "[" + ", ".join(_describe(s) for s in spec.specs) + "]"
    return "computed"


CASES: List[Case] = []


def wide_reference(op, narrow=("float16", "bfloat16"), wide_dtype="float32"):
    """TF's CPU op (or the reference function ``op``) computed in ``wide_dtype`` and
    rounded to the ``narrow`` input dtype (by default: 16-bit inputs in float32).

    For 16-bit sums where TF's CPU kernel accumulates in half / bfloat16 and
    PDK in float: measured on [513, 1023] inputs in [-5, 5], TF's float16 Sum
    is up to 0.53 from the exact sum (PDK 0.062, half an ulp at that scale),
    bfloat16 BiasAddGrad 9.7 (PDK 0.49), float16 Conv2DBackpropFilter 0.21
    (PDK 0.021), float16 Einsum [64,300]x[300,64] 2.87 (PDK 0.13). The sweep compares PDK with the correctly rounded result
    instead of with TF's rounding error; other dtypes run TF's op unchanged.
    float32 MatMul against float64 (narrow=("float32",), wide_dtype="float64"): a
    [300, 256]^T @ [300, 200] product had an element of 0.0548282 (float64)
    that TF's CPU gave as 0.0549316 and PDK as 0.0548146 (2026-12-01)."""
    def ref(**kw):
        import tensorflow as tf
        low, wide = None, {}
        def widen(v):
            nonlocal low
            if isinstance(v, (list, tuple)):  # a list input (Einsum's inputs)
                return [widen(x) for x in v]
            if isinstance(v, tf.Tensor) and v.dtype.name in narrow:
                low, v = v.dtype, tf.cast(v, wide_dtype)
            return v
        for k, v in kw.items():
            wide[k] = widen(v)
        out = (op if callable(op) else getattr(tf.raw_ops, op))(**wide)
        return tf.cast(out, low) if low is not None else out
    return ref


def case(op, inputs, attrs=None, dtypes=None, gen=None, tol=None, exact=False, outputs=None,
         reference=None, run=None, canonical=None, stateful=False):
    c = Case(op=op, inputs=list(inputs), attrs=dict(attrs or {}), dtypes=dict(dtypes or {}),
             gen=gen or DEFAULT, tol=dict(tol or {}), exact=exact,
             outputs=list(outputs) if outputs is not None else None,
             reference=reference, run=run, canonical=canonical, stateful=stateful,
             index=len(CASES))
    CASES.append(c)
    return c


# Ops the sweep does not run. Each names the test file that covers it.
EXEMPT: Dict[str, str] = {
    # Every other op PDK registers is swept (stateless random and Identity-like
    # ops too: cheap, compared bit for bit). An entry: "OpName":
    # "tests/python/test_x.py: why it can't be swept".
    **{op: "tests/python/test_resource_scatter.py: its kernel only satisfies the placer; the "
           "graph rewrite to TensorScatter* computes it, compared with the CPU there on "
           "variables (a sweep case has no resource input)"
       for op in ("ResourceScatterAdd", "ResourceScatterSub", "ResourceScatterUpdate",
                  "ResourceScatterMin", "ResourceScatterMax")},
    **{op: "tests/python/test_tf_versions.py: registered only on TensorFlow 2.16-2.18 and tf-nightly, "
           "compared with the CPU on variables there by scripts/tf_versions.py's probe (a sweep "
           "case has no resource input)"
       for op in ("ResourceApplyGradientDescent", "ResourceApplyMomentum", "ResourceApplyAdam")},
    **{op: "tests/python/test_fetch.py: run by PDK's eager reads and NumPy conversions, "
           "not by a graph, on a tensor's bytes as int32; compared there, per dtype and shape, "
           "with the CPU's tensor of the same value"
       for op in ("_PdkToHost", "_PdkFromHost")},
    "_PdkFusedElementwise": "tests/python/test_graph_elementwise_fusion.py: emitted only by the "
                            "graph rewrite, with a program in its attributes; compared there bit "
                            "for bit with the unfused PDK kernels and with the CPU",
}


# ======================================================================
# Elementwise binary ops (src/kernels/math/cwise_binary.cc)
# ======================================================================

BINARY_SHAPES = [                       # first: the fast subset's shape
    ([2, 3, 4], [4]),
    ([], []),
    ([0], [0]),
    ([2, 0], [1]),
    ([7], [7]),
    ([5], []),
    ([], [5]),
    ([3, 1], [1, 4]),
    ([3, 1, 5], [1, 4, 5]),
    ([2, 1, 3, 1], [1, 4, 1, 5]),
    ([2, 1, 3, 1, 2], [1, 4, 1, 5, 1]),
    ([257, 1023], [1023]),              # large, odd
    ([33, 37], [33, 1]),                # rank-2 row loops (compute/broadcast.h)
    ([33, 1], [1, 37]),
]

CMP = ["Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual"]
BINARY = {
    # op: (dtypes, x generator, y generator)
    "AddV2": (NUMERIC, DEFAULT, DEFAULT),
    "Add": (NUMERIC, DEFAULT, DEFAULT),     # v1 Add: AddV2's kernel under the old name
    "Sub": (NUMERIC, DEFAULT, DEFAULT),
    "Mul": (NUMERIC, DEFAULT, DEFAULT),
    "RealDiv": (FLOAT + INT, DEFAULT, nonzero()),
    "DivNoNan": (FLOAT, DEFAULT, discrete(-2, 3)),             # zeros on purpose
    "MulNoNan": (FLOAT, DEFAULT, discrete(-2, 3)),             # zeros on purpose
    "Xlogy": (FLOAT, discrete(-2, 3), positive()),             # x == 0 on purpose
    "Xlog1py": (FLOAT, discrete(-2, 3), uniform(-0.9, 5.0)),
    "Xdivy": (FLOAT, discrete(-2, 3), nonzero()),
    "Atan2": (FLOAT, DEFAULT, DEFAULT),                        # inputs y, x (both names)
    "Maximum": (NUMERIC, discrete(), discrete()),
    "Minimum": (NUMERIC, discrete(), discrete()),
    "SquaredDifference": (FLOAT + INT, DEFAULT, DEFAULT),
    "Pow": (FLOAT, positive(0.1, 3.0), uniform(-2.0, 2.0)),
    "FloorDiv": (NUMERIC, uniform(-10, 10), nonzero()),
    "Div": (FLOAT + INT + SMALL_INT, uniform(-10, 10), nonzero()),   # v1: truncating on ints
    "TruncateDiv": (INT + SMALL_INT, uniform(-10, 10), nonzero()),
    "FloorMod": (F32_64 + INT + SMALL_INT, uniform(-10, 10), nonzero()),
    "Equal": (NUMERIC + ["bool"], discrete(), discrete()),
    "NotEqual": (NUMERIC + ["bool"], discrete(), discrete()),
    "Less": (NUMERIC, discrete(), discrete()),
    "LessEqual": (NUMERIC, discrete(), discrete()),
    "Greater": (NUMERIC, discrete(), discrete()),
    "GreaterEqual": (NUMERIC, discrete(), discrete()),
    "BitwiseAnd": (INT + SMALL_INT + ["uint16", "uint32", "uint64"],
                   uniform(-1000, 1000), uniform(-1000, 1000)),
    "BitwiseOr": (INT + ["uint8"], uniform(-1000, 1000), uniform(-1000, 1000)),
    "BitwiseXor": (INT + ["uint8"], uniform(-1000, 1000), uniform(-1000, 1000)),
    # Shifts past the width and negative shifts on purpose (clamped, as TF's CPU).
    "LeftShift": (INT + ["uint8"], uniform(-1000, 1000), discrete(-3, 70)),
    "RightShift": (INT + ["uint8"], uniform(-1000, 1000), discrete(-3, 70)),
}

for xs, ys in BINARY_SHAPES:
    for op, (dts, gx, gy) in BINARY.items():
        case(op, inputs=[("x", arr(xs, gen=gx)), ("y", arr(ys, gen=gy))], dtypes={"T": dts})
    # Integer Pow: small bases, non-negative exponents (negative ones are an error).
    case("Pow", inputs=[("x", arr(xs, gen=discrete(-5, 6))), ("y", arr(ys, gen=discrete(0, 6)))],
         dtypes={"T": INT})
    for op in ("LogicalAnd", "LogicalOr"):
        case(op, inputs=[("x", arr(xs, "bool")), ("y", arr(ys, "bool"))])

# ======================================================================
# Elementwise unary ops (cwise_unary.cc, erf.cc, activations, relu.cc)
# ======================================================================

UNARY_SHAPES = [[3, 5], [], [0], [2, 0], [7], [2, 3, 4], [257, 1023]]

UNARY = {
    # op: (dtypes, generator)
    "Neg": (FLOAT + INT + ["int8", "int16"], DEFAULT),
    "Square": (FLOAT + INT, DEFAULT),
    "Abs": (FLOAT + INT + ["int8", "int16"], DEFAULT),
    "Sign": (FLOAT + INT, halves()),
    "Round": (FLOAT, halves()),
    "Rint": (F32_64, halves()),
    "Sqrt": (FLOAT, positive()),
    "Rsqrt": (FLOAT, positive()),
    "Exp": (FLOAT, uniform(-5, 5)),
    "Log": (FLOAT, positive()),
    "Log1p": (FLOAT, uniform(-0.99, 10.0)),
    "Expm1": (FLOAT, uniform(-5, 5)),
    "Reciprocal": (FLOAT, nonzero()),
    "Floor": (FLOAT, uniform(-5, 5)),
    "Ceil": (FLOAT, uniform(-5, 5)),
    "Sigmoid": (FLOAT, uniform(-20, 20)),
    "Tanh": (FLOAT, uniform(-20, 20)),
    "Erf": (FLOAT, uniform(-4, 4)),
    "Erfc": (FLOAT, uniform(-4, 4)),
    "Sin": (FLOAT, uniform(-10, 10)),
    "Cos": (FLOAT, uniform(-10, 10)),
    "Tan": (FLOAT, uniform(-1.5, 1.5)),
    "Asin": (FLOAT, uniform(-1, 1)),
    "Acos": (FLOAT, uniform(-1, 1)),
    "Atan": (FLOAT, uniform(-10, 10)),
}
ACTIVATIONS = {                         # argument "features"
    "Relu": (FLOAT + INT + SMALL_INT, DEFAULT),
    "Relu6": (FLOAT + INT + SMALL_INT, uniform(-3, 9)),
    "Elu": (FLOAT, DEFAULT),
    "Selu": (FLOAT, DEFAULT),
    "Softplus": (FLOAT, uniform(-30, 30)),
    "Softsign": (FLOAT, DEFAULT),
}

for shape in UNARY_SHAPES:
    for op, (dts, g) in UNARY.items():
        case(op, inputs=[("x", arr(shape, gen=g))], dtypes={"T": dts})
    # TensorFlow 2.21's CPU Round kernel returns zeros for integer inputs
    # (tf.round never calls it for integers); the op is documented as the
    # identity there, which is what PDK computes, so x itself is the reference.
    case("Round", inputs=[("x", arr(shape, gen=halves()))], dtypes={"T": INT},
         reference=lambda x: x)
    case("LogicalNot", inputs=[("x", arr(shape, "bool"))])
    case("L2Loss", inputs=[("t", arr(shape))], dtypes={"T": FLOAT})
    for op in ("CheckNumerics", "CheckNumericsV2"):  # finite values: the pass-through
        case(op, inputs=[("tensor", arr(shape))], attrs={"message": "checked"},
             dtypes={"T": FLOAT})
    for op, (dts, g) in ACTIVATIONS.items():
        case(op, inputs=[("features", arr(shape, gen=g))], dtypes={"T": dts})
    for alpha in (0.2, 0.01, 1.5):
        case("LeakyRelu", inputs=[("features", shape)], attrs={"alpha": alpha},
             dtypes={"T": FLOAT})

for shape in UNARY_SHAPES:
    for op in ("IsFinite", "IsInf", "IsNan"):
        case(op, inputs=[("x", arr(shape, gen=specials()))], dtypes={"T": FLOAT})

# y / dy gradients of unary ops (their value domain: y from the forward op).
UNARY_GRADS = {
    "SqrtGrad": positive(),
    "RsqrtGrad": positive(),
    "ReciprocalGrad": nonzero(),
    "SigmoidGrad": uniform(0.0, 1.0),
    "TanhGrad": uniform(-1.0, 1.0),
}
ACT_GRADS = {                           # (gradients, features|outputs)
    "ReluGrad": ("features", DEFAULT),
    "Relu6Grad": ("features", uniform(-3, 9)),
    "EluGrad": ("outputs", uniform(-1.0, 5.0)),
    "SeluGrad": ("outputs", uniform(-1.7, 5.0)),
    "SoftplusGrad": ("features", uniform(-30, 30)),
    "SoftsignGrad": ("features", DEFAULT),
}
for shape in UNARY_SHAPES:
    for op, g in UNARY_GRADS.items():
        case(op, inputs=[("y", arr(shape, gen=g)), ("dy", shape)], dtypes={"T": FLOAT})
    for op, (second, g) in ACT_GRADS.items():
        case(op, inputs=[("gradients", shape), (second, arr(shape, gen=g))],
             dtypes={"T": FLOAT + INT if op in ("ReluGrad", "Relu6Grad") else FLOAT})
    for alpha in (0.2, 0.01):
        case("LeakyReluGrad", inputs=[("gradients", shape), ("features", shape)],
             attrs={"alpha": alpha}, dtypes={"T": FLOAT})

# Cast: every source x destination, values with fractions and sign changes.
for shape in ([3, 5], [], [0], [257, 1023]):
    case("Cast", inputs=[("x", arr(shape, gen=uniform(-100, 100)))], dtypes={
        "SrcT": FLOAT + INT + ["bool"] + SMALL_INT, "DstT": FLOAT + INT + ["bool", "int8", "int16"]})
    # Into uint8 from values it holds (TF's CPU has no one answer for a float out
    # of range; PDK saturates: test_kernels_cwise.py).
    case("Cast", inputs=[("x", arr(shape, gen=uniform(0, 255)))], dtypes={
        "SrcT": FLOAT + INT + ["bool", "uint8"], "DstT": ["uint8"]}, exact=True)
    # Truncate: rounding toward zero must match TF bit for bit (exact).
    case("Cast", inputs=[("x", arr(shape, gen=uniform(0, 200)))], attrs={"Truncate": True},
         dtypes={"SrcT": F32_64, "DstT": ["float16", "bfloat16"]}, exact=True)

# SelectV2 with broadcasting between condition, t and e.
for cs, ts, es in ([[3, 4], [3, 4], [3, 4]], [[], [5], [5]], [[3, 1], [1, 4], [3, 4]],
                   [[4], [3, 4], []], [[0, 2], [0, 2], [2]], [[257, 1023], [1023], [257, 1]]):
    case("SelectV2", inputs=[("condition", arr(cs, "bool")), ("t", ts), ("e", es)],
         dtypes={"T": ALL})

# Select (v1): condition of t's shape, a scalar, or a vector over t's rows.
for cs, ts in ([[3, 4], [3, 4]], [[], [5]], [[3], [3, 4]], [[2], [2, 3, 2]], [[0], [0, 2]],
               [[257], [257, 1023]]):
    case("Select", inputs=[("condition", arr(cs, "bool")), ("x", ts), ("y", ts)],
         dtypes={"T": ALL})

# AddN: 1..4 summands.
for shape in ([3, 4], [], [0], [7, 1, 3], [257, 1023]):
    for n in (3, 1, 2, 4):
        case("AddN", inputs=[("inputs", many(*[shape] * n))], dtypes={"T": FLOAT + INT})

# float32 sums over many elements: rtol 1e-4 / atol 1e-3 as in
# test_kernels_matmul_reduce.py (threaded tree reduction vs TF's: another
# summation order). 16-bit floats: TF's CPU reduces half/bfloat16 in float
# too but rounds per block differently; one 16-bit ulp at the result's scale.
RED_TOL = {"float32": (1e-4, 1e-3), "float16": (2e-3, 2e-2), "bfloat16": (1e-2, 1e-1)}

# ======================================================================
# NN (bias_add.cc, softmax.cc, xent.cc)
# ======================================================================

for vs, fmt in (([2, 3, 4], "NHWC"), ([5, 1], "NHWC"), ([0, 3], "NHWC"), ([2, 3, 4, 5], "NCHW"),
                ([2, 3, 4], "NCHW"), ([2, 3, 4, 5, 6], "NHWC"), ([2, 3, 4, 5, 6], "NCHW"),
                ([512, 1023], "NHWC")):
    c = vs[1] if fmt == "NCHW" else vs[-1]
    case("BiasAdd", inputs=[("value", vs), ("bias", [c])], attrs={"data_format": fmt},
         dtypes={"T": FLOAT + INT})
    # BiasAddGrad is a sum over all but the channel axis: RED_TOL, as reductions.
    case("BiasAddGrad", inputs=[("out_backprop", vs)], attrs={"data_format": fmt},
         dtypes={"T": FLOAT + INT}, tol=RED_TOL, reference=wide_reference("BiasAddGrad"))
    if fmt == "NHWC":
        case("BiasAddV1", inputs=[("value", vs), ("bias", [c])], dtypes={"T": FLOAT + INT})

for shape in ([3, 5], [7], [0, 4], [4, 0], [2, 3, 5], [1, 1], [512, 1001]):
    for op in ("Softmax", "LogSoftmax"):
        case(op, inputs=[("logits", arr(shape, gen=uniform(-10, 10)))], dtypes={"T": FLOAT})

for b, c in ((4, 5), (1, 1), (0, 3), (7, 1), (300, 1001)):
    case("SoftmaxCrossEntropyWithLogits",
         inputs=[("features", arr([b, c], gen=uniform(-10, 10))),
                 ("labels", arr([b, c], gen=distribution()))], dtypes={"T": FLOAT})
    case("SparseSoftmaxCrossEntropyWithLogits",
         inputs=[("features", arr([b, c], gen=uniform(-10, 10))),
                 ("labels", arr([b], "Tlabels", indices(c)))],
         dtypes={"T": FLOAT, "Tlabels": IDX})
# SoftmaxCrossEntropyWithLogits broadcasts labels against features.
case("SoftmaxCrossEntropyWithLogits", inputs=[("features", [4, 5]),
                                              ("labels", arr([1, 5], gen=distribution()))],
     dtypes={"T": FLOAT})

# ======================================================================
# MatMul, BatchMatMulV2 (matmul.cc), _PdkFusedMatMul (fused_matmul.cc)
# ======================================================================

# float32 products: rtol 1e-4 / atol 1e-4, as in test_kernels_matmul_reduce.py
# (OpenBLAS and TF's oneDNN/Eigen GEMM sum the K products in different orders).
MM_TOL = {"float32": (1e-4, 1e-4), "float16": (1e-2, 1e-2), "bfloat16": (2e-2, 5e-2)}
# K = 300 products of entries in [-5, 5]: sums up to ~300 whose float32 rounding
# is ~3e-4 absolute in any summation order (against the float64 product, the
# worst element of TF's CPU is 2.9e-4 off, PDK's 4.2e-4; 2026-12-01), so an
# element near 0 needs atol 1e-3.
MM_TOL_K300 = dict(MM_TOL, float32=(1e-4, 1e-3))



for (m, k, n), (ta, tb) in itertools.product(
        [(3, 4, 5), (1, 1, 1), (0, 4, 5), (3, 0, 5), (7, 13, 1), (33, 65, 17), (256, 300, 200)],
        [(False, False), (True, False), (False, True), (True, True)]):
    case("MatMul", inputs=[("a", [k, m] if ta else [m, k]), ("b", [n, k] if tb else [k, n])],
         attrs={"transpose_a": ta, "transpose_b": tb}, dtypes={"T": FLOAT + INT},
         tol=MM_TOL if k < 300 else MM_TOL_K300,
         reference=wide_reference("MatMul", narrow=("float32",), wide_dtype="float64"))

for (xs, ys), (ax, ay) in itertools.product(
        [([2, 3, 4], [2, 4, 5]), ([3, 4], [4, 5]), ([2, 1, 3, 4], [5, 4, 6]), ([0, 3, 4], [4, 2]),
         ([1, 3, 4], [6, 4, 5]), ([16, 64, 33], [16, 33, 65])],
        [(False, False), (True, False), (False, True), (True, True)]):
    def _t(s, adj):
        return s[:-2] + [s[-1], s[-2]] if adj else s
    case("BatchMatMulV2", inputs=[("x", _t(xs, ax)), ("y", _t(ys, ay))],
         attrs={"adj_x": ax, "adj_y": ay}, dtypes={"T": FLOAT + INT}, tol=MM_TOL)

# Einsum (einsum.cc): the GEMM path above, plus transposes, reductions,
# diagonals and "..." broadcasting (more in test_einsum_transformer.py).
# TF's CPU Einsum accumulates float16 in half (see wide_reference); PDK widens
# to float32 like its MatMul, so the 16-bit reference is TF's float32 Einsum
# rounded once (PDK matches it bit for bit on the shapes below).
for eq, shapes in [
        ("ij,jk->ik", ([3, 4], [4, 5])),
        ("bhqd,bhkd->bhqk", ([2, 3, 5, 4], [2, 3, 6, 4])),
        ("bhqk,bhkd->bhqd", ([2, 3, 5, 6], [2, 3, 6, 4])),
        ("abc,cd->abd", ([2, 3, 4], [4, 5])),
        ("...ij,...jk->...ik", ([2, 1, 3, 4], [5, 4, 6])),
        ("ab,bc->c", ([3, 4], [4, 5])),
        ("i,j->ij", ([3], [4])),
        ("i,i->", ([7], [7])),
        ("ij->ji", ([3, 4],)),
        ("ij->", ([3, 4],)),
        ("ii->i", ([4, 4],)),
        ("ij,jk->ik", ([0, 4], [4, 5])),
        ("ij,jk->ik", ([3, 0], [0, 5])),
        ("bij,bjk->kib", ([16, 33, 20], [16, 20, 17])),
        ("a->aa", ([5],)),                    # repeated output labels: a diagonal
        ("ab,bc->aaca", ([2, 3], [3, 4])),
        # Keras MultiHeadAttention's einsums: operands gathered as whole rows
        # (transposed GEMM operands where that keeps rows whole), the operands
        # swapped when the output has the second operand's free labels first.
        ("aecd,abcd->acbe", ([2, 5, 3, 4], [2, 6, 3, 4])),
        ("aecd,abcd->acbe", ([2, 5, 3, 2], [2, 6, 3, 2])),      # rows of 2: element gather
        ("acbe,aecd->abcd", ([2, 3, 6, 5], [2, 5, 3, 4])),
        ("acbe,abcd->aecd", ([2, 3, 6, 5], [2, 6, 3, 4])),
        ("abc,abde->cde", ([2, 5, 4], [2, 5, 3, 6])),
        ("aecdz,abcd->acbe", ([2, 5, 3, 4, 2], [2, 6, 3, 4]))]:  # z summed first
    case("Einsum", inputs=[("inputs", many(*shapes))], attrs={"equation": eq},
         dtypes={"T": FLOAT + INT}, tol=MM_TOL, reference=wide_reference("Einsum"))


def _fused_matmul(a, b, bias, activation="None", transpose_b=False, leakyrelu_alpha=0.2):
    """Calls PDK's own op, which tf.raw_ops does not know, through eager execute."""
    import tensorflow as tf
    from tensorflow.python.eager import context, execute
    attrs = ("T", tf.float32.as_datatype_enum, "transpose_b", transpose_b,
             "activation", activation, "leakyrelu_alpha", leakyrelu_alpha)
    return execute.execute(b"_PdkFusedMatMul", 1, inputs=[a, b, bias], attrs=attrs,
                           ctx=context.context())


def _fused_matmul_reference(a, b, bias, activation="None", transpose_b=False,
                            leakyrelu_alpha=0.2):
    """TF's CPU has no _PdkFusedMatMul: its reference is the pattern it replaces."""
    import tensorflow as tf
    y = tf.raw_ops.BiasAdd(value=tf.raw_ops.MatMul(a=a, b=b, transpose_b=transpose_b), bias=bias)
    if activation == "None":
        return y
    if activation == "LeakyRelu":
        return tf.raw_ops.LeakyRelu(features=y, alpha=leakyrelu_alpha)
    if activation in ("Tanh", "Sigmoid"):
        return getattr(tf.raw_ops, activation)(x=y)
    if activation in ("GeluExact", "GeluApproximate"):  # the subgraph the rewrite matches
        return tf.nn.gelu(y, approximate=activation == "GeluApproximate")
    return getattr(tf.raw_ops, activation)(features=y)


for (m, k, n), act, tb in itertools.product(
        [(3, 4, 5), (1, 1, 1), (0, 4, 3), (64, 200, 33)],
        ["Relu", "None", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid", "GeluExact",
         "GeluApproximate"], [False, True]):
    case("_PdkFusedMatMul",
         inputs=[("a", [m, k]), ("b", [n, k] if tb else [k, n]), ("bias", [n])],
         attrs={"activation": act, "transpose_b": tb, "leakyrelu_alpha": 0.3},
         dtypes={"T": ["float32"]}, tol=MM_TOL, run=_fused_matmul,
         reference=_fused_matmul_reference)

# ======================================================================
# Reductions (reduction_ops.cc), ArgMax/ArgMin, Cumsum/Cumprod, TopKV2
# ======================================================================

REDUCE_SHAPES = [                       # (shape, axis)
    ([3, 5], [1]), ([3, 5], [0]), ([3, 5], [0, 1]), ([], []), ([7], [0]), ([3, 5], []),
    ([0, 4], [0]), ([0, 4], [1]), ([2, 3, 4, 5], [1, 3]), ([2, 3, 4, 5], [-1]),
    ([2, 3, 4, 5], [0, 2]), ([513, 1023], [0]), ([513, 1023], [1]), ([513, 1023], [0, 1]),
]
for (shape, axis), keep in itertools.product(REDUCE_SHAPES, [False, True]):
    for op in ("Sum", "Mean", "Max", "Min"):
        case(op, inputs=[("input", shape), ("axis", const(axis, "Tidx"))],
             attrs={"keep_dims": keep}, dtypes={"T": NUMERIC, "Tidx": IDX}, tol=RED_TOL,
             reference=wide_reference("Sum") if op == "Sum" else None)
    for op in ("All", "Any"):
        case(op, inputs=[("input", arr(shape, "bool")), ("axis", const(axis, "Tidx"))],
             attrs={"keep_dims": keep}, dtypes={"Tidx": IDX})
    # Products of values near 1 (no overflow): floats in [0.5, 1.5], ints in {-1, 0, 1}.
    # 16-bit: against the float32 product rounded once (wide_reference): TF's
    # CPU rounds after every factor, and over 513 factors in [0.5, 1.5] that
    # drifted 0.35 % (float16) and 8.6 % (bfloat16) from PDK's float32 product
    # in one element of one draw (found when cases added before this one
    # changed its seed).
    case("Prod", inputs=[("input", shape), ("axis", const(axis, "Tidx"))],
         attrs={"keep_dims": keep}, dtypes={"T": FLOAT, "Tidx": IDX},
         gen=uniform(0.5, 1.5), tol=RED_TOL, reference=wide_reference("Prod"))
    if int(np.prod(shape)) <= 60:
        case("Prod", inputs=[("input", arr(shape, gen=discrete(-1, 2))),
                             ("axis", const(axis, "Tidx"))],
             attrs={"keep_dims": keep}, dtypes={"T": INT + SMALL_INT, "Tidx": IDX})

for shape, axis in (([3, 5], 1), ([3, 5], 0), ([7], 0), ([2, 3, 4], -1), ([2, 3, 4], 1),
                    ([0, 4], 1), ([513, 1023], 0), ([513, 1023], 1)):
    for op in ("ArgMax", "ArgMin"):
        # Discrete values: ties must resolve to the first index, as on TF's CPU.
        case(op, inputs=[("input", arr(shape, gen=discrete())), ("dimension", const(axis, "Tidx"))],
             dtypes={"T": NUMERIC, "output_type": IDX, "Tidx": IDX})

for (shape, axis), (excl, rev) in itertools.product(
        [([3, 5], 1), ([3, 5], 0), ([7], 0), ([0, 3], 1), ([2, 3, 4], -2),
         ([1025, 257], 0), ([257, 1025], 1)],
        [(False, False), (True, False), (False, True), (True, True)]):
    # float32 running sums: rtol 1e-5 is too tight over 1025 terms (different
    # order); the sums stay below ~50 in magnitude, so atol 1e-4 is 4 ulps.
    case("Cumsum", inputs=[("x", shape), ("axis", const(axis, "Tidx"))],
         attrs={"exclusive": excl, "reverse": rev}, dtypes={"T": NUMERIC, "Tidx": IDX},
         gen=uniform(-1, 1) if shape and max(shape) > 100 else DEFAULT,
         tol={"float32": (1e-5, 1e-4), "float16": (1e-2, 1e-2), "bfloat16": (2e-2, 1e-1)})
    case("Cumprod", inputs=[("x", shape), ("axis", const(axis, "Tidx"))],
         attrs={"exclusive": excl, "reverse": rev}, dtypes={"T": NUMERIC, "Tidx": IDX},
         gen=uniform(0.98, 1.02) if shape and max(shape) > 100 else discrete(-2, 3))

def _topk_rows_sorted(outputs):
    values, idx = outputs
    v = values.reshape(-1, values.shape[-1]) if values.size else values
    i = idx.reshape(-1, idx.shape[-1]) if idx.size else idx
    if values.size:
        order = np.array([np.lexsort((ii, -vv.astype(np.float64))) for vv, ii in zip(v, i)])
        v = np.take_along_axis(v, order, -1)
        i = np.take_along_axis(i, order, -1)
    return [v.reshape(values.shape), i.reshape(idx.shape)]


for shape, k, srt, g in (([3, 10], 4, True, DEFAULT), ([10], 10, True, DEFAULT),
                         ([3, 10], 0, True, DEFAULT), ([2, 3, 7], 3, True, discrete()),
                         ([3, 10], 4, False, DEFAULT), ([0, 5], 2, True, DEFAULT),
                         ([4, 1], 1, True, DEFAULT), ([64, 4099], 100, True, discrete(-50, 50))):
    # Ties (discrete values) must keep the lower index first, as TF's CPU does.
    # sorted=False leaves the order unspecified: both sides are compared
    # after sorting each row by (value descending, index ascending).
    case("TopKV2", inputs=[("input", arr(shape, gen=g)), ("k", const(k, "Tk"))],
         attrs={"sorted": srt}, dtypes={"T": NUMERIC, "index_type": IDX, "Tk": IDX},
         canonical=None if srt else _topk_rows_sorted)

def _in_top_k_targets(dt, rng, prev):
    """Class indices with some out of range (-1, C): those rows are false."""
    b, c = prev["predictions"].shape
    return rng.integers(-1, c + 1, size=(b,)).astype(dt["T"])


def _nonfinite_row(dt, rng, prev):
    """Predictions with a NaN and an inf in two rows: those rows are false."""
    p = rng.integers(0, 4, size=(6, 5)).astype(np.float32)
    p[1, 3], p[4, 0] = np.nan, np.inf
    return p


for pred, k in ((arr([8, 6], "float32", gen=discrete(0, 4)), 2),   # ties
                (arr([8, 6], "float32", gen=discrete(0, 4)), 0),
                (arr([16, 1000], "float32"), 5),
                (computed(_nonfinite_row), 3),
                (arr([0, 4], "float32"), 1)):
    case("InTopKV2", inputs=[("predictions", pred), ("targets", computed(_in_top_k_targets)),
                             ("k", const(k, "T"))], dtypes={"T": IDX})

# ======================================================================
# Conv2D, DepthwiseConv2dNative, pooling (conv2d.cc, depthwise_conv2d.cc, pooling.cc)
# ======================================================================

# float32: rtol 1e-4 / atol 1e-4 as in test_kernels_conv_pool.py (im2col +
# OpenBLAS sums in another order than TF's oneDNN / Eigen kernels).
CONV_TOL = {"float32": (1e-4, 1e-4), "float16": (1e-2, 1e-2), "bfloat16": (2e-2, 5e-2)}
PADS = {"SAME": [], "VALID": [], "EXPLICIT": [0, 0, 1, 2, 2, 0, 0, 0]}
CONV = [  # (input NHWC, kernel hw, out channels (depth multiplier for depthwise), stride, padding, dilation)
    ([1, 5, 5, 2], 3, 3, 1, "SAME", 1),
    ([2, 9, 7, 4], 3, 5, 2, "VALID", 1),
    ([2, 9, 7, 4], 1, 3, 1, "VALID", 1),
    ([2, 9, 7, 4], 3, 2, 1, "EXPLICIT", 1),
    ([2, 9, 7, 4], 3, 2, 1, "SAME", 2),
    ([1, 8, 8, 3], 5, 2, 3, "SAME", 1),
    ([1, 1, 1, 1], 1, 1, 1, "VALID", 1),
    ([4, 32, 32, 16], 3, 32, 1, "SAME", 1),
]


def _like_forward(op, attrs, **args):
    """An input shaped like the output of the forward ``op`` on /CPU:0 applied to
    earlier inputs (``args``: forward argument -> input name): out_backprop."""
    def fn(dt, rng, prev):
        import tensorflow as tf
        with tf.device("/CPU:0"):
            # float32 copies: only the shape matters (TF's CPU lacks some float64 variants)
            kw = {k: tf.constant(prev[v].astype(np.float32)) for k, v in args.items()}
            if op == "DepthwiseConv2dNative" and list(attrs.get("dilations", [1])) != [1, 1, 1, 1]:
                # TF's CPU kernel refuses dilations; tf.nn's space-to-batch form takes them
                y = tf.nn.depthwise_conv2d(kw["input"], kw["filter"], attrs["strides"],
                                           attrs["padding"], dilations=attrs["dilations"][1:3])
            else:
                y = getattr(tf.raw_ops, op)(**kw, **attrs)
        return rng.uniform(-1, 1, size=y.shape).astype(prev[next(iter(args.values()))].dtype)
    return fn


def _space_to_batch_reference(fwd):
    """Dilated convolutions on /CPU:0 through tf.nn.with_space_to_batch (the
    formulation tf.nn.depthwise_conv2d uses), with gradients from a tape. TF's
    CPU kernels are no reference there: DepthwiseConv2dNative's backprops
    ignore `dilations` (see test_kernels_conv_pool.py), float64 Conv2D
    backprops and float64 DepthwiseConv2dNative reject them."""
    import tensorflow as tf

    def conv(x, w, padding, rate):
        def op(inp, num_spatial_dims, padding):
            if fwd == "Conv2D":
                return tf.nn.conv2d(inp, w, strides=1, padding=padding)
            return tf.nn.depthwise_conv2d(inp, w, strides=[1, 1, 1, 1], padding=padding)
        return tf.nn.with_space_to_batch(x, dilation_rate=[rate, rate], padding=padding, op=op,
                                         filter_shape=w.shape[:2])

    def ref(input=None, filter=None, out_backprop=None, input_sizes=None, filter_sizes=None,
            strides=None, padding=None, dilations=None, **_):
        assert list(strides) == [1, 1, 1, 1]
        rate = dilations[1]
        if input_sizes is not None:
            x = tf.zeros(input_sizes.numpy(), out_backprop.dtype)
            w = filter
        elif filter_sizes is not None:
            x = input
            w = tf.zeros(filter_sizes.numpy(), out_backprop.dtype)
        else:
            return conv(input, filter, padding, rate)
        with tf.GradientTape() as tape:
            tape.watch([x, w])
            y = conv(x, w, padding, rate)
        return tape.gradient(y, x if input_sizes is not None else w, output_gradients=out_backprop)
    return ref


# Inputs named "_x" are auxiliary: they shape a computed input and are not passed to the op.
for x, k, oc, s, pad, dil in CONV:
    conv = dict(strides=[1, s, s, 1], padding=pad, explicit_paddings=PADS[pad],
                dilations=[1, dil, dil, 1])
    for fwd, w in (("Conv2D", [k, k, x[3], oc]), ("DepthwiseConv2dNative", [k, k, x[3], min(oc, 2)])):
        ref = _space_to_batch_reference(fwd) if dil > 1 else None
        case(fwd, inputs=[("input", x), ("filter", w)], attrs=conv, dtypes={"T": FLOAT},
             tol=CONV_TOL, gen=uniform(-1, 1), reference=ref)
        # Backprops: 16-bit against float32 rounded (wide_reference's comment).
        case(fwd + "BackpropInput", inputs=[
            ("input_sizes", const(x, "int32")), ("filter", w), ("_x", x),
            ("out_backprop", computed(_like_forward(fwd, conv, input="_x", filter="filter")))],
            attrs=conv, dtypes={"T": FLOAT}, tol=CONV_TOL, gen=uniform(-1, 1),
            reference=wide_reference(ref or fwd + "BackpropInput"))
        case(fwd + "BackpropFilter", inputs=[
            ("input", x), ("filter_sizes", const(w, "int32")), ("_w", w),
            ("out_backprop", computed(_like_forward(fwd, conv, input="input", filter="_w")))],
            attrs=conv, dtypes={"T": FLOAT}, tol=CONV_TOL, gen=uniform(-1, 1),
            reference=wide_reference(ref or fwd + "BackpropFilter"))

def _fused_conv(input, filter, args, **attrs):
    """Calls PDK's own _PdkFusedConv2D, which tf.raw_ops does not know, through
    eager execute."""
    import tensorflow as tf
    from tensorflow.python.eager import context, execute
    flat = ["T", tf.float32.as_datatype_enum, "num_args", len(args)]
    for k, v in attrs.items():
        flat += [k, v]
    return execute.execute(b"_PdkFusedConv2D", 1, inputs=[input, filter] + list(args),
                           attrs=tuple(flat), ctx=context.context())


def _fused_conv_reference(input, filter, args, strides, padding, explicit_paddings, dilations,
                          depthwise, normalization, has_side_input, epsilon, activation,
                          leakyrelu_alpha):
    """TF's CPU has no _PdkFusedConv2D: its reference is the pattern it replaces."""
    import tensorflow as tf
    conv = dict(strides=strides, padding=padding, explicit_paddings=explicit_paddings,
                dilations=dilations)
    if depthwise:
        y = tf.raw_ops.DepthwiseConv2dNative(input=input, filter=filter, **conv)
    else:
        y = tf.raw_ops.Conv2D(input=input, filter=filter, **conv)
    if normalization == "BiasAdd":
        y = tf.raw_ops.BiasAdd(value=y, bias=args[0])
    else:
        y = tf.raw_ops.FusedBatchNormV3(x=y, scale=args[0], offset=args[1], mean=args[2],
                                        variance=args[3], epsilon=epsilon,
                                        is_training=False)[0]
    if has_side_input:
        y = tf.raw_ops.AddV2(x=y, y=args[-1])
    if activation == "None":
        return y
    if activation == "LeakyRelu":
        return tf.raw_ops.LeakyRelu(features=y, alpha=leakyrelu_alpha)
    if activation in ("Tanh", "Sigmoid"):
        return getattr(tf.raw_ops, activation)(x=y)
    return getattr(tf.raw_ops, activation)(features=y)


# _PdkFusedConv2D (fused_conv2d.cc): the CONV geometries (dilations only where
# TF's CPU depthwise kernel accepts them: 1), each normalization, with and
# without a side input (of the output's shape, or [1, 1, 1, OC] broadcast into
# it), the activations taking turns.
_FUSED_ACTS = ["Relu", "None", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid"]
for i, ((x, k, oc, s, pad, dil), depthwise) in enumerate(
        itertools.product(CONV, [False, True])):
    if depthwise and dil > 1:
        continue
    m = min(oc, 2)
    out_c = x[3] * m if depthwise else oc
    w = [k, k, x[3], m if depthwise else oc]
    conv = dict(strides=[1, s, s, 1], padding=pad, explicit_paddings=PADS[pad],
                dilations=[1, dil, dil, 1], depthwise=depthwise)
    for norm, side in itertools.product(["BiasAdd", "FusedBatchNorm"], [None, "same", "chan"]):
        act = _FUSED_ACTS[(i + len(str(norm)) + len(str(side))) % len(_FUSED_ACTS)]
        per_c = [arr([out_c])] if norm == "BiasAdd" else [
            arr([out_c]), arr([out_c]), arr([out_c]), arr([out_c], gen=positive(0.1, 2.0))]
        side_spec = []
        if side == "same":
            side_spec = [computed(_like_forward("DepthwiseConv2dNative" if depthwise else "Conv2D",
                                                {kk: v for kk, v in conv.items() if kk != "depthwise"},
                                                input="input", filter="filter"))]
        elif side == "chan":
            side_spec = [arr([1, 1, 1, out_c])]
        case("_PdkFusedConv2D",
             inputs=[("input", x), ("filter", w), ("args", many(*(per_c + side_spec)))],
             attrs=dict(conv, normalization=norm, has_side_input=side is not None,
                        epsilon=0.001, activation=act, leakyrelu_alpha=0.3),
             dtypes={"T": ["float32"]}, tol=CONV_TOL, gen=uniform(-1, 1), run=_fused_conv,
             reference=_fused_conv_reference)

def _maxpool_grad_relu_grad(orig_input, orig_output, grad, ksize, strides, padding):
    """Calls PDK's own op, which tf.raw_ops does not know, through eager execute."""
    import tensorflow as tf
    from tensorflow.python.eager import context, execute
    attrs = ("T", orig_input.dtype.as_datatype_enum, "ksize", ksize, "strides", strides,
             "padding", padding)
    return execute.execute(b"_PdkMaxPoolGradReluGrad", 1,
                           inputs=[orig_input, orig_output, grad], attrs=attrs,
                           ctx=context.context())


def _maxpool_grad_relu_grad_reference(orig_input, orig_output, grad, ksize, strides, padding):
    """TF's CPU has no _PdkMaxPoolGradReluGrad: its reference is the pattern it replaces."""
    import tensorflow as tf
    r = tf.raw_ops.MaxPoolGrad(orig_input=orig_input, orig_output=orig_output, grad=grad,
                               ksize=ksize, strides=strides, padding=padding)
    return tf.raw_ops.ReluGrad(gradients=r, features=orig_input)


POOL = [  # (input NHWC, window, stride, padding)
    ([1, 4, 4, 2], 2, 2, "VALID"),
    ([2, 9, 7, 3], 3, 2, "SAME"),
    ([2, 9, 7, 3], 3, 1, "VALID"),
    ([2, 9, 7, 3], 2, 3, "SAME"),
    ([1, 1, 1, 1], 1, 1, "VALID"),
    ([4, 32, 32, 16], 3, 2, "SAME"),
]
for x, kk, s, pad in POOL:
    pool = dict(ksize=[1, kk, kk, 1], strides=[1, s, s, 1], padding=pad)
    case("MaxPool", inputs=[("input", x)], attrs=pool, dtypes={"T": FLOAT}, exact=True)
    case("AvgPool", inputs=[("value", x)], attrs=pool, dtypes={"T": FLOAT})
    case("MaxPoolV2", inputs=[("input", x), ("ksize", const(pool["ksize"])),
                              ("strides", const(pool["strides"]))], attrs={"padding": pad},
         dtypes={"T": FLOAT}, exact=True)

    def _maxpool_out(dt, rng, prev, pool=pool):
        import tensorflow as tf
        with tf.device("/CPU:0"):
            return tf.raw_ops.MaxPool(input=tf.constant(prev["orig_input"]), **pool).numpy()

    def _pool_grad(dt, rng, prev, pool=pool, key="orig_output"):
        return rng.integers(1, 100, size=prev[key].shape).astype(prev[key].dtype)

    # Discrete inputs so windows have tied maxima: the gradient goes to the
    # first maximum in row-major order, as on TF's CPU.
    for op in ("MaxPoolGrad", "MaxPoolGradV2"):
        extra = ([("ksize", const(pool["ksize"])), ("strides", const(pool["strides"]))]
                 if op == "MaxPoolGradV2" else [])
        case(op, inputs=[("orig_input", arr(x, gen=discrete(0, 3))),
                         ("orig_output", computed(_maxpool_out)),
                         ("grad", computed(_pool_grad))] + extra,
             attrs={"padding": pad} if extra else pool, dtypes={"T": FLOAT})
    case("_PdkMaxPoolGradReluGrad",
         inputs=[("orig_input", arr(x, gen=discrete(0, 3))),
                 ("orig_output", computed(_maxpool_out)), ("grad", computed(_pool_grad))],
         attrs=pool, dtypes={"T": FLOAT}, exact=True, run=_maxpool_grad_relu_grad,
         reference=_maxpool_grad_relu_grad_reference)

    def _avgpool_grad(dt, rng, prev, pool=pool, x=x):
        import tensorflow as tf
        with tf.device("/CPU:0"):
            shape = tf.raw_ops.AvgPool(value=tf.zeros(x), **pool).shape
        return rng.uniform(-1, 1, size=shape).astype(next(iter(dt.values())))

    case("AvgPoolGrad", inputs=[("orig_input_shape", const(x, "int32")),
                                ("grad", computed(_avgpool_grad))], attrs=pool,
         dtypes={"T": FLOAT})

POOL3D = [  # (input NDHWC, window, stride, padding)
    ([1, 4, 4, 4, 2], [2, 2, 2], [2, 2, 2], "VALID"),
    ([2, 5, 7, 6, 3], [3, 3, 2], [2, 1, 2], "SAME"),
    ([2, 5, 7, 6, 3], [2, 3, 3], [1, 2, 2], "VALID"),
    ([1, 3, 4, 5, 20], [3, 2, 3], [3, 3, 2], "SAME"),
    ([1, 1, 1, 1, 1], [1, 1, 1], [1, 1, 1], "VALID"),
]
POOL3D_T = ["float32", "bfloat16"]  # TensorFlow's CPU kernels' types
for x, kk, s, pad in POOL3D:
    pool = dict(ksize=[1, *kk, 1], strides=[1, *s, 1], padding=pad)
    case("MaxPool3D", inputs=[("input", x)], attrs=pool, dtypes={"T": POOL3D_T}, exact=True)
    case("AvgPool3D", inputs=[("input", x)], attrs=pool, dtypes={"T": POOL3D_T})

    def _maxpool3d_out(dt, rng, prev, pool=pool):
        import tensorflow as tf
        with tf.device("/CPU:0"):
            return tf.raw_ops.MaxPool3D(input=tf.constant(prev["orig_input"]), **pool).numpy()

    def _pool3d_grad(dt, rng, prev, x=x, pool=pool):
        import tensorflow as tf
        with tf.device("/CPU:0"):
            shape = tf.raw_ops.AvgPool3D(input=tf.zeros(x), **pool).shape
        return rng.uniform(-1, 1, size=shape).astype(next(iter(dt.values())))

    # Discrete inputs so windows have tied maxima: every tie takes the
    # gradient, as on TF's CPU (|x - max| < 1e-5).
    for dt in POOL3D_T:  # TInput == T, the CPU's only combinations
        case("MaxPool3DGrad", inputs=[("orig_input", arr(x, gen=discrete(0, 3))),
                                      ("orig_output", computed(_maxpool3d_out)),
                                      ("grad", computed(_pool3d_grad))],
             attrs=pool, dtypes={"T": [dt], "TInput": [dt]})
    case("AvgPool3DGrad", inputs=[("orig_input_shape", const(x, "int32")),
                                  ("grad", computed(_pool3d_grad))], attrs=pool,
         dtypes={"T": POOL3D_T})

# ======================================================================
# ResizeBilinear, ResizeNearestNeighbor, ResizeBicubic, ResizeArea,
# ScaleAndTranslate (src/kernels/image/resize_*.cc, scale_and_translate.cc)
# ======================================================================

RESIZE = [  # (images NHWC, [new_height, new_width])
    ([1, 4, 5, 2], [8, 10]),   # upsampling
    ([2, 7, 6, 3], [3, 4]),    # downsampling
    ([1, 5, 5, 1], [5, 5]),    # same size
    ([2, 3, 9, 4], [7, 2]),    # mixed
    ([1, 1, 1, 3], [4, 4]),    # one pixel
]
for (x, size), (ac, hp) in itertools.product(RESIZE, [(False, False), (True, False),
                                                      (False, True)]):
    attrs = dict(align_corners=ac, half_pixel_centers=hp)
    case("ResizeBilinear", inputs=[("images", x), ("size", const(size, "int32"))], attrs=attrs,
         dtypes={"T": FLOAT + ["uint8"]}, gen=uniform(0, 100))
    # float64: TF 2.21's CPU result differs from the float64 sum of its own
    # terms by up to ~1e-7 relative (a 1x1 image: 12.56130035 against
    # 12.5612995); PDK's is that sum (resize_bilinear.cc).
    case("ResizeBilinearGrad",
         inputs=[("grads", arr([x[0], *size, x[3]], "float32")), ("original_image", x)],
         attrs=attrs, dtypes={"T": FLOAT}, tol={"float64": (1e-6, 1e-6)})
    # ResizeNearestNeighbor (resize_nearest_neighbor.cc): copies, and sums in
    # TensorFlow's order, bit for bit.
    case("ResizeNearestNeighbor", inputs=[("images", x), ("size", const(size, "int32"))],
         attrs=attrs, dtypes={"T": FLOAT + ["uint8"]}, gen=uniform(0, 100), exact=True)
    case("ResizeNearestNeighborGrad",
         inputs=[("grads", [x[0], *size, x[3]]), ("size", const(x[1:3], "int32"))],
         attrs=attrs, dtypes={"T": FLOAT}, exact=True)
    # ResizeBicubic (resize_bicubic.cc): TensorFlow's table, taps and order of
    # the sums, bit for bit; ResizeArea (resize_area.cc) likewise. TensorFlow's
    # CPU has the bicubic gradient for float32 and float64 only.
    case("ResizeBicubic", inputs=[("images", x), ("size", const(size, "int32"))],
         attrs=attrs, dtypes={"T": FLOAT + ["uint8"]}, gen=uniform(0, 100), exact=True)
    case("ResizeBicubicGrad",
         inputs=[("grads", arr([x[0], *size, x[3]], "float32")), ("original_image", x)],
         attrs=attrs, dtypes={"T": ["float32", "float64"]}, exact=True)
    if not hp:  # ResizeArea has align_corners only
        case("ResizeArea", inputs=[("images", x), ("size", const(size, "int32"))],
             attrs=dict(align_corners=ac), dtypes={"T": FLOAT + ["uint8"]},
             gen=uniform(0, 100), exact=True)


# ScaleAndTranslate (scale_and_translate.cc): every filter, with and without
# antialiasing, down and up, a translation, and a sample grid that leaves
# the image (empty spans); TensorFlow's CPU has the gradient for float32 only.
SCALE_AND_TRANSLATE = [  # (images NHWC, size, scale, translation)
    ([2, 9, 7, 3], [4, 3], [4 / 9, 3 / 7], [0.0, 0.0]),    # downsampling
    ([1, 4, 5, 2], [9, 11], [9 / 4, 11 / 5], [0.0, 0.0]),  # upsampling
    ([1, 6, 6, 1], [6, 6], [1.3, 0.7], [-1.5, 2.0]),      # scaled, shifted, partly outside
]
for (x, size, scale, shift), (kernel, aa) in itertools.product(
        SCALE_AND_TRANSLATE,
        itertools.product(["lanczos1", "lanczos3", "lanczos5", "gaussian", "box", "triangle",
                           "keyscubic", "mitchellcubic"], [True, False])):
    attrs = dict(kernel_type=kernel, antialias=aa)
    geometry = [("scale", const(scale, "float32")), ("translation", const(shift, "float32"))]
    case("ScaleAndTranslate",
         inputs=[("images", x), ("size", const(size, "int32"))] + geometry, attrs=attrs,
         dtypes={"T": FLOAT + ["uint8"]}, gen=uniform(0, 100), exact=True)
    case("ScaleAndTranslateGrad",
         inputs=[("grads", arr([x[0], *size, x[3]], "float32")), ("original_image", x)]
         + geometry, attrs=attrs, dtypes={"T": ["float32"]}, exact=True)


# ======================================================================
# ImageProjectiveTransformV3 / V2 (src/kernels/image/image_projective_transform.cc)
# ======================================================================

def _affine(angle=0.0, zoom=1.0, shift=(0.0, 0.0), persp=(0.0, 0.0), h=6, w=7):
    """The 8 projective parameters mapping output (x, y) to input, as Keras's
    RandomRotation / RandomZoom build them: about the image centre."""
    cx, cy = (w - 1) / 2, (h - 1) / 2
    c, s = np.cos(angle) / zoom, np.sin(angle) / zoom
    return [c, -s, cx - c * cx + s * cy + shift[0], s, c, cy - s * cx - c * cy + shift[1],
            persp[0], persp[1]]


PROJECTIVE = {  # name -> transforms [B or 1, 8]
    "rotation": [_affine(0.7), _affine(-2.1)],
    "zoom out, shift": [_affine(zoom=0.6, shift=(1.5, -2.25))],
    "zoom in": [_affine(zoom=1.7), _affine(angle=0.3, zoom=1.3)],
    "far outside": [_affine(shift=(-30.5, 17.0)), _affine(shift=(19.25, -40.0))],
    "perspective": [_affine(0.2, persp=(0.02, -0.03)), _affine(persp=(-0.5, 0.0))],
}
for (name, tr), interp, mode in itertools.product(
        PROJECTIVE.items(), ["NEAREST", "BILINEAR"], ["REFLECT", "WRAP", "CONSTANT", "NEAREST"]):
    out = [6, 7] if name != "zoom in" else [4, 9]
    case("ImageProjectiveTransformV3",
         inputs=[("images", [2, 6, 7, 3]), ("transforms", const(tr, "float32")),
                 ("output_shape", const(out, "int32")), ("fill_value", const(2.5, "float32"))],
         attrs=dict(interpolation=interp, fill_mode=mode),
         dtypes={"dtype": FLOAT + ["uint8"] + INT}, gen=uniform(0, 100), exact=True)
for interp in ["NEAREST", "BILINEAR"]:
    case("ImageProjectiveTransformV2",
         inputs=[("images", [2, 6, 7, 3]), ("transforms", const(PROJECTIVE["rotation"], "float32")),
                 ("output_shape", const([5, 8], "int32"))],
         attrs=dict(interpolation=interp, fill_mode="REFLECT"),
         dtypes={"dtype": FLOAT + ["uint8"] + INT}, gen=uniform(0, 100), exact=True)


# ======================================================================
# RGBToHSV, HSVToRGB (src/kernels/image/rgb_to_hsv.cc)
# ======================================================================

def _quarters(shape, dt, rng):
    """Channel values in {0, 0.25, 0.5, 0.75, 1}: equal channels (every branch
    of the hue formula, a zero range) on purpose."""
    return (rng.integers(0, 5, size=shape) / 4).astype(dt)


for op in ("RGBToHSV", "HSVToRGB"):
    case(op, inputs=[("images", [2, 5, 3])], dtypes={"T": FLOAT}, gen=uniform(0, 1), exact=True)
    case(op, inputs=[("images", [4, 4, 4, 3])], dtypes={"T": FLOAT}, gen=_quarters, exact=True)
    case(op, inputs=[("images", [3])], dtypes={"T": FLOAT}, gen=uniform(-0.5, 1.5), exact=True)


# ======================================================================
# Conv2D in NCHW, Conv3D (conv2d.cc data_format "NCHW", conv3d.cc)
# ======================================================================

def _nchw_reference(op):
    """TF's CPU kernels have no NCHW Conv2D: the NHWC op (wide_reference, so
    16-bit backprops are compared with float32 rounded once) on operands
    transposed to NHWC, the result transposed back."""
    wide = wide_reference(op)

    def ref(**kw):
        import tensorflow as tf
        perm = (0, 2, 3, 1)  # NCHW index of each NHWC dimension
        kw = dict(kw, data_format="NHWC")
        for a in ("strides", "dilations"):
            kw[a] = [kw[a][i] for i in perm]
        pads = list(kw.get("explicit_paddings") or [])
        if pads:
            kw["explicit_paddings"] = [p for i in perm for p in pads[2 * i:2 * i + 2]]
        for a in ("input", "out_backprop"):
            if kw.get(a) is not None and kw[a].shape.rank == 4:
                kw[a] = tf.transpose(kw[a], perm)
        if kw.get("input_sizes") is not None:
            kw["input_sizes"] = tf.gather(kw["input_sizes"], perm)
        out = wide(**kw)
        return out if op == "Conv2DBackpropFilter" else tf.transpose(out, (0, 3, 1, 2))
    return ref


def _random_of_shape(shape):
    def fn(dt, rng, prev):
        return rng.uniform(-1, 1, size=shape).astype(next(iter(dt.values())))
    return fn


def _conv_out_size(size, k, s, pad, dil, before=0, after=0):
    eff = (k - 1) * dil + 1
    if pad == "SAME":
        return (size + s - 1) // s
    return (size + before + after - eff + s) // s


def _conv_and_backprops(ops, x, w, dy, conv, reference, sizes="int32"):
    """Cases for a convolution op and its two backprops on one geometry: ``ops``
    = (forward, backprop input, backprop filter); x, w, dy the shapes of the
    input, filter and out_backprop; ``reference(op)`` each case's reference;
    ``sizes`` the dtype of input_sizes ("Tshape": both IDX)."""
    fwd, bprop_input, bprop_filter = ops
    common = dict(attrs=conv, tol=CONV_TOL, gen=uniform(-1, 1))
    case(fwd, inputs=[("input", x), ("filter", w)], dtypes={"T": FLOAT},
         reference=reference(fwd), **common)
    case(bprop_input, inputs=[
        ("input_sizes", const(x, sizes)), ("filter", w),
        ("out_backprop", computed(_random_of_shape(dy)))],
        dtypes={"T": FLOAT, "Tshape": IDX} if sizes == "Tshape" else {"T": FLOAT},
        reference=reference(bprop_input), **common)
    case(bprop_filter, inputs=[
        ("input", x), ("filter_sizes", const(w, "int32")),
        ("out_backprop", computed(_random_of_shape(dy)))],
        dtypes={"T": FLOAT}, reference=reference(bprop_filter), **common)


CONV2D_OPS = ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter")
CONV3D_OPS = ("Conv3D", "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2")


CONV_NCHW = [  # (input NCHW, kernel hw, out channels, stride, padding, dilation)
    ([1, 2, 5, 5], 3, 3, 1, "SAME", 1),
    ([2, 4, 9, 7], 3, 5, 2, "VALID", 1),
    ([2, 4, 9, 7], 3, 2, 1, "EXPLICIT", 1),
    ([2, 4, 9, 7], 1, 3, 1, "VALID", 1),
]
for x, k, oc, s, pad, dil in CONV_NCHW:
    ep = [0, 0, 0, 0, 1, 2, 2, 0] if pad == "EXPLICIT" else []
    conv = dict(strides=[1, 1, s, s], padding=pad, explicit_paddings=ep,
                dilations=[1, 1, dil, dil], data_format="NCHW")
    w = [k, k, x[1], oc]
    dy = [x[0], oc, _conv_out_size(x[2], k, s, pad, dil, *(ep[4:6] or [0, 0])),
          _conv_out_size(x[3], k, s, pad, dil, *(ep[6:8] or [0, 0]))]
    _conv_and_backprops(CONV2D_OPS, x, w, dy, conv, _nchw_reference)

CONV3D = [  # (input NDHWC, kernel dhw, out channels, stride, padding)
    ([1, 3, 4, 5, 2], (2, 2, 2), 3, 1, "SAME"),
    ([2, 5, 6, 7, 3], (3, 3, 3), 4, 2, "VALID"),
    ([2, 5, 6, 7, 3], (3, 1, 2), 2, 1, "SAME"),
    ([1, 1, 1, 1, 1], (1, 1, 1), 1, 1, "VALID"),
    ([2, 8, 16, 16, 8], (3, 3, 3), 16, 1, "SAME"),
]
for x, k, oc, s, pad in CONV3D:
    conv = dict(strides=[1, s, s, s, 1], padding=pad)
    w = list(k) + [x[4], oc]
    dy = [x[0]] + [_conv_out_size(x[1 + i], k[i], s, pad, 1) for i in range(3)] + [oc]
    _conv_and_backprops(CONV3D_OPS, x, w, dy, conv, wide_reference, sizes="Tshape")

# ======================================================================
# Grouped Conv2D (conv2d.cc: input depth = groups x filter in_depth), Conv3D NCDHW
# ======================================================================

def _xla_reference(op):
    """TF's CPU kernels refuse grouped Conv2D backprops ("Gradients for grouped
    convolutions are not supported on CPU") and NCHW / NCDHW: the same op
    compiled by XLA on the CPU (tf.function(jit_compile=True) runs grouped
    convolutions), computed in float64 and rounded to the case's dtype.
    test_kernels_conv_pool.py checks this reference against per-group
    tf.nn.conv2d calls concatenated."""
    def ref(**kw):
        import tensorflow as tf
        low, wide = None, {}
        for k, v in kw.items():
            if k in ("input_sizes", "filter_sizes"):  # XLA needs them as constants
                v = [int(d) for d in v.numpy()]
            elif isinstance(v, tf.Tensor) and v.dtype.is_floating:
                low, v = v.dtype, tf.cast(v, tf.float64)
            wide[k] = v
        out = tf.function(lambda **a: getattr(tf.raw_ops, op)(**a), jit_compile=True)(**wide)
        return tf.cast(out, low)
    return ref


def _to_channels_first(shape):
    return [shape[0], shape[-1]] + list(shape[1:-1])


CONV_GROUPED = [  # (input NHWC, kernel hw, out channels, groups, stride, padding, dilation)
    ([1, 6, 6, 4], 3, 4, 2, 1, "SAME", 1),
    ([2, 9, 7, 6], 3, 6, 3, 2, "VALID", 1),
    ([2, 9, 7, 4], 3, 8, 4, 1, "SAME", 2),      # groups = C: depthwise-like, multiplier 2
    ([2, 9, 7, 4], 3, 4, 2, 1, "EXPLICIT", 1),
    ([2, 8, 8, 8], 1, 8, 4, 1, "VALID", 1),
    ([2, 8, 8, 6], 5, 6, 6, 2, "SAME", 1),      # groups = C = F
    ([4, 16, 16, 32], 3, 32, 4, 1, "SAME", 1),
]
for (x, k, oc, groups, s, pad, dil), fmt in itertools.product(CONV_GROUPED, ["NHWC", "NCHW"]):
    nchw = fmt == "NCHW"
    ep = [0, 0, 1, 2, 2, 0, 0, 0] if pad == "EXPLICIT" else []
    if nchw and ep:
        ep = [0, 0, 0, 0] + ep[2:6]
    spatial = [1, s, s, 1] if not nchw else [1, 1, s, s]
    dils = [1, dil, dil, 1] if not nchw else [1, 1, dil, dil]
    conv = dict(strides=spatial, padding=pad, explicit_paddings=ep, dilations=dils,
                data_format=fmt)
    w = [k, k, x[3] // groups, oc]
    pads = [0, 0, 1, 2, 2, 0, 0, 0] if pad == "EXPLICIT" else [0] * 8
    dy = [x[0], _conv_out_size(x[1], k, s, pad, dil, *pads[2:4]),
          _conv_out_size(x[2], k, s, pad, dil, *pads[4:6]), oc]
    xs, dys = (_to_channels_first(x), _to_channels_first(dy)) if nchw else (x, dy)
    _conv_and_backprops(CONV2D_OPS, xs, w, dys, conv, _xla_reference)

# _PdkFusedConv2D of a grouped Conv2D (what conv_fusion makes of Keras's
# Conv2D(groups=g) + bias): TF's CPU Conv2D computes grouped forwards (Eigen),
# so _fused_conv_reference applies.
for x, k, oc, groups, s, pad, dil in CONV_GROUPED[:3]:
    conv = dict(strides=[1, s, s, 1], padding=pad, explicit_paddings=[],
                dilations=[1, dil, dil, 1], depthwise=False)
    case("_PdkFusedConv2D",
         inputs=[("input", x), ("filter", [k, k, x[3] // groups, oc]),
                 ("args", many(arr([oc])))],
         attrs=dict(conv, normalization="BiasAdd", has_side_input=False, epsilon=0.001,
                    activation="Relu", leakyrelu_alpha=0.3),
         dtypes={"T": ["float32"]}, tol=CONV_TOL, gen=uniform(-1, 1), run=_fused_conv,
         reference=_fused_conv_reference)


def _ncdhw_reference(op):
    """TF's CPU Conv3D kernels are NDHWC-only: the NDHWC op (wide_reference) on
    operands transposed to NDHWC, the result transposed back."""
    wide = wide_reference(op)

    def ref(**kw):
        import tensorflow as tf
        perm = (0, 2, 3, 4, 1)  # NCDHW index of each NDHWC dimension
        kw = dict(kw, data_format="NDHWC")
        for a in ("strides", "dilations"):
            if kw.get(a) is not None:
                kw[a] = [kw[a][i] for i in perm]
        for a in ("input", "out_backprop"):
            if kw.get(a) is not None:
                kw[a] = tf.transpose(kw[a], perm)
        if kw.get("input_sizes") is not None:
            kw["input_sizes"] = tf.gather(kw["input_sizes"], perm)
        out = wide(**kw)
        return out if op == "Conv3DBackpropFilterV2" else tf.transpose(out, (0, 4, 1, 2, 3))
    return ref


for x, k, oc, s, pad in CONV3D:
    conv = dict(strides=[1, 1, s, s, s], padding=pad, data_format="NCDHW")
    w = list(k) + [x[4], oc]
    dy = [x[0]] + [_conv_out_size(x[1 + i], k[i], s, pad, 1) for i in range(3)] + [oc]
    xs, dys = _to_channels_first(x), _to_channels_first(dy)
    _conv_and_backprops(CONV3D_OPS, xs, w, dys, conv, _ncdhw_reference, sizes="Tshape")

# ======================================================================
# FusedBatchNorm family (fused_batch_norm.cc)
# ======================================================================

# float32: rtol 1e-4 / atol 1e-5 as in test_kernels_batchnorm_activations.py
# (TF's float32 CPU reference is oneDNN, which sums in float in its own order;
# PDK sums in double). 16-bit y: 1e-2 / 1e-2 (half) and 2e-2 / 5e-2 (bfloat16).
BN_TOL = {"float32": (1e-4, 1e-5), "float16": (1e-2, 1e-2), "bfloat16": (2e-2, 5e-2)}
# Scale/offset backprops are sums over N*H*W (8192 at [8, 32, 32, 16]) of terms
# up to ~10: summation order alone moves a small sum by ~1e-4 (RED_TOL's reasoning).
BN_TOL_SUMS = dict(BN_TOL, float32=(1e-4, 1e-3))


def _bn_channel(kind, fmt):
    def fn(dt, rng, prev):
        c = prev["x"].shape[1 if fmt.startswith("NC") else -1]
        v = {"scale": rng.uniform(0.5, 2.0, c), "offset": rng.uniform(-1.0, 1.0, c),
             "mean": rng.uniform(-1.0, 1.0, c), "var": rng.uniform(0.5, 3.0, c)}[kind]
        return v.astype(dt.get("U", np.dtype(np.float32)))
    return fn


BN_SHAPES = [([2, 4, 4, 3], "NHWC"), ([8, 1, 1, 16], "NHWC"), ([1, 5, 7, 2], "NHWC"),
             ([2, 3, 4, 4], "NCHW"), ([8, 32, 32, 16], "NHWC")]
for (shape, fmt), training in itertools.product(BN_SHAPES, [True, False]):
    fwd_inputs = [("x", arr(shape, gen=uniform(-3, 5))),
                  ("scale", computed(_bn_channel("scale", fmt))),
                  ("offset", computed(_bn_channel("offset", fmt))),
                  ("mean", computed(_bn_channel("mean", fmt))),
                  ("variance", computed(_bn_channel("var", fmt)))]
    attrs = {"epsilon": 1e-3, "data_format": fmt, "is_training": training}
    # Outputs compared: y, batch_mean, batch_variance, and in NHWC training
    # also the reserve spaces 1 and 2. Not compared: reserve_space_3 (oneDNN
    # gives shape [0], PDK a scalar, as TF's Eigen kernel), the reserve spaces
    # in inference (TF's half kernel leaves them unwritten) and in NCHW
    # (oneDNN's own layout). Placeholders no consumer reads.
    outs = [0, 1, 2, 3, 4] if training and fmt == "NHWC" else [0, 1, 2]
    for op in ("FusedBatchNormV3", "FusedBatchNormV2", "FusedBatchNorm"):
        for factor in ((1.0, 0.25) if training and op == "FusedBatchNormV3" else (1.0,)):
            case(op, inputs=fwd_inputs, attrs=dict(attrs, exponential_avg_factor=factor),
                 dtypes={"T": FLOAT, "U": ["float32"]} if op != "FusedBatchNorm" else
                 {"T": ["float32"]}, tol=BN_TOL, outputs=outs)
    grad_inputs = [("y_backprop", arr(shape, gen=uniform(-1, 1))),
                   ("x", arr(shape, gen=uniform(-3, 5))),
                   ("scale", computed(_bn_channel("scale", fmt))),
                   ("reserve_space_1", computed(_bn_channel("mean", fmt))),
                   ("reserve_space_2", computed(_bn_channel("var", fmt)))]
    # Gradient outputs 3 and 4 are placeholders (oneDNN: scalars; PDK: shape
    # [0], as TF's Eigen kernel): only x, scale and offset backprops compared.
    if fmt == "NCHW" and not training:
        continue  # TF's (Eigen) CPU kernel, and PDK, take only NHWC in inference
    for op in ("FusedBatchNormGradV3", "FusedBatchNormGradV2", "FusedBatchNormGrad"):
        extra = [("reserve_space_3", const(0.0, "float32"))] if op.endswith("V3") else []
        case(op, inputs=grad_inputs + extra, attrs=attrs,
             dtypes={"T": FLOAT, "U": ["float32"]} if op != "FusedBatchNormGrad" else
             {"T": ["float32"]}, tol=BN_TOL_SUMS if shape[0] * shape[1] > 100 else BN_TOL,
             outputs=[0, 1, 2])

# ======================================================================
# Stateless random ops (stateless_random_ops.cc): bit for bit
# ======================================================================

RAND_SHAPES = [[3, 5], [], [0], [7], [1000, 33]]
SEEDS = [[1, 2], [0, 0], [-7, 2**31 - 1]]
for shape, seed in itertools.product(RAND_SHAPES, SEEDS):
    for op in ("StatelessRandomUniform", "StatelessRandomNormal", "StatelessTruncatedNormal"):
        case(op, inputs=[("shape", const(shape, "T")), ("seed", const(seed, "Tseed"))],
             dtypes={"dtype": FLOAT, "T": IDX, "Tseed": IDX}, exact=True)
    case("StatelessRandomUniformFullInt",
         inputs=[("shape", const(shape, "T")), ("seed", const(seed, "Tseed"))],
         dtypes={"dtype": INT + ["uint32", "uint64"], "T": IDX, "Tseed": IDX}, exact=True)
    case("StatelessRandomUniformInt",
         inputs=[("shape", const(shape, "T")), ("seed", const(seed, "Tseed")),
                 ("minval", const(-5, "dtype")), ("maxval", const(1000, "dtype"))],
         dtypes={"dtype": INT, "T": IDX, "Tseed": IDX}, exact=True)
    key_counter = [("key", const([seed[0] & 0xFFFFFFFF | (7 << 32)], "uint64")),
                   ("counter", const([seed[1] & 0xFFFFFFFF, 3], "uint64")),
                   ("alg", const(1, "int32"))]          # 1 = Philox
    for op in ("StatelessRandomUniformV2", "StatelessRandomNormalV2",
               "StatelessTruncatedNormalV2"):
        case(op, inputs=[("shape", const(shape, "Tshape"))] + key_counter,
             dtypes={"dtype": FLOAT, "Tshape": IDX}, exact=True)
    case("StatelessRandomUniformFullIntV2",
         inputs=[("shape", const(shape, "Tshape"))] + key_counter,
         dtypes={"dtype": INT + ["uint32", "uint64"], "Tshape": IDX}, exact=True)
    case("StatelessRandomUniformIntV2",
         inputs=[("shape", const(shape, "Tshape"))] + key_counter +
                [("minval", const(-(2**20), "dtype")), ("maxval", const(2**20 + 7, "dtype"))],
         dtypes={"dtype": INT, "Tshape": IDX}, exact=True)
for seed in SEEDS:
    case("StatelessRandomGetKeyCounter", inputs=[("seed", const(seed, "Tseed"))],
         dtypes={"Tseed": IDX}, exact=True)
    case("StatelessRandomGetKeyCounterAlg", inputs=[("seed", const(seed, "Tseed"))],
         dtypes={"Tseed": IDX}, exact=True)
case("StatelessRandomGetAlg", inputs=[], exact=True)

# Stateful random ops (random_ops.cc) with the seeds set: two calls, each bit
# for bit against the CPU's call of the same rank (each call moves the
# kernel's generator on; more: tests/python/test_kernels_random.py).
for shape, (seed, seed2) in itertools.product(RAND_SHAPES, [(1, 2), (-7, 2**31 - 1), (0, 5)]):
    for op in ("RandomUniform", "RandomStandardNormal", "TruncatedNormal"):
        case(op, inputs=[("shape", const(shape, "T"))], attrs={"seed": seed, "seed2": seed2},
             dtypes={"dtype": FLOAT, "T": IDX}, exact=True, stateful=True)
    case("RandomUniformInt",
         inputs=[("shape", const(shape, "T")), ("minval", const(-5, "Tout")),
                 ("maxval", const(1000, "Tout"))], attrs={"seed": seed, "seed2": seed2},
         dtypes={"Tout": INT, "T": IDX}, exact=True, stateful=True)

# ======================================================================
# Data movement (src/kernels/array/): compared bit for bit
# ======================================================================

for shape in ([3, 5], [], [0, 2], [7, 1, 3], [257, 1023]):
    for op in ("Identity", "Snapshot", "StopGradient"):
        case(op, inputs=[("input", shape)], dtypes={"T": ALL}, exact=True)
    for op in ("ZerosLike", "OnesLike"):
        case(op, inputs=[("x", shape)], dtypes={"T": ALL}, exact=True)
    for op in ("Shape", "Size"):
        case(op, inputs=[("input", shape)], dtypes={"T": ALL, "out_type": IDX}, exact=True)
    case("Rank", inputs=[("input", shape)], dtypes={"T": ALL}, exact=True)
    case("ShapeN", inputs=[("input", many(shape, [2, 0], []))],
         dtypes={"T": ALL, "out_type": IDX}, exact=True)


def _bitcast_input(shape):
    def fn(dt, rng, prev):
        src, dst = dt["T"], dt["type"]
        s = list(shape)
        if src.itemsize < dst.itemsize:
            s = s + [dst.itemsize // src.itemsize]
        return bits()(s, src, rng)
    return fn


for shape in ([3, 2], [], [0], [5, 3, 2]):
    case("Bitcast", inputs=[("input", computed(_bitcast_input(shape)))],
         dtypes={"T": BITCAST, "type": BITCAST}, exact=True)

for shape, dims in (([3, 5], [3, 5]), ([], []), ([0, 3], [0, 3]), ([257, 1023], [257, 1023])):
    case("Fill", inputs=[("dims", const(dims, "index_type")), ("value", [])],
         dtypes={"T": ALL, "index_type": IDX}, exact=True)

for shape, target in (([3, 1], [2, 3, 4]), ([], [3, 2]), ([5], [5]), ([1, 0], [4, 0]),
                      ([2, 1, 3, 1], [2, 4, 3, 5]), ([1023], [257, 1023])):
    case("BroadcastTo", inputs=[("input", shape), ("shape", const(target, "Tidx"))],
         dtypes={"T": ALL, "Tidx": IDX}, exact=True)

for shapes, axis in (([[2, 3], [2, 4]], 1), ([[2, 3], [4, 3], [1, 3]], 0), ([[2, 3], [2, 0]], -1),
                     ([[0, 3], [2, 3]], 0), ([[2, 3, 4], [2, 3, 4]], -2),
                     ([[257, 500], [257, 523]], 1)):
    case("ConcatV2", inputs=[("values", many(*shapes)), ("axis", const(axis, "Tidx"))],
         dtypes={"T": ALL, "Tidx": IDX}, exact=True)

for shape, axis in (([3, 5], 1), ([], 0), ([3, 5], -1), ([3, 5], 0), ([0, 2], 2), ([257, 1023], 1)):
    case("ExpandDims", inputs=[("input", shape), ("axis", const(axis, "Tdim"))],
         dtypes={"T": ALL, "Tdim": IDX}, exact=True)

for shape, target in (([3, 4], [4, 3]), ([], [1, 1]), ([6], [-1, 2]), ([0, 3], [3, 0]),
                      ([2, 3, 4], [6, -1]), ([257, 1023], [-1])):
    case("Reshape", inputs=[("tensor", shape), ("shape", const(target, "Tshape"))],
         dtypes={"T": ALL, "Tshape": IDX}, exact=True)

for shape, axis in (([3, 1, 5, 1], []), ([3, 1, 5, 1], [1]), ([1], []), ([1, 1], [-1]),
                    ([0, 1], [1]), ([257, 1, 1023], [1])):
    case("Squeeze", inputs=[("input", shape)], attrs={"axis": axis}, dtypes={"T": ALL},
         exact=True)

for shape, perm in (([3, 4], [1, 0]), ([], []), ([2, 3, 4], [2, 0, 1]), ([2, 3, 4], [0, 1, 2]),
                    ([0, 3], [1, 0]), ([2, 3, 4, 5, 6], [4, 2, 0, 3, 1]), ([257, 1023], [1, 0])):
    case("Transpose", inputs=[("x", shape), ("perm", const(perm, "Tperm"))],
         dtypes={"T": ALL, "Tperm": IDX}, exact=True)

for shape, mult in (([2, 3], [2, 1]), ([], []), ([3], [4]), ([2, 0], [3, 2]), ([2, 3], [0, 2]),
                    ([1, 2, 3], [2, 3, 1]), ([257, 100], [2, 5])):
    case("Tile", inputs=[("input", shape), ("multiples", const(mult, "Tmultiples"))],
         dtypes={"T": ALL, "Tmultiples": IDX}, exact=True)

for shape, n, axis in (([2, 3], 3, 0), ([], 1, 0), ([4], 1, 0), ([2, 3], 3, 1), ([0, 2], 2, -1),
                       ([257, 1023], 4, 1)):
    case("Pack", inputs=[("values", many(*[shape] * n))], attrs={"axis": axis},
         dtypes={"T": ALL}, exact=True)
for shape, axis in (([3, 2], 0), ([4], 0), ([2, 3, 4], 1), ([2, 3, 4], -1), ([0, 3], 1),
                    ([4, 257, 1023], 0)):
    case("Unpack", inputs=[("value", shape)], attrs={"num": shape[axis], "axis": axis},
         dtypes={"T": ALL}, exact=True)

def _parallel_stack(values):
    """tf.parallel_stack in a tf.function: TensorFlow expands it into
    _ParallelConcatStart + _ParallelConcatUpdate per value + Identity, which
    must all run on one device (issue 14: zeros when they did not)."""
    import tensorflow as tf
    global _PARALLEL_STACK_FN
    if _PARALLEL_STACK_FN is None:
        _PARALLEL_STACK_FN = tf.function(lambda *xs: tf.parallel_stack(list(xs)))
    return _PARALLEL_STACK_FN(*values)


_PARALLEL_STACK_FN = None
for shape, n in (([2, 3], 3), ([4], 1), ([], 2), ([0, 2], 2), ([257, 1023], 4)):
    for op, attr in (("_ParallelConcatStart", "dtype"), ("_ParallelConcatUpdate", "T")):
        case(op, inputs=[("values", many(*[shape] * n))], dtypes={attr: ALL}, exact=True,
             run=_parallel_stack)

# InplaceUpdate/Add/Sub write rows of x (indices modulo x.shape[0], duplicates
# in order); DeepCopy; Empty with init=true (uninitialized memory differs).
for xs, idx in (([5, 3], [0, 3]), ([4], [3, 3, -1]), ([3, 2, 2], [7]), ([2, 4], []),
                ([0, 3], []), ([300, 257], [299, 0, 5])):
    vs = [len(idx)] + xs[1:]
    case("InplaceUpdate", inputs=[("x", xs), ("i", const(idx, "int32")), ("v", vs)],
         dtypes={"T": ALL}, exact=True)
    for op in ("InplaceAdd", "InplaceSub"):
        case(op, inputs=[("x", xs), ("i", const(idx, "int32")), ("v", vs)],
             dtypes={"T": NUMERIC})
for shape in ([3, 4], [], [0, 5], [257, 1023]):
    case("DeepCopy", inputs=[("x", shape)], dtypes={"T": ALL}, exact=True)
    case("Empty", inputs=[("shape", const(shape, "int32"))], attrs={"init": True},
         dtypes={"dtype": ALL}, exact=True)


for shape, axis in (([3, 5], [1]), ([], []), ([3, 5], [0, 1]), ([3, 5], [-1]), ([0, 3], [0]),
                    ([2, 3, 4, 5], [0, 2, 3]), ([257, 1023], [0])):
    case("ReverseV2", inputs=[("tensor", shape), ("axis", const(axis, "Tidx"))],
         dtypes={"T": ALL, "Tidx": IDX}, exact=True)

for shape, pads in (([3, 4], [[1, 2], [0, 3]]), ([], []), ([0, 2], [[1, 1], [2, 0]]),
                    ([2, 3, 4], [[0, 0], [1, 1], [2, 2]]), ([257, 1023], [[1, 2], [3, 4]])):
    case("Pad", inputs=[("input", shape), ("paddings", const(np.reshape(pads, [-1, 2]),
                                                                "Tpaddings"))],
         dtypes={"T": ALL, "Tpaddings": IDX}, exact=True)
    case("PadV2", inputs=[("input", shape), ("paddings", const(np.reshape(pads, [-1, 2]),
                                                                  "Tpaddings")),
                          ("constant_values", [])],
         dtypes={"T": ALL, "Tpaddings": IDX}, exact=True)

for (shape, pads), mode in itertools.product(
        [([3, 4], [[1, 2], [0, 3]]), ([5], [[2, 2]]), ([2, 3, 4], [[1, 0], [2, 1], [0, 3]]),
         ([1, 4], [[0, 0], [1, 2]]), ([257, 1023], [[3, 5], [7, 1]])], ["REFLECT", "SYMMETRIC"]):
    p = np.array(pads)
    case("MirrorPad", inputs=[("input", shape), ("paddings", const(p, "Tpaddings"))],
         attrs={"mode": mode}, dtypes={"T": ALL, "Tpaddings": IDX}, exact=True)
    padded = [d + a + b for d, (a, b) in zip(shape, pads)]
    # MirrorPadGrad sums the mirrored border back: float sums in another order
    # would differ in the last bit, so the defaults, not exact, apply.
    case("MirrorPadGrad", inputs=[("input", padded), ("paddings", const(p, "Tpaddings"))],
         attrs={"mode": mode}, dtypes={"T": FLOAT + INT, "Tpaddings": IDX})

for shape, begin, size in (([4, 5], [1, 2], [2, -1]), ([6], [0], [6]), ([4, 5], [0, 0], [0, 5]),
                           ([2, 3, 4], [1, 0, 1], [1, 3, 2]), ([], [], []),
                           ([257, 1023], [3, 100], [200, 900])):
    case("Slice", inputs=[("input", shape), ("begin", const(begin, "Index")),
                          ("size", const(size, "Index"))],
         dtypes={"T": ALL, "Index": IDX}, exact=True)

STRIDED = [  # (shape, begin, end, strides, masks)
    ([5, 6], [1, 0], [4, 6], [1, 2], {}),
    ([5, 6], [4, -1], [0, 0], [-1, -2], {}),
    ([5, 6], [0, 0], [0, 0], [1, 1], {"begin_mask": 3, "end_mask": 3}),
    ([5, 6], [2, 0], [3, 0], [1, 1], {"shrink_axis_mask": 1, "end_mask": 2}),
    ([2, 3, 4], [0, 1], [0, 3], [1, 1], {"ellipsis_mask": 1}),
    ([2, 3, 4], [0, 0, 1], [0, 0, 3], [1, 1, 1], {"new_axis_mask": 2, "begin_mask": 1,
                                                  "end_mask": 1}),
    ([0, 4], [0, 1], [0, 3], [1, 1], {}),
    ([257, 1023], [1, 3], [250, 1000], [3, 7], {}),
]
for shape, b, e, s, masks in STRIDED:
    idx = [("begin", const(b, "Index")), ("end", const(e, "Index")),
           ("strides", const(s, "Index"))]
    case("StridedSlice", inputs=[("input", shape)] + idx, attrs=masks,
         dtypes={"T": ALL, "Index": IDX}, exact=True)

    def _dy(dt, rng, prev, shape=shape, b=b, e=e, s=s, masks=masks):
        import tensorflow as tf
        with tf.device("/CPU:0"):
            out = tf.raw_ops.StridedSlice(input=tf.zeros(shape), begin=b, end=e,
                                          strides=s, **masks).shape
        return DEFAULT(list(out), dt["T"], rng)

    case("StridedSliceGrad", inputs=[("shape", const(shape, "Index"))] + idx +
         [("dy", computed(_dy))], attrs=masks, dtypes={"T": ALL, "Index": IDX}, exact=True)

for shape, n, axis in (([4, 6], 2, 1), ([6], 3, 0), ([4, 6], 1, 0), ([0, 6], 3, 1),
                       ([2, 3, 4], 2, -1), ([256, 1023], 4, 0)):
    case("Split", inputs=[("axis", const(axis)), ("value", shape)], attrs={"num_split": n},
         dtypes={"T": ALL}, exact=True)
for shape, sizes, axis in (([4, 6], [1, 2, 3], 1), ([6], [6], 0), ([4, 6], [-1, 1], 0),
                           ([0, 6], [0, 6], 1), ([2, 3, 4], [2, 0, 2], -1),
                           ([256, 1023], [100, -1, 23], 1)):
    case("SplitV", inputs=[("value", shape), ("size_splits", const(sizes, "Tlen")),
                           ("axis", const(axis))], attrs={"num_split": len(sizes)},
         dtypes={"T": ALL, "Tlen": IDX}, exact=True)

for ps, ishape, axis, bd in (([5, 3], [4], 0, 0), ([5, 3], [2, 2], 1, 0), ([7], [], 0, 0),
                             ([5, 3], [0], 0, 0), ([2, 5, 3], [2, 4], 1, 1),
                             ([4, 5, 6], [3], -1, 0), ([1000, 257], [2000], 0, 0)):
    n = ps[axis]
    case("GatherV2", inputs=[("params", ps), ("indices", arr(ishape, "Tindices", indices(n))),
                             ("axis", const(axis, "Taxis"))], attrs={"batch_dims": bd},
         dtypes={"Tparams": ALL, "Tindices": ["int32", "int64", "int16"], "Taxis": IDX},
         exact=True)

# GatherNd (gather.cc): K = 0..3, slices and scalars, no index rows. (Its
# bad_indices_policy attribute is newer than TensorFlow 2.16, which this sweep
# also runs on: IGNORE is tested in test_kernels_array.py.)
for ps, ishape, n in (([5, 3], [4, 1], 5), ([4, 3, 2], [2, 3, 2], 3), ([3, 4], [6, 2], 3),
                      ([2, 3, 2], [5, 3], 2), ([3, 2], [2, 0], 1), ([4, 5], [0, 1], 4)):
    case("GatherNd", inputs=[("params", ps), ("indices", arr(ishape, "Tindices", indices(n)))],
         dtypes={"Tparams": ALL, "Tindices": IDX}, exact=True)

# TensorScatter* (tensor_scatter.cc): K = 1 and K = 2, repeated indices
# (applied in order, as TF's CPU kernel does), an empty index list.
for ts, ishape, n in (([6, 4], [5, 1], 6), ([4, 3, 2], [7, 2], 3), ([5], [9, 1], 5),
                      ([3, 4], [0, 1], 3)):
    k = ishape[-1]
    us = ishape[:-1] + ts[k:]
    for op in ("TensorScatterUpdate", "TensorScatterAdd", "TensorScatterSub",
               "TensorScatterMin", "TensorScatterMax"):
        case(op, inputs=[("tensor", ts), ("indices", arr(ishape, "Tindices", indices(n))),
                         ("updates", us)],
             dtypes={"T": ALL if op == "TensorScatterUpdate" else FLOAT + INT,
                     "Tindices": IDX}, exact=True)

# ScatterNd: TensorScatterAdd into zeros of `shape` (repeated indices add up).
for ts, ishape, n in (([6, 4], [5, 1], 6), ([4, 3, 2], [7, 2], 3), ([5], [9, 1], 5),
                      ([3, 4], [0, 1], 3)):
    k = ishape[-1]
    case("ScatterNd", inputs=[("indices", arr(ishape, "Tindices", indices(n))),
                              ("updates", ishape[:-1] + ts[k:]), ("shape", const(ts, "Tindices"))],
         dtypes={"T": FLOAT + INT + ["bool"], "Tindices": IDX}, exact=True)

for ishape, depth, axis in (([4], 3, -1), ([], 5, -1), ([2, 3], 4, 0), ([2, 3], 4, 1),
                            ([0], 3, -1), ([3], 0, -1), ([500, 7], 129, -1)):
    # Out-of-range indices (-1, depth) give an all-off row.
    case("OneHot", inputs=[("indices", arr(ishape, "TI", indices(depth + 1, -1 if depth else 0))),
                           ("depth", const(depth)), ("on_value", arr([], "T", uniform(1, 5))),
                           ("off_value", arr([], "T", uniform(-5, 0)))],
         attrs={"axis": axis}, dtypes={"T": ALL, "TI": ["uint8", "int8", "int32", "int64"]},
         exact=True)

for start, limit, delta in ((0, 10, 1), (3, 3, 1), (10, 0, -3), (-5, 7, 2), (0, 100000, 7)):
    case("Range", inputs=[("start", const(start, "Tidx")), ("limit", const(limit, "Tidx")),
                          ("delta", const(delta, "Tidx"))],
         dtypes={"Tidx": ["int32", "int64"]}, exact=True)
for start, limit, delta in ((0.5, 3.0, 0.25), (1.0, -2.0, -0.3), (0.0, 1000.0, 0.1)):
    case("Range", inputs=[("start", const(start, "Tidx")), ("limit", const(limit, "Tidx")),
                          ("delta", const(delta, "Tidx"))],
         dtypes={"Tidx": FLOAT}, exact=True)

# Segments: ids in [0, n) plus n beyond the max id (empty segments: the
# op's identity); one case with dropped (-1) ids.
for dshape, nseg, lo in (([6, 3], 4, 0), ([6], 3, 0), ([0, 3], 2, 0), ([6, 3], 8, -1),
                         ([2, 3, 4], 5, 0), ([10000, 33], 100, 0)):
    ids_shape = dshape[:2] if len(dshape) == 3 else dshape[:1]
    for op in ("UnsortedSegmentSum", "UnsortedSegmentMax", "UnsortedSegmentMin",
               "UnsortedSegmentProd"):
        big = dshape[0] > 100
        case(op, inputs=[("data", arr(dshape, gen=uniform(0.9, 1.1) if op.endswith("Prod")
                                      and big else discrete(-2, 3) if op.endswith("Prod")
                                      else DEFAULT)),
                         ("segment_ids", arr(ids_shape, "Tindices", indices(nseg - 1, lo))),
                         ("num_segments", const(nseg, "Tnumsegments"))],
             dtypes={"T": NUMERIC, "Tindices": IDX, "Tnumsegments": IDX},
             # Sums of 100 terms per segment in another order than TF's.
             tol={"float32": (1e-5, 1e-5), "float16": (1e-2, 5e-2),
                  "bfloat16": (2e-2, 2e-1)} if big else None,
             exact=op in ("UnsortedSegmentMax", "UnsortedSegmentMin"))

for shape in ([3, 4], [0], [7], [2, 3, 4], [2, 0, 3], [257, 1023]):   # TF: rank >= 1
    case("Where", inputs=[("condition", arr(shape, "T", discrete(0, 2)))], dtypes={"T": ALL},
         exact=True)

# ======================================================================
# Ops the real models need (tests/python/test_real_models.py): Qr and
# MatrixDiagPartV3 (Keras's Orthogonal initializer, the LSTM/GRU recurrent
# kernels), SpaceToBatchND / BatchToSpaceND (dilated convolutions, Conv1D with
# dilation_rate > 1). Kernels: src/kernels/linalg/qr.cc,
# src/kernels/array/matrix_diag.cc, src/kernels/array/space_to_batch.cc.
# ======================================================================


def _zero_first_column(dt, rng, prev):
    a = rng.uniform(-5, 5, size=(5, 4)).astype(dt["T"])
    a[:, 0] = 0  # the first reflector is the identity (tau = 0): R[0, 0] = 0
    return a


# QR is unique only up to the signs of q's columns / r's rows; PDK uses the
# sign convention of Eigen's HouseholderQR (TF's CPU kernel), so both are
# compared as they are. Householder sums in another order than Eigen's
# vectorized ones: float32 1e-4, float64 1e-10 (entries of size ~10).
QR_TOL = {"float32": (1e-4, 1e-4), "float64": (1e-10, 1e-10)}
for shape, full in (([5, 3], False), ([3, 5], False), ([4, 4], True), ([5, 3], True),
                    ([3, 5], True), ([2, 3, 6, 4], False), ([2, 3, 6, 4], True), ([1, 1], False),
                    ([0, 3], False), ([3, 0], True), ([3, 0], False), ([64, 16], False),
                    ([16, 64], False), ([2, 130, 97], True)):
    case("Qr", inputs=[("input", shape)], attrs={"full_matrices": full},
         dtypes={"T": F32_64}, tol=QR_TOL)
case("Qr", inputs=[("input", computed(_zero_first_column))], attrs={"full_matrices": True},
     dtypes={"T": F32_64}, tol=QR_TOL)


# MatrixSolve (src/kernels/linalg/matrix_solve.cc; Keras's RandomPerspective
# solves 8 x 8 systems): the same Eigen PartialPivLU as TF's CPU kernel, with
# other vector code (ISA level, FMA): float32 1e-4, float64 1e-10. Diagonally
# dominant matrices, so every system is well conditioned.
def _well_conditioned(shape):
    def gen(dt, rng, prev):
        a = rng.uniform(-1, 1, size=shape)
        return (a + shape[-1] * np.eye(shape[-1])).astype(dt["T"])
    return computed(gen)


SOLVE_TOL = {"float32": (1e-4, 1e-4), "float64": (1e-10, 1e-10)}
for ms, rs in (([3, 3], [3, 2]), ([1, 8, 8], [1, 8, 1]), ([2, 3, 5, 5], [2, 3, 5, 4]),
               ([0, 4, 4], [0, 4, 2]), ([3, 3], [3, 0]), ([0, 0], [0, 3]), ([64, 64], [64, 33])):
    for adjoint in (False, True):
        case("MatrixSolve", inputs=[("matrix", _well_conditioned(ms)), ("rhs", rs)],
             attrs={"adjoint": adjoint}, dtypes={"T": F32_64}, tol=SOLVE_TOL)

for shape, k, align in (([3, 4], 0, "RIGHT_LEFT"), ([2, 3, 4], [-1, 2], "RIGHT_LEFT"),
                        ([2, 3, 4], [-1, 2], "LEFT_RIGHT"), ([2, 3, 4], [-1, 2], "LEFT_LEFT"),
                        ([2, 3, 4], [-1, 2], "RIGHT_RIGHT"), ([2, 3, 4], 1, "RIGHT_LEFT"),
                        ([2, 3, 4], [-2, -1], "RIGHT_LEFT"), ([4, 3], [-3, 0], "LEFT_RIGHT"),
                        ([5, 5], [2, 2], "RIGHT_LEFT"), ([0, 3, 4], 0, "RIGHT_LEFT"),
                        ([3, 0], 0, "RIGHT_LEFT"), ([64, 257, 129], [-5, 3], "RIGHT_LEFT")):
    case("MatrixDiagPartV3", inputs=[("input", shape), ("k", const(k, "int32")),
                                     ("padding_value", arr([], "T"))],
         attrs={"align": align}, dtypes={"T": ALL}, exact=True)

for shape, block, pads in (([2, 6, 3], [2], [[1, 1]]), ([2, 4, 6, 3], [2, 3], [[0, 0], [0, 0]]),
                           ([1, 5, 7, 2], [2, 2], [[1, 2], [0, 1]]), ([3, 4], [2], [[0, 0]]),
                           ([2, 4, 4, 2, 3], [2, 1, 2], [[0, 0], [1, 1], [2, 2]]),
                           ([0, 4, 2], [2], [[0, 0]]), ([2, 0, 2], [2], [[1, 1]]),
                           ([4, 126, 126, 8], [3, 3], [[3, 3], [0, 0]])):
    case("SpaceToBatchND", inputs=[("input", shape), ("block_shape", const(block, "Tblock_shape")),
                                   ("paddings", const(pads, "Tpaddings"))],
         dtypes={"T": ALL, "Tblock_shape": IDX, "Tpaddings": IDX}, exact=True)

for shape, block, crops in (([4, 3, 3], [2], [[1, 1]]), ([12, 2, 2, 3], [2, 3], [[0, 0], [0, 0]]),
                            ([4, 3, 4, 2], [2, 2], [[1, 2], [0, 1]]), ([6, 4], [2], [[0, 0]]),
                            ([8, 2, 3, 2, 3], [2, 1, 2], [[0, 0], [1, 1], [2, 2]]),
                            ([0, 4, 2], [2], [[0, 0]]), ([4, 1, 2], [2], [[1, 1]]),
                            ([36, 44, 42, 8], [3, 3], [[3, 3], [0, 0]])):
    case("BatchToSpaceND", inputs=[("input", shape), ("block_shape", const(block, "Tblock_shape")),
                                   ("crops", const(crops, "Tcrops"))],
         dtypes={"T": ALL, "Tblock_shape": IDX, "Tcrops": IDX}, exact=True)

# ======================================================================
# Optimizer updates: _PdkKerasAdamUpdate (src/kernels/training/
# keras_adam_update.cc), PDK's fusion of Keras 3's Adam step
# (src/graph/rewrites/keras_adam.cc). Bit-identical to the unfused ops.
# ======================================================================

ADAM_COEFFS = ("one_minus_beta_1", "one_minus_beta_2", "alpha", "epsilon")


def _keras_adam(var, m, v, grad, one_minus_beta_1, one_minus_beta_2, alpha, epsilon):
    """Calls PDK's own op, which tf.raw_ops does not know, through eager execute."""
    from tensorflow.python.eager import context, execute
    return execute.execute(b"_PdkKerasAdamUpdate", 3,
                           inputs=[var, m, v, grad, one_minus_beta_1, one_minus_beta_2, alpha,
                                   epsilon],
                           attrs=("T", var.dtype.as_datatype_enum), ctx=context.context())


def _keras_adam_reference(var, m, v, grad, one_minus_beta_1, one_minus_beta_2, alpha, epsilon):
    """The ops Keras 3.15's Adam.update_step emits (keras/src/optimizers/adam.py)."""
    import tensorflow as tf
    m1 = m + (grad - m) * one_minus_beta_1
    v1 = v + (tf.square(grad) - v) * one_minus_beta_2
    return [var - (m1 * alpha) / (tf.sqrt(v1) + epsilon), m1, v1]


for shape, coeff_shape in (([3, 5], []), ([], []), ([0, 4], []), ([7], [1]), ([2, 3, 4], [1, 1]),
                           ([513, 1023], [])):
    case("_PdkKerasAdamUpdate",
         inputs=[("var", shape), ("m", shape), ("v", arr(shape, "T", uniform(0.0, 3.0))),
                 ("grad", shape)] +
                [(n, arr(coeff_shape, "T", uniform(1e-8, 0.2))) for n in ADAM_COEFFS],
         dtypes={"T": F32_64}, exact=True, run=_keras_adam, reference=_keras_adam_reference)
