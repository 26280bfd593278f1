"""Where windows start: the two grids every scoring path shares, and how per-window values map
back to the steps, in numpy alone.

Kept apart from :mod:`madcluster.data.windows` (which gathers windows as torch tensors) so that
what needs only the grid, such as :class:`~madcluster.estimator.onnx_scorer.OnnxScorer` and the
input terms it adds, runs without torch.
"""

from __future__ import annotations

import numpy as np

from madcluster.exceptions import ParameterError


def window_starts(n_timesteps: int, window_size: int, stride: int) -> np.ndarray:
    """Start indices of windows of ``window_size`` every ``stride`` steps, covering the whole
    series.

    The last window is aligned to end exactly at the series end, so no trailing point is dropped.
    """
    if window_size < 1 or stride < 1:
        raise ParameterError(f"window_size and stride must be >= 1, got {window_size} and {stride}")
    if n_timesteps < window_size:
        raise ParameterError(
            f"series of {n_timesteps} steps is shorter than one window ({window_size})"
        )
    last = n_timesteps - window_size
    starts = np.arange(0, last + 1, stride, dtype=np.int64)
    if starts[-1] != last:
        starts = np.append(starts, last)
    return starts


def causal_window_of(steps: np.ndarray, window_size: int, stride: int) -> np.ndarray:
    """Start of the window that scores each step: ``max(0, ceil((t - L + 1) / s)) * s``.

    After the first window every step sits at position >= L - s of its window, i.e. has at least
    L - s steps of history; steps 0..L-s-1 sit at position t (the warm-up, see
    :mod:`madcluster.estimator.warmup`).
    """
    steps = np.asarray(steps, dtype=np.int64)
    return np.maximum(0, -(-(steps - window_size + 1) // stride)) * stride


def windows_to_points(
    window_values: np.ndarray, starts: np.ndarray, n_timesteps: int
) -> np.ndarray:
    """Average per-window, per-step values ``[N, L]`` back onto the ``n_timesteps`` time points."""
    window_size = window_values.shape[1]
    positions = (starts[:, None] + np.arange(window_size)[None, :]).ravel()
    totals = np.bincount(
        positions, weights=window_values.ravel().astype(np.float64), minlength=n_timesteps
    )
    counts = np.bincount(positions, minlength=n_timesteps)
    if np.any(counts == 0):
        raise ParameterError("windows do not cover every time point")
    return totals / counts


def windows_to_points_with_history(
    window_values: np.ndarray, starts: np.ndarray, n_timesteps: int
) -> np.ndarray:
    """One value per time point from the covering window in which it has the most history.

    For causal embedders: point t takes its value from the earliest-starting window that covers it,
    i.e. the one where t sits furthest from the window start. With windows every s steps each point
    (after the first window) then has at least L - s steps of context, and no artefact repeats with
    the window period. ``starts`` must be increasing and cover every point.
    """
    window_size = window_values.shape[1]
    t = np.arange(n_timesteps)
    # index of the first window whose last step reaches t
    first = np.searchsorted(starts + window_size - 1, t, side="left")
    if np.any(first >= len(starts)) or np.any(starts[np.minimum(first, len(starts) - 1)] > t):
        raise ParameterError("windows do not cover every time point")
    return window_values[first, t - starts[first]].astype(np.float64)


__all__ = [
    "causal_window_of",
    "window_starts",
    "windows_to_points",
    "windows_to_points_with_history",
]
