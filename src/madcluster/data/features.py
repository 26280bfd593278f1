"""Input features derived from the series before windowing.

``roughness`` is the detector's ``roughness_window`` option: per channel, the log of the mean
squared first difference over the trailing ``window`` steps. A model trained to map normal windows
onto one center learns to ignore the noise in them, so extra noise (a variance burst) or its
absence (a stuck sensor: a flat line) barely moves h; as a channel of its own, the local roughness
is a level, which the same model does see. Causal, so that scoring a step never reads the future.
"""

from __future__ import annotations

import numpy as np

from madcluster.exceptions import ParameterError

ROUGHNESS_EPS = 1e-4  # in squared units of the (already standardised) input: (1% of a std)^2


def roughness(series: np.ndarray, window: int, eps: float = ROUGHNESS_EPS) -> np.ndarray:
    """``log(eps + mean(diff(x)^2 over steps t-window+1..t))`` per channel, ``(T, D)`` float64.

    Step 0 has no difference yet: its row is NaN (the detector puts the training mean there; a
    difference of 0 would read as a stuck sensor and flag the first row of every series). Steps
    1..window-1 average the differences they have, so the output has one row per input row and
    depends on the past only.
    """
    if window < 1:
        raise ParameterError(f"the roughness window must be >= 1, got {window}")
    x = np.asarray(series, dtype=np.float64)
    squared = np.square(np.diff(x, axis=0, prepend=x[:1]))
    total = np.cumsum(squared, axis=0)
    mean = np.empty_like(total)
    mean[window:] = (total[window:] - total[:-window]) / window
    head = min(window, len(x))
    mean[:head] = total[:head] / np.maximum(np.arange(head), 1)[:, None]  # row 0 holds 0 / 1
    mean[0] = np.nan
    # max: cumsum differences can dip below 0 by rounding
    return np.log(np.maximum(mean, 0.0) + eps)


__all__ = ["ROUGHNESS_EPS", "roughness"]
