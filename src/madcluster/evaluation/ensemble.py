"""A benchmark probe: the sum of several detectors' standardised scores.

Why: on TSB-AD's MSL / SMAP / SMD series the window baselines lead on SMAP while MADCluster with
the D-RNN's next-step term leads on SMD and MSL (``benchmarks/results/tsbad/README.md``). Before an
input-space term becomes part of MADCluster itself, this measures what the combination would give:
each member is fitted on the training series, its training scores give a mean and standard
deviation, and the score is the sum of the members' z-scores (the same rule as MADCluster's
``base_score_combination="standardized"``). Not a library detector (no save / load).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from madcluster.base import BaseDetector


class StandardizedSum:
    """Fit every member on ``X``; score = sum of (score - training mean) / training std."""

    def __init__(self, members: list[BaseDetector]) -> None:
        self.members = members
        self.stats_: list[tuple[float, float]] = []

    def fit(self, X: np.ndarray) -> StandardizedSum:
        self.stats_ = []
        for member in self.members:
            member.fit(X)
            train_scores = np.asarray(member.decision_function(X), dtype=np.float64)
            self.stats_.append((float(train_scores.mean()), float(train_scores.std()) or 1.0))
        return self

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        total = np.zeros(len(X))
        for member, (mean, std) in zip(self.members, self.stats_):
            total += (np.asarray(member.decision_function(X), dtype=np.float64) - mean) / std
        return total


def build_ensemble(
    members: list[dict[str, Any]], build: Callable[[dict[str, Any]], BaseDetector]
) -> StandardizedSum:
    """An ensemble of the detectors ``build`` makes from each member configuration."""
    return StandardizedSum([build(m) for m in members])


__all__ = ["StandardizedSum", "build_ensemble"]
