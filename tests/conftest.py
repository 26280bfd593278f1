"""Shared fixtures: small deterministic series that train in a second or two."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from series_helpers import make_series

# Small models gain nothing from intra-op threads, and OpenMP threads that spin while another process
# holds a core slow GRU training down by an order of magnitude; one thread keeps the suite predictable.
torch.set_num_threads(1)


@pytest.fixture
def series() -> np.ndarray:
    return make_series()


@pytest.fixture
def small_params() -> dict:
    """Detector settings that keep a fit around a second on 2 CPU cores."""
    return {"window_size": 20, "stride": 4, "epochs": 2, "batch_size": 32, "embedder_params": {"hidden_size": 16, "n_layers": 2}, "random_state": 0}
