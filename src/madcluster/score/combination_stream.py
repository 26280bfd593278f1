"""A stream of a score's parts: :class:`CombinationStream` answers each new row at once (every
part read causally) and once final, exactly the whole series' value
(:meth:`~madcluster.score.combination.Combination.score`); see
:mod:`madcluster.score.combination`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from madcluster.score.combination import RULES, Combination
from madcluster.score.smoothed import KeptStream


@dataclass(frozen=True)
class CombinedUpdate:
    """One update's scores: the new rows' (at once) and those of the steps ``final_from..`` that
    became final with it."""

    scores: np.ndarray
    final_from: int
    final_scores: np.ndarray


class CombinationStream:
    """The parts of one stream: each part's stream (a point-wise part's keeps the values its
    pending steps read, :class:`~madcluster.score.smoothed.KeptStream`) and the steps not yet
    final. Each value is computed with the functions, and in the order, of the whole-series path,
    so the two agree to the bit.

    With series scales no step is final before the first ``scale_rows`` steps all are: then the
    scales are read from their final readings (as the whole series reads them) and kept."""

    def __init__(self, combination: Combination) -> None:
        self.combination = combination
        self.streams = {p.name: p.stream() for p in combination.parts}
        self.steps_seen = 0
        self.pending_from = 0  # the first step whose score is not final yet
        # the series scales once fixed (None: not yet; without series scales none: 1 each)
        self.scales: dict[str, float] | None = None if combination.scale_rows > 0 else {}

    def update(self, own: np.ndarray, rows: np.ndarray) -> CombinedUpdate:
        """``own``: the new rows' own scores (warm-up calibrated); ``rows``: the new checked
        rows."""
        c = self.combination
        seen, total = self.steps_seen, self.steps_seen + len(rows)
        causal = {name: stream.append(rows, own) for name, stream in self.streams.items()}
        self.steps_seen = total
        final_from = self.pending_from
        finals = [self.streams[p.name].final_before(total) for p in c.final_parts]
        final_to = max(final_from, min(finals))
        if self.scales is None:
            if final_to >= c.scale_rows:  # the scales' steps are final: read them once
                self.scales = c.series_scales(self._readings(np.arange(0, c.scale_rows)))
            else:
                final_to = final_from
        scores = self._scores(np.arange(final_from, final_to), self.scales or {})  # None: no steps
        if c.has_at_once:
            terms = [c.contribution(p, causal[p.name], at_once=True) for p in c.parts]
            first_scores = RULES[c.rule].total(terms)
        else:  # files from before the causal readings' statistics: the provisional value
            first_scores = self._scores(np.arange(seen, total), self._scales_so_far())
        self.pending_from = final_to
        for part in c.parts:  # a part read at once only keeps nothing for the final scores
            self.streams[part.name].forget_before(total if part.at_once_only else final_to)
        return CombinedUpdate(scores=first_scores, final_from=final_from, final_scores=scores)

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
        """Every final part's reading of pending ``steps`` on the rows so far, as the whole series reads
        it."""
        return {p.name: self.streams[p.name].values(steps) for p in self.combination.final_parts}

    def _scores(self, steps: np.ndarray, scales: Mapping[str, float]) -> np.ndarray:
        """The scores of pending ``steps`` on the rows so far: every part read as the whole series
        reads it, divided by its series scale (1 where ``scales`` lacks it)."""
        c, terms = self.combination, []
        readings = self._readings(steps)
        for part in c.final_parts:
            term = c.contribution(part, readings[part.name], scale=scales.get(part.name, 1.0))
            terms.append(np.where(np.isnan(term), 0.0, term))  # no value yet: its training mean
        return RULES[c.rule].total(terms)

    def state(self) -> dict[str, np.ndarray]:
        out = {"terms/steps": np.asarray([self.steps_seen, self.pending_from], dtype=np.int64)}
        if self.combination.scale_rows > 0 and self.scales is not None:
            out["terms/scales"] = np.asarray(
                [self.scales[p.name] for p in self.combination.final_parts]
            )
        for name, stream in self.streams.items():
            out.update({f"terms/{name}/{k}": v for k, v in stream.state().items()})
        return out

    def load(self, arrays: dict[str, np.ndarray]) -> None:
        self.steps_seen, self.pending_from = (int(v) for v in arrays["terms/steps"])
        if self.combination.scale_rows > 0:
            scales = arrays.get("terms/scales")  # absent: not fixed yet
            self.scales = (
                None
                if scales is None
                else {
                    p.name: float(v)
                    for p, v in zip(self.combination.final_parts, scales, strict=True)
                }
            )
        for name, stream in self.streams.items():
            key = f"terms/{name}/"
            mine = {k[len(key) :]: v for k, v in arrays.items() if k.startswith(key)}
            # files from before the parts kept their own values: under terms/reading/<name>/
            old = f"terms/reading/{name}/"
            mine.update(
                {KeptStream.KEPT + k[len(old) :]: v for k, v in arrays.items() if k.startswith(old)}
            )
            stream.load(mine)


__all__ = ["CombinationStream", "CombinedUpdate"]
