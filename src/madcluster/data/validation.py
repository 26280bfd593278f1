"""Input checks in one place (the ``check_array`` of this package).

Bad input is caught here with a message that names the problem, before it reaches torch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from madcluster.exceptions import DataError


def check_series(
    X: Any,
    *,
    min_length: int = 1,
    n_features: int | None = None,
    name: str = "X",
) -> np.ndarray:
    """Return ``X`` as a C-contiguous float32 array of shape (T, D), or raise ``DataError``.

    Accepts numpy arrays, pandas DataFrames (all columns must be numeric) and nested lists.
    """
    if hasattr(X, "dtypes") and hasattr(X, "columns"):  # pandas DataFrame, without importing pandas
        from pandas.api.types import is_bool_dtype, is_numeric_dtype

        bad = [str(c) for c, dt in zip(X.columns, X.dtypes) if not (is_numeric_dtype(dt) or is_bool_dtype(dt))]
        if bad:
            raise DataError(
                f"{name} has non-numeric column(s) {bad[:5]}: drop them or convert them to numbers "
                "(a timestamp column can be dropped, a label column passed separately)"
            )
        X = X.to_numpy()
    try:
        arr = np.asarray(X)
    except (ValueError, TypeError) as exc:
        raise DataError(f"{name} could not be read as a numeric array: {exc}") from None
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise DataError(f"{name} must be numeric, got dtype {arr.dtype}")
    if arr.ndim != 2:
        hint = " (for a univariate series use X.reshape(-1, 1))" if arr.ndim == 1 else ""
        raise DataError(f"{name} must be 2-D (time steps, features), got shape {arr.shape}{hint}")
    if arr.shape[1] == 0:
        raise DataError(f"{name} has no feature columns")
    if n_features is not None and arr.shape[1] != n_features:
        raise DataError(
            f"{name} has {arr.shape[1]} features but the detector was fitted on {n_features}: "
            "score data with the same columns, in the same order, as the training data"
        )
    if arr.shape[0] < min_length:
        raise DataError(
            f"{name} has {arr.shape[0]} time steps, fewer than one window ({min_length}): "
            "use a longer series or a smaller window_size"
        )
    arr = np.ascontiguousarray(arr, dtype=np.float32)
    finite = np.isfinite(arr)
    if not finite.all():
        rows, cols = np.nonzero(~finite)
        kind = "NaN" if np.isnan(arr[rows[0], cols[0]]) else "inf"
        raise DataError(
            f"{name} contains {len(rows)} NaN/inf value(s) (first: {kind} at row {rows[0]}, column {cols[0]}): "
            "impute or drop them before fitting or scoring"
        )
    return arr
