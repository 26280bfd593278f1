"""Image anomaly-detection metrics (MVTec AD protocol): image AUROC, pixel AUROC, PRO.

- image-level AUROC: one score per image against its 0/1 label;
- pixel-level AUROC: every pixel of every test image against the ground-truth masks;
- PRO (Bergmann et al., 2020): the mean, over connected defect regions, of the fraction of each
  region above a threshold, integrated over the false-positive rate on normal pixels from 0 to
  ``fpr_limit`` (0.3) and divided by ``fpr_limit``, so 1 is perfect.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import ndimage

from madcluster.exceptions import DataError
from madcluster.metrics.pointwise import auc_roc


def image_auroc(scores: ArrayLike, labels: ArrayLike) -> float:
    """AUROC of one score per image against 0/1 image labels (ties count one half)."""
    return auc_roc(scores, labels)


def _maps_and_masks(maps: ArrayLike, masks: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    m = np.asarray(maps, dtype=np.float64)
    g = np.asarray(masks)
    if m.ndim != 3 or m.shape != g.shape:
        raise DataError(
            f"anomaly maps and masks must both be [N, H, W] of the same shape, got {m.shape} and "
            f"{g.shape}"
        )
    if not np.isfinite(m).all():
        raise DataError("anomaly maps contain NaN or inf")
    return m, g.astype(bool)


def pixel_auroc(maps: ArrayLike, masks: ArrayLike) -> float:
    """AUROC over every pixel of ``maps [N, H, W]`` against ``masks [N, H, W]`` (non-zero =
    anomalous)."""
    m, g = _maps_and_masks(maps, masks)
    return auc_roc(m.ravel(), g.ravel())


def pro_auc(
    maps: ArrayLike, masks: ArrayLike, fpr_limit: float = 0.3, n_thresholds: int = 200
) -> float:
    """Normalised area under the per-region-overlap curve up to ``fpr_limit`` (see module
    docstring).

    Thresholds are the normal-pixel score quantiles at ``n_thresholds + 1`` evenly spaced false
    positive rates in [0, fpr_limit]; regions are 8-connected components of each mask.
    """
    if not 0.0 < fpr_limit <= 1.0:
        raise DataError(f"fpr_limit must be in (0, 1], got {fpr_limit}")
    m, g = _maps_and_masks(maps, masks)
    normal = np.sort(m[~g])
    if normal.size == 0 or not g.any():
        raise DataError("PRO needs both normal and anomalous pixels")
    fprs = np.linspace(0.0, fpr_limit, n_thresholds + 1)
    # threshold with at most fpr * n normal pixels at or above it
    index = np.clip(np.ceil(normal.size * (1.0 - fprs)).astype(np.int64), 0, normal.size - 1)
    thresholds = np.where(fprs == 0.0, np.nextafter(normal[-1], np.inf), normal[index])
    actual_fpr = 1.0 - np.searchsorted(normal, thresholds, side="left") / normal.size
    overlaps = []
    structure = np.ones((3, 3), bool)
    for image_map, mask in zip(m, g):
        labelled, n_regions = ndimage.label(mask, structure=structure)
        for region in range(1, n_regions + 1):
            values = np.sort(image_map[labelled == region])
            overlaps.append(1.0 - np.searchsorted(values, thresholds, side="left") / values.size)
    pro = np.mean(overlaps, axis=0)
    order = np.argsort(actual_fpr, kind="stable")
    fpr_curve, pro_curve = actual_fpr[order], pro[order]
    # tied normal scores can jump past the limit: cut the curve there, interpolating the end point
    end = np.interp(fpr_limit, fpr_curve, pro_curve)
    keep = fpr_curve < fpr_limit
    fpr_curve = np.append(fpr_curve[keep], fpr_limit)
    pro_curve = np.append(pro_curve[keep], end)
    return float(np.trapezoid(pro_curve, fpr_curve) / fpr_limit)
