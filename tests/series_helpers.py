"""Small deterministic series shared by the tests (imported as a plain module)."""

from __future__ import annotations

import numpy as np


def make_series(n: int = 800, d: int = 3, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n)[:, None]
    return (np.sin(t / 8.0 + np.arange(d)) + 0.1 * rng.normal(size=(n, d))).astype(np.float32)
