"""Checking a file's timestamp column: the model reads rows as consecutive, equally spaced steps.

Shuffled rows make every window a jumble of moments, so rows out of time order are an error
(unless the caller asks to sort them); duplicated and irregular timestamps are legal but change
what a window means, so they are warned about, naming the rows. Rows are counted from 0, as in the
scores CSV's ``row`` column.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

import numpy as np

from madcluster.data.columns import shell_words
from madcluster.data.table import has_pandas
from madcluster.exceptions import DataError

logger = logging.getLogger(__name__)

#: A step longer than this many median steps is a gap.
GAP_FACTOR = 1.5
_SHOW = 5


def time_order(raw: Any, *, column: str, source: str, sort: bool = False) -> np.ndarray | None:
    """Check the timestamps ``raw`` (one per row); the row order that sorts them when ``sort``.

    Returns None when the rows stay as they are. Raises ``DataError`` for rows out of order
    (without ``sort``) and for ``sort`` with timestamps that do not parse; logs a warning for
    duplicated timestamps and for gaps longer than ``GAP_FACTOR`` median steps.
    """
    where = f"{source}: timestamp column {column!r}"
    stamps = _as_numbers(raw)
    if stamps is None:
        if sort:
            raise DataError(f"{where} does not parse as times or numbers, so rows cannot be sorted")
        logger.warning("%s does not parse as times; time order not checked", where)
        return None
    order = None
    steps = np.diff(stamps)
    back = np.flatnonzero(steps < 0) + 1
    if back.size:
        if not sort:
            row = int(back[0])
            raise DataError(
                f"{where} is not in time order: row {row} ({raw[row]}) comes after row {row - 1} "
                f"({raw[row - 1]}); {back.size} row(s) step back in time (rows {_rows(back)}): "
                "sort the file, or pass --sort-by-time (sort_by_time=True; rows of a repeated "
                "hour, when clocks went back, are then interleaved), or, if the rows are in the "
                f"order they were recorded, --drop-columns {shell_words([column])} "
                f"(drop_columns=[{column!r}]) to read them in file order"
            )
        order = np.argsort(stamps, kind="stable")
        logger.warning(
            "%s: %d row(s) were out of time order; rows sorted by time", where, back.size
        )
        stamps, raw = stamps[order], np.asarray(raw)[order]
        steps = np.diff(stamps)
    _warn_duplicates(where, steps, raw)
    _warn_gaps(where, steps, raw)
    return order


def _as_numbers(raw: Any) -> np.ndarray | None:
    """Timestamps as float64 (datetimes in ns), or None when some of them do not parse."""
    if not has_pandas():
        return _as_numbers_plain(raw)
    import pandas as pd

    values = pd.Series(np.asarray(raw))
    if pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(values):
        numbers = values.to_numpy(dtype=np.float64)
        return numbers if np.isfinite(numbers).all() else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            times = pd.to_datetime(values, errors="coerce", format="mixed")
        except (TypeError, ValueError):
            return None
    if times.isna().any():
        return None
    if getattr(times.dt, "tz", None) is not None:
        times = times.dt.tz_convert("UTC").dt.tz_localize(None)
    return times.to_numpy(dtype="datetime64[ns]").astype(np.int64).astype(np.float64)


def _as_numbers_plain(raw: Any) -> np.ndarray | None:
    """:func:`_as_numbers` without pandas (the torch-free install): numbers, or ISO 8601 times."""
    values = np.asarray(raw)
    if values.dtype != object and np.issubdtype(values.dtype, np.number):
        numbers = values.astype(np.float64)
        return numbers if np.isfinite(numbers).all() else None
    from datetime import datetime, timezone

    out = np.empty(len(values), dtype=np.float64)
    try:
        for i, value in enumerate(values):
            stamp = datetime.fromisoformat(str(value).strip())
            if stamp.tzinfo is None:
                stamp = stamp.replace(tzinfo=timezone.utc)
            out[i] = stamp.timestamp() * 1e9
    except ValueError:
        return None
    return out


def _warn_duplicates(where: str, steps: np.ndarray, raw: Any) -> None:
    same = np.flatnonzero(steps == 0) + 1
    if same.size:
        row = int(same[0])
        logger.warning(
            "%s: %d row(s) repeat the timestamp of the row before (rows %s; first: rows %d and %d "
            "at %s); they are read as separate, consecutive steps",
            where,
            same.size,
            _rows(same),
            row - 1,
            row,
            raw[row],
        )


def _warn_gaps(where: str, steps: np.ndarray, raw: Any) -> None:
    positive = steps[steps > 0]
    if positive.size < 2:
        return
    median = float(np.median(positive))
    gaps = np.flatnonzero(steps > GAP_FACTOR * median) + 1
    if gaps.size:
        row = int(gaps[0])
        logger.warning(
            "%s: irregular timestamps: %d gap(s) longer than %.1f times the usual step (before "
            "rows %s; first: %s -> %s); windows span the gaps as if the rows were equally spaced",
            where,
            gaps.size,
            GAP_FACTOR,
            _rows(gaps),
            raw[row - 1],
            raw[row],
        )


def _rows(rows: np.ndarray) -> str:
    shown = ", ".join(str(int(r)) for r in rows[:_SHOW])
    return shown + (f", ... ({rows.size - _SHOW} more)" if rows.size > _SHOW else "")
