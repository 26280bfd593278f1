"""Per-channel input scaling fitted on the training series, and the network's input.

The network sees the scaled input and, with a roughness window, each channel's roughness
(:func:`madcluster.data.features.roughness`) scaled with its own training statistics.
"""

from __future__ import annotations

import numpy as np

from madcluster.data.features import roughness

SCALINGS = ("standard", "minmax")


def fit_scaler(data: np.ndarray, scaling: str) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel offset and scale of ``scaling`` (a constant channel keeps scale 1)."""
    if scaling == "minmax":
        offset = data.min(axis=0).astype(np.float64)
        scale = data.max(axis=0).astype(np.float64) - offset
    else:
        offset = data.mean(axis=0, dtype=np.float64)
        scale = data.std(axis=0, dtype=np.float64)
    return offset, np.where(scale > 1e-8, scale, 1.0)


def fit_input_scaler(
    data: np.ndarray, scaling: str, roughness_window: int
) -> tuple[np.ndarray, np.ndarray]:
    """Offsets and scales of the input channels, then of their roughness channels (if any)."""
    offset, scale = fit_scaler(data, scaling)
    if roughness_window:
        rough = roughness((data - offset) / scale, roughness_window)
        rough_offset, rough_scale = fit_scaler(rough[1:], scaling)  # row 0 has no difference (NaN)
        offset, scale = np.concatenate([offset, rough_offset]), np.concatenate([scale, rough_scale])
    return offset, scale


def model_input(
    data: np.ndarray, offset: np.ndarray, scale: np.ndarray, roughness_window: int
) -> np.ndarray:
    """What the network sees, float32 ``(T, model width)``: the scaled input and, with
    ``roughness_window``, its scaled roughness channels."""
    d = data.shape[1]
    scaled = (data - offset[:d]) / scale[:d]
    if roughness_window:
        rough = np.nan_to_num(
            (roughness(scaled, roughness_window) - offset[d:]) / scale[d:], nan=0.0
        )
        # row 0: the training mean (no difference yet)
        scaled = np.concatenate([scaled, rough], axis=1)
    return scaled.astype(np.float32)
