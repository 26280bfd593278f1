"""Columns that never change in the training data, and what happens when they move later.

A constant training column teaches the model nothing, and its scale is unknown (the scaler keeps
scale 1), so a later change of +100 would reach the network as a 100-sigma jump and flag every
row. The detector therefore holds such a column at its training value when scoring: its changes
do not move the score, and a warning names the column and the rows where it moved. At ``fit`` a
warning says so up front, so the user can drop the column or train on data where it varies.
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


def warn_constant_at_fit(columns: np.ndarray, values: np.ndarray, names: Sequence[str] | None) -> None:
    """One warning listing the constant training columns and what scoring will do with them."""
    if len(columns) == 0:
        return
    listed = ", ".join(f"{_name(names, j)} (= {values[j]:.6g})" for j in columns[:_SHOW])
    more = f" and {len(columns) - _SHOW} more" if len(columns) > _SHOW else ""
    logger.warning(
        "constant in the training data: %s%s. The model learns nothing from such a column; when "
        "scoring it is held at its training value, so its changes do not move the score (a "
        "warning names it when it moves). Drop it (--drop-columns / drop_columns) or train on "
        "data where it varies.",
        listed, more,
    )


def hold_constant_columns(
    data: np.ndarray, columns: np.ndarray, values: np.ndarray, names: Sequence[str] | None
) -> np.ndarray:
    """``data`` with the constant training ``columns`` set back to their training ``values``;
    a warning names each column that moved, with how many rows and the first one."""
    if len(columns) == 0:
        return data
    moved = data[:, columns] != values[columns].astype(data.dtype)
    if not moved.any():
        return data
    data = np.array(data, copy=True)
    for k, j in enumerate(columns):
        rows = np.flatnonzero(moved[:, k])
        if rows.size:
            logger.warning(
                "%s was constant (%.6g) in the training data but differs in %d row(s) here "
                "(first: row %d, value %.6g); it is ignored (held at its training value), since "
                "the model never saw it vary; retrain on data where it varies if its changes matter",
                _name(names, j), values[j], rows.size, rows[0], data[rows[0], j],
            )
        data[:, j] = values[j]
    return data
