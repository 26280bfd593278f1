"""A discord join's streamed rows by the sliding dot product (the STOMP recurrence): a new
subsequence's dot products with every training subsequence follow from those of the subsequence
one segment step before it in O(training subsequences x columns), instead of a product with
every training subsequence's values (:mod:`madcluster.score.discord`).

Why: a streamed row of the exact discord part read every kept training subsequence's values
(116 rows per second at 20,000 x 6 training rows); the recurrence reads one value per column and
training subsequence, a few times: 440 rows per second (``benchmarks/results/discord_cost.md``).

How, per column and with ``s`` the segment means of the rows (the rows themselves for segments
of one row), the subsequence starting at ``i`` reading ``s[i], s[i + p], ..., s[i + (L - 1) p]``
(``L`` = m / p values):

* its raw products with the training series ``t`` are ``QT_i[j] = sum_k s[i + kp] t[j + kp]``,
  and ``QT_i[j] = QT_{i-p}[j-p] - s[i-p] t[j-p] + s[i+(L-1)p] t[j+(L-1)p]``: a stream keeps the
  last p of them (one per phase of the segments), the first p training subsequences' from their
  values;
* the z-normalised product is ``(QT_i[j] - L (mu_i - a) mu_j) / (sigma_i sigma_j)`` with the
  subsequences' means and floored deviations (the training ones shared by every stream of the
  part) and the query's values taken less ``a``, the first subsequence's mean of the current run
  (small raw products: less rounding where a level moved);
* every ``REFRESH`` rows (and at a stream's start, after a reload or a skipped start) the products
  are computed again from the values, so rounding cannot drift: a stream's distances were
  within 2.5e-13 of the whole series' over 1,500 rows of the tests' series, a level moved 40
  training deviations included (tests/score/test_discord.py holds them to 1e-9).

A stream holds p x columns x training subsequences products (float64; not saved, computed again
after a reload): 2.8 MiB at 20,000 x 6 training rows (segments of 2 rows and of 1: 1.9 and
0.9 MiB), 2.4 MiB at 100,000 x 1; at most 2 MiB x p per join under the part's training cap,
and where that passes ``_SLIDING_BYTES`` (:mod:`madcluster.score.discord_join`, 64 KiB) the
join's streamed rows read every training subsequence's values instead. What the streams share
(:class:`TrainingSeries`, about four times one column set of products per join) is the part's.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

REFRESH = 64  # rows between two computations of the products from the values
_STATS_BLOCK = 2048  # training subsequences per block when their statistics are computed
_SCRATCH_SHAPES = 8  # work arrays kept per thread, at most
_NONE = -(1 << 62)  # a slot holding no subsequence's products


@dataclass(frozen=True)
class TrainingSeries:
    """What every stream of one join shares: the standardised training rows' segment means per
    column ``series`` ``(C, T - p + 1)``, each training subsequence's per-column mean and inverse
    floored deviation ``(C, N)`` and its z-normalised squared norm ``(N,)``."""

    series: np.ndarray
    means: np.ndarray
    inverse: np.ndarray
    scaled_means: np.ndarray  # means x inverse
    norms: np.ndarray
    length: int
    segment: int

    @classmethod
    def build(
        cls, read: np.ndarray, length: int, segment: int, floor: float, norms: np.ndarray
    ) -> TrainingSeries:
        """From the standardised training rows ``read`` ``(T, C)`` and the training
        subsequences' squared norms (as the part's blocks hold them)."""
        n = len(read) - length + 1
        means, inverse = np.empty((read.shape[1], n)), np.empty((read.shape[1], n))
        for lo in range(0, n, _STATS_BLOCK):
            mean, deviation = _statistics(read, np.arange(lo, min(n, lo + _STATS_BLOCK)), length)
            means[:, lo : lo + len(mean)] = mean.T
            inverse[:, lo : lo + len(mean)] = 1.0 / np.maximum(deviation, floor).T
        series = np.ascontiguousarray(_segment_means(read, segment).T)
        scaled = means * inverse
        for array in (series, means, inverse, scaled, norms):
            array.flags.writeable = False  # shared by the streams: never written
        return cls(series, means, inverse, scaled, norms, length, segment)

    @property
    def values(self) -> int:
        """Values per column of one subsequence (L)."""
        return self.length // self.segment

    @property
    def nbytes(self) -> int:
        """What one stream's products hold."""
        return self.segment * self.means.size * 8


class SlidingProducts:
    """One stream's products for one join: per segment phase, the raw products of the last
    subsequence of that phase with every training subsequence, and its first (shifted) segment
    means.

    A phase's products lie in a row of ``N + REFRESH`` values from ``bases[phase]``; a step of the
    recurrence moves the start back by p and adds to the values in place (no copy, no shift)."""

    def __init__(self, shared: TrainingSeries, floor: float) -> None:
        self.shared, self.floor = shared, floor
        p, (c, n) = shared.segment, shared.means.shape
        self.products = np.empty((p, c, n + REFRESH))
        self.bases = np.full(p, REFRESH, dtype=np.int64)
        self.firsts = np.empty((p, c))
        self.starts = np.full(p, _NONE, dtype=np.int64)  # which subsequence each phase holds
        self.shift = np.zeros(c)
        self.since = REFRESH  # rows since the products were computed from the values

    def distances(self, read: np.ndarray, starts: np.ndarray, offset: int) -> np.ndarray:
        """RMS distance to the nearest training subsequence of the subsequences of ``read``
        starting at ``starts`` (in order), ``read``'s first row being the stream's row
        ``offset``."""
        return np.asarray([self._one(read, int(s), offset + int(s)) for s in starts])

    def _one(self, read: np.ndarray, at: int, start: int) -> float:
        shared = self.shared
        m, p, big_l = shared.length, shared.segment, shared.values
        window = read[at : at + m]  # (m, C)
        mean, deviation = _statistics(read, np.asarray([at]), m)
        mean, deviation = mean[0], np.maximum(deviation[0], self.floor)
        segments = window.reshape(big_l, p, -1).mean(axis=1) if p > 1 else window
        z = (segments - mean) / deviation
        norm = float((z * z).sum())
        phase = start % p
        if self.since >= REFRESH:  # a new run: its own shift, every phase computed again
            self.starts[:], self.since, self.shift = _NONE, 0, mean.copy()
        values = segments - self.shift  # (L, C)
        scratch = _scratch(shared.means.shape)
        if self.starts[phase] == start - p:
            products = self._advance(phase, values, scratch)
        else:
            products = self._compute(phase, values, scratch)
        self.starts[phase], self.firsts[phase] = start, values[0]
        self.since += 1
        # a.b = sum_c (QT - L (mu - shift) mu_j) / (sigma sigma_j), as two matrix-vector products
        np.multiply(products, shared.inverse, out=scratch)
        dot = np.dot(1.0 / deviation, scratch)  # (np.dot: matmul is 3x slower at one column)
        dot -= np.dot(big_l * (mean - self.shift) / deviation, shared.scaled_means)
        dot *= -2.0
        dot += shared.norms
        return float(np.sqrt(max(float(dot.min()) + norm, 0.0) / z.size))

    def _compute(self, phase: int, values: np.ndarray, scratch: np.ndarray) -> np.ndarray:
        """The products from the values: ``sum_k values[k] series[:, j + kp]``."""
        series, p, n = self.shared.series, self.shared.segment, scratch.shape[1]
        self.bases[phase] = REFRESH
        out = self.products[phase, :, REFRESH:]
        np.multiply(values[0][:, None], series[:, :n], out=out)
        for k in range(1, len(values)):
            np.multiply(values[k][:, None], series[:, k * p : k * p + n], out=scratch)
            out += scratch
        return out

    def _advance(self, phase: int, values: np.ndarray, scratch: np.ndarray) -> np.ndarray:
        """The products from those of the subsequence one segment step before (same phase):
        ``QT[j] = QT_before[j - p] - first_before * t[j - p] + last * t[j + (L - 1) p]``."""
        series, p, n = self.shared.series, self.shared.segment, scratch.shape[1]
        reach = (len(values) - 1) * p  # the last segment's offset
        self.bases[phase] -= p
        base = int(self.bases[phase])
        out = self.products[phase, :, base : base + n]
        moved, part = out[:, p:], scratch[:, : n - p]
        np.multiply(self.firsts[phase][:, None], series[:, : n - p], out=part)
        moved -= part
        np.multiply(values[-1][:, None], series[:, reach + p : reach + n], out=part)
        moved += part
        at = (np.arange(len(values)) * p)[:, None] + np.arange(p)[None, :]  # (L, p)
        out[:, :p] = np.einsum("lc,clp->cp", values, series[:, at])
        return out


_SCRATCH = threading.local()


def _scratch(shape: tuple[int, ...]) -> np.ndarray:
    """A work array of ``shape`` for this thread (one per shape, not one per stream; a part's
    joins have one shape each)."""
    kept = getattr(_SCRATCH, "arrays", None)
    if kept is None:
        kept = _SCRATCH.arrays = {}
    if shape not in kept:
        if len(kept) >= _SCRATCH_SHAPES:
            kept.clear()
        kept[shape] = np.empty(shape)
    return kept[shape]


def _statistics(read: np.ndarray, starts: np.ndarray, length: int) -> tuple[np.ndarray, ...]:
    """Per-column mean and (unfloored) deviation ``(S, C)`` of the subsequences of ``read``
    starting at ``starts``, computed as :func:`madcluster.score.discord.normalised` does."""
    windows = np.lib.stride_tricks.sliding_window_view(read, length, axis=0)[starts]
    mean = windows.mean(axis=2, keepdims=True)
    centred = windows - mean
    return mean[..., 0], np.sqrt((centred * centred).mean(axis=2))


def _segment_means(read: np.ndarray, segment: int) -> np.ndarray:
    """The means of every ``segment`` consecutive rows of ``read`` ``(T - p + 1, C)``."""
    if segment == 1:
        return read
    return np.lib.stride_tricks.sliding_window_view(read, segment, axis=0).mean(axis=2)


__all__ = ["REFRESH", "SlidingProducts", "TrainingSeries"]
