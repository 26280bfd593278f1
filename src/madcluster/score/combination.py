"""How the score's parts combine: one object over them, :class:`Combination`.

The score of a model with input terms is ``rule(part readings)``; the default rule
(:class:`PositiveZScoreSum`, ``"positive-zscore-sum"``) is ``sum over parts of w_p max(z_p, 0)``,
each part's reading standardised with its training mean and standard deviation and weighted by
``part_weights``, in the parts' order (own first); the plain sum (:class:`ZScoreSum`,
``"zscore-sum"``) is the rule of files from before issue 34 and of ``part_rule="zscore-sum"``. A
point-wise part (own, ar) is first read through a centred mean of ``smoothing[name]`` steps
(:mod:`madcluster.score.smoothing`). Every table (statistics, weights, smoothing) is keyed by the
part's name (``own``, ``kmeans``, ``ar``); the statistics of a part's causal reading, where it
differs from its final one (a part that reads ahead, a smoothed part), are kept apart in
``at_once_stats`` under the same name.

A stream (:class:`CombinationStream`) answers each row twice: at once, every part read causally,
and once final (L rows later with the KMeans part), exactly the whole series' value. A model with
no input terms has the own part alone, and its score is the own score itself (no statistics).

A rule is one class with :meth:`ZScoreSum.part` (one part's training-standardised contribution)
and :meth:`ZScoreSum.total` (their sum in order), registered by name in :data:`RULES`; a
combination records the name of its rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from madcluster.score.parts import OWN, FitContext, Part, fit_parts, part_class
from madcluster.score.smoothing import SmoothedStream, causal_width, centred_means, trailing_means

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
    on a flat stretch) cannot cancel one that rises (issue 34; chosen on the development
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
#: The rule of new fits: the positive parts' sum (issue 34's study per family). Files that name
#: no rule were written with :data:`FILE_RULE`, the plain sum.
DEFAULT_RULE = PositiveZScoreSum.name
FILE_RULE = ZScoreSum.name


def mean_std(values: np.ndarray) -> Stats:
    """Mean and standard deviation (1 for a constant part, so standardising never divides by 0)."""
    std = float(values.std())
    return float(values.mean()), std if std > 1e-12 else 1.0


def smoothing_delay(width: int) -> int:
    """Rows after a step until its centred mean of ``width`` steps is final."""
    return width - (width - 1) // 2 - 1 if width > 1 else 0


@dataclass(frozen=True)
class Combination:
    """The parts of a score (``own`` first) and how they combine; see the module docstring.

    ``at_once_stats`` lacks the parts of model files from before the causal readings had their
    own statistics: a stream then answers at once with the provisional value
    (:attr:`has_at_once`)."""

    parts: tuple[Part, ...]
    stats: dict[str, Stats] = field(default_factory=dict)
    at_once_stats: dict[str, Stats] = field(default_factory=dict)
    weights: dict[str, float] = field(default_factory=dict)  # a part not in it: 1
    smoothing: dict[str, int] = field(default_factory=dict)  # a part not in it: none
    rule: str = FILE_RULE

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
    ) -> Combination:
        """The parts ``names`` fitted on the training ``rows`` and their training statistics, the
        own part's from its training scores ``own``; ``weights``: by part (1 where missing);
        ``smoothing``: widths by part (those > 1 of point-wise parts are kept)."""
        terms = fit_parts(names, rows, context)
        if not terms:
            return cls.own_alone()
        parts = (part_class(OWN)(), *terms)
        kept = {
            p.name: int((smoothing or {})[p.name])
            for p in parts
            if p.point_wise and (smoothing or {}).get(p.name, 1) > 1
        }
        bare = cls(
            parts,
            weights={p.name: float((weights or {}).get(p.name, 1.0)) for p in parts},
            smoothing=kept,
            rule=rule,
        )
        # training readings as each part describes unseen normal rows (a part matching the
        # training rows to themselves, the discord, leaves its own neighbourhood out)
        raw = {p.name: own if p.given else p.reference_values(rows) for p in parts}
        stats = {p.name: mean_std(bare.final_reading(p, raw[p.name])) for p in parts}
        at_once = {
            p.name: mean_std(
                p.reference_at_once(rows)
                if p.reads_ahead
                else bare.causal_reading(p, raw[p.name], rows)
            )
            for p in parts
            if bare.reads_apart(p)
        }
        return cls(parts, stats, at_once, bare.weights, kept, rule)

    # ------------------------------------------------------------------ what it holds
    @property
    def names(self) -> list[str]:
        return [p.name for p in self.parts]

    @property
    def terms(self) -> list[Part]:
        """The parts added to the own score (the input terms)."""
        return [p for p in self.parts if not p.given]

    @property
    def combines(self) -> bool:
        """Whether the score combines parts (False: the own score alone, as it is)."""
        return len(self.parts) > 1

    def width(self, part: Part) -> int:
        return self.smoothing.get(part.name, 1) if part.point_wise else 1

    def reads_apart(self, part: Part) -> bool:
        """Whether ``part``'s causal reading differs from its final one (then it has at-once
        stats)."""
        return part.reads_ahead or self.width(part) > 1

    @property
    def has_at_once(self) -> bool:
        """Whether every part read apart has the statistics of its causal reading."""
        return all(p.name in self.at_once_stats for p in self.parts if self.reads_apart(p))

    def final_after(self) -> int:
        """Rows after a step until its streamed score is final (0: at once)."""
        delays = [p.final_after() for p in self.parts] + [
            smoothing_delay(w) for w in self.smoothing.values()
        ]
        return max(delays, default=0)

    def describe(self) -> str:
        """``0.5 z(own, mean of 50) + 1.5 z(kmeans) + 1 z(ar, mean of 10) + 1 z(discord,
        subsequences of 60)``, the rule named where it is not the plain sum, for messages."""
        if not self.combines:
            return "MADCluster's own score alone (no input terms)"

        def one(p: Part) -> str:
            mean = f", mean of {self.width(p)}" if self.width(p) > 1 else ""
            detail = f", {p.describe()}" if p.describe() else ""
            return f"{self.weights.get(p.name, 1.0):g} z({p.name}{mean}{detail})"

        total = " + ".join(one(p) for p in self.parts)
        if self.rule == PositiveZScoreSum.name:
            return f"{total}, each part at least 0"
        return total if self.rule == ZScoreSum.name else f"{self.rule} of {total}"

    # ------------------------------------------------------------------ readings
    def raw_values(self, rows: np.ndarray, own: np.ndarray) -> dict[str, np.ndarray]:
        """Each part's values on a whole series of checked ``rows`` (``own``: the own score's)."""
        return {p.name: own if p.given else p.values(rows) for p in self.parts}

    def final_reading(self, part: Part, values: np.ndarray) -> np.ndarray:
        """``part``'s whole-series ``values`` as the score reads them (a centred mean where
        smoothed)."""
        width = self.width(part)
        return centred_means(values, width) if width > 1 else values

    def causal_reading(self, part: Part, values: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """``part``'s reading from steps <= t (``values``: its whole-series values of ``rows``)."""
        if part.reads_ahead:
            return part.at_once(rows)
        width = self.width(part)
        return trailing_means(values, causal_width(width)) if width > 1 else values

    def contribution(self, part: Part, values: np.ndarray, at_once: bool = False) -> np.ndarray:
        """``part``'s term of the score from its reading ``values`` (``at_once``: a causal reading,
        with the statistics of that reading where it has its own)."""
        table = self.at_once_stats if at_once and self.reads_apart(part) else self.stats
        return RULES[self.rule].part(values, table[part.name], self.weights.get(part.name, 1.0))

    # ------------------------------------------------------------------ scores
    def score(self, rows: np.ndarray, own: np.ndarray) -> np.ndarray:
        """The score of a whole series of checked ``rows`` whose own scores are ``own``."""
        if not self.combines:
            return own
        raw = self.raw_values(rows, own)
        return RULES[self.rule].total(
            [self.contribution(p, self.final_reading(p, raw[p.name])) for p in self.parts]
        )

    def reference_score(self, rows: np.ndarray, own: np.ndarray) -> np.ndarray:
        """The score of the training ``rows`` as each part describes unseen normal rows
        (:meth:`~madcluster.score.parts.Part.reference_values`): the training scores a threshold
        is read from."""
        if not self.combines:
            return own
        raw = {p.name: own if p.given else p.reference_values(rows) for p in self.parts}
        rule = RULES[self.rule]
        return rule.total(
            [self.contribution(p, self.final_reading(p, raw[p.name])) for p in self.parts]
        )

    def at_once_score(self, rows: np.ndarray, own: np.ndarray) -> np.ndarray:
        """What a stream answers each row of ``rows`` with first: every part read causally."""
        if not self.combines:
            return own
        raw = self.raw_values(rows, own)
        terms = [
            self.contribution(p, self.causal_reading(p, raw[p.name], rows), at_once=True)
            for p in self.parts
        ]
        return RULES[self.rule].total(terms)

    def stream(self) -> CombinationStream:
        return CombinationStream(self)


@dataclass(frozen=True)
class CombinedUpdate:
    """One update's scores: the new rows' (at once) and those of the steps ``final_from..`` that
    became final with it."""

    scores: np.ndarray
    final_from: int
    final_scores: np.ndarray


class CombinationStream:
    """The parts of one stream: each part's stream, each point-wise part's recent values (for its
    centred mean) and the steps not yet final. Each value is computed with the functions, and in
    the order, of the whole-series path, so the two agree to the bit."""

    def __init__(self, combination: Combination) -> None:
        self.combination = combination
        self.streams = {p.name: p.stream() for p in combination.parts}
        self.readings = {
            p.name: SmoothedStream(combination.width(p)) for p in combination.parts if p.point_wise
        }
        self.steps_seen = 0
        self.pending_from = 0  # the first step whose score is not final yet

    def update(self, own: np.ndarray, rows: np.ndarray) -> CombinedUpdate:
        """``own``: the new rows' own scores (warm-up calibrated); ``rows``: the new checked
        rows."""
        c = self.combination
        seen, total = self.steps_seen, self.steps_seen + len(rows)
        causal = {}
        for part in c.parts:
            values = self.streams[part.name].append(rows, own if part.given else None)
            if part.point_wise:
                self.readings[part.name].append(values)
            causal[part.name] = values
        self.steps_seen = total
        final_from = self.pending_from
        scores = self._scores(np.arange(final_from, total))
        if c.has_at_once:
            steps = np.arange(seen, total)
            terms = [
                c.contribution(p, self._causal(p, causal[p.name], steps), at_once=True)
                for p in c.parts
            ]
            first_scores = RULES[c.rule].total(terms)
        else:  # files from before the causal readings' statistics: the provisional value
            first_scores = scores[seen - final_from :]
        finals = [self.streams[p.name].final_before(total) for p in c.parts if not p.point_wise]
        finals += [r.final_before() for r in self.readings.values()]
        final_to = max(final_from, min(finals))
        self.pending_from = final_to
        for part in c.parts:
            self.streams[part.name].forget_before(final_to)
        for reading in self.readings.values():
            reading.forget_before(final_to)
        return CombinedUpdate(
            scores=first_scores, final_from=final_from, final_scores=scores[: final_to - final_from]
        )

    def _causal(self, part: Part, values: np.ndarray, steps: np.ndarray) -> np.ndarray:
        """``part``'s causal reading of the new ``steps`` (a smoothed part: its trailing mean)."""
        if part.point_wise and self.combination.width(part) > 1:
            return self.readings[part.name].trailing(steps)
        return values

    def pending_scores(self) -> np.ndarray:
        """Scores of the steps ``pending_from..`` on the rows so far (those ``decision_function``
        gives)."""
        return self._scores(np.arange(self.pending_from, self.steps_seen))

    def _scores(self, steps: np.ndarray) -> np.ndarray:
        """The scores of ``steps`` on the rows so far: every part read as the whole series reads
        it."""
        c, terms = self.combination, []
        for part in c.parts:
            if part.point_wise:
                values = self.readings[part.name].means(steps)
            else:
                values = self.streams[part.name].values(steps)
            term = c.contribution(part, values)
            terms.append(np.where(np.isnan(term), 0.0, term))  # no value yet: its training mean
        return RULES[c.rule].total(terms)

    def state(self) -> dict[str, np.ndarray]:
        out = {"terms/steps": np.asarray([self.steps_seen, self.pending_from], dtype=np.int64)}
        for name, stream in self.streams.items():
            out.update({f"terms/{name}/{k}": v for k, v in stream.state().items()})
        for name, reading in self.readings.items():
            out.update({f"terms/reading/{name}/{k}": v for k, v in reading.state().items()})
        return out

    def load(self, arrays: dict[str, np.ndarray]) -> None:
        self.steps_seen, self.pending_from = (int(v) for v in arrays["terms/steps"])
        for prefix, items in (("terms/", self.streams), ("terms/reading/", self.readings)):
            for name, stream in items.items():
                key = f"{prefix}{name}/"
                stream.load({k[len(key) :]: v for k, v in arrays.items() if k.startswith(key)})


__all__ = [
    "DEFAULT_RULE",
    "FILE_RULE",
    "RULES",
    "Combination",
    "CombinationStream",
    "CombinedUpdate",
    "Stats",
    "ZScoreSum",
    "mean_std",
    "smoothing_delay",
]
