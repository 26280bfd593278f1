"""The discord part as model files before the exact one wrote it (``SampledDiscord``): each
z-normalised subsequence, after piecewise aggregate approximation to at most ``SEGMENTS`` values
per column, against at most ``MAX_NEIGHBOURS`` evenly spaced training subsequences.

Why it stays: a model file keeps scoring as it did when it was written, and a file whose discord
part holds ``neighbours`` was written with this reading
(:func:`madcluster.score.legacy.discord_from_arrays` hands it here; its first files, without
balanced ends, are :class:`madcluster.score.legacy.SampledDiscordCovering`). New fits use the exact
part (:mod:`madcluster.score.discord`); ``fit`` stays so the two can be measured side by side.

Why it was replaced: on a chaotic signal every subsequence is far from its nearest of 1,024
samples, anomalous or not, so it found no discords there (the exact part's module docstring has
the numbers). Its readings per step, at once and on the training rows are the exact part's
(:class:`madcluster.score.discord.SubsequenceReadings`); only the distances differ.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import numpy as np

from madcluster.score.discord_subsequences import (
    SEGMENTS,
    STD_FLOOR,
    SubsequenceReadings,
    shape_columns,
    subsequence_length,
)
from madcluster.score.parts import FitContext, Part

MAX_NEIGHBOURS = 1024  # 2048 measured the same on the development families at twice the cost
_CHUNK_VALUES = 1 << 20  # (chunk, N) float64 arrays of 8 MB: 1 << 22 measured 20 % slower


@dataclass(frozen=True)
class SampledDiscord(SubsequenceReadings, Part):
    """A fitted discord part: the columns it reads, their training scale, the subsequence length
    and segment size, the neighbours ``(N, C * segments)`` and where they start in training."""

    columns: np.ndarray
    mean: np.ndarray
    scale: np.ndarray
    length: int
    segment: int
    neighbours: np.ndarray
    neighbour_starts: np.ndarray

    name: ClassVar[str] = "discord"

    @classmethod
    def fit(cls, rows: np.ndarray, context: FitContext) -> SampledDiscord:
        data = np.asarray(rows, dtype=np.float64)
        columns = shape_columns(data)
        mean = data[:, columns].mean(axis=0)
        scale = data[:, columns].std(axis=0)
        scale = np.where(scale > 1e-12, scale, 1.0)
        fallback = min(context.window_size, len(data) // 4)
        length = subsequence_length((data[:, columns] - mean) / scale, fallback)
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
        return cls(columns, mean, scale, length, segment, neighbours, starts)

    # ------------------------------------------------------------------ files
    def to_arrays(self) -> dict[str, np.ndarray]:
        out = {
            "columns": self.columns,
            "mean": self.mean,
            "scale": self.scale,
            "shape": np.asarray([self.length, self.segment], dtype=np.int64),
            "neighbours": self.neighbours,
            "neighbour_starts": self.neighbour_starts,
            "balanced_edges": np.asarray(1, dtype=np.int64),
        }
        return out

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> SampledDiscord:
        length, segment = (int(v) for v in arrays["shape"])
        return cls(
            arrays["columns"].astype(np.int64),
            arrays["mean"],
            arrays["scale"],
            length,
            segment,
            arrays["neighbours"],
            arrays["neighbour_starts"].astype(np.int64),
        )

    # ------------------------------------------------------------------ subsequences
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


__all__ = ["MAX_NEIGHBOURS", "SampledDiscord"]
