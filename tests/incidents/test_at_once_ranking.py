"""The at-once score (what a stream answers first, what incidents read) ranks anomalies nearly as
well as the final one on a generated chaotic series, thanks to the discord part's causal reading;
the final scores do not read it; a stream answers with it as the whole series does."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from madcluster import MADCluster
from madcluster.data.families import make_family
from madcluster.estimator.incident_scoring import (
    at_once_scores,
    series_incidents,
    validation_at_once,
)
from madcluster.estimator.streaming import StreamScorer
from madcluster.incidents.policy import IncidentPolicy
from madcluster.metrics.pointwise import auc_roc
from madcluster.score.legacy import DiscordWithoutAtOnce, recast

SMALL = {"window_size": 50, "epochs": 2, "epoch_windows": 128, "batch_size": 32, "random_state": 0}


@pytest.fixture(scope="module")
def fitted():
    series = make_family("chaotic", 0, n_train=2000, n_test=2000)  # shape changes of 40-120 rows
    return MADCluster(**SMALL).fit(series.train), series


def _without_causal_discord(model):
    """The model as a file from before the discord's causal reading holds it."""
    c = model.combination
    parts = tuple(recast(p, DiscordWithoutAtOnce) if p.name == "discord" else p for p in c.parts)
    return replace(model, combination=replace(c, parts=parts))


def test_the_at_once_ranking_stays_near_the_final_one(fitted):
    detector, series = fitted
    model = detector.model_
    assert "discord" in model.combination.names
    at_once = auc_roc(at_once_scores(model, series.test), series.labels)
    final = auc_roc(detector.decision_function(series.test), series.labels)
    before = auc_roc(at_once_scores(_without_causal_discord(model), series.test), series.labels)
    # measured: at once .864, final .955, without the discord's causal reading .804
    assert final - at_once < 0.12 and at_once > 0.84
    assert at_once - before > 0.03


def test_the_final_scores_do_not_read_the_causal_reading(fitted):
    detector, series = fitted
    rows = series.test[:600]
    without = _without_causal_discord(detector.model_)
    assert np.array_equal(detector.decision_function(rows), without.decision_function(rows))
    assert not np.array_equal(at_once_scores(detector.model_, rows), at_once_scores(without, rows))


def test_a_stream_answers_at_once_as_the_whole_series(fitted):
    detector, series = fitted
    model, rows = detector.model_, series.test[:700]
    expected = at_once_scores(model, rows)
    level = float(np.quantile(expected, 0.95))
    policy = IncidentPolicy.at(level, k=2, n=4, close_rows=5, confirm_level=detector.threshold_)
    scorer, got, fed = StreamScorer(model, incident_policy=policy), [], 0
    for size in [1, 3, 40, 1, 12, 100] * 4:
        got.append(scorer.update(rows[fed : fed + size]).scores)
        fed += size
    got.append(scorer.update(rows[fed:]).scores)
    streamed = np.concatenate(got)
    assert np.max(np.abs(streamed - expected)) < 1e-9 * np.abs(expected).max()
    whole = series_incidents(model, rows, policy)
    assert len(whole) > 0
    assert [(i.start, i.raised) for i in scorer.incidents] == [(i.start, i.raised) for i in whole]


def test_the_calibration_reads_the_validation_rows_without_self_matches(fitted):
    """The discord part keeps the training rows, so the validation rows' own subsequences are
    among its neighbours: read as a stream reads new rows they would look more normal than any
    new row (and the false-alarm level set from them too low); the calibration reads them as the
    part describes unseen normal rows."""
    detector, series = fitted
    model = detector.model_
    n_val = 400
    calibrated = validation_at_once(model, series.train, n_val)
    plain = at_once_scores(model, series.train[-(n_val + 2 * detector.window_size) :])[-n_val:]
    assert len(calibrated) == n_val and calibrated.mean() > 1.2 * plain.mean()  # 1.42 against 1.01
