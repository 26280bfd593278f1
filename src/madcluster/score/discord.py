"""A discord part (``discord``): how far each step's subsequence is from its nearest neighbour
over every training subsequence, each z-normalised (matrix profile AB-joins, exact), at the
series' period and at a short length.

Why: some anomalies change only the *shape* of a few cycles of a regular signal (a reversed or
warped cycle, a splice at the wrong phase, a stretch of a chaotic signal that it never traced)
without moving its level, range or short-term predictability. The network, window KMeans and
the next-step error all read such steps as normal; the distance of a z-normalised subsequence to
its nearest neighbour among the training subsequences (a *discord* when large) is what the
detectors that see them measure. Being z-normalised, the part ignores a level or scale that
moved while the shape stayed.

It is exact: the reading before it compared each subsequence with 1,024 sampled training
subsequences (as good as every one on 5,000 smooth training rows, not on long or rough ones) at
the period's length only, so a 20-row change of shape was one part in up to 300 of a
subsequence; on a held-out set of chaotic series with 20-row anomalies it read .015 VUS-PR
against the matrix profile's .289 (measured by the maintainers). That reading stays for the model files that hold it
(:mod:`madcluster.score.discord_sampled`); the two are measured side by side in
``benchmarks/results/parts/discord_exact.md`` (``benchmarks/studies/evidence/discord_exact.py``).

How:

* two joins (:func:`join_shapes`): subsequences of the dominant period of the training rows
  (:func:`subsequence_length`), each column's values averaged over segments of
  ceil(m / ``SEGMENTS``) rows as the sampled reading did (raw, the period's join lost .18 VUS-PR
  on the daily-drops family and .09 to .10 on the server-metrics and machine-states ones: the
  noise of a few hundred single rows drowns the shape), and subsequences of ``SHORT_LENGTH``
  rows, raw, for anomalies shorter than a cycle. Alone, the period's join read .06 to .14 less
  than the two on the chaotic families with 20-row anomalies, and the short one .43 less on
  the server-metrics family; each join's reading is standardised with the mean and deviation
  of its training reading and a step reads the larger of the two. Chosen on the development
  families (``benchmarks/results/parts/discord_exact.md``: mean VUS-PR .778 against the sampled
  reading's .746, none left out);
* columns with more than 3 distinct training values are read (binary command channels and
  constant columns have no shape), each standardised with its training mean and deviation; a
  subsequence is z-normalised per column with its deviation floored at ``STD_FLOOR`` (a flat
  stretch stays flat instead of blowing its noise up);
* the part keeps the training rows of the read columns (the last ``MAX_TRAINING_VALUES`` values
  over the columns, ``MAX_TRAINING_VALUES // C`` rows: 262,144 rows of one column, 43,690 of
  six) and compares each subsequence with every training subsequence of them; a subsequence's
  value is its root-mean-square distance per value to the nearest (0 = a shape seen in
  training, about 1.4 = an unrelated one), over all columns at once;
* the distances are blocked matrix products of the z-normalised subsequences (numpy only, so
  the torch-free install scores it too): ``|a - b|^2 = |a|^2 + |b|^2 - 2 a.b``, the training
  side's ``|a|^2`` folded into the product as one more coordinate. Each subsequence's distance
  is computed from its own rows with the same training blocks whatever else is scored with it,
  so a stream fed row by row gives the whole series' values to rounding (a streamed row's
  distances are a matrix-vector product, a series' a matrix product, summed in another order). Cost: training subsequences x
  scored subsequences x (values per subsequence) multiply-adds per join
  (``benchmarks/studies/speed/discord_cost.py``, ``benchmarks/results/discord_cost.md``); a streamed row
  reads every kept training subsequence, so a stream's rows per second fall with the training
  rows. A fitted part keeps its z-normalised training subsequences in memory up to
  ``_KEPT_BYTES`` (64 MiB) per join once it has scored (62 MiB in all at 20,000 x 6 with a period
  of 40), and rebuilds them per call above that;
* a step's value is the least distance of the subsequences covering it (final m - 1 rows
  later): every subsequence covering an anomalous step contains it, while a normal step next to
  an anomaly is covered by some that miss it, so alerts stay on the anomaly instead of spreading
  m / 2 rows to each side of it. A step within m - 1 rows of either end of a series takes the
  least of the m subsequences nearest to it (on normal data the first and last rows otherwise
  read about 2.3 training deviations higher: the least of fewer distances is larger); at a
  stream's start its value is final once 2m - 1 rows are in;
* it has no causal reading: at once (what a stream answers before a step's subsequences are
  complete) it adds nothing. The subsequence ending at a step stays on an anomaly for m - 1 rows
  after it; with it, the score a stream answers at once lost .10 VUS-PR on the server-metrics
  family and .08 on the point family (``benchmarks/studies/streaming/at_once_study.py``);
* its training statistics come from at most ``MAX_REFERENCE`` evenly spaced training
  subsequences against the kept ones at least m steps away (:meth:`reference_values`: no
  subsequence is its own neighbour).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar

import numpy as np

from madcluster.score.discord_filter import MIN_VALUES, block_nearest, rounding_bound
from madcluster.score.discord_sliding import SlidingProducts, TrainingSeries
from madcluster.score.parts import FitContext, Part, PartStream
from madcluster.score.scales import dominant_period
from madcluster.score.window_kmeans import FEW_LEVELS, column_levels

MIN_LENGTH, MAX_LENGTH = 16, 300
SEGMENTS = 32  # values per column and subsequence of the period's join, at most
SHORT_LENGTH = 48  # the short join's subsequence length
MAX_REFERENCE = 4096  # training subsequences the statistics are read from, at most
STD_FLOOR = 0.05  # in training deviations of the column
MAX_TRAINING_VALUES = 1 << 18  # kept training values (rows x read columns), at most
_QUERY_BLOCK = 512  # scored subsequences per matrix product
_TRAINING_BLOCK = 2048  # training subsequences per matrix product
_KEPT_BYTES = 64 << 20  # training blocks kept between calls up to this size, rebuilt above it
_SLIDING_BYTES = 4 << 20  # a stream's products (discord_sliding) up to this size per join


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
    once (nothing) and as a stream. Shared by :class:`Discord` and the sampled reading of older
    model files."""

    columns: np.ndarray
    mean: np.ndarray
    scale: np.ndarray
    length: int
    balanced_edges: bool

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
            values[missing] = sampled[_nearest(starts, np.arange(n)[missing] - self.length // 2)]
        return values

    def reference_at_once(self, rows: np.ndarray) -> np.ndarray:
        return np.zeros(len(rows))  # no causal reading (module docstring)

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


@dataclass(frozen=True)
class Join(SubsequenceReadings):
    """One AB-join: subsequences of ``length`` rows (averaged over segments of ``segment``)
    against every subsequence of the kept training rows ``(T, C)`` (unstandardised, the first
    of them at row ``training_first`` of the training series)."""

    columns: np.ndarray
    mean: np.ndarray
    scale: np.ndarray
    length: int
    segment: int
    training: np.ndarray
    training_first: int = 0
    balanced_edges: bool = field(default=True, init=False)

    # ------------------------------------------------------------------ distances
    @property
    def n_training(self) -> int:
        """The training subsequences every subsequence is compared with."""
        return max(0, len(self.training) - self.length + 1)

    @property
    def dims(self) -> int:
        """Values per subsequence over the read columns."""
        return len(self.columns) * (self.length // self.segment)

    def _training_rows(self, starts: np.ndarray) -> np.ndarray:
        """Training subsequences ``starts`` as rows ``(b, values + 1)``: their z-normalised
        values, then their squared norms (float64)."""
        flat, norms = normalised(self.read_training, starts, self.length, self.segment)
        return np.concatenate([flat, norms[:, None]], axis=1)

    def _training_block(self, lo: int) -> np.ndarray:
        """Training subsequences ``lo`` to ``lo + _TRAINING_BLOCK`` as :meth:`_training_rows`,
        in float32 from ``MIN_VALUES`` values per subsequence (:func:`block_nearest` computes
        its candidates again in float64)."""
        rows = self._training_rows(np.arange(lo, min(lo + _TRAINING_BLOCK, self.n_training)))
        return rows.astype(np.float32) if self.dims >= MIN_VALUES else rows

    @cached_property
    def read_training(self) -> np.ndarray:
        """The kept training rows, standardised as :meth:`read` standardises rows."""
        return (self.training - self.mean) / self.scale

    @cached_property
    def _kept_blocks(self) -> list[np.ndarray] | None:
        """Every training block, built once where they fit in ``_KEPT_BYTES`` (a streamed row
        would otherwise rebuild them all); None above it."""
        size = self.n_training * (self.dims + 1) * (4 if self.dims >= MIN_VALUES else 8)
        if size > _KEPT_BYTES:
            return None
        return [self._training_block(lo) for lo in range(0, self.n_training, _TRAINING_BLOCK)]

    @cached_property
    def _series(self) -> TrainingSeries:
        """What every stream's :class:`SlidingProducts` reads (shared, read-only)."""
        norms = np.concatenate(
            [
                normalised(self.read_training, starts, self.length, self.segment)[1]
                for starts in np.array_split(
                    np.arange(self.n_training), -(-self.n_training // _TRAINING_BLOCK)
                )
            ]
        )
        return TrainingSeries.build(self.read_training, self.length, self.segment, STD_FLOOR, norms)

    def sliding(self) -> SlidingProducts | None:
        """A stream's products (:mod:`discord_sliding`); None without training subsequences or
        above ``_SLIDING_BYTES`` (its rows then read :meth:`distances`)."""
        size = self.segment * len(self.columns) * self.n_training * 8
        if self.n_training == 0 or size > _SLIDING_BYTES:
            return None
        return SlidingProducts(self._series, STD_FLOOR)

    def distances(
        self, read: np.ndarray, starts: np.ndarray, exclude_near: bool = False
    ) -> np.ndarray:
        starts = np.asarray(starts, dtype=np.int64)
        out = np.zeros(len(starts))
        if self.n_training == 0 or len(starts) == 0:
            return out
        kept = self._kept_blocks
        for lo in range(0, len(starts), _QUERY_BLOCK):
            chunk = starts[lo : lo + _QUERY_BLOCK]
            flat, norms = normalised(read, chunk, self.length, self.segment)
            # |b|^2 - 2 a.b for each pair: float32 products pick the candidates, float64 decides
            query = np.concatenate([-2.0 * flat, np.ones((len(flat), 1))], axis=1)
            query32, bound = query.astype(np.float32), rounding_bound(norms, self.dims)
            best = np.full(len(flat), np.inf)
            for index, first in enumerate(range(0, self.n_training, _TRAINING_BLOCK)):
                block = kept[index] if kept is not None else self._training_block(first)
                where = self.training_first + first  # the block's first subsequence
                mask = None
                if exclude_near and _overlap(chunk, where, len(block), self.length):
                    where = where + np.arange(len(block))
                    mask = _masking(np.abs(chunk[:, None] - where[None, :]) < self.length)
                rows = _offset(self._training_rows, first)
                block_nearest(query, query32, block, rows, bound, best, mask)
            found = np.isfinite(best)
            squared = np.where(found, best + norms, 0.0)
            out[lo : lo + len(chunk)] = np.sqrt(np.maximum(squared, 0.0) / self.dims)
        return out

    def describe(self) -> str:
        return f"subsequences of {self.length} against {self.n_training} training ones"


@dataclass(frozen=True)
class Discord(Part):
    """A fitted discord part: the columns it reads, their training scale, the kept training rows
    of those columns ``(T, C)`` (unstandardised, the first at row ``training_first`` of the
    training series) and its joins: their subsequence lengths and segments, and the mean and
    deviation of each one's training reading (``centres``, ``spreads``), which put the joins on
    one scale (module docstring)."""

    columns: np.ndarray
    mean: np.ndarray
    scale: np.ndarray
    training: np.ndarray
    training_first: int
    lengths: tuple[int, ...]
    segments: tuple[int, ...]
    centres: tuple[float, ...] = ()
    spreads: tuple[float, ...] = ()
    # the training reading of the rows the fit read, kept so the combination's statistics and
    # threshold do not compute it again (keyed by the rows' digest)
    memo: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    name: ClassVar[str] = "discord"

    @classmethod
    def fit(
        cls,
        rows: np.ndarray,
        context: FitContext,
        lengths: tuple[int, ...] | None = None,
        segments: tuple[int, ...] | None = None,
    ) -> Discord:
        """The part on the training ``rows``; ``lengths``, ``segments``: the joins' subsequence
        lengths and segments instead of :func:`join_shapes`' (for studies)."""
        data = np.asarray(rows, dtype=np.float64)
        columns = shape_columns(data)
        mean = data[:, columns].mean(axis=0)
        scale = data[:, columns].std(axis=0)
        scale = np.where(scale > 1e-12, scale, 1.0)
        if lengths is None:
            fallback = min(context.window_size, len(data) // 4)
            period = subsequence_length((data[:, columns] - mean) / scale, fallback)
            lengths, segments = join_shapes(period, len(data))
        segments = tuple(segments) if segments is not None else (1,) * len(lengths)
        lengths = tuple(p * (int(m) // p) for m, p in zip(lengths, segments, strict=True))
        kept = max(1, MAX_TRAINING_VALUES // len(columns))
        first = max(0, len(data) - kept)
        training = np.ascontiguousarray(data[first:, columns])
        bare = cls(columns, mean, scale, training, first, lengths, tuple(segments))
        readings = [j.reference_values(data) for j in bare.joins]
        centres = tuple(float(r.mean()) for r in readings)
        spreads = tuple(float(r.std()) if r.std() > 1e-12 else 1.0 for r in readings)
        part = cls(
            columns, mean, scale, training, first, lengths, tuple(segments), centres, spreads
        )
        part.memo[_digest(data)] = part.combined(readings)
        return part

    # ------------------------------------------------------------------ files
    def to_arrays(self) -> dict[str, np.ndarray]:
        return {
            "columns": self.columns,
            "mean": self.mean,
            "scale": self.scale,
            "training": self.training,
            "training_first": np.asarray(self.training_first, dtype=np.int64),
            "lengths": np.asarray(self.lengths, dtype=np.int64),
            "segments": np.asarray(self.segments, dtype=np.int64),
            "centres": np.asarray(self.centres, dtype=np.float64),
            "spreads": np.asarray(self.spreads, dtype=np.float64),
        }

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> Part:
        """The part :meth:`to_arrays` wrote; a file holding ``neighbours`` was written with the
        sampled reading and scores with it (:mod:`madcluster.score.discord_sampled`)."""
        if "neighbours" in arrays:
            from madcluster.score.discord_sampled import SampledDiscord

            return SampledDiscord.from_arrays(arrays)
        return cls(
            arrays["columns"].astype(np.int64),
            np.asarray(arrays["mean"], dtype=np.float64),
            np.asarray(arrays["scale"], dtype=np.float64),
            np.ascontiguousarray(arrays["training"], dtype=np.float64),
            int(arrays["training_first"]),
            tuple(int(v) for v in arrays["lengths"]),
            tuple(int(v) for v in arrays["segments"]),
            tuple(float(v) for v in arrays["centres"]),
            tuple(float(v) for v in arrays["spreads"]),
        )

    # ------------------------------------------------------------------ readings
    @cached_property
    def joins(self) -> tuple[Join, ...]:
        return tuple(
            Join(self.columns, self.mean, self.scale, m, p, self.training, self.training_first)
            for m, p in zip(self.lengths, self.segments, strict=True)
        )

    @property
    def length(self) -> int:
        """The longest join's subsequence length (its values are final that many rows - 1
        later)."""
        return max(self.lengths)

    def combined(self, readings: list[np.ndarray]) -> np.ndarray:
        """Per step, the largest of the joins' readings, each standardised with its training
        reading's mean and deviation (one join: its reading as it is)."""
        if len(readings) == 1:
            return readings[0]
        scaled = [(r - c) / s for r, c, s in zip(readings, self.centres, self.spreads, strict=True)]
        return np.maximum.reduce(scaled)

    def read(self, rows: np.ndarray) -> np.ndarray:
        return self.joins[0].read(rows)

    def values(self, rows: np.ndarray) -> np.ndarray:
        """Per step, :meth:`combined` of the joins' values (the least distance of the
        subsequences covering the step, per join)."""
        return self.combined([j.values(rows) for j in self.joins])

    def reference_values(self, rows: np.ndarray) -> np.ndarray:
        """:meth:`values` of the training rows against the neighbours at least m steps away
        (:meth:`SubsequenceReadings.reference_values`, per join)."""
        key = _digest(np.asarray(rows, dtype=np.float64))
        if key not in self.memo:
            self.memo.clear()
            self.memo[key] = self.combined([j.reference_values(rows) for j in self.joins])
        return self.memo[key].copy()

    def at_once(self, rows: np.ndarray) -> np.ndarray:
        """No causal reading: 0 on every step (module docstring)."""
        return np.zeros(len(rows))

    def reference_at_once(self, rows: np.ndarray) -> np.ndarray:
        return np.zeros(len(rows))

    def describe(self) -> str:
        return " and ".join(f"subsequences of {m}" for m in self.lengths)

    def final_after(self) -> int:
        return self.length - 1

    def stream(self) -> JoinsStream:
        return JoinsStream(self, [j.stream() for j in self.joins])


@dataclass
class JoinsStream(PartStream):
    """The discord part over a growing series: one stream per join, their values combined as
    :meth:`Discord.combined` combines them."""

    part: Discord
    streams: list[DiscordStream]

    def append(self, rows: np.ndarray, given: np.ndarray | None = None) -> np.ndarray:
        for stream in self.streams:
            stream.append(rows)
        return np.zeros(len(rows))  # no causal reading (module docstring)

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


def _digest(rows: np.ndarray) -> tuple:
    """A key for ``rows``: their shape and a hash of their bytes."""
    return rows.shape, hashlib.blake2b(
        np.ascontiguousarray(rows).tobytes(), digest_size=16
    ).digest()


def _masking(near: np.ndarray) -> Callable[[np.ndarray], None]:
    """A function setting the pairs ``near`` of an array of distances to inf."""

    def mask(d: np.ndarray) -> None:
        d[near] = np.inf

    return mask


def _offset(rows: Callable[[np.ndarray], np.ndarray], first: int) -> Callable:
    """``rows`` of the block starting at training subsequence ``first``."""
    return lambda indices: rows(first + indices)


def _overlap(starts: np.ndarray, first: int, count: int, length: int) -> bool:
    """Whether a subsequence starting at one of ``starts`` lies fewer than ``length`` steps from
    one of ``count`` starting at ``first``, ``first + 1``, ...: only then is a block masked."""
    return bool(starts.min() < first + count - 1 + length and starts.max() > first - length)


def _nearest(starts: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Index of the sorted ``starts`` nearest to each of ``wanted`` (clipped into their range)."""
    wanted = np.clip(wanted, starts[0], starts[-1])
    right = np.clip(np.searchsorted(starts, wanted), 0, len(starts) - 1)
    left = np.maximum(right - 1, 0)
    return np.where(np.abs(starts[left] - wanted) <= np.abs(starts[right] - wanted), left, right)


__all__ = [
    "Discord",
    "DiscordStream",
    "Join",
    "JoinsStream",
    "SubsequenceReadings",
    "balanced_minimum",
    "covering_minimum",
    "join_shapes",
    "normalised",
    "shape_columns",
    "subsequence_length",
]
