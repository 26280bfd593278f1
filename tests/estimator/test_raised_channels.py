"""The channels an incident names when it opens: the last row's occlusion ranking, scored for that
step alone (a stream opening an incident used to score every step of the window once per channel)."""

from __future__ import annotations

import numpy as np

from madcluster import MADCluster
from madcluster.estimator.attribution import (
    channel_groups,
    input_deviation,
    occlusion_contributions,
    standardised_contributions,
    top_channels,
)
from madcluster.estimator.incident_scoring import raised_channels

TINY = {"window_size": 20, "epochs": 1, "epoch_windows": 64, "batch_size": 32, "random_state": 0}


def _series(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n)[:, None]
    return (np.sin(t / np.array([5.0, 9.0, 13.0])) + 0.1 * rng.normal(size=(n, 3))).astype(
        np.float32
    )


def test_raised_channels_rank_the_last_row_as_the_whole_window_does():
    model = MADCluster(input_terms=None, **TINY).fit(_series(600, 0)).model_
    rows = _series(40, 1)
    rows[-1, 2] += 4.0  # the third channel leaves its range on the last row only
    names = ["a", "b", "c"]
    inputs = model.inputs.model_input(rows)
    groups = channel_groups(model.inputs.n_features, inputs.shape[1])
    whole = occlusion_contributions(model.own_scores, inputs, groups)[-1:]  # every step scored
    baseline = model.attribution.values(model)
    if baseline is not None:
        whole = standardised_contributions(whole, input_deviation(inputs[-1:], groups), baseline)
    expected = top_channels(whole, names)[0]
    assert raised_channels(model, rows, names) == expected
    assert expected.startswith("c")
