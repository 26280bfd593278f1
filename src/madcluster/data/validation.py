"""Input checks in one place (the ``check_array`` of this package).

Bad input is caught here with a message that names the problem, before it reaches torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from madcluster.exceptions import DataError, DeviceError, ParameterError


def check_positive_int(name: str, value: Any) -> None:
    """Raise ``ValueError`` unless ``value`` is an int >= 1 (bools are refused)."""
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
        raise ParameterError(f"{name} must be a positive integer, got {value!r}")


def check_series(
    X: Any,
    *,
    min_length: int = 1,
    n_features: int | None = None,
    name: str = "X",
    names: Sequence[Any] | None = None,
) -> np.ndarray:
    """Return ``X`` as a C-contiguous float32 array of shape (T, D), or raise ``DataError``.

    Accepts numpy arrays, pandas DataFrames (all columns must be numeric) and nested lists.
    ``names``: the model's column names, which messages give for an array's columns (a
    DataFrame's own names come first).
    """
    labels: list[str] = []  # label-like column names of a DataFrame, for a hint
    columns: list[str] | None = None  # a DataFrame's column names, to name them in messages
    if hasattr(X, "dtypes") and hasattr(X, "columns"):  # pandas DataFrame, without importing pandas
        from pandas.api.types import is_bool_dtype, is_numeric_dtype, is_object_dtype

        if any(is_object_dtype(dt) for dt in X.dtypes):  # numbers stored as objects are numbers
            X = X.infer_objects()
        bad = [
            str(c)
            for c, dt in zip(X.columns, X.dtypes)
            if not (is_numeric_dtype(dt) or is_bool_dtype(dt))
        ]
        if bad:
            raise DataError(
                f"{name} has non-numeric column(s) {bad[:5]}: drop them or convert them to numbers "
                "(a timestamp column can be dropped, a label column passed separately)"
            )
        labels = [str(c) for c in X.columns if str(c).lower() in LABEL_LIKE_NAMES]
        columns = [str(c) for c in X.columns]
        dupes = sorted({c for c in columns if columns.count(c) > 1})
        if dupes:
            raise DataError(
                f"{name} has duplicated column name(s) {dupes[:10]}: give each column its own name"
            )
        # True/False columns read as 1/0 (beside float columns, to_numpy() alone gives objects)
        mixed = any(is_bool_dtype(dt) for dt in X.dtypes)
        X = X.to_numpy(dtype=np.float64) if mixed else X.to_numpy()
    try:
        arr = np.asarray(X)
    except (ValueError, TypeError) as exc:
        raise DataError(f"{name} could not be read as a numeric array: {exc}") from None
    if (
        arr.dtype == object
        or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool)
        or np.issubdtype(arr.dtype, np.complexfloating)
    ):
        raise DataError(f"{name} must be numeric, got dtype {arr.dtype}")
    if arr.ndim >= 1 and len(arr) == 0 and min_length <= 1:  # an empty stream update, say
        raise DataError(f"{name} is empty (no rows): give at least one row")
    if arr.ndim != 2:
        hint = " (for a univariate series use X.reshape(-1, 1))" if arr.ndim == 1 else ""
        raise DataError(f"{name} must be 2-D (time steps, features), got shape {arr.shape}{hint}")
    if arr.shape[1] == 0:
        raise DataError(f"{name} has no feature columns")
    if n_features is not None and arr.shape[1] != n_features:
        hint = ""
        if arr.shape[1] == n_features + 1 and labels:
            hint = f" (its column {labels[0]!r} looks like labels: pass it separately)"
        raise DataError(
            f"{name} has {arr.shape[1]} features but the detector was fitted on {n_features}: "
            f"score data with the same columns, in the same order, as the training data{hint}"
        )
    if columns is None and names is not None and len(names) == arr.shape[1]:
        columns = [str(n) for n in names]
    if arr.shape[0] < min_length:
        raise DataError(
            f"{name} has {arr.shape[0]} time steps, fewer than one window ({min_length}): "
            "use a longer series or a smaller window_size (--window-size)"
        )
    if np.issubdtype(arr.dtype, np.floating):
        finite = np.isfinite(arr)
        if not finite.all():
            rows, cols = np.nonzero(~finite)
            kind = "NaN" if np.isnan(arr[rows[0], cols[0]]) else "inf"
            bad = np.unique(cols)
            named = describe_columns(
                [columns[c] for c in bad] if columns is not None else bad.tolist(), limit=5
            )
            raise DataError(
                f"{name} contains {len(rows)} NaN/inf value(s) in column(s) {named} (first: "
                f"{kind} at row {rows[0]}, column {_column(columns, cols[0])}): impute or drop "
                "them before fitting or scoring"
            )
    _check_magnitude(arr, name, columns)
    return np.ascontiguousarray(arr, dtype=np.float32)


#: Largest magnitude accepted: series are standardised and fed to torch in float32, where anything
#: larger becomes inf (numpy's "overflow encountered in cast").
MAX_ABS_VALUE = float(np.finfo(np.float32).max)


def _column(columns: list[str] | None, index: Any) -> str:
    """A column as the user knows it: its name for a DataFrame, else its position."""
    return repr(columns[int(index)]) if columns is not None else str(int(index))


def _check_magnitude(arr: np.ndarray, name: str, columns: list[str] | None = None) -> None:
    """Finite values too large for float32 scaling get their own message (not "NaN/inf")."""
    if arr.dtype == bool or arr.size == 0:
        return
    if np.issubdtype(arr.dtype, np.integer) and np.iinfo(arr.dtype).max <= MAX_ABS_VALUE:
        return
    with np.errstate(over="ignore", invalid="ignore"):
        big = np.abs(arr.astype(np.float64, copy=False)) > MAX_ABS_VALUE
    if big.any():
        rows, cols = np.nonzero(big)
        raise DataError(
            f"{name} has {len(rows)} value(s) too large to scale (first: "
            f"{arr[rows[0], cols[0]]:.3g} at row {rows[0]}, column {_column(columns, cols[0])}; "
            f"float32 holds at most {MAX_ABS_VALUE:.2g}): rescale the column (e.g. other units) or "
            "remove the outliers"
        )


def feature_names(X: Any) -> np.ndarray | None:
    """Column names of a DataFrame whose names are all strings, else ``None`` (sklearn's rule)."""
    columns = getattr(X, "columns", None)
    if columns is None or not hasattr(X, "dtypes"):
        return None
    names = list(columns)
    if not names or not all(isinstance(c, str) for c in names):
        return None
    return np.asarray(names, dtype=object)


def describe_columns(names: Any, limit: int = 10) -> str:
    """``['a', 'b', ...] (+N more)``: a column list short enough for a one-line message."""
    names = [str(n) for n in names]
    more = f" (+{len(names) - limit} more)" if len(names) > limit else ""
    return f"{names[:limit]}{more}"


def align_columns(X: Any, fitted_names: Any, *, name: str = "X") -> Any:
    """``X`` with its columns in the training order, matched by name; ``DataError`` if they differ.

    Only named input (a DataFrame with string column names) is checked; arrays are taken by
    position, as in scikit-learn. Same names in another order are reordered: scoring reordered
    columns by position would silently give different scores.
    """
    names = feature_names(X)
    if names is None or fitted_names is None:
        return X
    fitted = [str(n) for n in fitted_names]
    given = [str(n) for n in names]
    if given == fitted:
        return X
    missing = [c for c in fitted if c not in given]
    unexpected = [c for c in given if c not in fitted]
    if not missing and not unexpected:
        return X[fitted]
    parts = []
    if missing:
        parts.append(f"missing {describe_columns(missing)}")
    if unexpected:
        parts.append(f"not seen at fit time {describe_columns(unexpected)}")
    hint = ""
    labels = [c for c in unexpected if c.lower() in LABEL_LIKE_NAMES]
    if labels:
        hint = (
            f"; {labels[0]!r} looks like a label column: pass labels separately, not as a feature"
        )
    elif missing and len(missing) == len(unexpected):
        hint = "; were columns renamed?"
    raise DataError(
        f"{name}'s columns do not match the training columns {describe_columns(fitted)}: "
        f"{'; '.join(parts)}{hint}"
    )


#: Column names that usually hold 0/1 ground truth rather than a feature.
LABEL_LIKE_NAMES = ("label", "labels", "anomaly", "is_anomaly", "anomalous", "attack", "outlier")


def check_device(name: Any) -> Any:
    """``name`` as a ``torch.device`` that exists here, or ``DeviceError`` saying what to use.

    ``"auto"`` is CUDA when available, else CPU. Asking for CUDA (or MPS) on a machine or torch
    build without it fails here with one line, not with torch's ``AssertionError`` mid-fit.
    """
    import torch

    if name is None or name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if isinstance(name, torch.device):
        device = name
    else:
        try:
            device = torch.device(str(name))
        except (RuntimeError, ValueError):
            raise DeviceError(
                f"unknown device {str(name)!r}: use cpu, cuda, cuda:N or auto"
            ) from None
    if device.type == "cuda":
        if not torch.cuda.is_available():
            why = (
                "this torch build has no CUDA support"
                if torch.version.cuda is None
                else "no CUDA GPU is visible"
            )
            raise DeviceError(f"device {str(name)!r} is not available: {why}; use cpu or auto")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise DeviceError(
                f"device {str(name)!r} is not available: "
                f"{torch.cuda.device_count()} CUDA device(s) visible"
            )
    elif device.type == "mps":
        mps = getattr(torch.backends, "mps", None)
        if mps is None or not mps.is_available():
            raise DeviceError(f"device {str(name)!r} is not available here; use cpu or auto")
    return device
