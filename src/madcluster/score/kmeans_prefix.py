"""The window-KMeans part's causal reading: the windows that will cover a step, read as far as they go.

A step's final KMeans value averages the distances of the grid windows covering it, and all but
one of them end after it. The reading before this one (kept for model files written before it)
took the one window *ending* at t, where a new anomaly is one row of L: the part lagged by up to a
window. Here each grid window starting in ``[t - L + 1, t]`` is matched on the rows it has so far,
``[s, t]``, to the nearest centroid's first ``t - s + 1`` rows, and the step's value is the
distance of all those observed rows pooled, scaled to a whole window:
``sqrt(L * sum_w min_c SSE_w,c / sum_w m_w)``. It is the final value with the rows still to come
assumed as typical as the rows seen, and it reads steps <= t only.

Measured on the development families (``benchmarks/studies/at_once_prefix.py``, the at-once
score with each part's causal reading): the 46 TSB-AD series .515 -> .541, the chaotic family
.522 -> .578, no family lower by more than .011 (point anomalies).

Before the series' first row the rows are the first row repeated (as the old reading padded).
Both the whole series and a stream go through :func:`prefix_reading` on the same rows, so a
stream's values are the whole series' to the bit.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np


class WindowCentroids(Protocol):
    """What the reading needs of a fitted window-KMeans part
    (:class:`~madcluster.score.window_kmeans.WindowKMeans`)."""

    scaler_mean: np.ndarray
    scaler_scale: np.ndarray
    centroids: np.ndarray  # (k, L * C), position-major
    window_size: int
    stride: int


_CHUNK_VALUES = 1 << 22  # windows x centroids x positions x columns computed at a time (32 MB)


def prefix_errors(part: WindowCentroids, windows: np.ndarray) -> np.ndarray:
    """``errors [w, L]``: for each of the scaled ``windows [w, L, C]`` and each prefix length
    m = 1..L, the least sum of squared differences over the centroids of its first m rows."""
    window = part.window_size
    centroids = np.asarray(part.centroids, dtype=np.float64).reshape(
        len(part.centroids), window, -1
    )
    per_chunk = max(1, _CHUNK_VALUES // centroids.size)
    errors = np.empty((len(windows), window))
    for lo in range(0, len(windows), per_chunk):
        block = windows[lo : lo + per_chunk]
        per_row = ((block[:, None] - centroids[None]) ** 2).sum(axis=-1)  # [w, k, L]
        errors[lo : lo + len(block)] = np.cumsum(per_row, axis=-1).min(axis=1)
    return errors


def prefix_reading(
    part: WindowCentroids, rows: np.ndarray, first_step: int, steps: np.ndarray
) -> np.ndarray:
    """The causal reading (module docstring) of ``steps`` (absolute, ascending) of a series whose
    rows from step ``first_step`` on are ``rows`` (the part's columns, unscaled). ``rows`` must
    hold every step from ``steps[0] - L + 1`` (or the series' start) to ``steps[-1]``."""
    steps = np.asarray(steps, dtype=np.int64)
    if len(steps) == 0:
        return np.empty(0)
    window, stride = part.window_size, part.stride
    lowest = -((window - 1) // stride) * stride  # the grid's first window reaching step 0
    first_start = max(lowest, -(-(int(steps[0]) - window + 1) // stride) * stride)
    starts = np.arange(first_start, int(steps[-1]) + 1, stride, dtype=np.int64)
    if first_step > 0 and first_start < first_step:
        raise ValueError("prefix_reading: rows start after the first window the steps need")
    # the windows' rows: the first row repeated before the series, the last after what is seen
    # (prefixes never reach those)
    positions = np.clip(starts[:, None] + np.arange(window), first_step, first_step + len(rows) - 1)
    positions -= first_step
    used = np.unique(positions)
    scaled = (np.asarray(rows, dtype=np.float64)[used] - part.scaler_mean) / part.scaler_scale
    windows = scaled[np.searchsorted(used, positions)]
    errors = prefix_errors(part, windows)
    total, observed = np.zeros(len(steps)), np.zeros(len(steps))
    newest = (steps - first_start) // stride  # the window starting at or before each step
    for back in range(-(-window // stride)):
        index = newest - back
        prefix = steps - starts[np.maximum(index, 0)] + 1  # rows each window has seen at the step
        valid = (index >= 0) & (prefix <= window)
        total += np.where(valid, errors[np.maximum(index, 0), np.clip(prefix, 1, window) - 1], 0.0)
        observed += np.where(valid, prefix, 0)
    return np.sqrt(np.maximum(total, 0.0) / np.maximum(observed, 1) * window)


__all__ = ["prefix_errors", "prefix_reading"]
