"""Range-AUC and VUS are the same read forwards and backwards in time (the extension decays
alike on both sides, existence counts segments), so an anomaly at the series' first point must
score as the same anomaly at its last; the reference cases have none at either end."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from madcluster.metrics import range_auc, vus


def _edge_case() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    labels = np.zeros(80, dtype=int)
    labels[0:4] = labels[40:44] = 1
    scores = rng.random(80) * 0.5
    scores[0] = 1.0  # the first segment is found only at its first point
    return scores, labels


@pytest.mark.parametrize("metric", [range_auc, vus])
@pytest.mark.parametrize("window", [0, 6, 20])
def test_an_anomaly_at_either_end_scores_alike(metric, window: int) -> None:
    scores, labels = _edge_case()
    forwards = metric(scores, labels, window=window)
    backwards = metric(scores[::-1], labels[::-1], window=window)
    assert forwards == pytest.approx(backwards, abs=1e-12)


def test_a_segment_found_at_its_first_point_counts_as_found() -> None:
    scores, labels = _edge_case()
    found = range_auc(scores, labels, window=6)
    missed = scores.copy()
    missed[0] = 0.0
    assert found[0] > range_auc(missed, labels, window=6)[0]


@pytest.mark.parametrize("normal_at", [0, 5, 11])
def test_one_normal_point_among_anomalies_divides_by_nothing_that_is_zero(normal_at):
    """The fewest normal points the checks let through, inside a buffer wider than the series:
    every rate is finite and no division warns (the extended label of a normal point stays
    below 1, so ``n - p_new`` is never 0)."""
    labels = np.ones(12, dtype=int)
    labels[normal_at] = 0
    scores = np.random.default_rng(normal_at).random(12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        values = [*range_auc(scores, labels, window=40), *vus(scores, labels, window=40)]
    assert np.all(np.isfinite(values)) and all(0.0 <= v <= 1.0 for v in values)
