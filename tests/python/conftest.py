import os

import numpy as np
import pytest

# Keep TensorFlow's log noise out of test output.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# The reference is TensorFlow's Eigen CPU kernels on every machine. On a CPU
# with AVX-512, TensorFlow 2.21 switches its CPU kernels to oneDNN by default
# (on AVX2-only CPUs they stay Eigen); those word some errors differently, and
# crash the process on some inputs a kernel must reject (SIGFPE in MaxPool
# with a window larger than its input; a segfault in tf-nightly's bfloat16
# MatMul on AMX). Set before TensorFlow loads; child processes inherit it.
# PDK's own kernels do not read it; tests about oneDNN-on stock (bench/) set
# it themselves.
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@pytest.fixture
def without_elementwise_fusion(monkeypatch):
    """PDK_GRAPH_DISABLE plus elementwise_fusion: for tests of other graph
    rewrites, whose elementwise nodes the generic elementwise fusion
    (test_graph_elementwise_fusion.py) would take over."""
    have = os.environ.get("PDK_GRAPH_DISABLE", "")
    monkeypatch.setenv("PDK_GRAPH_DISABLE", ",".join(x for x in (have, "elementwise_fusion") if x))
