"""Sliding windows over a series and the way window-level outputs go back to time points.

Every time point of a scored series gets exactly one score: the mean over the windows that cover it.
(Time-Series-Library-derived code flattens overlapping windows and so duplicates points; we don't.)
"""

from __future__ import annotations

import numpy as np
import torch

# the grid lives in window_grid (torch-free); re-exported here
from madcluster.data.window_grid import (  # noqa: F401
    causal_window_of,
    window_starts,
    windows_to_points,
    windows_to_points_with_history,
)


def gather_windows(
    series: torch.Tensor, starts: torch.Tensor | np.ndarray, window_size: int
) -> torch.Tensor:
    """Copy the windows starting at ``starts`` out of ``series [T, D]`` into a batch ``[B, L, D]``.

    Uses an ``unfold`` view, so only the requested batch is materialised, never all windows.
    """
    view = series.unfold(0, window_size, 1)  # [T - L + 1, D, L], no copy
    idx = torch.as_tensor(starts, dtype=torch.long, device=series.device)
    return view[idx].transpose(1, 2)


def causal_window_starts(n_timesteps: int, window_size: int, stride: int) -> np.ndarray:
    """Window starts 0, s, 2s, ... up to the window of the last step, for causal models.

    Step t is scored in window :func:`causal_window_of` (t): the earliest start on the grid of
    multiples of ``stride`` whose window reaches t. That choice depends on t alone, never on the
    series length, so scoring a series whole or one row at a time
    (:mod:`madcluster.estimator.streaming`) reads each step from the same window. Windows that run
    past the series end are padded (:func:`pad_for_windows`); a causal model's steps never see the
    padding.
    """
    if window_size < 1 or stride < 1:
        raise ValueError(f"window_size and stride must be >= 1, got {window_size} and {stride}")
    if n_timesteps < 1:
        raise ValueError("the series is empty")
    last = int(causal_window_of(np.asarray([n_timesteps - 1]), window_size, stride)[0])
    return np.arange(0, last + 1, stride, dtype=np.int64)


def pad_for_windows(series: torch.Tensor, starts: np.ndarray, window_size: int) -> torch.Tensor:
    """``series [T, D]`` extended by repeating its last row so every window in ``starts`` fits."""
    missing = int(starts[-1]) + window_size - len(series)
    if missing <= 0:
        return series
    return torch.cat([series, series[-1:].expand(missing, -1)])
