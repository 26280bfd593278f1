"""Input checks shared by every metric, so each one fails the same way on the same bad input.

Every problem raises :class:`madcluster.exceptions.DataError`, a ``ValueError`` subclass.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from madcluster.exceptions import DataError


def _as_1d(x: Any, name: str) -> np.ndarray:
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError) as exc:
        raise DataError(f"{name} could not be read as a numeric array: {exc}") from None
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise DataError(f"{name} must be numeric, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise DataError(
            f"{name} must be 1-D (one value per time point), got shape {arr.shape}; "
            "flatten point-level scores/labels first"
        )
    if arr.size == 0:
        raise DataError(f"{name} is empty")
    return arr


def check_scores(scores: Any, name: str = "scores") -> np.ndarray:
    """Return ``scores`` as a 1-D float64 array, or raise if it is not 1-D, numeric and finite.

    float64 so that thresholds taken from the sorted scores compare exactly with the scores.
    """
    arr = _as_1d(scores, name).astype(np.float64, copy=False)
    if not np.isfinite(arr).all():
        bad = np.flatnonzero(~np.isfinite(arr))
        kind = "NaN" if np.isnan(arr[bad[0]]) else "inf"
        raise DataError(
            f"{name} contains {bad.size} non-finite value(s) ({kind} at index {bad[0]}): "
            "metrics are undefined on NaN/inf scores; fix or drop those points"
        )
    return arr


def check_binary(values: Any, name: str = "labels") -> np.ndarray:
    """Return 0/1 (or boolean) ``values`` as a 1-D bool array, or raise."""
    arr = _as_1d(values, name)
    if arr.dtype == bool:
        return arr
    ok = (arr == 0) | (arr == 1)
    if not ok.all():
        bad = np.flatnonzero(~ok)
        raise DataError(
            f"{name} must contain only 0 and 1, found {arr[bad[0]].item()!r} at index {bad[0]} "
            f"({bad.size} bad value(s)); binarise them first (e.g. labels > 0)"
        )
    return arr.astype(bool)


def check_same_length(a: np.ndarray, b: np.ndarray, name_a: str, name_b: str) -> None:
    if a.shape[0] != b.shape[0]:
        raise DataError(
            f"{name_a} has {a.shape[0]} points but {name_b} has {b.shape[0]}: "
            "they must be aligned, one value per time point"
        )


def require_anomaly(labels: np.ndarray, what: str) -> None:
    if not labels.any():
        raise DataError(f"labels contain no anomaly: {what} is undefined without anomalous points")


def require_normal(labels: np.ndarray, what: str) -> None:
    if labels.all():
        raise DataError(
            f"labels contain no normal point: {what} is undefined when every point is anomalous"
        )


def check_window(window: Any, name: str = "window") -> int:
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 0:
        raise DataError(f"{name} must be a non-negative integer, got {window!r}")
    return int(window)
