import os

import numpy as np
import pytest

# Keep TensorFlow's log noise out of test output.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
