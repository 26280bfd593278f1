"""The window-KMeans part's causal reading: the windows that will cover a step, read as far as they go.

A step's final KMeans value averages the distances of the grid windows covering it, and all but
one of them end after it. The reading before this one (kept for model files written before it)
took the one window *ending* at t, where a new anomaly is one row of L: the part lagged by up to a
window. Here each grid window starting in ``[t - L + 1, t]`` is matched on the rows it has so far,
``[s, t]``, to the nearest centroid's first ``t - s + 1`` rows, and the step's value is the
distance of all those observed rows pooled, scaled to a whole window:
``sqrt(L * sum_w min_c SSE_w,c / sum_w m_w)``. It is the final value with the rows still to come
assumed as typical as the rows seen, and it reads steps <= t only.

Measured on the development families (``benchmarks/studies/streaming/at_once_prefix.py``, the at-once
score with each part's causal reading): the 46 TSB-AD series .515 -> .541, the chaotic family
.522 -> .578, no family lower by more than .011 (point anomalies).

Before the series' first row the rows are the first row repeated (as the old reading padded).
The whole series (:func:`prefix_reading`) and a stream (:class:`PrefixStream`, which extends each
open window's sums by the new row) add the same squared differences in the same order, so a
stream's values are the whole series' to the bit.
"""

from __future__ import annotations

import weakref
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


def prefix_sums(part: WindowCentroids, windows: np.ndarray) -> np.ndarray:
    """``sums [w, k, L]``: for each of the scaled ``windows [w, L, C]``, each centroid and each
    prefix length m = 1..L, the sum of squared differences of the first m rows (a sequential
    cumulative sum, so a stream adding a row at a time gets the same bits)."""
    centroids = _centroids(part)
    per_row = ((windows[:, None] - centroids[None]) ** 2).sum(axis=-1)  # [w, k, L]
    return np.cumsum(per_row, axis=-1)


def prefix_errors(part: WindowCentroids, windows: np.ndarray) -> np.ndarray:
    """``errors [w, L]``: :func:`prefix_sums`' least over the centroids, in chunks of windows."""
    per_chunk = max(1, _CHUNK_VALUES // np.asarray(part.centroids).size)
    errors = np.empty((len(windows), part.window_size))
    for lo in range(0, len(windows), per_chunk):
        block = windows[lo : lo + per_chunk]
        errors[lo : lo + len(block)] = prefix_sums(part, block).min(axis=1)
    return errors


def _centroids(part: WindowCentroids) -> np.ndarray:
    """The centroids as ``[k, L, C]`` float64."""
    centroids = np.asarray(part.centroids, dtype=np.float64)
    return centroids.reshape(len(centroids), part.window_size, -1)


def _grid_windows(
    part: WindowCentroids, rows: np.ndarray, first_step: int, starts: np.ndarray
) -> np.ndarray:
    """The scaled rows ``[w, L, C]`` of the windows starting at ``starts`` (absolute) of a series
    whose rows from ``first_step`` on are ``rows``: the first row repeated before the series, the
    last one after what is seen (no prefix reaches those)."""
    if first_step > 0 and len(starts) and int(starts[0]) < first_step:
        raise ValueError("the rows start after the first window the steps need")
    positions = np.clip(
        starts[:, None] + np.arange(part.window_size), first_step, first_step + len(rows) - 1
    )
    positions -= first_step
    used = np.unique(positions)
    scaled = (np.asarray(rows, dtype=np.float64)[used] - part.scaler_mean) / part.scaler_scale
    return scaled[np.searchsorted(used, positions)]


def _first_start(part: WindowCentroids, step: int) -> int:
    """The first grid window (every ``stride`` steps, the grid's first reaching step 0) that
    covers ``step``."""
    window, stride = part.window_size, part.stride
    lowest = -((window - 1) // stride) * stride
    return max(lowest, -(-(step - window + 1) // stride) * stride)


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
    first_start = _first_start(part, int(steps[0]))
    starts = np.arange(first_start, int(steps[-1]) + 1, stride, dtype=np.int64)
    windows = _grid_windows(part, rows, first_step, starts)
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


_BY_POSITION: dict[int, tuple[weakref.ref, np.ndarray]] = {}


def _by_position(part: WindowCentroids) -> np.ndarray:
    """The centroids as ``[L, k, C]``, made once per part and shared, read-only, by its streams:
    a copy per stream was 62.5 KB of each stream of the default model on 8 columns (a server holds
    thousands)."""
    key = id(part)
    known = _BY_POSITION.get(key)
    if known is not None and known[0]() is part:
        return known[1]
    array = np.ascontiguousarray(_centroids(part).transpose(1, 0, 2))
    array.flags.writeable = False
    try:
        _BY_POSITION[key] = (weakref.ref(part, lambda _: _BY_POSITION.pop(key, None)), array)
    except TypeError:  # a part that takes no weak reference: its own copy
        pass
    return array


class PrefixStream:
    """:func:`prefix_reading` over a growing series, a row at a time: the open windows' sums of
    squared errors per centroid, each extended by the new row (about 10 windows x k centroids),
    where the whole-series reading recomputes every window. Nothing of it is saved: after a
    restore it is rebuilt from the rows the KMeans stream keeps (they cover every open window)."""

    def __init__(self, part: WindowCentroids) -> None:
        self.part = part
        self.by_position = _by_position(part)  # [L, k, C], shared by the part's streams
        self.starts: np.ndarray | None = None  # None: rebuild at the next step
        self.sums = np.empty((0, len(part.centroids)))

    def reset(self) -> None:
        """Rebuild from rows at the next step (a restored stream)."""
        self.starts = None

    def values(self, rows: np.ndarray, first_step: int, steps: range) -> np.ndarray:
        """The reading of ``steps`` (the next ones, in order) of a series whose rows from
        ``first_step`` on are ``rows`` (the part's columns; every open window's rows)."""
        out = np.empty(len(steps))
        for i, step in enumerate(steps):
            if self.starts is None:
                self._rebuild(rows, first_step, step)
            else:
                self._advance(rows[step - first_step], step)
            out[i] = self._pooled(step)
        return out

    def _rebuild(self, rows: np.ndarray, first_step: int, step: int) -> None:
        starts = np.arange(
            _first_start(self.part, step), step + 1, self.part.stride, dtype=np.int64
        )
        sums = prefix_sums(self.part, _grid_windows(self.part, rows, first_step, starts))
        self.starts, self.sums = starts, sums[np.arange(len(starts)), :, step - starts]

    def _advance(self, row: np.ndarray, step: int) -> None:
        assert self.starts is not None
        keep = self.starts > step - self.part.window_size
        self.starts, self.sums = self.starts[keep], self.sums[keep]
        if step % self.part.stride == 0:
            self.starts = np.append(self.starts, step)
            self.sums = np.vstack([self.sums, np.zeros((1, self.sums.shape[1]))])
        scaled = (
            np.asarray(row, dtype=np.float64) - self.part.scaler_mean
        ) / self.part.scaler_scale
        self.sums += ((scaled - self.by_position[step - self.starts]) ** 2).sum(axis=-1)

    def _pooled(self, step: int) -> float:
        assert self.starts is not None
        total = 0.0
        for value in self.sums.min(axis=1)[::-1]:  # newest window first, as prefix_reading adds
            total += value
        observed = float(np.sum(step - self.starts + 1))
        return float(np.sqrt(max(total, 0.0) / max(observed, 1.0) * self.part.window_size))


__all__ = ["PrefixStream", "prefix_errors", "prefix_reading", "prefix_sums"]
