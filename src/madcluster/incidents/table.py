"""Incidents as one table: the DataFrame ``MADCluster.incidents`` returns and the CSV
``madcluster score --incidents`` writes, with the same columns in the same order."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from madcluster.atomic import atomic_write_text
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


def write_incidents_csv(path: str | os.PathLike, incidents: Sequence[Incident]) -> None:
    """The table as CSV, atomically: empty ``end`` while open, ``confirmed`` true / false /
    empty (not known yet)."""

    def cell(value: Any) -> str:
        if value is None:
            return ""
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, float):
            return repr(value)
        text = str(value)
        quoted = text.replace('"', '""')
        return f'"{quoted}"' if any(c in text for c in ',"\n') else text

    lines = [",".join(COLUMNS)]
    lines += [",".join(cell(row[name]) for name in COLUMNS) for row in incident_rows(incidents)]
    atomic_write_text(path, "\n".join(lines) + "\n")


__all__ = ["COLUMNS", "incident_frame", "incident_rows", "write_incidents_csv"]
