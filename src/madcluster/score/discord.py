"""A discord part (``discord``): how far each step's subsequence is from its nearest training
subsequence, every subsequence z-normalised (an AB-join of the matrix profile's kind).

Why: some anomalies change only the *shape* of a few cycles of a regular signal (a reversed or
warped cycle, a splice at the wrong phase) without moving its level, range or short-term
predictability. The network, window KMeans and the next-step error all read such steps as normal;
the distance of a z-normalised subsequence to its nearest neighbour among the training
subsequences (a *discord* when large) is what the detectors that see them measure. Being
z-normalised, the part ignores a level or scale that moved while the shape stayed.

How:

* the subsequence length m follows from the training rows (their dominant period,
  :func:`madcluster.score.scales.dominant_period`, within ``[MIN_LENGTH, MAX_LENGTH]``), and is
  recorded in the fitted part;
* columns with more than 3 distinct training values are read (binary command channels and
  constant columns have no shape), each standardised with its training mean and deviation; a
  subsequence is z-normalised per column with its deviation floored at ``STD_FLOOR`` (a flat
  stretch stays flat instead of blowing its noise up), then averaged over ``ceil(m / SEGMENTS)``
  steps (piecewise aggregate approximation) to at most ``SEGMENTS`` values per column;
* the neighbours are at most ``MAX_NEIGHBOURS`` training subsequences, evenly spaced; a
  subsequence's value is its root-mean-square distance to the nearest (0 = a shape seen in
  training, about 1.4 = an unrelated one);
* a step's value is the least distance of the subsequences covering it (final m - 1 rows
  later): every subsequence covering an anomalous step contains it, while a normal step next to
  an anomaly is covered by some that miss it, so alerts stay on the anomaly instead of spreading
  m / 2 rows to each side of it as the centred subsequence's did (families study: precision of
  the top-k rows up on 8 of 10 families, ``benchmarks/results/parts/families.md``). A step within
  m - 1 rows of either end of a series is covered by fewer subsequences (one at step 0), and the
  least of fewer distances is larger: on normal data the first and last rows scored about 2.3
  training deviations above the rest, and with the continuous series' weight the first row of a
  fresh series was flagged 6 times as often as the others. So such a step takes the least of the
  m subsequences nearest to it (``balanced_edges``, as window KMeans' means do); at a stream's
  start its value is final once 2m - 1 rows are in;
* it has no causal reading: at once (what a stream answers before a step's subsequences are
  complete) it adds nothing. The subsequence ending at a step stays on an anomaly for m - 1 rows
  after it; with it, the score a stream answers at once lost .10 VUS-PR on the server-metrics
  family and .08 on the point family, for .04 to .06 on the chaotic and drifting ones
  (``benchmarks/studies/at_once_study.py``);
* its training statistics come from the training subsequences against the neighbours at least m
  steps away (:meth:`Discord.reference_values`: no subsequence is its own neighbour).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar

import numpy as np

from madcluster.score.parts import FitContext, Part, PartStream
from madcluster.score.scales import dominant_period
from madcluster.score.window_kmeans import FEW_LEVELS, column_levels

MIN_LENGTH, MAX_LENGTH = 16, 300
SEGMENTS = 32  # piecewise-aggregate values per column and subsequence, at most
MAX_NEIGHBOURS = 1024  # 2048 measured the same on the development families at twice the cost
MAX_REFERENCE = 4096  # training subsequences the statistics are read from, at most
STD_FLOOR = 0.05  # in training deviations of the column
_CHUNK_VALUES = 1 << 20  # (chunk, N) float64 arrays of 8 MB: 1 << 22 measured 20 % slower


@dataclass(frozen=True)
class Discord(Part):
    """A fitted discord part: the columns it reads, their training scale, the subsequence length
    and segment size, the neighbours ``(N, C * segments)`` and where they start in training."""

    columns: np.ndarray
    mean: np.ndarray
    scale: np.ndarray
    length: int
    segment: int
    neighbours: np.ndarray
    neighbour_starts: np.ndarray
    # steps near an end read the m subsequences nearest to them (module docstring); False in
    # model files written before it, which score as they did
    balanced_edges: bool = False

    name: ClassVar[str] = "discord"

    @classmethod
    def fit(cls, rows: np.ndarray, context: FitContext) -> Discord:
        data = np.asarray(rows, dtype=np.float64)
        levels = column_levels(data)
        columns = np.flatnonzero(levels > FEW_LEVELS).astype(np.int64)
        if len(columns) == 0:
            columns = np.flatnonzero(levels > 1).astype(np.int64)
        if len(columns) == 0:
            columns = np.arange(data.shape[1], dtype=np.int64)
        mean = data[:, columns].mean(axis=0)
        scale = data[:, columns].std(axis=0)
        scale = np.where(scale > 1e-12, scale, 1.0)
        fallback = min(context.window_size, len(data) // 4)
        length = dominant_period((data[:, columns] - mean) / scale, fallback)
        length = int(np.clip(length, MIN_LENGTH, min(MAX_LENGTH, max(MIN_LENGTH, len(data) // 4))))
        segment = -(-length // SEGMENTS)
        length = segment * (length // segment)
        part = cls(
            columns, mean, scale, length, segment, np.empty((0, 0)), np.empty(0, dtype=np.int64)
        )
        n_subsequences = len(data) - length + 1
        if n_subsequences < 2:
            starts = np.zeros(1, dtype=np.int64)
        else:
            starts = np.unique(
                np.linspace(0, n_subsequences - 1, min(MAX_NEIGHBOURS, n_subsequences))
                .round()
                .astype(np.int64)
            )
        neighbours = part.shapes(part.read(data), starts)
        neighbours = np.ascontiguousarray(neighbours)
        return cls(columns, mean, scale, length, segment, neighbours, starts, balanced_edges=True)

    # ------------------------------------------------------------------ files
    def to_arrays(self) -> dict[str, np.ndarray]:
        out = {
            "columns": self.columns,
            "mean": self.mean,
            "scale": self.scale,
            "shape": np.asarray([self.length, self.segment], dtype=np.int64),
            "neighbours": self.neighbours,
            "neighbour_starts": self.neighbour_starts,
        }
        if self.balanced_edges:
            out["balanced_edges"] = np.asarray(1, dtype=np.int64)
        return out

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> Discord:
        length, segment = (int(v) for v in arrays["shape"])
        return cls(
            arrays["columns"].astype(np.int64),
            arrays["mean"],
            arrays["scale"],
            length,
            segment,
            arrays["neighbours"],
            arrays["neighbour_starts"].astype(np.int64),
            bool(arrays.get("balanced_edges", 0)),
        )

    # ------------------------------------------------------------------ subsequences
    def read(self, rows: np.ndarray) -> np.ndarray:
        """The read columns of ``rows``, standardised with the training scale (float64)."""
        return (np.asarray(rows, dtype=np.float64)[:, self.columns] - self.mean) / self.scale

    def shapes(self, read: np.ndarray, starts: np.ndarray) -> np.ndarray:
        """The z-normalised, segment-averaged subsequences of ``read`` starting at ``starts``,
        flattened to ``(len(starts), C * segments)``.

        From running sums over the rows the subsequences span (not from the subsequences
        themselves): the segment means, each subsequence's mean and deviation are differences of
        two sums, so a subsequence costs its segments, not its length. The sums start at the first
        row read, so a stream and a whole series differ by rounding alone."""
        m, p = self.length, self.segment
        first = int(starts.min(initial=0))
        region = read[first : int(starts.max(initial=0)) + m]
        sums = np.zeros((len(region) + 1, region.shape[1]))
        squares = np.zeros_like(sums)
        np.cumsum(region, axis=0, out=sums[1:])
        np.cumsum(region * region, axis=0, out=squares[1:])
        at = np.asarray(starts) - first
        mean = (sums[at + m] - sums[at]) / m  # (S, C)
        var = (squares[at + m] - squares[at]) / m - mean * mean
        std = np.maximum(np.sqrt(np.maximum(var, 0.0)), STD_FLOOR)
        edges = at[:, None] + p * np.arange(m // p)[None, :]  # (S, K) segment starts
        segments = (sums[edges + p] - sums[edges]) / p  # (S, K, C)
        z = (segments - mean[:, None, :]) / std[:, None, :]
        return z.transpose(0, 2, 1).reshape(len(at), -1)

    def distances(
        self, read: np.ndarray, starts: np.ndarray, exclude_near: bool = False
    ) -> np.ndarray:
        """Root-mean-square distance of each subsequence starting at ``starts`` to its nearest
        neighbour (``exclude_near``: neighbours starting fewer than m steps away do not count)."""
        nb, nb_sq = self.neighbours, self._neighbour_norms
        per = max(1, _CHUNK_VALUES // max(1, len(nb)))
        out = np.empty(len(starts))
        dims = max(1, nb.shape[1])
        for lo in range(0, len(starts), per):
            chunk = starts[lo : lo + per]
            q = self.shapes(read, chunk)
            # (|q|^2 + |nb|^2) - 2 q.nb, in that order, with two (chunk, N) arrays, not four
            twice_dot = q @ nb.T
            twice_dot *= 2.0
            sq = np.add(np.einsum("ij,ij->i", q, q)[:, None], nb_sq[None, :])
            sq -= twice_dot
            if exclude_near:
                near = np.abs(chunk[:, None] - self.neighbour_starts[None, :]) < self.length
                sq[near] = np.inf
            best = sq.min(axis=1)
            best = np.where(np.isfinite(best), best, 0.0)
            out[lo : lo + len(chunk)] = np.sqrt(np.maximum(best, 0.0) / dims)
        return out

    @cached_property
    def _neighbour_norms(self) -> np.ndarray:
        """Each neighbour's squared norm, computed once (a streamed row's distances cost as much
        again without it)."""
        return np.einsum("ij,ij->i", self.neighbours, self.neighbours)

    # ------------------------------------------------------------------ readings
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


@dataclass
class DiscordStream(PartStream):
    """The discord part over a growing series: its last m - 1 standardised rows and the distances
    of the subsequences it has completed that a pending step still reads (from ``first_start``)."""

    part: Discord
    steps_seen: int = 0
    rows: np.ndarray = field(default_factory=lambda: np.empty((0, 0)))  # read rows from rows_start
    rows_start: int = 0
    first_start: int = 0
    distances: np.ndarray = field(default_factory=lambda: np.empty(0))

    def append(self, rows: np.ndarray, given: np.ndarray | None = None) -> np.ndarray:
        read = self.part.read(rows)
        m = self.part.length
        buffer = read if len(self.rows) == 0 else np.concatenate([self.rows, read])
        seen, total = self.steps_seen, self.steps_seen + len(read)
        at_once = np.zeros(len(read))  # no causal reading (module docstring)
        # final: the subsequences the new rows complete
        new = np.arange(max(0, seen - m + 1), total - m + 1, dtype=np.int64)
        if len(new):
            self.distances = np.concatenate(
                [self.distances, self.part.distances(buffer, new - self.rows_start)]
            )
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


def _nearest(starts: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Index of the sorted ``starts`` nearest to each of ``wanted`` (clipped into their range)."""
    wanted = np.clip(wanted, starts[0], starts[-1])
    right = np.clip(np.searchsorted(starts, wanted), 0, len(starts) - 1)
    left = np.maximum(right - 1, 0)
    return np.where(np.abs(starts[left] - wanted) <= np.abs(starts[right] - wanted), left, right)


__all__ = ["Discord", "DiscordStream", "balanced_minimum", "covering_minimum"]
