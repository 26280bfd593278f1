"""Input-space parts that read steps <= t only: window KMeans on trailing windows and a
nearest-neighbour discord, beside the ridge next-step predictor of :mod:`madcluster.input_terms`.

Why causal: a part that averages windows starting after step t (the centred window KMeans) cannot
stream or export. Scoring the window that ends at t reads steps t-L+1..t only; the first L-1 steps
see the first row repeated before the series (a steady start, as the ridge predictor's lags do).

The discord part (the matrix profile's idea, against the training windows): the distance of the
window ending at t to its nearest training window, each window's per-column mean removed, so it
scores shapes the training data never showed, at any level. On training rows the windows within a
window's length of the scored one are excluded (no trivial self-match), so its training
statistics describe unseen normal windows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from madcluster.score.autoregressive import AutoRegressive
from madcluster.score.parts import FitContext
from madcluster.score.window_kmeans import FEW_LEVELS, WindowKMeans, column_levels, window_distances

MAX_NEIGHBOURS = 1024  # training windows a discord compares against (a regular subsample)
_CHUNK = 1 << 22


def trailing_padded(rows: np.ndarray, window: int) -> np.ndarray:
    """``rows`` with ``window - 1`` copies of the first row before them: row t's trailing window
    is ``padded[t : t + window]``."""
    rows = np.asarray(rows)
    return np.vstack([np.repeat(rows[:1], window - 1, axis=0), rows])


@dataclass(frozen=True)
class TrailingKMeans:
    """Window KMeans scoring the window that ends at each step (causal)."""

    term: WindowKMeans
    name = "kmeans_causal"

    def scores(self, rows: np.ndarray) -> np.ndarray:
        read = np.asarray(rows) if self.term.columns is None else np.asarray(rows)[:, self.term.columns]
        padded = trailing_padded(read, self.term.window_size)
        return window_distances(self.term, padded, np.arange(len(read)))

    def reference_scores(self, rows: np.ndarray) -> np.ndarray:
        return self.scores(rows)


@dataclass(frozen=True)
class Discord:
    """Distance of each trailing window (per-column mean removed) to its nearest training window."""

    mean: np.ndarray
    scale: np.ndarray
    columns: np.ndarray
    neighbours: np.ndarray  # (N, L * C) float32, each window's column means removed
    starts: np.ndarray  # where each neighbour starts in the training rows
    window_size: int
    name = "discord"

    def _windows(self, rows: np.ndarray) -> np.ndarray:
        z = ((np.asarray(rows, dtype=np.float64)[:, self.columns] - self.mean) / self.scale).astype(np.float32)
        padded = trailing_padded(z, self.window_size)
        return np.lib.stride_tricks.sliding_window_view(padded, self.window_size, axis=0).transpose(0, 2, 1)

    def scores(self, rows: np.ndarray, exclude_own: bool = False) -> np.ndarray:
        windows = self._windows(rows)
        n = len(windows)
        out = np.empty(n)
        nb = self.neighbours
        nb_sq = np.einsum("ij,ij->i", nb, nb, dtype=np.float64)
        per = max(1, _CHUNK // max(1, nb.shape[1]))
        for lo in range(0, n, per):
            w = windows[lo : lo + per]
            w = (w - w.mean(axis=1, keepdims=True)).reshape(len(w), -1)
            sq = np.einsum("ij,ij->i", w, w, dtype=np.float64)[:, None] + nb_sq[None, :] - 2.0 * (w @ nb.T)
            if exclude_own:  # a training step's own neighbourhood is no evidence of normality
                ends = np.arange(lo, lo + len(w))[:, None]
                sq[np.abs(self.starts[None, :] + self.window_size - 1 - ends) < self.window_size] = np.inf
            best = sq.min(axis=1)
            out[lo : lo + len(w)] = np.sqrt(np.maximum(np.where(np.isfinite(best), best, 0.0), 0.0))
        return out

    def reference_scores(self, rows: np.ndarray) -> np.ndarray:
        return self.scores(rows, exclude_own=True)


def fit_discord(rows: np.ndarray, window: int) -> Discord:
    data = np.asarray(rows, dtype=np.float64)
    levels = column_levels(data)
    columns = np.flatnonzero(levels > FEW_LEVELS)
    if len(columns) == 0:
        columns = np.arange(data.shape[1])
    mean, scale = data[:, columns].mean(axis=0), data[:, columns].std(axis=0)
    scale = np.where(scale > 1e-8, scale, 1.0)
    z = ((data[:, columns] - mean) / scale).astype(np.float32)
    n_windows = len(z) - window + 1
    step = max(1, int(np.ceil(n_windows / MAX_NEIGHBOURS)))
    starts = np.arange(0, max(1, n_windows), step)
    windows = np.lib.stride_tricks.sliding_window_view(z, window, axis=0).transpose(0, 2, 1)[starts]
    windows = windows - windows.mean(axis=1, keepdims=True)
    return Discord(mean, scale, columns, np.ascontiguousarray(windows.reshape(len(starts), -1)), starts, window)


@dataclass(frozen=True)
class _Plain:
    term: WindowKMeans | AutoRegressive

    def scores(self, rows: np.ndarray) -> np.ndarray:
        return self.term.values(rows)

    def reference_scores(self, rows: np.ndarray) -> np.ndarray:
        return self.term.values(rows)


def fit_parts(names: tuple[str, ...], rows: np.ndarray, window: int, seed: int | None) -> dict:
    """The named parts fitted on ``rows``: each has ``scores(rows)`` and ``reference_scores(train)``."""
    out: dict = {}
    kmeans = None
    for name in names:
        if name in ("kmeans", "kmeans_causal"):
            kmeans = kmeans or WindowKMeans.fit(rows, FitContext(window, seed))
            out[name] = _Plain(kmeans) if name == "kmeans" else TrailingKMeans(kmeans)
        elif name == "ar":
            out[name] = _Plain(AutoRegressive.fit(rows))
        elif name == "discord":
            out[name] = fit_discord(rows, window)
        else:
            raise ValueError(f"unknown part {name!r}")
    return out
