"""Columns that never change in the training data, and what happens when they move later.

A constant training column teaches the model little, and its scale is unknown (the scaler keeps
scale 1), so a later change of +100 would reach the network as a 100-sigma jump and flag every
row. Hiding such a column (holding it at its training value) is no better: on TSB-AD's MSL series
the telemetry channel is often constant in the short training part and its first moves are the
anomaly (MSL mean VUS-PR of the default: .334 with a 0/1 "it changed" indicator, .383 as below, .390
raw; ``benchmarks/results/tsbad/README.md``). So the model (network and input terms) sees such a
column's *steps*: the training value plus the change from the previous row. A change scores where
it happens; a new level that then holds (a new software version) stops scoring after its step.
A warning names the column and the rows where it moved. At ``fit`` a warning says so up front, so
the user can drop the column or train on data where it varies.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

logger = logging.getLogger(__name__)

_SHOW = 5


def constant_columns(data: np.ndarray) -> np.ndarray:
    """Indices of the columns of ``data`` (T, D) whose values never change."""
    return np.flatnonzero(np.ptp(data, axis=0) == 0)


def _name(names: Sequence[str] | None, j: int) -> str:
    return repr(str(names[j])) if names is not None else f"column {j}"


def warn_constant_at_fit(
    columns: np.ndarray, values: np.ndarray, names: Sequence[str] | None
) -> None:
    """One warning listing the constant training columns and what scoring will do with them."""
    if len(columns) == 0:
        return
    listed = ", ".join(f"{_name(names, j)} (= {values[j]:.6g})" for j in columns[:_SHOW])
    more = f" and {len(columns) - _SHOW} more" if len(columns) > _SHOW else ""
    logger.warning(
        "constant in the training data: %s%s. When scoring, the model sees only its steps (a "
        "change scores where it happens; a new level that holds stops scoring after its step), and "
        "a warning names it when it moves. Drop it (--drop-columns / drop_columns) or train on "
        "data where it varies.",
        listed,
        more,
    )


def bound_constant_columns(
    data: np.ndarray,
    columns: np.ndarray,
    values: np.ndarray,
    names: Sequence[str] | None,
    previous_row: np.ndarray | None = None,
    warned: set[int] | None = None,
) -> np.ndarray:
    """``data`` with each constant training column replaced by its training value plus the
    column's step from the previous row (row 0: from ``previous_row``, a stream's last row, else
    from the training value); a warning names each column that moved, with how many rows and the
    first one (``warned``: columns already named, e.g. by earlier chunks of a stream, which
    then warns once per column, not once a row)."""
    if len(columns) == 0:
        return data
    held = values[columns].astype(data.dtype)
    moved = data[:, columns] != held
    before = held if previous_row is None else np.asarray(previous_row, dtype=data.dtype)[columns]
    # a row back at the value steps from the previous one
    if not moved.any() and np.array_equal(before, held):
        return data
    data = np.array(data, copy=True)
    for k, j in enumerate(columns):
        rows = np.flatnonzero(moved[:, k])
        if rows.size and (warned is None or int(j) not in warned):
            if warned is not None:
                warned.add(int(j))
            logger.warning(
                "%s was constant (%.6g) in the training data but differs in %d row(s) here "
                "(first: row %d, value %.6g); the model sees its steps (a change scores where it "
                "happens, a new level that then holds does not keep scoring)",
                _name(names, j),
                values[j],
                rows.size,
                rows[0],
                data[rows[0], j],
            )
    previous = np.vstack([before[None, :], data[:-1, columns]])
    data[:, columns] = held + (data[:, columns] - previous)
    return data
