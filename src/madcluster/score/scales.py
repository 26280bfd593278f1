"""Scales read from the training series instead of constants (benchmarks/results/parts/families.md).

Why: one window length is a few cycles of one series and a fraction of a cycle of another.
TSB-AD sets each detector's window per series from the autocorrelation's highest peak
(:func:`madcluster.metrics.tsbad.find_length_rank`); the parts that compare subsequences do the
same here, with the detector's window as the fallback when no column has a usable period.
"""

from __future__ import annotations

import numpy as np

from madcluster.metrics.tsbad import DEFAULT_PERIOD, find_length_rank

MAX_COLUMNS = 16  # periods of at most this many columns (the most variable ones) are read


def dominant_period(rows: np.ndarray, fallback: int) -> int:
    """The median, over the columns of ``rows`` ``(T, C)`` with a usable autocorrelation peak, of
    TSB-AD's period; ``fallback`` where none has one."""
    data = np.asarray(rows, dtype=np.float64)
    if data.ndim == 1:
        data = data[:, None]
    spread = data.std(axis=0)
    order = np.argsort(-spread)[:MAX_COLUMNS]
    periods = []
    for j in order:
        if spread[j] <= 1e-12:
            continue
        lag = find_length_rank(data[:, j])
        if lag != DEFAULT_PERIOD:
            periods.append(lag)
    return int(np.median(periods)) if periods else int(fallback)


__all__ = ["dominant_period"]
