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
  reading's .746; chosen again with each family left out);
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
  side's ``|a|^2`` folded into the product as one more coordinate. From ``MIN_VALUES`` (64)
  values per subsequence the training blocks are float32 and their product only picks the
  candidates float64 decides (:mod:`madcluster.score.discord_filter`: exact, a faster
  product). A streamed row's products follow from the row before's by the sliding
  recurrence (:mod:`madcluster.score.discord_sliding`, computed again every 64 rows), so a
  stream fed row by row gives the whole series' values to rounding (2.5e-13 on the tests'
  series). Cost: training subsequences x scored subsequences x values per subsequence
  multiply-adds per join for a series, training subsequences x columns x a few per streamed
  row (``benchmarks/studies/speed/discord_cost.py``, ``benchmarks/results/discord_cost.md``:
  a streamed row in 0.26 of the time of the code before at 20,000 x 6, 440 rows/s, and in 0.34
  at 100,000 x 1, 579 rows/s; a 20,000 x 6 series in 0.46 to 0.84 of it over three runs). A
  fitted part keeps its z-normalised training subsequences in memory up to 64 MiB per join
  (:mod:`madcluster.score.discord_join`) once it has scored a series (31 MiB in all at
  20,000 x 6 with a period of 40, float32 blocks), and rebuilds them per call above that; a
  stream keeps its products (2.8 MiB at 20,000 x 6, :mod:`madcluster.score.discord_sliding`);
* a step's value is the least distance of the subsequences covering it (final m - 1 rows
  later): every subsequence covering an anomalous step contains it, while a normal step next to
  an anomaly is covered by some that miss it, so alerts stay on the anomaly instead of spreading
  m / 2 rows to each side of it. A step within m - 1 rows of either end of a series takes the
  least of the m subsequences nearest to it (on normal data the first and last rows otherwise
  read about 2.3 training deviations higher: the least of fewer distances is larger); at a
  stream's start its value is final once 2m - 1 rows are in;
* at once (what a stream answers before a step's subsequences are complete) it reads the
  distance of the *shortest* join's subsequence ending at the step (:meth:`Discord.at_once`;
  nothing before the first), standardised with the same reading of the training rows
  (:meth:`Discord.reference_at_once`). It stays on an anomaly m - 1 rows after it, the least
  with the shortest join. Without it the at-once score lacked the term its final score missed
  most on chaotic and server metrics; adding it (at twice its weight of then, which new fits
  keep: :data:`~madcluster.score.input_terms.CONTINUOUS_AT_ONCE_WEIGHTS`; measured before the
  own and AR parts were read at their step alone at once) raised the at-once ROC-AUC on six of the
  ten development families (chaotic .879 -> .923, chaotic20 .640 -> .792, machine states .745
  -> .834, drift .790 -> .833), stayed on server metrics (.950) and fell on point spikes (-.005),
  the accelerometer (-.001) and the water network (-.022, where the final discord reading ranks
  .571; ``benchmarks/results/incidents_at_once.md``). Files from before it add nothing at once
  (:class:`~madcluster.score.legacy.DiscordWithoutAtOnce`);
* its training statistics come from at most ``MAX_REFERENCE`` evenly spaced training
  subsequences against the kept ones at least m steps away (:meth:`reference_values`: no
  subsequence is its own neighbour).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar

import numpy as np

from madcluster.score.discord_join import Join
from madcluster.score.discord_subsequences import (
    MAX_LENGTH,
    MAX_REFERENCE,
    MIN_LENGTH,
    SEGMENTS,
    SHORT_LENGTH,
    STD_FLOOR,
    DiscordStream,
    JoinsStream,
    SubsequenceReadings,
    balanced_minimum,
    covering_minimum,
    join_shapes,
    normalised,
    shape_columns,
    subsequence_length,
)
from madcluster.score.parts import FitContext, Part

MAX_TRAINING_VALUES = 1 << 18  # kept training values (rows x read columns), at most


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
            # the generation mark: files without it have no causal reading (score/legacy.py)
            "trailing_at_once": np.asarray(1, dtype=np.int64),
        }

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> Part:
        """The part :meth:`to_arrays` wrote (older generations' arrays are read by
        :func:`madcluster.score.legacy.discord_from_arrays`)."""
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

    @property
    def at_once_join(self) -> int:
        """The join read at once: the shortest (its subsequence ending at t lags the least)."""
        return int(np.argmin(self.lengths))

    def at_once(self, rows: np.ndarray) -> np.ndarray:
        """The causal reading (module docstring): the distance of the shortest join's subsequence
        ending at each step (NaN before the first: nothing yet)."""
        return self.joins[self.at_once_join].trailing(rows)

    def reference_at_once(self, rows: np.ndarray) -> np.ndarray:
        """:meth:`at_once` of the training rows against the neighbours at least m steps away (its
        statistics, and the incident calibration's validation rows), kept per rows like
        :meth:`reference_values`."""
        key = ("at_once", *_digest(np.asarray(rows, dtype=np.float64)))
        if key not in self.memo:
            self.memo[key] = self.joins[self.at_once_join].reference_trailing(rows)
        return self.memo[key].copy()

    def describe(self) -> str:
        return " and ".join(f"subsequences of {m}" for m in self.lengths)

    def final_after(self) -> int:
        return self.length - 1

    def stream(self) -> JoinsStream:
        return JoinsStream(self, [j.stream() for j in self.joins])


def _digest(rows: np.ndarray) -> tuple:
    """A key for ``rows``: their shape and a hash of their bytes."""
    return rows.shape, hashlib.blake2b(
        np.ascontiguousarray(rows).tobytes(), digest_size=16
    ).digest()


__all__ = [
    "MAX_LENGTH",
    "MAX_REFERENCE",
    "MIN_LENGTH",
    "SEGMENTS",
    "SHORT_LENGTH",
    "STD_FLOOR",
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
