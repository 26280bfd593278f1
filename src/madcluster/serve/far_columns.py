"""Columns whose values left the training range, named in the server's answers and counted.

Why: a valve file whose flow rate sat 58 training deviations below every training row was scored,
every row flagged with scores from 272 up, and nothing named the column: the model is not
reading an anomaly there but data it has never seen (a unit change, a swapped or dead sensor).
The answer to a stream update or a batch score says which columns were far from training on most
of its rows (``far_columns``: the column, how many rows, the median distance), and
``madcluster_far_rows`` counts such rows per model and column, so an alert can tell "the data
moved" from "anomalies".
"""

from __future__ import annotations

from typing import Any

import numpy as np

from madcluster.estimator.detector import MADCluster

#: a value this many training deviations from the training mean is far (standard scaling)
FAR_DEVIATIONS = 10.0
#: ... or this many training ranges outside the training range (minmax scaling)
FAR_RANGES = 2.0


def far_columns(model: MADCluster, rows: np.ndarray) -> list[dict[str, Any]]:
    """The columns of ``rows`` (checked, in the model's order) far from training on more than half
    of them: ``{"column", "rows" (how many were far), "median_deviations" or
    "median_ranges_outside"}``, in column order; constant training columns are left out (their
    moves are reported when scoring starts)."""
    inputs = model.model_.inputs
    n = rows.shape[1]
    scaled = (rows - inputs.scaler_mean[:n]) / inputs.scaler_scale[:n]
    minmax = getattr(model, "scaling", "standard") == "minmax"
    if minmax:  # 0..1 is the training range: how far outside it, in ranges
        distance = np.where(scaled < 0, scaled, np.maximum(scaled - 1.0, 0.0))
        far = np.abs(distance) > FAR_RANGES
    else:
        distance = scaled
        far = np.abs(distance) > FAR_DEVIATIONS
    counts = far.sum(axis=0)
    constant = set(np.asarray(inputs.constant_columns).tolist())
    names = getattr(model, "feature_names_in_", None)
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


__all__ = ["FAR_DEVIATIONS", "FAR_RANGES", "far_columns"]
