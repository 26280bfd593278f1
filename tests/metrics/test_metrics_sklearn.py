"""Point-wise metrics against scikit-learn, live, on the fixed cases and on random inputs."""

from __future__ import annotations

import numpy as np
import pytest
from metric_cases import all_cases
from sklearn.metrics import average_precision_score, precision_recall_fscore_support, roc_auc_score

from madcluster.metrics import auc_pr, auc_roc, f1, precision, precision_recall_f1, recall

TOL = 1e-12


def _random_inputs(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 3000))
    lab = (rng.random(n) < rng.uniform(0.01, 0.5)).astype(int)
    lab[rng.integers(0, n)] = 1
    lab[rng.integers(0, n)] = 0
    scores = rng.normal(size=n) + lab * rng.uniform(0, 2)
    if seed % 3 == 0:
        scores = np.round(scores, 1)  # ties
    return scores, lab


@pytest.mark.parametrize("seed", range(25))
def test_random_inputs_match_sklearn(seed: int) -> None:
    scores, lab = _random_inputs(seed)
    if lab.all() or not lab.any():
        pytest.skip("single class")
    assert auc_roc(scores, lab) == pytest.approx(roc_auc_score(lab, scores), abs=TOL)
    assert auc_pr(scores, lab) == pytest.approx(average_precision_score(lab, scores), abs=TOL)
    pred = scores > np.quantile(scores, 0.8)
    p, r, f, _ = precision_recall_fscore_support(lab, pred, zero_division=0)
    assert precision_recall_f1(pred, lab) == pytest.approx((p[1], r[1], f[1]), abs=TOL)


@pytest.mark.parametrize("name", sorted(all_cases()))
def test_cases_match_sklearn(name: str) -> None:
    c = all_cases()[name]
    assert auc_roc(c.scores, c.labels) == pytest.approx(roc_auc_score(c.labels, c.scores), abs=TOL)
    assert auc_pr(c.scores, c.labels) == pytest.approx(
        average_precision_score(c.labels, c.scores), abs=TOL
    )
    p, r, f_, _ = precision_recall_fscore_support(c.labels, c.predictions, zero_division=0)
    assert precision(c.predictions, c.labels) == pytest.approx(p[1], abs=TOL)
    assert recall(c.predictions, c.labels) == pytest.approx(r[1], abs=TOL)
    assert f1(c.predictions, c.labels) == pytest.approx(f_[1], abs=TOL)


def test_auc_pr_is_step_not_trapezoid() -> None:
    scores = np.array([0.9, 0.8, 0.7, 0.6, 0.5])
    lab = np.array([1, 0, 0, 0, 1])
    assert auc_pr(scores, lab) == pytest.approx(1 * 0.5 + 0.4 * 0.5)
