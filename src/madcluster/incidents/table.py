"""Incidents as one table: the DataFrame ``MADCluster.incidents`` returns, which
``madcluster score --incidents`` writes as CSV."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from madcluster.incidents.policy import Incident

#: The table's columns: the six an on-call engineer reads first, then the row that raised it.
COLUMNS = ("start", "end", "peak", "peak_score", "channels", "confirmed", "raised")


def incident_rows(incidents: Sequence[Incident]) -> list[dict[str, Any]]:
    """One dict per incident, :data:`COLUMNS` in order (``end`` and ``confirmed`` None while
    unknown)."""
    return [{name: getattr(i, name) for name in COLUMNS} for i in incidents]


def incident_frame(incidents: Sequence[Incident]) -> Any:
    """A pandas DataFrame of :data:`COLUMNS` (nullable integers for ``end``, a nullable boolean
    for ``confirmed``)."""
    import pandas as pd

    frame = pd.DataFrame(incident_rows(incidents), columns=list(COLUMNS))
    return frame.astype(
        {
            "start": "int64",
            "end": "Int64",
            "peak": "int64",
            "peak_score": "float64",
            "channels": "object",
            "confirmed": "boolean",
            "raised": "int64",
        }
    )


__all__ = ["COLUMNS", "incident_frame", "incident_rows"]
