"""A fitted model's named score terms and features h (:func:`~madcluster.estimator.fitted.score_terms`,
:func:`~madcluster.estimator.fitted.embed`): the terms are what the own score combines, and the
features of step t are the h behind its terms. Found by the mutation run of ``docs/mutation.md``
(no test of the score's selection called either)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from madcluster import MADCluster
from madcluster.estimator.fitted import embed, score_terms

TINY = {"window_size": 16, "epochs": 1, "epoch_windows": 32, "batch_size": 32, "random_state": 0}


def _series(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n)[:, None]
    return (np.sin(t / np.array([3.0, 5.0])) + 0.05 * rng.normal(size=(n, 2))).astype(np.float32)


@pytest.fixture(scope="module")
def fitted():
    return MADCluster(input_terms=None, **TINY).fit(_series(200, 0)).model_


def test_the_terms_are_what_the_own_score_combines(fitted):
    rows = _series(90, 1)
    terms = score_terms(fitted, rows)
    assert set(terms) == set(fitted.head.stats) - {"own"}
    assert all(v.shape == (90,) and v.dtype == np.float64 for v in terms.values())
    steps = np.arange(90)
    own = fitted.warmup.calibrate(fitted.head.combine(terms), fitted.warmup.positions(steps))
    assert np.array_equal(own, fitted.decision_function(rows))  # no input terms: the own score


def test_the_features_of_a_step_are_the_h_behind_its_terms(fitted):
    rows = _series(90, 2)
    h = embed(fitted, rows)
    assert h.shape[0] == 90 and h.dtype == np.float64
    with torch.no_grad():
        from_h = fitted.scoring_net.head.score_terms(torch.from_numpy(h)[:, None, :])
    terms = score_terms(fitted, rows)
    for name, values in from_h.items():
        assert np.allclose(values[:, 0].numpy(), terms[name], rtol=0, atol=1e-9), name
