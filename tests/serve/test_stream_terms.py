"""The server streams the default model (input terms): final scores L rows later, pending ones on request."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient

from madcluster import MADCluster
from madcluster.serve.app import create_app
from madcluster.serve.registry import StreamStore

WINDOW = 12


def _series(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.sin(np.arange(n)[:, None] / np.array([3.0, 7.0, 11.0])) + 0.1 * rng.standard_normal((n, 3))


@pytest.fixture(scope="module")
def model():
    return MADCluster(window_size=WINDOW, epochs=1, random_state=0).fit(_series(300, 0))


def test_final_and_pending_scores_through_the_server_are_the_whole_series_scores(model):
    client = TestClient(create_app(StreamStore({"m": model}, None)))
    # the default's slowest part decides: KMeans (L rows) or the discord part (its m - 1 rows)
    info = client.get("/models").json()["models"]["m"]
    final_after = info["final_after_rows"]
    assert final_after == model.model_.combination.final_after() >= WINDOW
    # no final score before the first series_scale_rows steps are final (all 150 pending here)
    assert info["series_scale_rows"] == model.series_scale_rows == 3000
    x = _series(150, 1)
    x[90:95, 1] += 3.0
    final, steps, i, rng = [], [], 0, np.random.default_rng(0)
    while i < len(x):
        size = int(rng.integers(1, 9))
        body = client.post("/streams/s", json={"rows": x[i : i + size].tolist()}).json()
        assert len(body["scores"]) == len(body["steps"]) == min(size, len(x) - i)
        final.extend(body["final_scores"])
        steps.extend(body["final_steps"])
        i += size
    info = client.get("/streams/s").json()
    assert info["steps_seen"] == len(x) and steps + info["pending_steps"] == list(range(len(x)))
    whole = model.decision_function(x)
    np.testing.assert_allclose(final + info["pending_scores"], whole, rtol=0, atol=1e-9 * np.abs(whole).max())
