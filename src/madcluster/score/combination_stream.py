"""A stream of a score's parts: :class:`CombinationStream` answers each new row at once (every
part read causally) and once final, exactly the whole series' value
(:meth:`~madcluster.score.combination.Combination.score`); see
:mod:`madcluster.score.combination`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from madcluster.score.combination import RULES, Combination
from madcluster.score.parts import Part
from madcluster.score.smoothing import SmoothedStream


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
    the order, of the whole-series path, so the two agree to the bit.

    With series scales no step is final before the first ``scale_rows`` steps all are: then the
    scales are read from their final readings (as the whole series reads them) and kept."""

    def __init__(self, combination: Combination) -> None:
        self.combination = combination
        self.streams = {p.name: p.stream() for p in combination.parts}
        self.readings = {
            p.name: SmoothedStream(combination.width(p)) for p in combination.parts if p.point_wise
        }
        self.steps_seen = 0
        self.pending_from = 0  # the first step whose score is not final yet
        # the series scales once fixed (None: not yet; without series scales none: 1 each)
        self.scales: dict[str, float] | None = None if combination.scale_rows > 0 else {}

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
        finals = [self.streams[p.name].final_before(total) for p in c.parts if not p.point_wise]
        finals += [r.final_before() for r in self.readings.values()]
        final_to = max(final_from, min(finals))
        if self.scales is None:
            if final_to >= c.scale_rows:  # the scales' steps are final: read them once
                self.scales = c.series_scales(self._readings(np.arange(0, c.scale_rows)))
            else:
                final_to = final_from
        scores = self._scores(np.arange(final_from, final_to), self.scales or {})  # None: no steps
        if c.has_at_once:
            steps = np.arange(seen, total)
            terms = [
                c.contribution(p, self._causal(p, causal[p.name], steps), at_once=True)
                for p in c.parts
            ]
            first_scores = RULES[c.rule].total(terms)
        else:  # files from before the causal readings' statistics: the provisional value
            first_scores = self._scores(np.arange(seen, total), self._scales_so_far())
        self.pending_from = final_to
        for part in c.parts:
            self.streams[part.name].forget_before(final_to)
        for reading in self.readings.values():
            reading.forget_before(final_to)
        return CombinedUpdate(scores=first_scores, final_from=final_from, final_scores=scores)

    def _causal(self, part: Part, values: np.ndarray, steps: np.ndarray) -> np.ndarray:
        """``part``'s causal reading of the new ``steps`` (a smoothed part: its trailing mean)."""
        width = self.combination.at_once_width(part)
        if part.point_wise and width > 1:
            return self.readings[part.name].trailing(steps, width)
        return values

    def pending_scores(self) -> np.ndarray:
        """Scores of the steps ``pending_from..`` on the rows so far (those ``decision_function``
        gives; with series scales not yet fixed, read from the rows so far as it reads them)."""
        return self._scores(np.arange(self.pending_from, self.steps_seen), self._scales_so_far())

    def _scales_so_far(self) -> Mapping[str, float]:
        """The series scales: fixed, or (not yet) read from the rows so far as the whole series
        reads them."""
        if self.scales is not None:
            return self.scales
        steps = np.arange(0, min(self.combination.scale_rows, self.steps_seen))
        return self.combination.series_scales(self._readings(steps))

    def _readings(self, steps: np.ndarray) -> dict[str, np.ndarray]:
        """Every part's reading of pending ``steps`` on the rows so far, as the whole series reads
        it."""
        return {
            part.name: self.readings[part.name].means(steps)
            if part.point_wise
            else self.streams[part.name].values(steps)
            for part in self.combination.parts
        }

    def _scores(self, steps: np.ndarray, scales: Mapping[str, float]) -> np.ndarray:
        """The scores of pending ``steps`` on the rows so far: every part read as the whole series
        reads it, divided by its series scale (1 where ``scales`` lacks it)."""
        c, terms = self.combination, []
        readings = self._readings(steps)
        for part in c.parts:
            term = c.contribution(part, readings[part.name], scale=scales.get(part.name, 1.0))
            terms.append(np.where(np.isnan(term), 0.0, term))  # no value yet: its training mean
        return RULES[c.rule].total(terms)

    def state(self) -> dict[str, np.ndarray]:
        out = {"terms/steps": np.asarray([self.steps_seen, self.pending_from], dtype=np.int64)}
        if self.combination.scale_rows > 0 and self.scales is not None:
            out["terms/scales"] = np.asarray([self.scales[p.name] for p in self.combination.parts])
        for name, stream in self.streams.items():
            out.update({f"terms/{name}/{k}": v for k, v in stream.state().items()})
        for name, reading in self.readings.items():
            out.update({f"terms/reading/{name}/{k}": v for k, v in reading.state().items()})
        return out

    def load(self, arrays: dict[str, np.ndarray]) -> None:
        self.steps_seen, self.pending_from = (int(v) for v in arrays["terms/steps"])
        if self.combination.scale_rows > 0:
            scales = arrays.get("terms/scales")  # absent: not fixed yet
            self.scales = (
                None
                if scales is None
                else {p.name: float(v) for p, v in zip(self.combination.parts, scales, strict=True)}
            )
        for prefix, items in (("terms/", self.streams), ("terms/reading/", self.readings)):
            for name, stream in items.items():
                key = f"{prefix}{name}/"
                stream.load({k[len(key) :]: v for k, v in arrays.items() if k.startswith(key)})


__all__ = ["CombinationStream", "CombinedUpdate"]
