"""Warm-up calibration: the first rows of a series scored on the same scale as the rest.

A causal model scores step t from the window that gives it the most history
(:func:`madcluster.data.windows.causal_window_of`), so after the first window every step sits at
position >= L - s of its window. The first L - s steps of a series have no earlier window: step t
sits at position t, with t steps of history. A recurrent embedder starts each window from a zero
state, so h at early positions lies elsewhere than at late ones and the scores there follow
another distribution: uncalibrated, rows 0-4 of a fresh normal series scored far above the
threshold and the next rows far below it, whatever the data.

The fix measures, on training windows each scored as if it were the start of a series, the
distribution of the score at every window position, and maps a score at an early position p onto
the distribution of the positions that later steps use (quantile mapping)::

    v' = F_ref^-1(F_p(v))        (ref: positions L - s .. L - 1 pooled)

so a warm-up step at the q-th quantile of its position scores as the q-th quantile of a later
step, and a threshold flags the same share of both on normal data. Beyond the measured range
the map continues linearly with the ratio of the two inter-decile ranges, so an anomaly in the
warm-up still scores higher the further out it lies (nothing is clipped).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from madcluster.data.window_grid import causal_window_of

WARMUP_WINDOWS = 512  # training windows whose scores give the per-position quantiles
LEVELS = 129  # quantile levels per position (0, 1/128, ..., 1)
SPREAD_FLOOR = 1e-12
# a value this close (relative) to a quantile is read as that quantile (_snap_to_quantiles)
TIE_RTOL = 1e-9


def fit_quantile_table(window_scores: np.ndarray, reference_from: int) -> np.ndarray:
    """Quantiles ``[L + 1, LEVELS]`` of scores ``[N, L]`` per window position; the last row holds
    the reference positions ``reference_from..L-1`` pooled."""
    scores = np.asarray(window_scores, dtype=np.float64)
    levels = np.linspace(0.0, 1.0, LEVELS)
    per_position = np.quantile(scores, levels, axis=0).T
    reference = np.quantile(scores[:, reference_from:].ravel(), levels)
    return np.vstack([per_position, reference[None, :]])


def calibrate(
    values: np.ndarray, positions: np.ndarray, table: np.ndarray, reference_from: int
) -> np.ndarray:
    """``values`` at window ``positions``, those before ``reference_from`` quantile-mapped onto the
    reference distribution (the module docstring's equation)."""
    out = np.asarray(values, dtype=np.float64).copy()
    early = positions < reference_from
    if not early.any():  # a stream's steady rows: nothing to map (and no table work per row)
        return out
    reference = table[-1]
    levels = np.linspace(0.0, 1.0, table.shape[1])
    for position in np.unique(positions[early]):
        rows = positions == position
        out[rows] = _map_quantiles(out[rows], table[position], reference, levels)
    return out


def _map_quantiles(
    values: np.ndarray, source: np.ndarray, target: np.ndarray, levels: np.ndarray
) -> np.ndarray:
    values = _snap_to_quantiles(values, source)
    decile = len(levels) // 10
    scale = (target[-1 - decile] - target[decile]) / max(
        source[-1 - decile] - source[decile], SPREAD_FLOOR
    )
    mapped = np.interp(np.interp(values, source, levels), levels, target)
    above, below = values > source[-1], values < source[0]
    mapped[above] = target[-1] + (values[above] - source[-1]) * scale
    mapped[below] = target[0] + (values[below] - source[0]) * scale
    return mapped


def _snap_to_quantiles(values: np.ndarray, source: np.ndarray) -> np.ndarray:
    """``values`` within :data:`TIE_RTOL` of a quantile of ``source`` set to it exactly.

    Why: where many training windows score the same at a position (identical first rows), several
    quantiles tie, and a value on the tie maps to a level that a rounding step (1e-14, a stream's
    float64 path against the whole series') can move across the tied levels: 0.36 apart on 002_MSL.
    Snapped, both paths map the same number."""
    index = np.clip(np.searchsorted(source, values), 1, len(source) - 1)
    below, above = source[index - 1], source[index]
    near_below = np.abs(values - below) <= TIE_RTOL * np.abs(below)
    near_above = np.abs(values - above) <= TIE_RTOL * np.abs(above)
    return np.where(near_below, below, np.where(near_above, above, values))


def sample_starts(n_timesteps: int, window_size: int, max_windows: int) -> np.ndarray:
    """At most ``max_windows`` window starts spread evenly over a series (the calibration set)."""
    last = n_timesteps - window_size
    count = min(max_windows, last + 1)
    return np.unique(np.linspace(0, last, count).round().astype(np.int64))


__all__ = ["WARMUP_WINDOWS", "calibrate", "fit_quantile_table", "sample_starts"]


@dataclass(frozen=True, eq=False)
class Warmup:
    """A causal model's warm-up calibration: each step's position in the window that scores it,
    and the table mapping a position's scores onto the steady positions' (``quantiles``: None for
    a model without one, whose scores are left as they are)."""

    window_size: int
    score_stride: int
    causal: bool
    quantiles: np.ndarray | None = None

    @property
    def reference_from(self) -> int:
        """First window position that steps after the first window use: L - s (0 if not causal)."""
        return self.window_size - self.score_stride if self.causal else 0

    def positions(self, steps: np.ndarray) -> np.ndarray:
        """Each step's position in the window that scores it (its history, for causal models)."""
        if not self.causal:
            return np.full(len(steps), self.window_size - 1)
        return steps - causal_window_of(steps, self.window_size, self.score_stride)

    def calibrate(self, scores: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """Warm-up calibrated scores (unchanged without a table)."""
        table = self.quantiles
        return scores if table is None else calibrate(scores, positions, table, self.reference_from)
