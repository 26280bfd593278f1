"""A request's rows and stream ids, checked before anything is scored: a ``DataError`` naming the
problem (shape, NaN, a value past float32, columns that do not match the model's), never a
traceback from numpy or torch."""

from __future__ import annotations

import re

import numpy as np

from madcluster.data.validation import MAX_ABS_VALUE
from madcluster.estimator.detector import MADCluster
from madcluster.exceptions import DataError

STREAM_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def rows_array(model: MADCluster, rows: list[list[float]], columns: list[str] | None) -> np.ndarray:
    """The request's rows as a ``(T, D)`` array in the model's column order, or a ``DataError``."""
    names = getattr(model, "feature_names_in_", None)
    names = None if names is None else [str(n) for n in names]
    expected = int(model.n_features_in_)
    lengths = (
        {len(row) for row in rows}
        if isinstance(rows, list) and all(isinstance(r, list) for r in rows)
        else set()
    )
    if len(lengths) > 1:
        first = len(rows[0])
        odd = next(i for i, row in enumerate(rows) if len(row) != first)
        raise DataError(
            f"rows must all have the same length: row 0 has {first} values, row {odd} has "
            f"{len(rows[odd])}"
        )
    try:
        data = np.asarray(rows, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataError(f"rows must be a list of equally long lists of numbers: {exc}") from None
    if data.ndim != 2 or data.shape[0] == 0:
        raise DataError(
            f"rows must be a non-empty list of rows (lists of {expected} numbers), got shape "
            f"{data.shape}"
        )
    if columns is None:
        if data.shape[1] != expected:
            hint = f" ({', '.join(names)})" if names is not None else ""
            raise DataError(f"each row needs {expected} values{hint}, got {data.shape[1]}")
        return _finite(data, names)
    if len(columns) != data.shape[1]:
        raise DataError(f"{len(columns)} columns named but rows have {data.shape[1]} values")
    repeated = sorted({c for c in columns if columns.count(c) > 1})
    if repeated:
        raise DataError(
            f"columns name {', '.join(map(repr, repeated))} more than once: each column once, "
            "please"
        )
    if names is None:
        if len(columns) != expected:
            raise DataError(f"the model takes {expected} columns, got {len(columns)}")
        return _finite(data, list(columns))
    missing = [n for n in names if n not in columns]
    unexpected = [c for c in columns if c not in set(names)]
    if missing or unexpected:
        raise DataError(
            f"columns do not match the model's: missing {missing}, unexpected {unexpected}"
        )
    order = [columns.index(n) for n in names]
    return _finite(data[:, order], names)


def _finite(data: np.ndarray, names: list[str] | None = None) -> np.ndarray:
    """``data``, or a ``DataError`` naming the first NaN / infinite / too large value by row and
    column (by name when the model has names, both for NaN and for 1e300)."""
    for bad, what in (
        (~np.isfinite(data), "NaN or infinite"),
        (np.abs(data) > MAX_ABS_VALUE, "too large"),
    ):
        where = np.argwhere(bad)
        if len(where):
            row, col = where[0]
            column = repr(names[col]) if names is not None else f"{col}"
            limit = (
                f" (beyond {MAX_ABS_VALUE:.3g}, the float32 range the model computes in)"
                if what == "too large"
                else ""
            )
            raise DataError(
                f"rows hold {len(where)} {what} value(s){limit}, the first at row {row}, column "
                f"{column}: "
                f"{float(data[row, col])!r}"
            )
    return data


def check_stream_id(stream_id: str) -> None:
    if not STREAM_ID.match(stream_id):
        raise DataError(
            f"stream id {stream_id!r} must be 1-128 letters, digits, '.', '_' or '-' (starting "
            "with a letter or digit)"
        )


__all__ = ["STREAM_ID", "check_stream_id", "rows_array"]
