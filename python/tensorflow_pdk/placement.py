"""Where did the ops of a tf.function run?

TensorFlow partitions a function's graph by device after placement; with run
metadata enabled it reports those partition graphs
(``RunMetadata.function_graphs[i].partition_graphs``). :func:`record` collects
them, and :class:`Placement` counts nodes per (op, device type). A *compute op*
is any node that is not bookkeeping (function arguments and results, send and
receive, constants, no-ops, resource handles), a metadata op (Shape, ShapeN,
Size, Rank: they read a tensor's shape, never its data, and TensorFlow's placer
puts them next to their input to avoid a copy, e.g. beside a tf.data iterator
on the CPU) or input pipeline (tf.data).

A function must be instantiated (first called) inside :func:`record` for its
partition graphs to be reported.
"""
from __future__ import annotations

import collections
import contextlib
import dataclasses
from typing import Counter, Iterator, List, Tuple

NON_COMPUTE_OPS = frozenset({
    "_Arg", "_Retval", "_DeviceArg", "_DeviceRetval", "_Send", "_Recv", "_HostSend",
    "_HostRecv", "Const", "HostConst", "NoOp", "Placeholder", "VarHandleOp",
    "VarIsInitializedOp", "DestroyResourceOp",
    # metadata: shape only, no data read
    "Shape", "ShapeN", "Size", "Rank",
})


def is_input_pipeline_op(op: str) -> bool:
    """tf.data ops (datasets, iterators, optionals) run on the host by design."""
    return ("Dataset" in op or op.startswith(("Iterator", "AnonymousIterator", "MakeIterator",
                                              "DeleteIterator", "Optional")))


def is_compute_op(op: str) -> bool:
    return op not in NON_COMPUTE_OPS and not is_input_pipeline_op(op)


def device_type_of(device: str) -> str:
    """'/job:localhost/replica:0/task:0/device:PDK:0' -> 'PDK'."""
    last = device.rsplit("/", 1)[-1]
    parts = last.split(":")
    return parts[1] if len(parts) >= 3 and parts[0] == "device" else last


@dataclasses.dataclass
class Placement:
    nodes: List[Tuple[str, str]] = dataclasses.field(default_factory=list)  # (op, device type)

    def ops_on(self, device_type: str) -> Counter:
        return collections.Counter(op for op, d in self.nodes if d == device_type)

    def compute_ops_on(self, device_type: str) -> Counter:
        return collections.Counter(
            op for op, d in self.nodes if d == device_type and is_compute_op(op))

    def compute_ops_on_cpu(self) -> Counter:
        return self.compute_ops_on("CPU")

    def report(self, device_type: str = "PDK") -> str:
        on_dev = self.compute_ops_on(device_type)
        on_cpu = self.compute_ops_on_cpu()
        lines = [f"compute ops placed on {device_type}: {sum(on_dev.values())} "
                 f"({len(on_dev)} op types)"]
        lines += [f"  {op:<40s} {n}" for op, n in sorted(on_dev.items())]
        lines.append(f"compute ops placed on CPU instead: {sum(on_cpu.values())}")
        lines += [f"  {op:<40s} {n}" for op, n in sorted(on_cpu.items())]
        return "\n".join(lines)


@contextlib.contextmanager
def record() -> Iterator[Placement]:
    """Collects the partition graphs of every function instantiated inside."""
    from tensorflow.python.eager import context

    placement = Placement()
    ctx = context.context()
    ctx.enable_run_metadata()
    try:
        yield placement
    finally:
        md = ctx.export_run_metadata()
        ctx.disable_run_metadata()
        for fg in md.function_graphs if md is not None else []:
            for pg in fg.partition_graphs:
                for n in pg.node:
                    placement.nodes.append((n.op, device_type_of(n.device)))
