"""The incidents table: one column order for the DataFrame and the CSV."""

from __future__ import annotations

import pandas as pd

from madcluster.incidents.policy import Incident
from madcluster.incidents.table import COLUMNS, incident_frame

INCIDENTS = [
    Incident(0, 10, 12, 11, 4.5, 30, "cpu;latency", True),
    Incident(1, 50, 52, 52, 3.25, None, 'disk,"io"', None),
]


def test_csv_and_frame_agree(tmp_path):
    path = tmp_path / "incidents.csv"
    incident_frame(INCIDENTS).to_csv(path, index=False)  # what madcluster score writes
    assert path.read_text().splitlines()[0] == ",".join(COLUMNS)
    read = pd.read_csv(path, keep_default_na=False)
    frame = incident_frame(INCIDENTS)
    assert list(read.columns) == list(frame.columns) == list(COLUMNS)
    assert read["channels"].tolist() == frame["channels"].tolist() == ["cpu;latency", 'disk,"io"']
    assert read["end"].astype(str).tolist() == ["30", ""] and frame["end"].isna().tolist() == [
        False,
        True,
    ]
    assert read["confirmed"].astype(str).str.lower().tolist() == ["true", ""]
    assert read["peak_score"].tolist() == [4.5, 3.25]


def test_no_incidents_is_a_header():
    assert incident_frame([]).shape == (0, len(COLUMNS))
