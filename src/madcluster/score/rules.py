"""The rules that combine a score's parts: one class each (:meth:`ZScoreSum.part`, one part's
training-standardised contribution; :meth:`ZScoreSum.total`, their sum in order), registered by
name in :data:`RULES`; a combination (:mod:`madcluster.score.combination`) records the name of its
rule."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

Stats = tuple[float, float]


class ZScoreSum:
    """``sum of w_p (x_p - mean_p) / std_p``: each part standardised with its training
    statistics, weighted, and added in the parts' order (one order for a stream and a series)."""

    name: ClassVar[str] = "zscore-sum"

    def part(self, values: np.ndarray, stats: Stats, weight: float) -> np.ndarray:
        mean, std = stats
        return weight * ((values - mean) / std)

    def total(self, parts: list[np.ndarray]) -> np.ndarray:
        total = parts[0]
        for part in parts[1:]:
            total = total + part
        return total


class PositiveZScoreSum(ZScoreSum):
    """``sum of w_p max(z_p, 0)``: a part at or below its training mean adds nothing, so one
    part's normal noise cannot hide another's excess, and a part that falls (a next-step error
    on a flat stretch) cannot cancel one that rises (chosen on the development
    families, ``benchmarks/results/parts/families.md``)."""

    name: ClassVar[str] = "positive-zscore-sum"

    def part(self, values: np.ndarray, stats: Stats, weight: float) -> np.ndarray:
        return np.maximum(super().part(values, stats, weight), 0.0)


class ZScoreMaximum(ZScoreSum):
    """``max over parts of w_p z_p``: the most surprised part decides (PyOD's maximization)."""

    name: ClassVar[str] = "zscore-max"

    def total(self, parts: list[np.ndarray]) -> np.ndarray:
        total = parts[0]
        for part in parts[1:]:
            total = np.maximum(total, part)
        return total


#: The combination rules by name.
RULES: dict[str, ZScoreSum] = {
    rule.name: rule for rule in (ZScoreSum(), PositiveZScoreSum(), ZScoreMaximum())
}
#: The rule of new fits: the positive parts' sum (chosen per family,
#: benchmarks/results/parts/families.md). Files that name no rule were written with
#: :data:`FILE_RULE`, the plain sum.
DEFAULT_RULE = PositiveZScoreSum.name
FILE_RULE = ZScoreSum.name

__all__ = [
    "DEFAULT_RULE",
    "FILE_RULE",
    "RULES",
    "PositiveZScoreSum",
    "Stats",
    "ZScoreMaximum",
    "ZScoreSum",
]
