"""The fitted model is one frozen value, built once; the estimator reads it, keeps nothing twice."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

from madcluster import MADCluster
from madcluster.estimator.deprecated import is_deprecated_alias
from madcluster.estimator.fitted import FittedModel, step_outputs

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
    # old spellings kept for a release (estimator/deprecated.py) are not part of its surface
    public = [
        n
        for n in dir(FittedModel)
        if not n.startswith("_") and not is_deprecated_alias(FittedModel, n)
    ]
    public += [f.name for f in dataclasses.fields(FittedModel) if f.name not in public]
    assert len(set(public)) <= 12, sorted(set(public))  # 90 % of the cap of 14
    assert FittedModel.__dataclass_params__.frozen


def test_the_old_spelling_of_step_outputs_warns_and_gives_the_same(model):
    fitted = model.model_
    scaled = fitted.inputs.model_input(fitted.inputs.check_rows(np.zeros((60, 2), np.float32)))
    expected = step_outputs(fitted, scaled, fitted.scoring_net.score)
    with pytest.warns(DeprecationWarning, match="step_outputs"):
        old = fitted.outputs(scaled, fitted.scoring_net.score)
    assert old.keys() == expected.keys()
    assert all(np.array_equal(old[k], expected[k]) for k in old)


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


def test_a_pickle_from_before_the_name_was_read_from_the_network_still_loads(model):
    """Pickles (models sent to workers) written when the fitted model kept its embedder's name
    hold a ``name``: it is left out, the rest rebuilt."""
    fitted = model.model_
    reducer, (kept,) = fitted.__reduce__()
    old = reducer({**kept, "name": "drnn"})
    rows = np.random.default_rng(0).standard_normal((80, fitted.inputs.n_features))
    assert np.array_equal(old.decision_function(rows), fitted.decision_function(rows))
