"""The network's own score as a part of the score (``own``): its values are given by the fitted
model (:meth:`~madcluster.estimator.fitted.FittedModel.own_scores`), read step by step.

It has no fitted arrays of its own (the network is the model's) and is always the first part.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from madcluster.score.parts import FitContext, Part, PartStream


@dataclass(frozen=True)
class OwnScore(Part):
    """The network's own score, warm-up calibrated; a causal model's value of step t reads steps
    <= t only. ``scores``: the own scores of the rows being read (:meth:`bind`: they arrive with
    the rows)."""

    scores: np.ndarray | None = field(default=None, repr=False, compare=False)

    name: ClassVar[str] = "own"
    point_wise: ClassVar[bool] = True

    @classmethod
    def fit(cls, rows: np.ndarray, context: FitContext) -> OwnScore:
        return cls()

    def bind(self, own: np.ndarray) -> OwnScore:
        return OwnScore(np.asarray(own, dtype=np.float64))

    def values(self, rows: np.ndarray) -> np.ndarray:
        if self.scores is None or len(self.scores) != len(rows):
            raise TypeError(
                "the own score's values are the network's: read it bound to the rows' own scores "
                "(bind)"
            )
        return self.scores

    def stream(self) -> OwnStream:
        return OwnStream()

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> OwnScore:
        return cls()


class OwnStream(PartStream):
    """The own score over a growing series: its values are given with each append."""

    def append(self, rows: np.ndarray, given: np.ndarray | None = None) -> np.ndarray:
        if given is None:
            raise TypeError("the own score's stream needs the network's scores of the new rows")
        return np.asarray(given, dtype=np.float64)

    def state(self) -> dict[str, np.ndarray]:
        return {}

    def load(self, arrays: dict[str, np.ndarray]) -> None:
        return None


__all__ = ["OwnScore", "OwnStream"]
