"""Where windows start: the two grids every scoring path shares, in numpy alone.

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


__all__ = ["causal_window_of", "window_starts"]
