"""What :func:`~madcluster.estimator.fitting.fit_model` fits after the network, each against its
definition written out: the head terms' statistics on steady rows only, the warm-up table from
training windows each scored alone as a fresh series, the parts' combination from the
parameters, the training scores and the threshold. Found by the mutation run of
``docs/mutation.md``. Each test fits its own model: a mutation tester maps a function to the
tests that call it, and a model shared by a module fixture is fitted in the first test only."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from series_helpers import two_sines

from madcluster import MADCluster
from madcluster.embedders import embedder_name
from madcluster.estimator.fitted import score_terms
from madcluster.estimator.warmup import WARMUP_WINDOWS, fit_quantile_table, sample_starts
from madcluster.score.combination import mean_std
from madcluster.score.scoring import head_score

TINY = {"window_size": 16, "epochs": 1, "epoch_windows": 32, "batch_size": 32, "random_state": 0}


@pytest.fixture(params=[200])
def train(request) -> np.ndarray:
    return two_sines(request.param, 0)


@pytest.fixture
def model(train):
    return MADCluster(
        input_terms=("ar",),
        part_weights={"own": 0.7, "ar": 2.0},
        part_smoothing={"own": 1, "ar": 3},
        part_rule="zscore-max",
        contamination=0.05,
        **TINY,
    ).fit(train)


def test_the_head_statistics_are_read_on_steady_rows_only(model, train):
    fitted = model.model_
    warmup = fitted.warmup
    assert fitted.grid.causal and warmup.reference_from > 0
    steady = warmup.positions(np.arange(len(train))) >= warmup.reference_from
    assert 0 < (~steady).sum() < len(train)
    terms = {n: v[steady] for n, v in score_terms(fitted, train).items()}
    stats = {n: mean_std(v) for n, v in terms.items()}
    stats["own"] = mean_std(head_score(terms, stats, fitted.head.scaling))
    assert fitted.head.stats.keys() == stats.keys()
    for name, want in stats.items():
        assert fitted.head.stats[name] == pytest.approx(want, rel=1e-12, abs=1e-15), name


# 100 rows: the warm-up windows are scored in one batch; 200: in two (CPU batches of 128)
@pytest.mark.parametrize("train", [100, 200], indirect=True)
def test_the_warmup_table_comes_from_training_windows_each_scored_alone(model, train):
    fitted = model.model_
    window = fitted.grid.window_size
    net = fitted.scoring_net
    scores = []
    with torch.no_grad():
        for start in sample_starts(len(train), window, WARMUP_WINDOWS):
            fresh = fitted.inputs.model_input(train[start : start + window])
            x = torch.from_numpy(fresh[None]).to(torch.float64)
            terms = {n: v[0].numpy() for n, v in net.score(x).items()}
            scores.append(fitted.head.combine(terms))
    want = fit_quantile_table(np.stack(scores), fitted.warmup.reference_from)
    assert np.allclose(fitted.warmup.quantiles, want, rtol=0, atol=1e-9)


def test_the_combination_training_scores_and_threshold_follow_the_parameters(model, train):
    fitted = model.model_
    combination = fitted.combination
    assert embedder_name(fitted.net.embedder) == model.embedder == "drnn"
    assert combination.names == ["own", "ar"]
    assert combination.weights == {"own": 0.7, "ar": 2.0}
    assert combination.smoothing == {"ar": 3}
    assert combination.rule == "zscore-max"
    checked = fitted.inputs.check_rows(train)
    own = fitted.own_scores(fitted.inputs.model_input(checked))
    # the training scores: each part as it reads unseen normal rows; the threshold their quantile
    assert np.allclose(
        model.decision_scores_, combination.reference_score(checked, own), atol=1e-12
    )
    assert fitted.threshold == pytest.approx(np.quantile(model.decision_scores_, 0.95), rel=1e-12)
    assert model.threshold_ == fitted.threshold
