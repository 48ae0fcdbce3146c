"""Which PDK kernel runs an op's work: the op's own, or the fused kernel a PDK
graph rewrite put in its place (docs/architecture.md, "Graph optimizer")."""
import os
import re

_HEADER = os.path.join(os.path.dirname(__file__), "..", "..", "src", "kernels", "math",
                       "fused_elementwise.h")


def _fused_elementwise_ops():
    """The ops the generic elementwise fusion takes, read from the X-macro
    PDK_FUSED_ELEMENTWISE_OPS in src/kernels/math/fused_elementwise.h."""
    with open(_HEADER) as f:
        text = f.read()
    return frozenset(re.findall(r"X\((\w+), k\w+\)", text))


FUSED_ELEMENTWISE_OPS = _fused_elementwise_ops()

# A forward Conv2D / DepthwiseConv2dNative / MatMul followed by BiasAdd (+
# activation) runs as PDK's fused op.
FUSED_INTO = {"Conv2D": "_PdkFusedConv2D", "DepthwiseConv2dNative": "_PdkFusedConv2D",
              "MatMul": "_PdkFusedMatMul"}


def ran_on_pdk(launches, op):
    """Whether `op`'s work ran in a PDK kernel, by the launch counts
    `launches` (tensorflow_pdk.launch_counts() or a difference of two): its
    own kernel, the fused MatMul/Conv2D kernel, or, for an elementwise op the
    generic fusion takes, _PdkFusedElementwise."""
    if launches.get(op, 0) + launches.get(FUSED_INTO.get(op, ""), 0) > 0:
        return True
    return op in FUSED_ELEMENTWISE_OPS and launches.get("_PdkFusedElementwise", 0) > 0
