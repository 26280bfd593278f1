"""A stream's incidents are the series' (``series_incidents``, what ``MADCluster.incidents``
returns), however the rows come, and survive a restart mid-incident."""

from __future__ import annotations

import numpy as np
import pytest

from madcluster import MADCluster
from madcluster.estimator.incident_scoring import at_once_scores, series_incidents
from madcluster.estimator.streaming import StreamScorer
from madcluster.incidents.policy import IncidentPolicy

TINY = {"window_size": 20, "epochs": 1, "epoch_windows": 64, "batch_size": 32, "random_state": 0}


def _series(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n)[:, None] / 5 + np.arange(3)
    return (np.sin(t) + 0.05 * rng.normal(size=(n, 3))).astype(np.float32)


@pytest.fixture(scope="module")
def model():
    return MADCluster(input_terms=("kmeans", "ar"), **TINY).fit(_series(600, 0))


@pytest.fixture(scope="module")
def rows():
    rows = _series(320, 1)
    rows[150:170, 1] += 3.0
    rows[260:265, 2] -= 4.0
    return rows


def _policy(model) -> IncidentPolicy:
    return IncidentPolicy.at(
        model.threshold_, k=2, n=4, close_rows=5, confirm_level=model.threshold_
    )


def _streamed(model, rows, sizes, policy, restart_at=None, tmp_path=None):
    scorer = StreamScorer(model.model_, incident_policy=policy)
    opened, closed, fed = [], [], 0
    for size in sizes:
        if fed >= len(rows):
            break
        result = scorer.update(rows[fed : fed + size])
        fed += size
        opened += result.incidents_opened
        closed += result.incidents_closed
        if restart_at is not None and fed >= restart_at:
            scorer.save(tmp_path / "stream.mcs")
            scorer, restart_at = StreamScorer.restore(model, tmp_path / "stream.mcs"), None
    return scorer, opened, closed


@pytest.mark.parametrize("sizes", [[1] * 320, [7, 1, 30, 2, 13] * 40])
def test_a_stream_raises_the_series_incidents(model, rows, sizes):
    policy = _policy(model)
    expected = series_incidents(model.model_, rows, policy)
    scorer, opened, closed = _streamed(model, rows, sizes, policy)
    pending = scorer.pending()
    scorer._incidents.tracker.finals(pending.steps, pending.scores)  # the last rows' finals
    assert len(expected) >= 2 and scorer.incidents == expected
    assert [i.id for i in opened] == [i.id for i in expected]
    assert all(i.channels for i in opened)  # named when raised
    assert [i.id for i in closed] == [i.id for i in expected if i.end is not None]


def test_at_once_scores_are_the_streams(model, rows):
    scorer = StreamScorer(model.model_)
    streamed = np.concatenate([scorer.update(rows[i : i + 9]).scores for i in range(0, 320, 9)])
    whole = at_once_scores(model.model_, rows)
    assert np.max(np.abs(streamed - whole)) < 1e-9 * np.abs(whole).max()


def test_incidents_survive_a_restart_mid_incident(model, rows, tmp_path):
    policy = _policy(model)
    straight, _, _ = _streamed(model, rows, [4] * 80, policy)
    restarted, _, _ = _streamed(model, rows, [4] * 80, policy, restart_at=160, tmp_path=tmp_path)
    assert restarted.incidents == straight.incidents and len(straight.incidents) >= 2
    assert restarted._incidents.tracker.policy == policy  # the file's policy, not the default


def test_the_detector_s_incidents_are_its_default_stream_s(model, rows, tmp_path):
    from madcluster.incidents.table import COLUMNS, incident_frame

    frame = model.incidents(rows)
    assert list(frame.columns) == list(COLUMNS) and len(frame) >= 1
    scorer = model.stream()
    for i in range(0, len(rows), 3):
        scorer.update(rows[i : i + 3])
    pending = scorer.pending()
    scorer._incidents.tracker.finals(pending.steps, pending.scores)
    assert incident_frame(scorer.incidents).equals(frame)
    assert frame["channels"].str.len().gt(0).all()
