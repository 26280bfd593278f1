"""The scores table ``madcluster score`` writes, for one file or for each entity of a fleet."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


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
