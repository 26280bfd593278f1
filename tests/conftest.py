"""Shared fixtures: small deterministic series that train in a second or two."""

from __future__ import annotations

import numpy as np
import pytest


def make_series(n: int = 800, d: int = 3, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n)[:, None]
    return (np.sin(t / 8.0 + np.arange(d)) + 0.1 * rng.normal(size=(n, d))).astype(np.float32)


@pytest.fixture
def series() -> np.ndarray:
    return make_series()


@pytest.fixture
def small_params() -> dict:
    """Detector settings that keep a fit around a second on 2 CPU cores."""
    return dict(window_size=20, stride=4, epochs=2, batch_size=32, embedder_params={"hidden_size": 16, "n_layers": 2}, random_state=0)
