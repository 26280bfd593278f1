"""Reading a user's multivariate series from a file: CSV, Parquet or ``.npy``.

:func:`read_table` turns one file into a :class:`Table`: the feature matrix (float32, checked with
:func:`~madcluster.data.validation.check_series`), the optional 0/1 label column, and the feature
column names, plus what the caller may want to report or keep (dropped columns, the timestamp
column's values, whether the CSV had a header row). Rules, in order:

1. ``label_column`` (a name, or an integer position) is taken out as labels, which must be 0/1.
2. ``drop_columns`` are removed; if ``columns`` is given, exactly those columns (in that order)
   are the features and nothing else is dropped automatically.
3. Otherwise every remaining column is a feature, except timestamp-like columns, which are
   dropped and logged (``logging`` at INFO level, logger ``madcluster.data.io``): a column whose
   name contains ``time`` or ``date`` (any case), or a non-numeric column whose values parse as
   dates/times.
4. Any other non-numeric column is an error that names it.

``.npy`` files must hold one 2-D numeric array (loaded with ``allow_pickle=False``); their columns
are named ``"0"``, ``"1"``, ... and can be referred to by integer position (or by that name).

CSV files are read as :mod:`madcluster.data.csv_format` describes: encoding, field separator,
decimal mark and header row are detected (``header=None``: a first row made only of numbers is
data, unless it is exactly ``0, 1, ..., D-1``); a headerless CSV gets columns ``"0"``, ``"1"``,
... like ``.npy``, and a warning says so. Duplicated column names are an error naming them.
A timestamp column is checked for time order (:mod:`madcluster.data.time_order`).
"""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from madcluster.data.csv_format import HEADER_ATTR, read_csv_frame
from madcluster.data.table import (
    SUPPORTED_SUFFIXES,
    ColumnKey,
    Table,
    as_labels,
    check_features,
    choose_columns,
    existing_file,
    file_format,
    has_pandas,
    label_like_columns,
    load_npy,
)
from madcluster.data.time_order import time_order
from madcluster.data.validation import check_series
from madcluster.exceptions import DataError

logger = logging.getLogger(__name__)

_TIME_NAME_HINTS = ("time", "date")


def read_table(
    path: str | os.PathLike[str],
    *,
    label_column: ColumnKey | None = None,
    columns: Sequence[ColumnKey] | None = None,
    drop_columns: Sequence[ColumnKey] | None = None,
    fill_missing: bool = False,
    header: bool | None = None,
    sep: str | None = None,
    decimal: str | None = None,
    encoding: str | None = None,
    sort_by_time: bool = False,
) -> Table:
    """Read a CSV / Parquet / ``.npy`` file into a :class:`Table` (see the module docstring).

    ``fill_missing=True`` forward-fills NaNs down each feature column and sets what is still missing
    (leading NaNs) to 0, instead of raising; used for PSM, whose public ``train.csv`` has gaps.
    ``sep`` / ``decimal`` / ``encoding`` override what is detected in a CSV; ``sort_by_time``
    sorts the rows by the timestamp column (rows out of time order are otherwise an error, see
    :mod:`madcluster.data.time_order`).
    Raises ``DatasetNotFoundError`` (a ``FileNotFoundError``) for a missing file and ``DataError``
    for everything else that makes the file unusable.
    """
    path = Path(path)
    if not has_pandas():  # the torch-free install (docs/export.md)
        from madcluster.data.plain_table import read_plain_columns, table_from_columns

        if fill_missing:
            raise ImportError("fill_missing=True needs pandas: pip install pandas")
        kind = existing_file(path)
        names, data, has_header = read_plain_columns(
            path, kind, header=header, sep=sep, decimal=decimal, encoding=encoding
        )
        return table_from_columns(
            names,
            data,
            has_header=has_header,
            source=str(path),
            label_column=label_column,
            columns=columns,
            drop_columns=drop_columns,
            sort_by_time=sort_by_time,
        )
    frame = read_frame(path, header=header, sep=sep, decimal=decimal, encoding=encoding)
    return table_from_frame(
        frame,
        label_column=label_column,
        columns=columns,
        drop_columns=drop_columns,
        fill_missing=fill_missing,
        source=str(path),
        sort_by_time=sort_by_time,
    )


def table_from_frame(
    frame: Any,
    *,
    label_column: ColumnKey | None = None,
    columns: Sequence[ColumnKey] | None = None,
    drop_columns: Sequence[ColumnKey] | None = None,
    fill_missing: bool = False,
    source: str = "table",
    sort_by_time: bool = False,
) -> Table:
    """The column rules of :func:`read_table` applied to an in-memory pandas DataFrame."""
    has_header = bool(frame.attrs.get(HEADER_ATTR, True))
    frame = frame.copy(deep=False)
    frame.columns = [str(c) for c in frame.columns]
    if len(frame) == 0:
        raise DataError(f"{source} has no data rows (columns: {list(frame.columns)[:10]})")
    names = list(frame.columns)
    if len(set(names)) != len(names):
        dupes = sorted({n for n in names if names.count(n) > 1})
        raise DataError(f"{source} has duplicate column name(s) {dupes}")

    if not has_header:
        source = f"{source} (no header row)"
    choice = choose_columns(
        names,
        source,
        lambda c: _is_timestamp(frame[c], c),
        label_column=label_column,
        columns=columns,
        drop_columns=drop_columns,
    )
    features, stamp = choice.features, choice.stamp
    timestamps = [c for c, why in choice.dropped.items() if why == "timestamp"]
    if columns is None and timestamps:
        logger.info("%s: dropping timestamp column(s) %s", source, timestamps)
    if stamp is not None:
        order = time_order(frame[stamp].to_numpy(), column=stamp, source=source, sort=sort_by_time)
        if order is not None:
            frame = frame.iloc[order].reset_index(drop=True)
    elif sort_by_time:
        raise DataError(f"{source} has no timestamp column to sort by (columns: {names[:10]})")
    labels = None
    if choice.label is not None:
        labels = as_labels(
            frame[choice.label].to_numpy(), name=f"label column {choice.label!r} of {source}"
        )
    check_features(
        features, [c for c in features if not _is_numeric(frame[c].dtype)], names, source
    )

    data = frame[features]
    if fill_missing:
        data = data.astype(np.float32).ffill().fillna(0.0)
    values = check_series(data, name=source)
    return Table(
        values=values,
        labels=labels,
        columns=features,
        dropped=choice.dropped,
        timestamp_column=stamp,
        timestamps=None if stamp is None else frame[stamp].to_numpy(),
        has_header=has_header,
    )


def read_frame(
    path: str | os.PathLike[str],
    *,
    header: bool | None = None,
    sep: str | None = None,
    decimal: str | None = None,
    encoding: str | None = None,
) -> Any:
    """The raw file as a pandas DataFrame (no column rules applied; ``.npy`` columns "0", "1", ...).

    ``header``, ``sep``, ``decimal`` and ``encoding`` apply to CSV only; None detects them
    (:func:`madcluster.data.csv_format.read_csv_frame`).
    """
    path = Path(path)
    kind = existing_file(path)
    if kind != "csv":
        return _read_frame(path, kind)
    return read_csv_frame(path, header=header, sep=sep, decimal=decimal, encoding=encoding)


# ----------------------------------------------------------------------------------------------
def _read_frame(path: Path, kind: str) -> Any:
    import pandas as pd

    if kind == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise ImportError(
                f"reading Parquet ({str(path)!r}) needs pyarrow: pip install 'madcluster[parquet]' "
                "(or pip install pyarrow), or save the data as CSV / .npy"
            ) from None
        try:
            return pd.read_parquet(path, engine="pyarrow")
        except (OSError, ValueError) as exc:  # pyarrow errors subclass these
            raise DataError(f"{str(path)!r} is not a readable Parquet file: {exc}") from None
    arr = load_npy(path)
    return pd.DataFrame(arr, columns=[str(i) for i in range(arr.shape[1])], copy=False)


def _is_numeric(dtype: Any) -> bool:
    try:
        return bool(np.issubdtype(np.dtype(dtype), np.number) or np.dtype(dtype) == bool)
    except TypeError:  # pandas extension dtypes (string, category, datetime with tz, ...)
        return False


def _is_timestamp(column: Any, name: str) -> bool:
    """Name contains time/date, or the column is datetime-typed, or its text parses as dates."""
    import pandas as pd

    if any(h in name.lower() for h in _TIME_NAME_HINTS):
        return True
    if pd.api.types.is_datetime64_any_dtype(column.dtype):
        return True
    if _is_numeric(column.dtype):
        return False
    sample = column.dropna()
    if sample.empty:
        return False
    sample = sample.iloc[:200]
    if not all(isinstance(v, str) for v in sample):
        return False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pd.to_datetime(sample, errors="raise", format="mixed")
    except (ValueError, TypeError, OverflowError):
        return False
    # plain numbers stored as text parse as dates too; those are not timestamps
    return not pd.to_numeric(sample, errors="coerce").notna().all()


# the readers' shared pieces live in :mod:`madcluster.data.table`; read from here as before too
__all__ = [
    "SUPPORTED_SUFFIXES",
    "ColumnKey",
    "Table",
    "as_labels",
    "file_format",
    "has_pandas",
    "label_like_columns",
    "load_npy",
    "read_frame",
    "read_table",
    "table_from_frame",
]
