"""The scores table ``madcluster score`` writes, for one file or for each entity of a fleet."""

from __future__ import annotations

import csv
import os
from collections.abc import Sequence
from typing import Any

import numpy as np


def input_columns(table: Any, top_channels: Sequence[str] | None = None) -> dict[str, Any]:
    """The columns of the scores table that come from the input ``table`` (its labels, its
    timestamp column) and the flagged rows' ``top_channels``: keyword arguments of
    :func:`scores_frame` and :func:`write_scores_csv`."""
    return {
        "labels": table.labels,
        "timestamp_column": table.timestamp_column,
        "timestamps": table.timestamps,
        "top_channels": top_channels,
    }


def scores_frame(
    scores: np.ndarray,
    predicted: np.ndarray,
    *,
    labels: np.ndarray | None = None,
    timestamp_column: str | None = None,
    timestamps: Any = None,
    top_channels: Sequence[str] | None = None,
) -> Any:
    """``[timestamp,] score, is_anomaly[, top_channels][, label]`` as a DataFrame (index = row)."""
    import pandas as pd

    frame = pd.DataFrame({"score": scores, "is_anomaly": predicted})
    if timestamp_column is not None:
        name = timestamp_column if timestamp_column not in frame else "timestamp"
        frame.insert(0, name, timestamps)
    if top_channels is not None:
        frame["top_channels"] = list(top_channels)
    if labels is not None:
        frame["label"] = labels
    return frame


def write_scores_csv(
    path: str | os.PathLike[str],
    scores: np.ndarray,
    predicted: np.ndarray,
    *,
    labels: np.ndarray | None = None,
    timestamp_column: str | None = None,
    timestamps: Any = None,
    top_channels: Sequence[str] | None = None,
) -> None:
    """:func:`scores_frame` written as CSV (``row`` first), with the csv module: the torch-free
    install has no pandas. Floats are written as Python's ``repr`` (the shortest text that reads
    back to the same number), as pandas writes them."""
    names = ["row"]
    if timestamp_column is not None:
        names.append(
            timestamp_column if timestamp_column not in ("score", "is_anomaly") else "timestamp"
        )
    names += ["score", "is_anomaly"] + (["top_channels"] if top_channels is not None else [])
    names += ["label"] if labels is not None else []
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(names)
        for i, (score, flag) in enumerate(
            zip(np.asarray(scores, dtype=np.float64).tolist(), np.asarray(predicted).tolist())
        ):
            row: list[Any] = [i]
            if timestamp_column is not None:
                row.append(timestamps[i])
            row += [repr(score), int(flag)]
            if top_channels is not None:
                row.append(top_channels[i])
            if labels is not None:
                row.append(int(labels[i]))
            writer.writerow(row)
