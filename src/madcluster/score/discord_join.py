"""One AB-join of the discord part (:mod:`madcluster.score.discord`): every subsequence of a
series against every subsequence of the kept training rows, z-normalised, as blocked matrix
products.

Why a module of its own: the part decides *what* it compares (columns, lengths, the joins'
scales, model files); this module is *how* one join computes its nearest distances within
bounded memory: training blocks of ``_TRAINING_BLOCK`` subsequences in float32 where the product
only picks candidates (:mod:`madcluster.score.discord_filter`), kept between calls up to
``_KEPT_BYTES`` (64 MiB), and a stream's sliding products (:mod:`madcluster.score.discord_sliding`)
up to ``_SLIDING_BYTES`` (64 KiB) per stream.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from madcluster.score.discord_filter import MIN_VALUES, block_nearest, rounding_bound
from madcluster.score.discord_sliding import SlidingProducts, TrainingSeries
from madcluster.score.discord_subsequences import STD_FLOOR, SubsequenceReadings, normalised

_QUERY_BLOCK = 512  # scored subsequences per matrix product
_TRAINING_BLOCK = 2048  # training subsequences per matrix product
_KEPT_BYTES = 64 << 20  # training blocks kept between calls up to this size, rebuilt above it
# a stream's products (discord_sliding) up to this size per join: each stream holds its own (4 MiB
# made one stream of a 20,000 x 6 model 2.8 MiB); above it a row reads the shared training blocks
_SLIDING_BYTES = 64 << 10
_CACHES = ("read_training", "_row_cache", "_kept_blocks", "_series")  # cached properties


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

    def __getstate__(self) -> dict:
        """A pickle (a model sent to a worker) leaves the caches out; they fill again on use."""
        return {k: v for k, v in self.__dict__.items() if k not in _CACHES}

    @cached_property
    def _row_cache(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Training subsequences' float64 rows (:meth:`_training_rows`) as candidates asked for
        them, and which are filled; None above ``_KEPT_BYTES``. Filled lazily into an array never
        written as a whole, so it holds (in resident memory) about the rows candidates read, at
        most all of them."""
        if self.n_training * (self.dims + 1) * 8 > _KEPT_BYTES:
            return None
        return np.empty((self.n_training, self.dims + 1)), np.zeros(self.n_training, dtype=bool)

    def _candidate_rows(self, starts: np.ndarray) -> np.ndarray:
        """:meth:`_training_rows` of ``starts`` (distinct), computed once per model: a streamed
        row's candidates are mostly the previous row's neighbours, one step on (this was a tenth
        of a default stream row's CPU). The same bits as computing them again:
        :func:`normalised` computes each subsequence from its own values."""
        cache = self._row_cache
        if cache is None:
            return self._training_rows(starts)
        rows, filled = cache
        missing = starts[~filled[starts]]
        if len(missing):
            rows[missing] = self._training_rows(missing)
            filled[missing] = True
        return rows[starts]

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
                near = None
                if exclude_near and _overlap(chunk, where, len(block), self.length):
                    where = where + np.arange(len(block))
                    near = np.abs(chunk[:, None] - where[None, :]) < self.length
                rows = (self._candidate_rows, first)
                block_nearest(query, query32, block, rows, bound, best, near)
            found = np.isfinite(best)
            squared = np.where(found, best + norms, 0.0)
            out[lo : lo + len(chunk)] = np.sqrt(np.maximum(squared, 0.0) / self.dims)
        return out

    def describe(self) -> str:
        return f"subsequences of {self.length} against {self.n_training} training ones"


def _overlap(starts: np.ndarray, first: int, count: int, length: int) -> bool:
    """Whether a subsequence starting at one of ``starts`` lies fewer than ``length`` steps from
    one of ``count`` starting at ``first``, ``first + 1``, ...: only then is a block masked."""
    return bool(starts.min() < first + count - 1 + length and starts.max() > first - length)
