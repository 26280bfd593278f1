"""Synthetic anomalies injected into held-out training rows, to judge score parts without labels.

Why: which part of the score is informative differs per series, and a fit sees no labels. Following
unsupervised model selection for time series (Goswami et al., ICLR 2023), the fit holds out the
tail of its training rows, injects anomalies of many kinds into copies of it and asks which part
(or combination) separates injected from clean steps. Point-wise kinds alone (spikes, level shifts)
favour point-wise parts, so most kinds here are shapes and contexts within a window: a segment
copied from another phase of the series, time-reversed or resampled, one channel desynchronised
from the others, a flattened or amplified oscillation, a drift, a noise burst.

Everything is relative to each column's own scale on the clean rows, and columns with few distinct
values (binary commands) are left alone, so an injection looks like something the series could do.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

FEW_LEVELS = 3  # columns with at most this many distinct values are not injected into
KINDS = ("spike", "level", "stuck", "noise", "amplitude", "drift", "copy", "reverse", "speed", "desync")


def injection_columns(rows: np.ndarray) -> np.ndarray:
    """Columns an injection may change: more than ``FEW_LEVELS`` distinct values."""
    levels = np.asarray([len(np.unique(rows[:, j])) for j in range(rows.shape[1])])
    return np.flatnonzero(levels > FEW_LEVELS)


def _segment_length(kind: str, window: int, rng: np.random.Generator) -> int:
    if kind == "spike":
        return int(rng.integers(1, 3))
    return int(rng.integers(max(2, window // 10), max(3, window // 2) + 1))


def _apply(kind: str, seg: np.ndarray, source: np.ndarray, scale: np.ndarray, rng: np.random.Generator,
           start: int, length: int) -> np.ndarray:
    """The injected values of ``seg`` ``(m, c)``; ``source`` = the clean rows (for copies)."""
    m = len(seg)
    sign = rng.choice([-1.0, 1.0], size=seg.shape[1])
    if kind == "spike":
        return seg + sign * rng.uniform(3.0, 6.0) * scale
    if kind == "level":
        return seg + sign * rng.uniform(1.0, 3.0) * scale
    if kind == "stuck":
        return np.repeat(seg[:1], m, axis=0)
    if kind == "noise":
        return seg + rng.normal(0.0, rng.uniform(0.5, 1.5), size=seg.shape) * scale
    if kind == "amplitude":
        centre = seg.mean(axis=0)
        return centre + (seg - centre) * rng.choice([0.0, rng.uniform(2.0, 3.0)])
    if kind == "drift":
        return seg + np.linspace(0.0, 1.0, m)[:, None] * sign * rng.uniform(2.0, 4.0) * scale
    if kind == "reverse":
        return seg[::-1]
    if kind == "speed":
        factor = rng.choice([0.5, 2.0, 3.0])
        positions = np.clip(np.arange(m) * factor, 0, len(source) - start - 1).astype(int)
        return source[start + positions]
    # copy / desync: the same columns at another time of the clean rows (another phase)
    offset = int(rng.integers(length // 4 + 1, max(length // 4 + 2, len(source) - m)))
    other = (start + offset) % max(1, len(source) - m)
    return source[other : other + m]


def inject(rows: np.ndarray, start: int, window: int, count: int, rng: np.random.Generator,
           kinds: tuple[str, ...] = KINDS) -> tuple[np.ndarray, np.ndarray]:
    """A copy of ``rows`` with ``count`` anomalies in steps ``start..`` and its step labels.

    Each anomaly is one kind of ``kinds`` on a random span (a window's tenth to half for shapes)
    and random columns (one, or up to a third of the injectable ones; ``desync`` always one);
    columns are scaled by their clean standard deviation.
    """
    rows = np.asarray(rows, dtype=np.float64)
    out, labels = rows.copy(), np.zeros(len(rows), dtype=bool)
    columns = injection_columns(rows[:start])
    if len(columns) == 0 or len(rows) - start < 2:
        return out, labels
    scale = rows[:start].std(axis=0)
    scale = np.where(scale > 1e-8, scale, 1.0)
    for _ in range(count):
        kind = kinds[int(rng.integers(len(kinds)))]
        length = min(_segment_length(kind, window, rng), len(rows) - start)
        at = int(rng.integers(start, len(rows) - length + 1))
        many = 1 if kind == "desync" or rng.random() < 0.5 else int(rng.integers(1, max(2, len(columns) // 3 + 1)))
        chosen = rng.choice(columns, size=min(many, len(columns)), replace=False)
        seg = out[at : at + length, chosen]
        out[at : at + length, chosen] = _apply(kind, seg, rows[:, chosen], scale[chosen], rng, at, length)
        labels[at : at + length] = True
    return out, labels


Injector = Callable[[np.ndarray, np.random.Generator], tuple[np.ndarray, np.ndarray]]
