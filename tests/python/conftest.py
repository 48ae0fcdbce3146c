import os

import numpy as np
import pytest

# Keep TensorFlow's log noise out of test output.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


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
