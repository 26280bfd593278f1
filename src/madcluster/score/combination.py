"""How the score's parts combine: one object over them, :class:`Combination`.

The score of a model with input terms is ``rule(part readings)``; the default rule
(:class:`PositiveZScoreSum`, ``"positive-zscore-sum"``) is ``sum over parts of w_p max(z_p, 0)``,
each part's reading standardised with its training mean and standard deviation and weighted by
``part_weights``, in the parts' order (own first); the plain sum (:class:`ZScoreSum`,
``"zscore-sum"``) is the rule of files from before the positive parts and of
``part_rule="zscore-sum"``; ``part_rule="tail-excess-sum"`` (:class:`TailExcessSum`) adds each
part's excess over the 0.98 quantile of its training z-scores (a third statistic per part). A
point-wise part (own, ar) is read through a centred mean of ``smoothing[name]`` steps, as a part
of its own (:class:`~madcluster.score.smoothed.Smoothed`; :mod:`madcluster.score.smoothing`). Every table (statistics, weights, smoothing) is keyed by the
part's name (``own``, ``kmeans``, ``ar``); the statistics of a part's causal reading, where it
differs from its final one (a part that reads ahead, a smoothed part), are kept apart in
``at_once_stats`` under the same name.

**Series scales.** With ``scale_rows`` > 0 (new fits: :data:`SERIES_SCALE_ROWS`) each part's final
contribution is divided by its *series scale*: the interquartile range / 1.349 of its z-scores on
the first ``scale_rows`` steps of the scored series, at least 1 (:func:`series_scale`). A part
whose values moved on most rows of the scored series (a new normal, a drifting level) then counts
in units of its spread there, so it cannot drown the others; a part high on a few rows (an
anomaly) keeps scale 1. Chosen on the development families by the worst family's shortfall
(``benchmarks/results/parts/series_scale.md``). The at-once reading keeps the training scales.

A stream (:class:`~madcluster.score.combination_stream.CombinationStream`) answers each row twice:
at once, every part read causally (each term weighted by its share in :data:`AT_ONCE_SHARES`; a
smoothed point-wise part through a trailing mean of :attr:`Combination.at_once_widths`), and
once final (L rows later with the KMeans part), exactly the whole series' value. A model with no
input terms has the own part alone, and its score is the own score itself (no statistics).

The rules, one class each, are in :mod:`madcluster.score.rules` (this module still exports them);
a combination records the name of its rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from madcluster.score.parts import OWN, FitContext, Part, fit_parts, part_class
from madcluster.score.rules import (
    DEFAULT_RULE,
    FILE_RULE,
    RULES,
    FewValuedTailExcessSum,
    PositiveZScoreSum,
    Stats,
    TailExcessSum,
    ZScoreSum,
    mean_std,
)
from madcluster.score.smoothed import smoothing_delay, wrap_point_wise

#: Rows of a scored series whose z-scores set each part's series scale in new fits
#: (benchmarks/results/parts/series_scale.md).
SERIES_SCALE_ROWS = 3000
# the interquartile range of a standard normal: a spread as the training standard deviation's
IQR_PER_STD = 1.349
#: A part's at-once weight as a share of its weight, where not 1 and the fit did not set it
#: (:attr:`Combination.at_once_weights`; model files from before, weights a user gave): the
#: discord's causal reading is sharp where the other parts' lag and spread, so it counts twice
#: (chosen with ``server`` and ``drift`` left out, ``benchmarks/results/incidents_at_once.md``).
AT_ONCE_SHARES: dict[str, float] = {"discord": 2.0}
#: The trailing mean a smoothed point-wise part (own, AR) is read through at once in new fits: 1,
#: its value at t alone. Its centred block cut at t (files from before: :func:`causal_width`) lagged
#: an anomaly's start and outlasted its end by half the block (chosen with each development family
#: left out, ``benchmarks/results/incidents_at_once.md``).
AT_ONCE_WIDTH = 1


def series_scale(z: np.ndarray) -> float:
    """A part's scale on a scored series from its z-scores ``z`` there: the interquartile range /
    1.349 (a standard deviation where the z-scores are normal), at least 1 (a part never counts
    for more than on its training scale)."""
    if len(z) == 0:
        return 1.0
    q25, q75 = np.quantile(z, [0.25, 0.75])
    return max(1.0, float(q75 - q25) / IQR_PER_STD)


@dataclass(frozen=True)
class Combination:
    """The parts of a score (``own`` first) and how they combine; see the module docstring.

    Each point-wise part is held as :class:`~madcluster.score.smoothed.Smoothed` (its centred mean
    of ``smoothing[name]`` steps, at once its trailing mean of ``at_once_widths[name]``; the two
    tables are what a model file records, the wrapped parts follow from them).
    ``at_once_stats`` lacks the parts of model files from before the causal readings had their
    own statistics: a stream then answers at once with the provisional value
    (:attr:`has_at_once`)."""

    parts: tuple[Part, ...]
    stats: dict[str, Stats] = field(default_factory=dict)
    at_once_stats: dict[str, Stats] = field(default_factory=dict)
    weights: dict[str, float] = field(default_factory=dict)  # a part not in it: 1
    smoothing: dict[str, int] = field(default_factory=dict)  # a part not in it: none
    rule: str = FILE_RULE
    scale_rows: int = 0  # 0: the training scales alone (files from before series scales)
    # what the fit measured of each part on held-out rows (madcluster.score.evidence's record;
    # empty where the weights were given or the file predates it): read, never used to score
    evidence: dict = field(default_factory=dict)
    # the trailing mean each smoothed point-wise part is read through at once (a part not in it:
    # its centred block cut at t, as files from before read it)
    at_once_widths: dict[str, int] = field(default_factory=dict)
    # the weight of each part read ahead at once, where the fit set it (a part not in it, and
    # every part of files from before: its weight times its share in AT_ONCE_SHARES)
    at_once_weights: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(self.parts) > 1:  # the own score alone is the score as it is
            wrapped = wrap_point_wise(self.parts, self.smoothing, self.at_once_widths)
            object.__setattr__(self, "parts", wrapped)

    # ------------------------------------------------------------------ building
    @classmethod
    def own_alone(cls) -> Combination:
        """The score of a model without input terms: the own score as it is."""
        return cls((part_class(OWN)(),))

    @classmethod
    def fit(
        cls,
        names: tuple[str, ...],
        rows: np.ndarray,
        own: np.ndarray,
        context: FitContext,
        weights: Mapping[str, float] | None = None,
        smoothing: Mapping[str, int] | None = None,
        rule: str = DEFAULT_RULE,
        scale_rows: int = 0,
        at_once_weights: Mapping[str, float] | None = None,
    ) -> Combination:
        """The parts ``names`` fitted on the training ``rows`` and their training statistics, the
        own part's from its training scores ``own``; ``weights``: by part (1 where missing);
        ``smoothing``: widths by part (those > 1 of point-wise parts are kept); ``scale_rows``:
        see the module docstring (0: off); ``at_once_weights``: the at-once weights of parts
        read ahead (where missing: the weight times its share in :data:`AT_ONCE_SHARES`)."""
        terms = fit_parts(names, rows, context)
        if not terms:
            return cls.own_alone()
        parts = (part_class(OWN)(), *terms)
        kept = {
            p.name: int((smoothing or {})[p.name])
            for p in parts
            if p.point_wise and not p.at_once_only and (smoothing or {}).get(p.name, 1) > 1
        }
        bare = cls(
            parts,
            weights={p.name: float((weights or {}).get(p.name, 1.0)) for p in parts},
            smoothing=kept,
            rule=rule,
            at_once_widths={name: AT_ONCE_WIDTH for name in kept},
            at_once_weights={
                p.name: float(at_once_weights[p.name])
                for p in parts
                if p.reads_ahead and p.name in (at_once_weights or {})
            },
        )
        # training readings as each part describes unseen normal rows (a part matching the
        # training rows to themselves, the discord, leaves its own neighbourhood out)
        read = [p.bind(own) for p in bare.parts]
        statistics = RULES[rule].fitted_to(rows).statistics
        stats = {p.name: statistics(p.reference_values(rows)) for p in read}
        at_once = {p.name: statistics(p.reference_at_once(rows)) for p in read if p.reads_ahead}
        return replace(bare, stats=stats, at_once_stats=at_once, scale_rows=int(scale_rows))

    # ------------------------------------------------------------------ what it holds
    @property
    def names(self) -> list[str]:
        return [p.name for p in self.parts]

    @property
    def final_parts(self) -> tuple[Part, ...]:
        """The parts of the final score (every part but those read at once only)."""
        return tuple(p for p in self.parts if not p.at_once_only)

    @property
    def terms(self) -> list[Part]:
        """The parts added to the own score (the input terms), as fitted (not wrapped)."""
        return [getattr(p, "inner", p) for p in self.parts if p.name != OWN]

    @property
    def combines(self) -> bool:
        """Whether the score combines parts (False: the own score alone, as it is)."""
        return len(self.parts) > 1

    @property
    def has_at_once(self) -> bool:
        """Whether every part that reads ahead has the statistics of its causal reading."""
        return all(p.name in self.at_once_stats for p in self.parts if p.reads_ahead)

    @property
    def at_once_rule(self) -> str:
        """The name of the rule the at-once terms are read with (the combination's, but for the
        few-valued rule's: the positive sum)."""
        return RULES[self.rule].AT_ONCE_RULE or self.rule

    def final_after(self) -> int:
        """Rows after a step until its streamed score is final (0: at once)."""
        return max((p.final_after() for p in self.parts), default=0)

    def describe(self) -> str:
        """``0.5 z(own, mean of 50) + 1.5 z(kmeans) + 1 z(ar, mean of 10) + 1 z(discord,
        subsequences of 60)``, the rule named where it is not the plain sum, for messages."""
        if not self.combines:
            return "MADCluster's own score alone (no input terms)"

        def one(p: Part) -> str:
            detail = f", {p.describe()}" if p.describe() else ""
            return f"{self.weights.get(p.name, 1.0):g} z({p.name}{detail})"

        total = " + ".join(one(p) for p in self.final_parts)
        at_once = [one(p) for p in self.parts if p.at_once_only]
        total += "".join(f" (+ {term} at once)" for term in at_once)
        excess = next((s[3] for s in self.stats.values() if len(s) > 3), 1.0)
        if self.rule == PositiveZScoreSum.name or (
            self.rule == FewValuedTailExcessSum.name and excess == 0.0
        ):
            total = f"{total}, each part at least 0"
        elif self.rule == TailExcessSum.name:
            total = (
                f"{total}, each part's excess over its training q {TailExcessSum.QUANTILE:g} "
                f"(+ {TailExcessSum.BELOW:g} of it above 0)"
            )
        elif self.rule == FewValuedTailExcessSum.name:
            total = (
                f"{total}, each part at least 0, {excess:.0%} of it (the share of few-valued "
                f"columns) its excess over its training q {FewValuedTailExcessSum.QUANTILE:g}"
            )
        elif self.rule != ZScoreSum.name:
            total = f"{self.rule} of {total}"
        if self.scale_rows > 0:
            total += f", over its spread on the series' first {self.scale_rows} steps where wider"
        return total

    # ------------------------------------------------------------------ readings
    def readings(self, rows: np.ndarray, own: np.ndarray) -> dict[str, np.ndarray]:
        """Each final part's reading of a whole series of checked ``rows`` whose own scores are
        ``own``, as the score reads it (a smoothed part: its centred means; a part read at once
        only is not read: the final score leaves it out)."""
        return {p.name: p.bind(own).values(rows) for p in self.final_parts}

    def at_once_readings(self, rows: np.ndarray, own: np.ndarray) -> dict[str, np.ndarray]:
        """Each part's reading of ``rows`` from steps <= t (what a stream answers at once)."""
        return {p.name: p.bind(own).at_once(rows) for p in self.parts}

    def contribution(
        self, part: Part, values: np.ndarray, at_once: bool = False, scale: float = 1.0
    ) -> np.ndarray:
        """``part``'s term of the score from its reading ``values`` (``at_once``: a causal reading,
        by :attr:`at_once_rule`, with the statistics of that reading where it has its own,
        weighted by its share in :data:`AT_ONCE_SHARES`, 0 where it has no value yet), divided
        by its series ``scale``."""
        weight = self.weights.get(part.name, 1.0)
        rule = RULES[self.at_once_rule if at_once else self.rule]
        if at_once and part.reads_ahead:
            weight = self.at_once_weight(part.name)
            term = rule.part(values, self.at_once_stats[part.name], weight)
            return np.where(np.isnan(term), 0.0, term)
        term = rule.part(values, self.stats[part.name], weight)
        return term if scale == 1.0 else term / scale

    def at_once_weight(self, name: str) -> float:
        """The weight of the part ``name`` (one read ahead) in the at-once score."""
        if name in self.at_once_weights:
            return self.at_once_weights[name]
        return self.weights.get(name, 1.0) * AT_ONCE_SHARES.get(name, 1.0)

    def paired_weights(self) -> dict[str, float]:
        """The weights the at-once weights pair with: each part with a recorded at-once weight at
        that weight over its share in :data:`AT_ONCE_SHARES` (the weight that share was chosen
        with), the others at their weight."""
        return {
            **self.weights,
            **{n: w / AT_ONCE_SHARES.get(n, 1.0) for n, w in self.at_once_weights.items()},
        }

    def series_scales(self, readings: Mapping[str, np.ndarray]) -> dict[str, float]:
        """Each part's series scale (:func:`series_scale`) from its final ``readings`` of the
        scored series' first steps (at most ``scale_rows`` of them are read); 1 without series
        scales."""
        if self.scale_rows <= 0:
            return {part.name: 1.0 for part in self.final_parts}
        out = {}
        for part in self.final_parts:
            mean, std = self.stats[part.name][:2]
            out[part.name] = series_scale((readings[part.name][: self.scale_rows] - mean) / std)
        return out

    # ------------------------------------------------------------------ scores
    def score(self, rows: np.ndarray, own: np.ndarray) -> np.ndarray:
        """The score of a whole series of checked ``rows`` whose own scores are ``own``."""
        if not self.combines:
            return own
        return self._final_total(self.readings(rows, own))

    def final_contributions(self, readings: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Each part's term of a whole series' score from its final ``readings`` of it (weighted,
        over its series scale), in the parts' order: the rule's total is the score."""
        scales = self.series_scales(readings)
        return {
            p.name: self.contribution(p, readings[p.name], scale=scales[p.name])
            for p in self.final_parts
        }

    def _final_total(self, readings: Mapping[str, np.ndarray]) -> np.ndarray:
        """The score of a whole series from every part's final ``readings`` of it."""
        return RULES[self.rule].total(list(self.final_contributions(readings).values()))

    def reference_score(self, rows: np.ndarray, own: np.ndarray) -> np.ndarray:
        """The score of the training ``rows`` as each part describes unseen normal rows
        (:meth:`~madcluster.score.parts.Part.reference_values`): the training scores a threshold
        is read from."""
        if not self.combines:
            return own
        return self._final_total(
            {p.name: p.bind(own).reference_values(rows) for p in self.final_parts}
        )

    def at_once_score(
        self, rows: np.ndarray, own: np.ndarray, ahead: Mapping[str, np.ndarray] | None = None
    ) -> np.ndarray:
        """What a stream answers each row of ``rows`` first: every part read causally, or as
        ``ahead`` gives it (by name: the incident calibration's reference readings)."""
        if not self.combines:
            return own
        ahead = ahead or {}
        terms = [
            self.contribution(
                p, ahead[p.name] if p.name in ahead else p.bind(own).at_once(rows), at_once=True
            )
            for p in self.parts
        ]
        return RULES[self.rule].total(terms)


__all__ = [
    "AT_ONCE_SHARES",
    "AT_ONCE_WIDTH",
    "DEFAULT_RULE",
    "FILE_RULE",
    "RULES",
    "SERIES_SCALE_ROWS",
    "Combination",
    "Stats",
    "ZScoreSum",
    "mean_std",
    "series_scale",
    "smoothing_delay",
]
