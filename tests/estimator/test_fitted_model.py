"""The fitted model is one frozen value, built once; the estimator reads it, keeps nothing twice."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

from madcluster import MADCluster
from madcluster.estimator.fitted import FittedModel

TINY = {"window_size": 16, "epochs": 1, "epoch_windows": 32, "batch_size": 32, "random_state": 0}
SRC = Path(__file__).resolve().parents[2] / "src" / "madcluster"


@pytest.fixture(scope="module")
def model():
    rng = np.random.default_rng(0)
    x = (
        np.sin(np.arange(300)[:, None] / 5 + np.arange(2)) + 0.05 * rng.normal(size=(300, 2))
    ).astype(np.float32)
    return MADCluster(**TINY).fit(x)


def test_the_fitted_model_is_frozen_and_small():
    public = [n for n in dir(FittedModel) if not n.startswith("_")]
    public += [f.name for f in dataclasses.fields(FittedModel) if f.name not in public]
    assert len(set(public)) <= 14, sorted(set(public))
    assert FittedModel.__dataclass_params__.frozen


def test_the_estimator_reads_the_model_and_writes_nothing_into_it(model):
    with pytest.raises(dataclasses.FrozenInstanceError):
        model.model_.threshold = 0.0
    assert model.threshold_ == model.model_.threshold  # one value, read from the model
    for name in (
        "threshold_",
        "net_",
        "score_stats_",
        "input_terms_",
        "part_weights_",
        "scaler_mean_",
        "warmup_quantiles_",
        "attribution_baseline_",
    ):
        with pytest.raises(AttributeError):
            setattr(model, name, None)
    assert np.array_equal(
        model.labels_, (model.decision_scores_ > model.threshold_).astype(np.int64)
    )


def test_no_isinstance_on_part_kinds_outside_the_parts_modules():
    kinds = re.compile(
        r"isinstance\([^)]*(WindowKMeans|AutoRegressive|OwnScore|KMeansStream|AutoRegressiveStream)"
    )
    hits = [f"{p.relative_to(SRC)}" for p in SRC.rglob("*.py") if kinds.search(p.read_text())]
    assert hits == []
