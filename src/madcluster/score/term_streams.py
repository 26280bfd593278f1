"""The input terms of a growing series: a stream's rows get the parts ``decision_function`` adds.

The ridge next-step term is causal: a new row's value reads its ``lags`` predecessors. But the
point-wise parts (the own score and that term) are read through centred means of ``w`` steps
(:mod:`madcluster.score.smoothing`), final ``w - (w - 1) // 2 - 1`` rows later. The window-KMeans
term averages the windows covering a step, so step t reads up to ``L - 1`` later rows. Of
``n >= 2 L`` rows seen, a step ``t < n - L`` is **final**: no later row
changes its value (the windows it averages all lie within the rows seen, and the series' end block
no longer reaches it; the first L steps average the first L windows, so nothing is final before
2 L rows). A newer step is **provisional**: it gets the value ``decision_function`` gives
it on the rows seen so far, as if the series ended there (the last ``L`` steps then share the
block of the last ``L`` windows, :func:`~madcluster.score.input_terms.balanced_window_means`).

So a stream of a model with the KMeans term answers each row twice. At once, with the **at-once
score**: every part read from steps <= t, the KMeans part on the window *ending* at t
(:meth:`~madcluster.score.input_terms.WindowKMeans.trailing_scores`), each smoothed part through
its centred block cut at t (a trailing mean), each standardised with its own training statistics
(``score_stats_["input_term/kmeans/at_once"]``,
``.../ar/at_once``, ``before_input_terms/at_once``): causal, it does not lag a
window behind, and it detects far more than the provisional value would (46 TSB-AD series:
``benchmarks/results/stream_quality.md``). ``L`` rows later, with the **final score**: the whole
series' score. :meth:`TermStreams.pending_scores` gives the steps not yet final as they stand (the
provisional values). Model files from before the at-once statistics answer at once with the
provisional value instead. Before the first ``L`` rows there is no window for the provisional
value: the term contributes its training mean (z = 0) there.

Everything here is numpy on the rows and arrays the fitted terms hold; each value is computed with
the same functions, in the same order, as the whole-series path, so they agree to the bit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from madcluster.score.input_terms import (
    AT_ONCE,
    OWN,
    AutoRegressive,
    InputTerm,
    WindowKMeans,
    balanced_window_means,
    part_key,
    read_at_once,
    sum_parts,
    weighted_part,
    window_distances,
)
from madcluster.score.smoothing import SmoothedStream

if TYPE_CHECKING:
    from madcluster.score.scoring import Stats


@dataclass
class KMeansStream:
    """A window-KMeans term over a growing series: its recent rows and grid windows' distances."""

    term: WindowKMeans
    steps_seen: int = 0
    rows: np.ndarray = field(default_factory=lambda: np.empty((0, 0)))  # read columns, from rows_start
    rows_start: int = 0
    starts: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))  # grid windows kept
    distances: np.ndarray = field(default_factory=lambda: np.empty(0))
    at_once: np.ndarray = field(default_factory=lambda: np.empty(0))  # the last append's steps, read causally

    def final_before(self, n: int) -> int:
        """The first step whose value ``n`` rows seen do not fix yet (module docstring)."""
        window = self.term.window_size
        return n - window if n >= 2 * window else 0

    def forget_before(self, step: int) -> None:
        """Drop the windows that no step from ``step`` on averages, now or later."""
        window = self.term.window_size
        keep = self.starts >= max(0, min(step - window + 1, self.steps_seen - 2 * window + 1))
        self.starts, self.distances = self.starts[keep], self.distances[keep]

    def append(self, rows: np.ndarray) -> None:
        """Add checked ``rows`` (all columns); score the grid windows they complete."""
        read = np.asarray(rows, dtype=np.float64)
        read = read if self.term.columns is None else read[:, self.term.columns]
        window, stride = self.term.window_size, self.term.stride
        buffer = read if len(self.rows) == 0 else np.concatenate([self.rows, read])
        seen, total = self.steps_seen, self.steps_seen + len(read)
        self.at_once = self._trailing(buffer, seen, total)
        first = -(-max(0, seen - window + 1) // stride) * stride  # the first grid window not yet scored
        new = np.arange(first, total - window + 1, stride, dtype=np.int64)
        if len(new):
            self.starts = np.concatenate([self.starts, new])
            self.distances = np.concatenate([self.distances, window_distances(self.term, buffer, new - self.rows_start)])
        self.steps_seen = total
        keep_rows = max(self.rows_start, total - window)  # the next series end's window starts after it
        self.rows, self.rows_start = buffer[keep_rows - self.rows_start :], keep_rows

    def _trailing(self, buffer: np.ndarray, seen: int, total: int) -> np.ndarray:
        """Distances of the windows ending at steps ``seen..total-1`` (:meth:`WindowKMeans.trailing_scores`:
        before the first full window, the series' first row repeated)."""
        window = self.term.window_size
        lo = seen - window + 1  # the first row those windows read
        source, start = buffer, self.rows_start
        if lo < start:  # only at the series' start: the first row stands in for the rows before it
            source, start = np.concatenate([np.repeat(buffer[:1], start - lo, axis=0), buffer]), lo
        return window_distances(self.term, source, np.arange(seen, total) - window + 1 - start)

    def values(self, steps: np.ndarray) -> np.ndarray:
        """The term at ``steps`` (none before the last :meth:`forget_before`) on the rows seen so far, as
        :meth:`WindowKMeans.scores` gives it on them; NaN while fewer than L rows were seen."""
        window, n = self.term.window_size, self.steps_seen
        if n < window:
            return np.full(len(steps), np.nan)
        starts, distances = self.starts, self.distances
        end = n - window  # the series' last window, off the grid unless it falls on it
        if len(starts) == 0 or starts[-1] != end:
            tail = window_distances(self.term, self.rows, np.asarray([end - self.rows_start]))
            starts, distances = np.append(starts, end), np.append(distances, tail)
        return balanced_window_means(distances, starts, window, n, np.asarray(steps))

    def state(self) -> dict[str, np.ndarray]:
        return {"steps": np.asarray([self.steps_seen, self.rows_start], dtype=np.int64), "rows": self.rows,
                "starts": self.starts, "distances": self.distances}

    def load(self, arrays: dict[str, np.ndarray]) -> None:
        self.steps_seen, self.rows_start = (int(v) for v in arrays["steps"])
        self.rows, self.starts, self.distances = arrays["rows"], arrays["starts"].astype(np.int64), arrays["distances"]


@dataclass
class AutoRegressiveStream:
    """The ridge term over a growing series: the last ``lags`` standardised rows."""

    term: AutoRegressive
    history: np.ndarray | None = None  # None: no row seen yet
    steps_seen: int = 0

    def final_before(self, n: int) -> int:
        return n

    def append_values(self, rows: np.ndarray) -> np.ndarray:
        """The term at checked ``rows`` (final at once), remembering them as the next history."""
        if len(self.term.columns) == 0:
            return np.zeros(len(rows))
        z = self.term.standardise(rows)
        history = np.repeat(z[:1], self.term.lags, axis=0) if self.history is None else self.history
        values = self.term.scores(rows, history, self.steps_seen)
        self.history = np.concatenate([history, z])[-self.term.lags :]
        self.steps_seen += len(rows)
        return values

    def state(self) -> dict[str, np.ndarray]:
        return {} if self.history is None else {"history": self.history, "steps": np.asarray(self.steps_seen, dtype=np.int64)}

    def load(self, arrays: dict[str, np.ndarray]) -> None:
        self.history = arrays.get("history")
        self.steps_seen = int(arrays.get("steps", 0 if self.history is None else self.term.lags))


@dataclass(frozen=True)
class TermUpdate:
    """One update's scores: the new rows' (provisional where a term is not final yet) and those of
    the steps ``final_from..`` that became final with it."""

    scores: np.ndarray
    final_from: int
    final_scores: np.ndarray


class TermStreams:
    """The parts of one stream: the input terms, each point-wise part's recent values (for its
    centred mean, :mod:`madcluster.score.smoothing`), and the steps not yet final."""

    def __init__(self, terms: list[InputTerm], stats: dict[str, Stats], weights: dict[str, float],
                 smoothing: dict[str, int] | None = None) -> None:
        self.names = [OWN, *(t.name for t in terms)]
        self.stats, self.weights = stats, weights
        self.streams = {t.name: KMeansStream(t) if isinstance(t, WindowKMeans) else AutoRegressiveStream(t) for t in terms}
        # the point-wise parts (own, ar): their values, read through their centred means (width 1: none)
        point = [n for n in self.names if not isinstance(self.streams.get(n), KMeansStream)]
        self.readings = {n: SmoothedStream((smoothing or {}).get(n, 1)) for n in point}
        # parts whose causal reading differs (KMeans: trailing windows; smoothed: raw values), read
        # with their own statistics at once; model files from before those: None, and a new row's
        # first score is its score on the rows so far
        self.read_apart = [n for n in self.names if n not in self.readings or self.readings[n].width > 1]
        self.at_once = all(part_key(n, AT_ONCE) in stats for n in self.read_apart)
        self.steps_seen = 0
        self.pending_from = 0  # the first step whose score is not final yet

    def update(self, own: np.ndarray, rows: np.ndarray) -> TermUpdate:
        """``own``: the new rows' own scores (warm-up calibrated); ``rows``: the new checked rows."""
        seen, total = self.steps_seen, self.steps_seen + len(rows)
        raw = {OWN: np.asarray(own, dtype=np.float64)}
        for name, stream in self.streams.items():
            if isinstance(stream, AutoRegressiveStream):
                raw[name] = stream.append_values(rows)
            else:
                stream.append(rows)
        for name, values in raw.items():
            self.readings[name].append(values)
        self.steps_seen = total
        final_from = self.pending_from
        scores = self._scores(np.arange(final_from, total))
        if self.at_once:
            first_scores = sum_parts([self._at_once(n, raw) for n in self.names])
        else:
            first_scores = scores[seen - final_from :]
        finals = [s.final_before(total) for s in self.streams.values() if isinstance(s, KMeansStream)]
        final_to = max(final_from, min([*finals, *(r.final_before() for r in self.readings.values())]))
        self.pending_from = final_to
        for stream in self.streams.values():
            if isinstance(stream, KMeansStream):
                stream.forget_before(final_to)
        for reading in self.readings.values():
            reading.forget_before(final_to)
        return TermUpdate(scores=first_scores, final_from=final_from, final_scores=scores[: final_to - final_from])

    def _at_once(self, name: str, raw: dict[str, np.ndarray]) -> np.ndarray:
        """Part ``name``'s weighted causal reading of the newest rows (a smoothed part: its
        trailing mean, :meth:`~madcluster.score.smoothing.SmoothedStream.trailing`)."""
        if name not in raw:
            return weighted_part(name, self.streams[name].at_once, self.stats, self.weights, AT_ONCE)
        if name not in self.read_apart:
            return weighted_part(name, raw[name], self.stats, self.weights)
        steps = np.arange(self.steps_seen - len(raw[name]), self.steps_seen)
        return weighted_part(name, self.readings[name].trailing(steps), self.stats, self.weights, AT_ONCE)

    def pending_scores(self) -> np.ndarray:
        """Scores of the steps ``pending_from..`` on the rows so far (those ``decision_function`` gives)."""
        return self._scores(np.arange(self.pending_from, self.steps_seen))

    def _scores(self, steps: np.ndarray) -> np.ndarray:
        """The scores of ``steps`` on the rows so far: every part read as the whole series reads it."""
        parts = []
        for name in self.names:
            if name in self.readings:
                values = self.readings[name].means(steps)
            else:
                values = self.streams[name].values(steps)
            part = weighted_part(name, values, self.stats, self.weights)
            parts.append(np.where(np.isnan(part), 0.0, part))  # a term with no window yet: its training mean
        return sum_parts(parts)

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
                stream.load({k[len(key):]: v for k, v in arrays.items() if k.startswith(key)})


def final_after_rows(terms: list[InputTerm], smoothing: dict[str, int] | None = None) -> int:
    """Rows after a step until its streamed score is final (0: at once; the KMeans term: L; a
    centred mean of w steps: ``w - (w - 1) // 2 - 1``)."""
    means = [w - (w - 1) // 2 - 1 for w in (smoothing or {}).values() if w > 1]
    return max([*(t.window_size for t in terms if isinstance(t, WindowKMeans)), *means], default=0)


def at_once_scores(own: np.ndarray, rows: np.ndarray, terms: list[InputTerm], stats: dict[str, Stats],
                   weights: dict[str, float], smoothing: dict[str, int] | None = None) -> np.ndarray:
    """The at-once scores of a whole series (what a stream answers each row with first): the
    weighted parts, each read causally (the KMeans term on trailing windows, a smoothed part through
    its trailing mean); ``own``: the own scores of ``rows``."""
    def part(name: str, values: np.ndarray) -> np.ndarray:
        reading = AT_ONCE if (smoothing or {}).get(name, 1) > 1 else ""
        return weighted_part(name, read_at_once(name, values, smoothing), stats, weights, reading)

    parts = [part(OWN, own)]
    for term in terms:
        if isinstance(term, WindowKMeans):
            parts.append(weighted_part(term.name, term.trailing_scores(rows), stats, weights, AT_ONCE))
        else:
            parts.append(part(term.name, term.scores(rows)))
    return sum_parts(parts)


__all__ = ["AutoRegressiveStream", "KMeansStream", "TermStreams", "TermUpdate", "at_once_scores", "final_after_rows"]
