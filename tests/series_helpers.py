"""Small deterministic series shared by the tests (imported as a plain module)."""

from __future__ import annotations

import numpy as np


def make_series(n: int = 800, d: int = 3, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n)[:, None]
    return (np.sin(t / 8.0 + np.arange(d)) + 0.1 * rng.normal(size=(n, d))).astype(np.float32)


def two_sines(n: int, seed: int) -> np.ndarray:
    """Two sines (periods 3 and 5 steps over 2 pi) with a little noise, float32."""
    rng = np.random.default_rng(seed)
    t = np.arange(n)[:, None]
    return (np.sin(t / np.array([3.0, 5.0])) + 0.05 * rng.normal(size=(n, 2))).astype(np.float32)


def periodic_pair(n: int, seed: int, period: float = 20.0) -> np.ndarray:
    """Two columns of one ``period`` with a second harmonic, phases apart, a little noise."""
    rng = np.random.default_rng(seed)
    t = np.arange(n)[:, None]
    clean = np.sin(2 * np.pi * t / period) + 0.5 * np.sin(
        4 * np.pi * t / period + np.array([0.0, 1.0])
    )
    return (clean + 0.02 * rng.normal(size=(n, 2))).astype(np.float32)


def three_channels(n: int, seed: int, level: float = 0.0) -> np.ndarray:
    """Three sines of periods 3, 7 and 11 (times 2 pi) with noise, shifted by ``level``: the
    service tests' series (a refit at another ``level`` is a new normal)."""
    rng = np.random.default_rng(seed)
    t = np.arange(n)[:, None]
    return level + np.sin(t / np.array([3.0, 7.0, 11.0])) + 0.1 * rng.standard_normal((n, 3))
