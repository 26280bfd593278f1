"""The rules that combine a score's parts: one class each (:meth:`ZScoreSum.statistics`, what a
part's training reading gives it; :meth:`ZScoreSum.part`, one part's training-standardised
contribution; :meth:`ZScoreSum.total`, their sum in order), registered by name in :data:`RULES`;
a combination (:mod:`madcluster.score.combination`) records the name of its rule."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

#: A part's training statistics: its mean and standard deviation, and for
#: :class:`TailExcessSum` the z-score of its normal tail.
Stats = tuple[float, ...]


def mean_std(values: np.ndarray) -> Stats:
    """Mean and standard deviation (1 for a constant part, so standardising never divides by 0)."""
    std = float(values.std())
    return float(values.mean()), std if std > 1e-12 else 1.0


class ZScoreSum:
    """``sum of w_p (x_p - mean_p) / std_p``: each part standardised with its training
    statistics, weighted, and added in the parts' order (one order for a stream and a series)."""

    name: ClassVar[str] = "zscore-sum"

    def statistics(self, reference: np.ndarray) -> Stats:
        """A part's statistics from its ``reference`` reading of the training rows."""
        return mean_std(reference)

    def part(self, values: np.ndarray, stats: Stats, weight: float) -> np.ndarray:
        mean, std = stats[:2]
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


class TailExcessSum(PositiveZScoreSum):
    """``sum of w_p (max(z_p - t_p, 0) + BELOW max(z_p, 0))``, ``t_p`` the :data:`QUANTILE`
    quantile of the part's z-scores on its training reading (at least 0): a part counts fully
    only beyond its own normal range.

    Why: the positive sum adds every part's normal noise above its mean, so on a series where one
    part sees the anomalies and the others see nothing (a machine's broken state sequence that
    only the window part sees, a 20-row shape only the discord part sees) the others' noise
    dilutes it. Beyond its training tail a part's value is evidence; inside it, mostly noise.
    ``BELOW`` keeps the rows inside every part's tail ranked (and a threshold meaningful there).

    An option, not the default (``benchmarks/results/parts/tail_excess.md``): chosen over the
    positive sum with each development family left out (13 of 15), it narrows the three largest
    gaps to a family's best part, but its gain on the 46 TSB-AD series is within the seeds'
    spread (+.007 with seed 0, -.002 with seed 1), and read at once, where incidents page, every
    policy shape within the false-incident budget missed an anomaly on each held-out server
    series that the positive sum catches."""

    name: ClassVar[str] = "tail-excess-sum"
    QUANTILE: ClassVar[float] = 0.98  # the registered rule's (studies build others)
    BELOW: ClassVar[float] = 0.05

    def __init__(self, quantile: float = QUANTILE) -> None:
        self.quantile = quantile

    def statistics(self, reference: np.ndarray) -> Stats:
        mean, std = mean_std(reference)
        z = (reference[np.isfinite(reference)] - mean) / std
        tail = float(np.quantile(z, self.quantile)) if len(z) else 0.0
        return mean, std, max(tail, 0.0)

    def part(self, values: np.ndarray, stats: Stats, weight: float) -> np.ndarray:
        z = ZScoreSum.part(self, values, stats, 1.0)
        tail = stats[2] if len(stats) > 2 else 0.0
        return weight * (np.maximum(z - tail, 0.0) + self.BELOW * np.maximum(z, 0.0))


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
    rule.name: rule
    for rule in (ZScoreSum(), PositiveZScoreSum(), TailExcessSum(), ZScoreMaximum())
}
#: The rule of new fits: the positive parts' sum (chosen per family,
#: benchmarks/results/parts/families.md; kept over the tail excess,
#: benchmarks/results/parts/tail_excess.md). Files that name no rule were written with
#: :data:`FILE_RULE`, the plain sum.
DEFAULT_RULE = PositiveZScoreSum.name
FILE_RULE = ZScoreSum.name

__all__ = [
    "DEFAULT_RULE",
    "FILE_RULE",
    "RULES",
    "PositiveZScoreSum",
    "Stats",
    "TailExcessSum",
    "ZScoreMaximum",
    "ZScoreSum",
    "mean_std",
]
