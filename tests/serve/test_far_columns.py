"""A column far from its training range on most rows of a request is named in the answer, with
how far, and counted in /metrics: data the model has never seen, not anomalies."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient

from madcluster import MADCluster
from madcluster.estimator.far_columns import far_columns
from madcluster.serve.app import create_app
from madcluster.serve.registry import StreamStore

COLUMNS = ["flow", "pressure", "temp"]


def _series(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n)[:, None]
    return np.sin(t / np.array([3.0, 7.0, 11.0])) + 0.1 * rng.standard_normal((n, 3))


@pytest.fixture(scope="module")
def model():
    frame = pd.DataFrame(_series(300, 0), columns=COLUMNS)
    return MADCluster(window_size=12, epochs=1, random_state=0).fit(frame)


def _far_flow(model, rows: np.ndarray, deviations: float) -> np.ndarray:
    inputs = model.model_.inputs
    moved = rows.copy()
    moved[:, 0] = inputs.scaler_mean[0] + deviations * inputs.scaler_scale[0]
    return moved


def far_columns_of(model, rows):
    return far_columns(model.model_.inputs, model.scaling, rows)


def test_a_column_far_below_training_is_named_with_how_far(model):
    rows = _far_flow(model, _series(40, 1), -58.0)
    assert far_columns_of(model, rows) == [
        {"column": "flow", "rows": 40, "median_deviations": -58.0}
    ]
    assert far_columns_of(model, _series(40, 1)) == []
    one_spike = _series(40, 1)
    one_spike[3, 1] = 1e3  # one far row of 40: an anomaly perhaps, not a moved column
    assert far_columns_of(model, one_spike) == []


@pytest.mark.parametrize("n_rows", [1, 40])  # the one-row fast path and the FastAPI route
def test_stream_answers_and_metrics_name_the_far_column(model, n_rows):
    client = TestClient(create_app(StreamStore({"m": model})))
    normal = client.post("/streams/s", json={"rows": _series(n_rows, 2).tolist()}).json()
    assert "far_columns" not in normal
    rows = _far_flow(model, _series(n_rows, 3), 58.0)
    answer = client.post("/streams/s", json={"rows": rows.tolist()}).json()
    assert answer["far_columns"] == [{"column": "flow", "rows": n_rows, "median_deviations": 58.0}]
    metrics = client.get("/metrics").text
    assert f'madcluster_far_rows_total{{column="flow",model="m"}} {float(n_rows)}' in metrics


def test_batch_scores_name_the_far_column(model):
    client = TestClient(create_app(StreamStore({"m": model})))
    rows = _far_flow(model, _series(50, 4), -20.0)
    answer = client.post("/models/m/score", json={"rows": rows.tolist()}).json()
    assert answer["far_columns"] == [{"column": "flow", "rows": 50, "median_deviations": -20.0}]
    assert (
        "far_columns"
        not in client.post("/models/m/score", json={"rows": _series(50, 5).tolist()}).json()
    )
