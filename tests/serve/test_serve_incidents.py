"""The server pages: each stream's incidents at GET /streams/{id}/incidents and in its update
answers, per-stream Prometheus gauges, and incidents kept across a restart."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient

from madcluster import MADCluster
from madcluster.serve import metrics as served_metrics
from madcluster.serve.app import create_app
from madcluster.serve.registry import StreamStore

WINDOW = 12


def _series(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.sin(np.arange(n)[:, None] / np.array([3.0, 7.0, 11.0])) + 0.1 * rng.standard_normal(
        (n, 3)
    )


@pytest.fixture(scope="module")
def model():
    return MADCluster(window_size=WINDOW, epochs=1, random_state=0).fit(_series(300, 0))


def _rows() -> np.ndarray:
    x = _series(120, 1)
    x[60:100, 1] += 6.0  # one long anomaly: open while it lasts
    return x


def _gauge(text: str, name: str, stream: str) -> float | None:
    for line in text.splitlines():
        if line.startswith(f"{name}{{") and f'stream="{stream}"' in line:
            return float(line.rsplit(" ", 1)[1])
    return None


def test_incidents_endpoint_answers_and_gauges_page(model):
    client = TestClient(create_app(StreamStore({"m": model}, None)))
    x, opened = _rows(), []
    for i in range(0, 90, 5):
        body = client.post("/streams/s", json={"rows": x[i : i + 5].tolist()}).json()
        opened += body["incidents_opened"]
    assert opened and body["incident_open"] is True
    answer = client.get("/streams/s/incidents").json()
    assert answer["incident_open"] is True and answer["model"] == "m"
    assert answer["incidents"][-1]["end"] is None and answer["incidents"][-1]["start"] >= 55
    assert [i["id"] for i in answer["incidents"]] == [i["id"] for i in opened]
    text = client.get("/metrics").text
    assert _gauge(text, "madcluster_stream_incident_open", "s") == 1.0
    assert _gauge(text, "madcluster_stream_score", "s") == pytest.approx(body["scores"][-1])
    client.delete("/streams/s")
    text = client.get("/metrics").text
    assert _gauge(text, "madcluster_stream_incident_open", "s") is None  # a closed stream leaves
    assert client.get("/streams/nope/incidents").status_code == 404


def test_gauges_are_bounded_to_the_latest_streams(model, monkeypatch):
    monkeypatch.setattr(served_metrics, "STREAM_SERIES", 2)
    client = TestClient(create_app(StreamStore({"m": model}, None)))
    for name in ("a", "b", "c"):
        client.post(f"/streams/{name}", json={"rows": _rows()[:3].tolist()})
    text = client.get("/metrics").text
    exported = [s for s in "abc" if _gauge(text, "madcluster_stream_score", s) is not None]
    assert exported == ["b", "c"]


def test_incidents_survive_a_restart(model, tmp_path):
    x = _rows()
    store = StreamStore({"m": model}, tmp_path, save_interval=0)
    client = TestClient(create_app(store))
    client.post("/streams/s", json={"rows": x[:90].tolist()})
    before = client.get("/streams/s/incidents").json()
    store.stop()  # saves the state
    again = TestClient(create_app(StreamStore({"m": model}, tmp_path, save_interval=0)))
    after = again.get("/streams/s/incidents").json()
    assert after == before and before["incident_open"] is True
    again.post("/streams/s", json={"rows": x[90:].tolist()})
    went_on = again.get("/streams/s/incidents").json()["incidents"]
    last = before["incidents"][-1]  # the open incident goes on: same id, same start
    assert [(i["id"], i["start"]) for i in went_on][: len(before["incidents"])] == [
        (i["id"], i["start"]) for i in before["incidents"]
    ]
    assert went_on[len(before["incidents"]) - 1]["peak_score"] >= last["peak_score"]
