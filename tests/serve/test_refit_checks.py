"""A refit cannot swap garbage in: its rows get fit's checks, and the refitted model is checked
before the swap (state ``rejected`` with the reasons; ``force`` overrides)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient
from series_helpers import three_channels

from madcluster import MADCluster
from madcluster.exceptions import DataError
from madcluster.serve import refit_checks, swap
from madcluster.serve.app import create_app
from madcluster.serve.refit_checks import model_problems, row_problems
from madcluster.serve.registry import StreamStore

WINDOW = 12


@pytest.fixture(scope="module")
def model():
    frame = pd.DataFrame(three_channels(300, 0), columns=["flow", "pressure", "temp"])
    return MADCluster(window_size=WINDOW, epochs=1, random_state=0).fit(frame)


def test_rows_fit_would_refuse_are_named(model):
    rows = three_channels(200, 1)
    assert row_problems(model, rows) == []
    stuck = rows.copy()
    stuck[:, 1] = 4.5
    expected = "column(s) 'pressure' (= 4.5) constant in the 200 rows but varied in training"
    assert row_problems(model, stuck) == [f"{expected} (a stuck sensor?)"]
    flat = np.tile([1.0, 2.0, 3.0], (200, 1))
    problems = row_problems(model, flat)
    assert problems[0].startswith("every column is constant in the 200 rows")
    assert problems[1] == "only 1 distinct rows among 200, fewer than one window (12)"
    assert row_problems(model, np.repeat(rows[:5], 40, axis=0)) == [
        "only 5 distinct rows among 200, fewer than one window (12)"
    ]


def test_a_refit_on_constant_rows_is_refused_unless_forced(model, monkeypatch):
    store = StreamStore({"m": model})
    monkeypatch.setattr(swap, "refit_in_child", lambda *args: (model, {}))
    refits = swap.Refits(store)
    with pytest.raises(DataError, match='every column is constant.*"force": true'):
        refits.start("m", np.tile([1.0, 2.0, 3.0], (400, 1)))
    assert refits.status("m") is None  # nothing started
    job = refits.start("m", np.tile([1.0, 2.0, 3.0], (400, 1)), force=True)
    assert job.done.wait(10) and job.state == "done" and job.force


@pytest.mark.parametrize(
    ("checks", "reason"),
    [
        ({"own_flag_rate": 0.25}, "flags 25% of the rows it was fitted on"),
        (
            {"recent_flag_rate": 0.51, "served_recent_flag_rate": 0.02, "recent_rows": 900},
            "flags 51% of the streams' 900 recent rows, the served model 2%",
        ),
        (
            {"recent_flag_rate": 0.5, "served_recent_flag_rate": 0.02, "recent_rows": 900},
            None,  # half is not more than half
        ),
        (
            {"recent_flag_rate": 0.7, "served_recent_flag_rate": 0.65, "recent_rows": 900},
            None,  # the served model flags them as much: the refit is no worse
        ),
        ({"threshold": 1.01, "served_threshold": 7.66}, "is 0.132 times the served model's"),
        ({"threshold": 7.66 * 5, "served_threshold": 7.66}, None),
        ({"threshold": 7.66 * 5.1, "served_threshold": 7.66}, "is 5.1 times"),
        ({"threshold": 3.0, "served_threshold": 0.5}, "is 6 times"),  # a served threshold below 1
        ({"threshold": 3.0, "served_threshold": 0.0}, None),  # no ratio to a threshold of 0
        ({"score_p99_over_threshold": 4.4e13}, "99th percentile score is 4.4e+13 times"),
        ({"score_p99_over_threshold": float("nan")}, "99th percentile score is nan times"),
        ({"score_p99_over_threshold": 100.0}, None),
        ({"own_flag_rate": 0.2, "recent_flag_rate": None, "served_recent_flag_rate": None}, None),
    ],
)
def test_model_problems_name_each_failed_check(checks, reason):
    problems = model_problems(checks)
    if reason is None:
        assert problems == []
    else:
        assert len(problems) == 1 and reason in problems[0]


def test_measure_reads_flag_rates_on_the_fit_rows_and_the_recent_rows(model):
    rows, recent = three_channels(200, 2), [three_channels(100, 3), three_channels(50, 4, 3.0)]
    checks = refit_checks.measure(model, model, rows, recent)
    scores = [model.decision_function(r) for r in recent]
    pooled_served = np.mean(np.concatenate(scores) > model.threshold_)
    assert checks["recent_rows"] == 150
    assert checks["recent_flag_rate"] == checks["served_recent_flag_rate"] == pooled_served
    assert checks["own_flag_rate"] == np.mean(model.decision_function(rows) > model.threshold_)
    assert checks["threshold"] == checks["served_threshold"] == model.threshold_
    every = np.concatenate([model.decision_function(rows), *scores])
    assert checks["score_p99_over_threshold"] == pytest.approx(
        np.quantile(every, 0.99) / model.threshold_
    )
    assert refit_checks.measure(model, model, rows, [])["recent_flag_rate"] is None


@pytest.mark.slow  # subprocesses
def test_a_refit_that_flags_the_streams_rows_is_rejected_and_the_served_model_stays(
    model, tmp_path
):
    """Near-constant rows pass the row checks (no column is constant) but give a model whose
    scale is a millionth of the data's: it flags every recent row of the open streams. The real
    refit child measures it; the swap is refused with the reason; ``force`` swaps it in."""
    store = StreamStore({"m": model})
    client = TestClient(create_app(store))
    for stream in ("a", "b"):
        assert client.post(
            f"/streams/{stream}", json={"rows": three_channels(150, 5).tolist()}
        ).is_success
    noise = 5.0 + 1e-6 * np.random.default_rng(6).standard_normal((200, 3))
    answer = client.post("/models/m/refit", json={"rows": noise.tolist(), "wait": True})
    assert answer.status_code == 422, answer.text
    job = answer.json()["refit"]
    assert job["state"] == "rejected" and job["version"] is None and job["epochs"] == 1
    assert "of the streams' 300 recent rows" in job["error"] and '"force": true' in job["error"]
    assert job["checks"]["recent_flag_rate"] > 0.5 > job["checks"]["served_recent_flag_rate"]
    assert store.models["m"] is model and store.versions["m"] == 1
    assert client.get("/models/m/refit").json()["refit"]["state"] == "rejected"
    assert client.post("/streams/a", json={"rows": [[0.1, 0.2, 0.3]]}).json()["model_version"] == 1
    forced = client.post(
        "/models/m/refit", json={"rows": noise.tolist(), "wait": True, "force": True}
    )
    assert forced.status_code == 200 and forced.json()["refit"]["version"] == 2
    assert forced.json()["refit"]["force"] is True


def test_the_refit_endpoint_refuses_constant_rows_with_a_400(model):
    client = TestClient(create_app(StreamStore({"m": model})))
    answer = client.post("/models/m/refit", json={"rows": [[1.0, 2.0, 3.0]] * 400, "wait": True})
    assert answer.status_code == 400
    assert "every column is constant in the 400 rows" in answer.json()["error"]


def test_a_score_at_the_threshold_is_not_flagged():
    """Flagged means above the threshold, as ``predict`` says: a refit whose scores sit on it."""

    def fixed(scores: list[float], threshold: float) -> SimpleNamespace:
        return SimpleNamespace(
            decision_function=lambda rows: np.asarray(scores, dtype=float), threshold_=threshold
        )

    checks = refit_checks.measure(fixed([0.0, 1.0], 2.0), fixed([1.0, 2.0, 3.0], 2.0), None, [])
    assert checks["own_flag_rate"] == pytest.approx(1 / 3)
