"""Where a fitted model's scoring windows lie (:class:`~madcluster.estimator.fitted.ScoringGrid`):
the stride resolved at fit, the causal flag, the batch per device. Found by the mutation run of
``docs/mutation.md``."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from madcluster.estimator.fitted import ScoringGrid
from madcluster.score.scoring import CPU_SCORING_BATCH


def _net(causal: bool) -> SimpleNamespace:
    return SimpleNamespace(embedder=SimpleNamespace(causal=causal))


def _params(**changes):
    return {
        "score_stride": None,
        "window_size": 50,
        "score_type": "point",
        "batch_size": 64,
        **changes,
    }


@pytest.mark.parametrize(
    ("causal", "params", "want"),
    [
        (True, _params(), ScoringGrid(50, 5, True, 256)),  # causal: windows every L // 10 steps
        (False, _params(), ScoringGrid(50, 50, False, 256)),  # others: non-overlapping windows
        (True, _params(window_size=8), ScoringGrid(8, 1, True, 256)),  # at least 1
        (True, _params(score_stride=7.0), ScoringGrid(50, 7, True, 256)),  # as given
        (False, _params(score_stride=3), ScoringGrid(50, 3, False, 256)),
        (True, _params(score_type="window"), ScoringGrid(50, 5, False, 256)),  # no per-step read
        (True, _params(batch_size=10), ScoringGrid(50, 5, True, 40)),
    ],
)
def test_the_grid_is_resolved_once_from_the_network_and_the_parameters(causal, params, want):
    grid = ScoringGrid.for_network(_net(causal), params)
    assert grid == want
    assert all(
        type(v) is type(w) for v, w in zip(vars(grid).values(), vars(want).values(), strict=True)
    )


def test_a_cpu_scores_at_most_the_cpu_batch_at_a_time():
    big = ScoringGrid(50, 5, True, 4 * CPU_SCORING_BATCH)
    small = ScoringGrid(50, 5, True, CPU_SCORING_BATCH // 2)
    assert big.batch_on(torch.device("cpu")) == CPU_SCORING_BATCH
    assert small.batch_on(torch.device("cpu")) == CPU_SCORING_BATCH // 2
    assert big.batch_on(torch.device("cuda")) == 4 * CPU_SCORING_BATCH  # no device needed
    assert big.batch_on(torch.device("meta")) == 4 * CPU_SCORING_BATCH
