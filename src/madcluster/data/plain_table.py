"""Reading a CSV / TSV / ``.npy`` file into a :class:`~madcluster.data.io.Table` without pandas.

The torch-free install (``pip install --no-deps madcluster`` plus numpy and onnxruntime,
docs/export.md: "The torch-free install") scores an ``.onnx`` file with ``madcluster score``;
it has no pandas, so :func:`~madcluster.data.io.read_table` reads with this module when pandas
cannot be imported.
The format is detected as with pandas (:mod:`madcluster.data.csv_format`: encoding, separator,
decimal mark, header row) and the same column rules apply (label, ``--columns``,
``--drop-columns``, timestamp columns dropped and checked for time order, non-numeric columns
refused by name). Parquet needs pandas and pyarrow. An empty cell is a missing value (NaN), which
:func:`~madcluster.data.validation.check_series` refuses naming its row and column, as pandas'
reading does.
"""

from __future__ import annotations

import csv
import gzip
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from madcluster.data.csv_format import detect_csv_format, refuse_glued_header, resolve_header
from madcluster.data.table import Table, as_labels, check_features, choose_columns, load_npy
from madcluster.data.time_order import time_order
from madcluster.data.validation import check_series
from madcluster.exceptions import DataError

_TIME_NAME_HINTS = ("time", "date")
_MISSING = ("", "na", "nan", "n/a", "null", "none", "-nan")


def read_plain_columns(
    path: Path,
    kind: str,
    *,
    header: bool | None = None,
    sep: str | None = None,
    decimal: str | None = None,
    encoding: str | None = None,
) -> tuple[list[str], list[np.ndarray], bool]:
    """``(names, columns, has_header)``: each column a float64 array when every cell is a number
    (or missing), else an array of the cells' text."""
    if kind == "npy":
        arr = load_npy(path)
        return [str(i) for i in range(arr.shape[1])], [arr[:, i] for i in range(arr.shape[1])], True
    if kind != "csv":
        raise ImportError(
            f"reading {kind} ({str(path)!r}) needs pandas and pyarrow: pip install pandas pyarrow, "
            "or save the data as CSV / .npy"
        )
    fmt = detect_csv_format(path, sep=sep, decimal=decimal, encoding=encoding)
    header = resolve_header(fmt, header, path)
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    try:
        with opener(path, "rt", encoding=fmt.encoding, newline="") as handle:
            rows = [
                row
                for row in csv.reader(handle, delimiter=fmt.sep)
                if any(cell.strip() for cell in row)
            ]
    except UnicodeDecodeError as exc:
        raise DataError(
            f"{str(path)!r} is not valid {fmt.encoding} text ({exc.reason}): pass --encoding "
            "(e.g. latin-1, cp1252)"
        ) from None
    if not rows:
        raise DataError(f"{str(path)!r} is empty")
    names = [cell.strip() for cell in rows[0]] if header else [str(i) for i in range(len(rows[0]))]
    body = rows[1:] if header else rows
    if header:
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise DataError(
                f"{str(path)!r} has duplicated column name(s) {dupes[:10]}: rename them so each "
                "column has its own name"
            )
    width = len(names)
    for number, row in enumerate(body):
        if len(row) != width:
            line = number + 1 + bool(header)
            raise DataError(
                f"{str(path)!r} is not a readable CSV file (line {line} has {len(row)} fields, the "
                f"header {width}); fields were split at {fmt.sep!r}: pass --sep if that is wrong"
            )
    if width == 1 and header:
        refuse_glued_header(path, names[0], fmt)
    cells = list(zip(*body)) if body else [() for _ in names]
    return names, [_column(list(c), fmt.decimal) for c in cells], bool(header)


def _column(cells: list[str], decimal: str) -> np.ndarray:
    """Numbers as float64 (missing cells NaN), or the stripped text when any cell is not a
    number."""
    values = np.empty(len(cells), dtype=np.float64)
    for i, cell in enumerate(cells):
        text = cell.strip()
        if text.lower() in _MISSING:
            values[i] = np.nan
            continue
        try:
            values[i] = float(text.replace(",", ".") if decimal == "," else text)
        except ValueError:
            return np.array([c.strip() for c in cells], dtype=object)
    return values


def table_from_columns(
    names: list[str],
    data: list[np.ndarray],
    *,
    has_header: bool,
    source: str,
    label_column: Any = None,
    columns: Sequence[Any] | None = None,
    drop_columns: Sequence[Any] | None = None,
    sort_by_time: bool = False,
) -> Table:
    """The column rules of :func:`~madcluster.data.io.table_from_frame`, on plain columns."""
    by_name = dict(zip(names, data))
    if not data or len(data[0]) == 0:
        raise DataError(f"{source} has no data rows (columns: {names[:10]})")
    if not has_header:
        source = f"{source} (no header row)"
    choice = choose_columns(
        names,
        source,
        lambda c: _is_timestamp(by_name[c], c),
        label_column=label_column,
        columns=columns,
        drop_columns=drop_columns,
    )
    features, stamp = choice.features, choice.stamp
    order = None
    if stamp is not None:
        order = time_order(by_name[stamp], column=stamp, source=source, sort=sort_by_time)
    elif sort_by_time:
        raise DataError(f"{source} has no timestamp column to sort by (columns: {names[:10]})")
    if order is not None:
        by_name = {c: v[order] for c, v in by_name.items()}
    labels = None
    if choice.label is not None:
        labels = as_labels(by_name[choice.label], name=f"label column {choice.label!r} of {source}")
    check_features(features, [c for c in features if by_name[c].dtype == object], names, source)
    values = check_series(np.stack([by_name[c] for c in features], axis=1), name=source)
    return Table(
        values=values,
        labels=labels,
        columns=features,
        dropped=choice.dropped,
        timestamp_column=stamp,
        timestamps=None if stamp is None else by_name[stamp],
        has_header=has_header,
    )


def _is_timestamp(column: np.ndarray, name: str) -> bool:
    """Name contains time/date, or the column's text parses as ISO dates / times (not numbers)."""
    if any(h in name.lower() for h in _TIME_NAME_HINTS):
        return True
    if column.dtype != object:
        return False
    sample = [v for v in column[:200] if v]
    if not sample:
        return False
    try:
        for value in sample:
            datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


__all__ = ["read_plain_columns", "table_from_columns"]
