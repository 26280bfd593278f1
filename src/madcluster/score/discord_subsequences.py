"""What the discord parts share (:mod:`madcluster.score.discord`, the exact join, and
:mod:`madcluster.score.discord_sampled`, the reading of older model files): the columns and
subsequence lengths they read, z-normalised subsequences, the per-step readings from
per-subsequence distances, and the streams.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from madcluster.score.discord_sliding import SlidingProducts
from madcluster.score.parts import PartStream
from madcluster.score.scales import dominant_period
from madcluster.score.window_kmeans import FEW_LEVELS, column_levels

MIN_LENGTH, MAX_LENGTH = 16, 300
SEGMENTS = 32  # values per column and subsequence of the period's join, at most
SHORT_LENGTH = 48  # the short join's subsequence length
STD_FLOOR = 0.05  # in training deviations of the column
MAX_REFERENCE = 4096  # training subsequences the statistics are read from, at most


def shape_columns(data: np.ndarray) -> np.ndarray:
    """The columns a discord part reads: those with more than ``FEW_LEVELS`` distinct values
    (else those that move at all, else every column)."""
    levels = column_levels(data)
    columns = np.flatnonzero(levels > FEW_LEVELS).astype(np.int64)
    if len(columns) == 0:
        columns = np.flatnonzero(levels > 1).astype(np.int64)
    if len(columns) == 0:
        columns = np.arange(data.shape[1], dtype=np.int64)
    return columns


def subsequence_length(read: np.ndarray, fallback: int) -> int:
    """The subsequence length for standardised training columns ``read``: their dominant period
    (``fallback`` where none has one), within ``[MIN_LENGTH, MAX_LENGTH]`` and at most a quarter
    of the rows."""
    length = dominant_period(read, fallback)
    return int(np.clip(length, MIN_LENGTH, min(MAX_LENGTH, max(MIN_LENGTH, len(read) // 4))))


def join_shapes(period: int, n_rows: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The joins' subsequence lengths and segments for ``n_rows`` training rows of dominant
    ``period`` (from :func:`subsequence_length`): the period's, averaged over segments of
    ceil(period / ``SEGMENTS``) rows, and a short one of ``SHORT_LENGTH`` rows (at most a quarter
    of the rows) unless it is the period's (module docstring)."""
    short = min(SHORT_LENGTH, max(MIN_LENGTH, n_rows // 4))
    lengths, segments = [period], [-(-period // SEGMENTS)]
    if short != period:
        lengths.append(short)
        segments.append(1)
    return tuple(lengths), tuple(segments)


def normalised(
    read: np.ndarray, starts: np.ndarray, length: int, segment: int = 1
) -> tuple[np.ndarray, np.ndarray]:
    """The subsequences of ``length`` rows of ``read`` ``(T, C)`` starting at ``starts``,
    z-normalised per column with their mean and deviation (floored at ``STD_FLOOR``), averaged
    over segments of ``segment`` rows (``length`` a multiple of it) and flattened to
    ``(S, C length / segment)``, with their squared norms ``(S,)``. Each row from its own values
    alone (a copy, reduced along its contiguous last axis), so a subsequence gives the same bits
    in any batch."""
    windows = np.lib.stride_tricks.sliding_window_view(read, length, axis=0)[starts]  # (S, C, m)
    mean = windows.mean(axis=2, keepdims=True)
    centred = windows - mean
    deviation = np.maximum(np.sqrt((centred * centred).mean(axis=2, keepdims=True)), STD_FLOOR)
    if segment > 1:
        shape = (len(windows), windows.shape[1], length // segment, segment)
        centred = windows.reshape(shape).mean(axis=3) - mean
    flat = (centred / deviation).reshape(len(windows), -1)
    return flat, (flat * flat).sum(axis=1)


class SubsequenceReadings:
    """The readings a discord part gives from its per-subsequence :meth:`distances`: per step
    (the least of the subsequences covering it), on the training rows (without self-matches), at
    once (nothing; the exact part's causal reading is :meth:`trailing`) and as a stream. Shared
    by :class:`Discord` and the sampled reading of older model files."""

    columns: np.ndarray
    mean: np.ndarray
    scale: np.ndarray
    length: int
    #: steps near an end read the m subsequences nearest to them; False only in the sampled
    #: reading's first files (:class:`~madcluster.score.discord_sampled.SampledDiscordCovering`)
    balanced_edges: ClassVar[bool] = True

    def distances(
        self, read: np.ndarray, starts: np.ndarray, exclude_near: bool = False
    ) -> np.ndarray:
        """Root-mean-square distance of each subsequence of ``read`` starting at ``starts`` to
        its nearest neighbour (``exclude_near``: neighbours starting fewer than m steps away do
        not count; none left: 0)."""
        raise NotImplementedError

    def read(self, rows: np.ndarray) -> np.ndarray:
        """The read columns of ``rows``, standardised with the training scale (float64)."""
        return (np.asarray(rows, dtype=np.float64)[:, self.columns] - self.mean) / self.scale

    def values(self, rows: np.ndarray) -> np.ndarray:
        """Per step, the least distance of the subsequences covering it."""
        read = self.read(rows)
        n = len(read)
        if n < self.length:
            return np.zeros(n)
        d = self.distances(read, np.arange(n - self.length + 1))
        return self.step_minimum(d, 0, np.arange(n), n)

    def reference_values(self, rows: np.ndarray) -> np.ndarray:
        """:meth:`values` of the training rows against the neighbours at least m steps away:
        unseen normal subsequences, for the training statistics and the training scores the
        threshold is read from (matched to itself, a training subsequence would look more normal
        than any test one, and the threshold would sit too low). From at most ``MAX_REFERENCE``
        evenly spaced subsequences; a step none of them covers takes the nearest one's value."""
        starts, sampled = self._reference_sample(rows)
        n = len(rows)
        if len(starts) == 0:
            return np.zeros(n)
        dense = np.full(n - self.length + 1, np.inf)
        dense[starts] = sampled
        values = self.step_minimum(dense, 0, np.arange(n), n)
        missing = ~np.isfinite(values)
        if missing.any():
            values[missing] = sampled[
                nearest_index(starts, np.arange(n)[missing] - self.length // 2)
            ]
        return values

    def reference_at_once(self, rows: np.ndarray) -> np.ndarray:
        return np.zeros(len(rows))  # no causal reading (module docstring)

    def trailing(self, rows: np.ndarray) -> np.ndarray:
        """Per step, the distance of the subsequence *ending* there (NaN before the first): all a
        stream knows of the step's subsequences at once (the discord part's causal reading)."""
        read = self.read(rows)
        out = np.full(len(read), np.nan)
        if len(read) >= self.length:
            out[self.length - 1 :] = self.distances(read, np.arange(len(read) - self.length + 1))
        return out

    def reference_trailing(self, rows: np.ndarray) -> np.ndarray:
        """:meth:`trailing` of the training rows against the neighbours at least m steps away,
        for its statistics: per step, the distance of the sampled subsequence (those
        :meth:`reference_values` reads) ending nearest to it."""
        starts, sampled = self._reference_sample(rows)
        if len(starts) == 0:
            return np.zeros(len(rows))
        return sampled[nearest_index(starts + self.length - 1, np.arange(len(rows)))]

    def _reference_sample(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Starts and distances (no neighbour nearer than m steps) of at most ``MAX_REFERENCE``
        evenly spaced training subsequences."""
        read = self.read(rows)
        n_subsequences = len(read) - self.length + 1
        if n_subsequences < 1:
            return np.empty(0, dtype=np.int64), np.empty(0)
        count = min(MAX_REFERENCE, n_subsequences)
        starts = np.unique(np.linspace(0, n_subsequences - 1, count).round()).astype(np.int64)
        return starts, self.distances(read, starts, exclude_near=True)

    def at_once(self, rows: np.ndarray) -> np.ndarray:
        """No causal reading: 0 on every step, which the training statistics of the same reading
        (0 too) turn into no contribution (module docstring)."""
        return np.zeros(len(rows))

    def step_minimum(
        self, distances: np.ndarray, first_start: int, steps: np.ndarray, n_steps: int
    ) -> np.ndarray:
        """Per step of a series of ``n_steps``, the least distance of the subsequences it reads
        (``distances`` of those starting at ``first_start``, ``first_start + 1``, ...)."""
        if self.balanced_edges:
            return balanced_minimum(distances, first_start, steps, self.length, n_steps)
        return covering_minimum(distances, first_start, steps, self.length)

    def describe(self) -> str:
        return f"subsequences of {self.length}"

    def final_after(self) -> int:
        return self.length - 1

    def stream(self) -> DiscordStream:
        return DiscordStream(self)

    def sliding(self) -> SlidingProducts | None:
        """A stream's products for the sliding recurrence (:mod:`discord_sliding`); None where
        the reading has none (its streamed rows read :meth:`distances`)."""
        return None


@dataclass
class DiscordStream(PartStream):
    """A discord part over a growing series: its last m - 1 standardised rows and the distances
    of the subsequences it has completed that a pending step still reads (from ``first_start``)."""

    part: SubsequenceReadings
    steps_seen: int = 0
    rows: np.ndarray = field(default_factory=lambda: np.empty((0, 0)))  # read rows from rows_start
    rows_start: int = 0
    first_start: int = 0
    distances: np.ndarray = field(default_factory=lambda: np.empty(0))
    # the sliding products of the part's recurrence, rebuilt (not saved): False until first used
    products: SlidingProducts | None | bool = field(default=False, repr=False, compare=False)
    # the last append's rows' :meth:`SubsequenceReadings.trailing` (not saved: a row's at once)
    trailing: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False, compare=False)

    def append(self, rows: np.ndarray, given: np.ndarray | None = None) -> np.ndarray:
        read = self.part.read(rows)
        m = self.part.length
        buffer = read if len(self.rows) == 0 else np.concatenate([self.rows, read])
        seen, total = self.steps_seen, self.steps_seen + len(read)
        at_once = np.zeros(len(read))  # no causal reading (module docstring)
        # final: the subsequences the new rows complete
        new = np.arange(max(0, seen - m + 1), total - m + 1, dtype=np.int64)
        if len(new):
            if self.products is False:
                self.products = self.part.sliding()
            if isinstance(self.products, SlidingProducts):
                got = self.products.distances(buffer, new - self.rows_start, self.rows_start)
            else:
                got = self.part.distances(buffer, new - self.rows_start)
            self.distances = np.concatenate([self.distances, got])
        self.trailing = np.full(len(read), np.nan)  # the subsequences ending at the new rows
        if len(new):
            self.trailing[new + m - 1 - seen] = got
        self.steps_seen = total
        keep = max(self.rows_start, total - m + 1)
        self.rows, self.rows_start = buffer[keep - self.rows_start :], keep
        return at_once

    def values(self, steps: np.ndarray) -> np.ndarray:
        if self.steps_seen < self.part.length:
            return np.full(len(steps), np.nan)
        return self.part.step_minimum(
            self.distances, self.first_start, np.asarray(steps), self.steps_seen
        )

    def final_before(self, n_steps: int) -> int:
        m = self.part.length
        enough = 2 * m - 1 if self.part.balanced_edges else m  # the first steps' m subsequences
        return n_steps - m + 1 if n_steps >= enough else 0

    def forget_before(self, step: int) -> None:
        # keep the subsequences the first pending step reads (and the last m, which the steps
        # near the series' end read)
        m = self.part.length
        last_block = self.steps_seen - (2 * m - 1 if self.part.balanced_edges else m)
        first = max(0, min(step - m + 1, last_block))
        drop = max(0, first - self.first_start)
        if drop:
            self.distances, self.first_start = self.distances[drop:], self.first_start + drop

    def state(self) -> dict[str, np.ndarray]:
        steps = np.asarray([self.steps_seen, self.rows_start, self.first_start], dtype=np.int64)
        return {"steps": steps, "rows": self.rows, "distances": self.distances}

    def load(self, arrays: dict[str, np.ndarray]) -> None:
        self.steps_seen, self.rows_start, self.first_start = (int(v) for v in arrays["steps"])
        self.rows, self.distances = arrays["rows"], arrays["distances"]
        self.products = False  # computed again from the rows


@dataclass
class JoinsStream(PartStream):
    """The discord part over a growing series: one stream per join, their values combined as
    :meth:`Discord.combined` combines them."""

    part: Any  # a madcluster.score.discord.Discord (not imported: it imports this module)
    streams: list[DiscordStream]

    def append(self, rows: np.ndarray, given: np.ndarray | None = None) -> np.ndarray:
        for stream in self.streams:
            stream.append(rows)
        return self.streams[self.part.at_once_join].trailing.copy()

    def values(self, steps: np.ndarray) -> np.ndarray:
        """:meth:`Discord.values` of the rows so far at ``steps``: NaN before any join has a
        subsequence; a join with none yet reads 0 there, as on a whole series that short."""
        readings = [s.values(steps) for s in self.streams]
        if all(s.steps_seen < s.part.length for s in self.streams):
            return readings[0]
        return self.part.combined([np.nan_to_num(r, nan=0.0) for r in readings])

    def final_before(self, n_steps: int) -> int:
        return min(s.final_before(n_steps) for s in self.streams)

    def forget_before(self, step: int) -> None:
        for stream in self.streams:
            stream.forget_before(step)

    def state(self) -> dict[str, np.ndarray]:
        return {f"{i}/{k}": v for i, s in enumerate(self.streams) for k, v in s.state().items()}

    def load(self, arrays: dict[str, np.ndarray]) -> None:
        for i, stream in enumerate(self.streams):
            stream.load({k: arrays[f"{i}/{k}"] for k in ("steps", "rows", "distances")})


def covering_minimum(
    distances: np.ndarray, first_start: int, steps: np.ndarray, length: int
) -> np.ndarray:
    """Per step, the least of ``distances`` (of the subsequences starting at ``first_start``,
    ``first_start + 1``, ...) over the subsequences of ``length`` that cover it. The same
    function for a whole series (``first_start`` 0) and a stream (its kept subsequences), so the
    two agree to the bit."""
    pad = np.full(length - 1, np.inf)
    padded = np.concatenate([pad, np.asarray(distances, dtype=np.float64), pad])
    view = np.lib.stride_tricks.sliding_window_view(padded, length)
    return view[np.asarray(steps) - first_start].min(axis=1)


def balanced_minimum(
    distances: np.ndarray, first_start: int, steps: np.ndarray, length: int, n_steps: int
) -> np.ndarray:
    """Per step t of a series of ``n_steps``, the least of ``distances`` (as
    :func:`covering_minimum`'s) over the ``length`` subsequences starting in ``[b_t, b_t + length
    - 1]``, ``b_t = clip(t - length + 1, 0, n_steps - 2 length + 1)``: the subsequences covering
    t in the middle of the series; near either end, as many of those nearest to it (all of them
    in a series shorter than 2 ``length`` - 1)."""
    block = np.clip(np.asarray(steps) - length + 1, 0, max(0, n_steps - 2 * length + 1))
    pad = np.full(length - 1, np.inf)
    padded = np.concatenate([np.asarray(distances, dtype=np.float64), pad])
    view = np.lib.stride_tricks.sliding_window_view(padded, length)
    return view[block - first_start].min(axis=1)


def nearest_index(starts: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Index of the sorted ``starts`` nearest to each of ``wanted`` (clipped into their range)."""
    wanted = np.clip(wanted, starts[0], starts[-1])
    right = np.clip(np.searchsorted(starts, wanted), 0, len(starts) - 1)
    left = np.maximum(right - 1, 0)
    return np.where(np.abs(starts[left] - wanted) <= np.abs(starts[right] - wanted), left, right)


__all__ = [
    "MAX_LENGTH",
    "MAX_REFERENCE",
    "MIN_LENGTH",
    "SEGMENTS",
    "SHORT_LENGTH",
    "STD_FLOOR",
    "DiscordStream",
    "JoinsStream",
    "SubsequenceReadings",
    "balanced_minimum",
    "covering_minimum",
    "join_shapes",
    "nearest_index",
    "normalised",
    "shape_columns",
    "subsequence_length",
]
