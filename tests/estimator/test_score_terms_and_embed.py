"""A fitted model's scoring paths (:class:`~madcluster.estimator.fitted.FittedModel`): the named
score terms are what the own score combines, the features of step t are the h behind its terms, a
stream's trailing buffer scores its steps as the whole series, a pickled model scores from a fresh
float64 copy. Found by the mutation run of ``docs/mutation.md`` (no test of the score's selection
called ``score_terms`` or ``embed``)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch
from series_helpers import two_sines

from madcluster import MADCluster
from madcluster.estimator.fitted import embed, score_terms, scoring_dtype

TINY = {"window_size": 16, "epochs": 1, "epoch_windows": 32, "batch_size": 32, "random_state": 0}


@pytest.fixture(scope="module")
def fitted():
    return MADCluster(input_terms=None, **TINY).fit(two_sines(200, 0)).model_


def test_the_terms_are_what_the_own_score_combines(fitted):
    rows = two_sines(90, 1)
    terms = score_terms(fitted, rows)
    assert set(terms) == set(fitted.head.stats) - {"own"}
    assert all(v.shape == (90,) and v.dtype == np.float64 for v in terms.values())
    steps = np.arange(90)
    own = fitted.warmup.calibrate(fitted.head.combine(terms), fitted.warmup.positions(steps))
    assert np.array_equal(own, fitted.decision_function(rows))  # no input terms: the own score


def test_the_features_of_a_step_are_the_h_behind_its_terms(fitted):
    rows = two_sines(90, 2)
    h = embed(fitted, rows)
    assert h.shape[0] == 90 and h.dtype == np.float64
    with torch.no_grad():
        from_h = fitted.scoring_net.head.score_terms(torch.from_numpy(h)[:, None, :])
    terms = score_terms(fitted, rows)
    for name, values in from_h.items():
        assert np.allclose(values[:, 0].numpy(), terms[name], rtol=0, atol=1e-9), name


@pytest.mark.parametrize("score_from", [0, 3, 17, 40, 89])
def test_a_trailing_buffer_scores_its_steps_as_the_whole_series(fitted, score_from):
    """The stream's path: a buffer that starts at the window of the first step it scores gives
    that step and the later ones the whole series' own scores."""
    rows = two_sines(90, 3)
    scaled = fitted.inputs.model_input(fitted.inputs.check_rows(rows))
    whole = fitted.own_scores(scaled)
    grid = fitted.grid
    assert grid.causal
    first = max(0, -(-(score_from - grid.window_size + 1) // grid.score_stride)) * grid.score_stride
    got = fitted.own_scores(scaled[first:], first_step=first, score_from=score_from)
    assert np.allclose(got, whole[score_from:], rtol=0, atol=1e-12)
    if score_from == first:  # score_from defaults to the buffer's first step
        assert np.array_equal(fitted.own_scores(scaled[first:], first_step=first), got)


def test_a_pickled_model_scores_as_it_did_from_a_fresh_float64_copy(fitted):
    rows = two_sines(60, 4)
    again = pickle.loads(pickle.dumps(fitted))
    assert scoring_dtype(again) == torch.float64
    assert next(again.scoring_net.parameters()).dtype == torch.float64
    assert next(again.net.parameters()).dtype == torch.float32
    assert again.scoring_net is not again.net
    assert np.array_equal(again.decision_function(rows), fitted.decision_function(rows))


def test_the_estimators_old_spelling_of_score_terms_warns_and_gives_the_same():
    detector = MADCluster(input_terms=None, **TINY).fit(two_sines(200, 0))
    rows = two_sines(90, 1)
    expected = score_terms(detector.model_, rows)
    with pytest.warns(DeprecationWarning, match=r"score_terms\(detector\.model_, X\)"):
        old = detector.score_terms(rows)
    assert old.keys() == expected.keys()
    assert all(np.array_equal(old[k], expected[k]) for k in old)
