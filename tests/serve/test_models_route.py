"""``GET /models`` whole, for a model with column names and one without, and the route a fast
stream update is counted under and names itself (the fifth mutation run's survivors: only a slow server test read
the models' keys, and the metrics test sent updates through both paths)."""

from __future__ import annotations

import pandas as pd
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient
from series_helpers import three_channels

from madcluster import MADCluster
from madcluster.serve.app import create_app
from madcluster.serve.middleware import Measure
from madcluster.serve.registry import StreamStore


def test_models_describes_each_model_whole():
    x = three_channels(200, 0)
    named = MADCluster(input_terms=None, window_size=12, epochs=1, random_state=0).fit(
        pd.DataFrame(x, columns=["flow", "rpm", "temp"])
    )
    plain = MADCluster(input_terms=None, window_size=12, epochs=1, random_state=0).fit(x)
    with TestClient(create_app(StreamStore({"named": named, "plain": plain}))) as client:
        answer = client.get("/models").json()
    common = {
        "n_features": 3,
        "window_size": 12,
        "embedder": "drnn",
        "streams": True,
        "final_after_rows": named.model_.combination.final_after(),
        "series_scale_rows": named.model_.combination.scale_rows,
        "version": 1,
        "refit": None,
    }
    assert answer == {
        "models": {
            "named": {
                **common,
                "columns": ["flow", "rpm", "temp"],
                "threshold": named.threshold_,
                "incidents": uncalibrated(named),
            },
            "plain": {
                **common,
                "columns": None,
                "threshold": plain.threshold_,
                "incidents": uncalibrated(plain),
            },
        }
    }


def uncalibrated(model: MADCluster) -> dict:
    """A model fitted on too few rows for a false-alarm budget: its incidents open at
    ``threshold_`` and nothing says what they cost."""
    assert model.model_.incident_calibration is None
    return {"open_level": model.threshold_, "expected_false_per_10000": None, "measured_on": None}


@pytest.mark.parametrize("rows", [800, 3000])  # 160 validation rows (in sample), 600 (held out)
def test_models_say_where_incidents_open_and_what_the_fit_expects_there(rows):
    model = MADCluster(window_size=12, epochs=1, random_state=0).fit(three_channels(rows, 0))
    calibration = model.model_.incident_calibration
    assert calibration is not None and calibration.in_sample is (rows == 800)
    with TestClient(create_app(StreamStore({"m": model}))) as client:
        incidents = client.get("/models").json()["models"]["m"]["incidents"]
    level = max(model.threshold_, calibration.level_for(2.0))
    assert incidents["open_level"] == pytest.approx(level)
    assert incidents["expected_false_per_10000"] == pytest.approx(calibration.expected(level))
    kind = "training rows, in sample" if rows == 800 else "validation rows"
    assert incidents["measured_on"] == f"{calibration.rows} {kind}"


def test_fast_updates_are_counted_under_the_stream_route_only():
    model = MADCluster(input_terms=None, window_size=12, epochs=1, random_state=0).fit(
        three_channels(200, 0)
    )
    with TestClient(create_app(StreamStore({"m": model}))) as client:
        for row in three_channels(3, 1).tolist():
            assert client.post("/streams/s", json={"rows": [row]}).status_code == 200
        lines = client.get("/metrics").text.splitlines()
    posts = [
        line for line in lines if line.startswith("madcluster_requests_total{") and "POST" in line
    ]
    assert posts == [
        'madcluster_requests_total{endpoint="/streams/{stream_id}",method="POST",status="200"} 3.0'
    ]


def test_a_fast_update_names_its_route_so_the_routes_are_not_matched_again(monkeypatch):
    # the fast path sets the stream route on the scope; without it the request metrics would
    # still find the same template, but by matching every route again on each update
    model = MADCluster(input_terms=None, window_size=12, epochs=1, random_state=0).fit(
        three_channels(200, 0)
    )
    matched: list[str] = []
    plain = Measure._plain_route

    def recorded(self: Measure, scope: dict) -> str:
        matched.append(scope["path"])
        return plain(self, scope)

    monkeypatch.setattr(Measure, "_plain_route", recorded)
    with TestClient(create_app(StreamStore({"m": model}))) as client:
        for row in three_channels(2, 1).tolist():
            assert client.post("/streams/s", json={"rows": [row]}).status_code == 200
        assert matched == []
        assert client.get("/nowhere").status_code == 404  # the recording itself works
    assert matched == ["/nowhere"]


def test_each_limit_reaches_the_body_limit():
    model = MADCluster(input_terms=None, window_size=12, epochs=1, random_state=0).fit(
        three_channels(200, 0)
    )
    limited = create_app(
        StreamStore({"m": model}), 5000, max_rows=300, max_concurrent=3, body_seconds=9.0
    )
    assert type(limited).__name__ == "BodyLimit"
    assert (limited.max_bytes, limited.max_rows, limited.max_concurrent) == (5000, 300, 3)
    assert limited.body_seconds == 9.0
