"""Columns whose values left the training range on most scored rows: named, with how far.

Why: a valve file whose flow rate sat 58 training deviations below every training row was scored,
every row flagged with scores from 272 up, and nothing named the column: the model is not
reading an anomaly there but data it has never seen (a unit change, a swapped or dead sensor).
One function finds such columns (:func:`far_columns`); scoring through the API warns with them
(:class:`~madcluster.exceptions.FarFromTrainingWarning`, which ``madcluster score`` prints), and
the service puts them in its answers (``far_columns``) and counts them (``madcluster_far_rows``),
so a user or an alert can tell "the data moved" from "anomalies".
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from madcluster.estimator.inputs import InputSpec
from madcluster.exceptions import FarFromTrainingWarning

#: a value this many training deviations from the training mean is far (standard scaling)
FAR_DEVIATIONS = 10.0
#: ... or this many training ranges outside the training range (minmax scaling)
FAR_RANGES = 2.0
_SHOW = 5


def far_columns(inputs: InputSpec, scaling: str, rows: np.ndarray) -> list[dict[str, Any]]:
    """The columns of ``rows`` (checked, in the model's order; ``inputs`` and ``scaling`` the
    model's) far from training on more than half of them: ``{"column", "rows" (how many were far),
    "median_deviations" or "median_ranges_outside"}``, in column order; constant training columns
    are left out (their moves have their own warning)."""
    n = rows.shape[1]
    scaled = (rows - inputs.scaler_mean[:n]) / inputs.scaler_scale[:n]
    minmax = scaling == "minmax"
    if minmax:  # 0..1 is the training range: how far outside it, in ranges
        distance = np.where(scaled < 0, scaled, np.maximum(scaled - 1.0, 0.0))
        far = np.abs(distance) > FAR_RANGES
    else:
        distance = scaled
        far = np.abs(distance) > FAR_DEVIATIONS
    counts = far.sum(axis=0)
    constant = set(np.asarray(inputs.constant_columns).tolist())
    names = inputs.feature_names
    out = []
    for j in np.flatnonzero(2 * counts > len(rows)):
        if int(j) in constant:
            continue
        median = float(np.median(distance[far[:, j], j]))
        out.append({
            "column": str(names[j]) if names is not None else int(j),
            "rows": int(counts[j]),
            "median_ranges_outside" if minmax else "median_deviations": round(median, 1),
        })  # fmt: skip
    return out


def far_columns_message(far: list[dict[str, Any]], n_rows: int) -> str:
    """One sentence naming :func:`far_columns`' columns (the first five), how many of ``n_rows``
    rows were far and how far, and what it means."""

    def one(column: dict[str, Any]) -> str:
        name = column["column"]
        label = repr(name) if isinstance(name, str) else f"column {name}"
        if "median_deviations" in column:
            how = f"median {column['median_deviations']:+g} training deviations from its mean"
        else:
            how = f"median {column['median_ranges_outside']:+g} training ranges outside its range"
        return f"{label} ({column['rows']} of {n_rows} rows, {how})"

    listed = "; ".join(one(c) for c in far[:_SHOW])
    more = f"; and {len(far) - _SHOW} more" if len(far) > _SHOW else ""
    return (
        f"far from the training range on most rows: {listed}{more}. The model has never seen such "
        "values, so high scores there say the data moved (a unit change, a swapped or dead "
        "sensor) rather than where anomalies are: check the column, or refit on data that has them"
    )


def warn_far_columns(inputs: InputSpec, scaling: str, X: Any) -> None:
    """A :class:`~madcluster.exceptions.FarFromTrainingWarning` naming the columns of ``X`` (scored
    just now, so already known good) far from training on most rows; nothing if none."""
    rows = inputs.validate_rows(X)
    far = far_columns(inputs, scaling, rows)
    if far:
        warnings.warn(far_columns_message(far, len(rows)), FarFromTrainingWarning, stacklevel=3)


__all__ = [
    "FAR_DEVIATIONS",
    "FAR_RANGES",
    "far_columns",
    "far_columns_message",
    "warn_far_columns",
]
