"""Runs of consecutive anomalous points ("events", "segments"), found without Python loops."""

from __future__ import annotations

import numpy as np


def runs(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(starts, stops)`` of the maximal runs of True in a 1-D bool array.

    ``stops`` is exclusive: run ``i`` covers ``mask[starts[i]:stops[i]]``. Both are int64 and
    sorted; they are empty when ``mask`` has no True value.
    """
    d = np.diff(mask.astype(np.int8), prepend=np.int8(0), append=np.int8(0))
    starts = np.flatnonzero(d == 1)
    stops = np.flatnonzero(d == -1)
    return starts.astype(np.int64, copy=False), stops.astype(np.int64, copy=False)
