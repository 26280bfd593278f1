"""Older generations of the score's parts, as model files written before hold them: each a part
kind of its own, chosen from a file's arrays (:data:`~madcluster.score.parts.PART_UPGRADES`), so
that today's kinds carry no flags for what they used to do and an old file scores, and streams,
as it did.

Window KMeans (``kmeans``), newest first:

* today's :class:`~madcluster.score.window_kmeans.WindowKMeans` (its arrays say
  ``prefix_at_once``): at once, the windows that will cover t, each matched on its rows so far;
* :class:`KMeansWindowEnding` (``balanced_edges`` only): at once, the distance of the window
  *ending* at t (before the first full window, the series' first row repeated before it);
* :class:`KMeansCoveringMeans` (neither): that, and a step's value the mean of the windows that
  cover it, fewer near either end than in the middle.

The discord part (``discord``), newest first:

* today's :class:`~madcluster.score.discord.Discord` (its arrays say ``trailing_at_once``): exact
  joins, at once the shortest join's subsequence ending at t;
* :class:`DiscordWithoutAtOnce`: the exact joins, nothing at once;
* :class:`~madcluster.score.discord_sampled.SampledDiscord` (its arrays hold ``neighbours`` and
  say ``balanced_edges``): 1,024 sampled training subsequences, steps near an end reading the m
  subsequences nearest to them;
* :class:`SampledDiscordCovering`: that, each step the least of the subsequences covering it.

``tests/estimator/test_fixture_streams.py`` checks that every fixture file, of each generation,
streams what its ``decision_function`` gives.
"""

from __future__ import annotations

from dataclasses import fields
from typing import TYPE_CHECKING, ClassVar, TypeVar

import numpy as np

from madcluster.score.discord import Discord
from madcluster.score.discord_sampled import SampledDiscord
from madcluster.score.discord_subsequences import JoinsStream
from madcluster.score.parts import Part
from madcluster.score.window_kmeans import WindowKMeans, window_distances

if TYPE_CHECKING:
    from madcluster.score.window_kmeans import KMeansStream


class KMeansWindowEnding(WindowKMeans):
    """Window KMeans whose causal reading is the window ending at each step."""

    def at_once(self, rows: np.ndarray) -> np.ndarray:
        read = self.read(rows)
        padded = np.vstack([np.repeat(read[:1], self.window_size - 1, axis=0), read])
        return window_distances(self, padded, np.arange(len(read)))

    def stream_at_once(
        self, stream: KMeansStream, buffer: np.ndarray, seen: int, total: int
    ) -> np.ndarray:
        window = self.window_size
        lo = seen - window + 1  # the first row those windows read
        source, start = buffer, stream.rows_start
        if lo < start:  # only at the series' start: the first row stands in for the rows before it
            source, start = np.concatenate([np.repeat(buffer[:1], start - lo, axis=0), buffer]), lo
        return window_distances(self, source, np.arange(seen, total) - window + 1 - start)

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {k: v for k, v in super().to_arrays().items() if k != "prefix_at_once"}


class KMeansCoveringMeans(KMeansWindowEnding):
    """Window KMeans of the first files: a step's value the mean of every window covering it."""

    def values(self, rows: np.ndarray) -> np.ndarray:
        from madcluster.baselines import window_scores_to_points
        from madcluster.data.window_grid import window_starts

        read = self.read(rows)
        starts = window_starts(len(read), self.window_size, self.stride)
        distances = window_distances(self, read, starts)
        return window_scores_to_points(distances, starts, self.window_size, len(read))

    def window_means(
        self, distances: np.ndarray, starts: np.ndarray, n_steps: int, steps: np.ndarray
    ) -> np.ndarray:
        return covering_window_means(distances, starts, self.window_size, steps)

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {k: v for k, v in super().to_arrays().items() if k != "balanced_edges"}


def covering_window_means(
    window_scores: np.ndarray, starts: np.ndarray, window: int, steps: np.ndarray
) -> np.ndarray:
    """Per step of ``steps``, the mean score of the windows in ``starts`` that cover it (those
    starting in ``[t - window + 1, t]``): what ``window_scores_to_points`` gives a whole series,
    for a stream that holds only its recent windows."""
    scores = np.asarray(window_scores, dtype=np.float64)
    lo = np.searchsorted(starts, steps - window + 1, side="left")
    hi = np.searchsorted(starts, steps, side="right")
    sums = np.concatenate([[0.0], np.cumsum(scores)])
    return (sums[hi] - sums[lo]) / np.maximum(hi - lo, 1)


def kmeans_from_arrays(arrays: dict[str, np.ndarray]) -> WindowKMeans:
    """The window-KMeans part a file's arrays hold, of the generation that wrote them."""
    if int(arrays.get("prefix_at_once", 0)):
        kind: type[WindowKMeans] = WindowKMeans
    elif int(arrays.get("balanced_edges", 0)):
        kind = KMeansWindowEnding
    else:
        kind = KMeansCoveringMeans
    return kind.from_arrays(arrays)


class DiscordWithoutAtOnce(Discord):
    """The exact discord part of files written before its causal reading: 0 at once (which its
    training statistics, 0 too, turn into no contribution)."""

    def at_once(self, rows: np.ndarray) -> np.ndarray:
        return np.zeros(len(rows))

    def reference_at_once(self, rows: np.ndarray) -> np.ndarray:
        return np.zeros(len(rows))

    def stream(self) -> JoinsStream:
        return _SilentJoinsStream(self, [j.stream() for j in self.joins])

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {k: v for k, v in super().to_arrays().items() if k != "trailing_at_once"}


class _SilentJoinsStream(JoinsStream):
    """The joins' stream of :class:`DiscordWithoutAtOnce`: nothing at once."""

    def append(self, rows: np.ndarray, given: np.ndarray | None = None) -> np.ndarray:
        super().append(rows, given)
        return np.zeros(len(rows))


class SampledDiscordCovering(SampledDiscord):
    """The sampled discord part of its first files: every step, near the ends too, the least
    distance of the subsequences covering it."""

    balanced_edges: ClassVar[bool] = False

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {k: v for k, v in super().to_arrays().items() if k != "balanced_edges"}


def discord_from_arrays(arrays: dict[str, np.ndarray]) -> Part:
    """The discord part a file's arrays hold, of the generation that wrote them."""
    if "neighbours" in arrays:
        sampled = SampledDiscord if int(arrays.get("balanced_edges", 0)) else SampledDiscordCovering
        return sampled.from_arrays(arrays)
    exact = Discord if int(arrays.get("trailing_at_once", 0)) else DiscordWithoutAtOnce
    return exact.from_arrays(arrays)


PartT = TypeVar("PartT", bound=Part)


def recast(part: Part, kind: type[PartT]) -> PartT:
    """``part``'s fitted state as another generation of the same part (``kind``): what a file
    of that generation holding the same arrays would load as (for the studies and tests that
    compare generations)."""
    return kind(**{f.name: getattr(part, f.name) for f in fields(part) if f.init})  # type: ignore[call-arg]


__all__ = [
    "DiscordWithoutAtOnce",
    "KMeansCoveringMeans",
    "KMeansWindowEnding",
    "SampledDiscordCovering",
    "covering_window_means",
    "discord_from_arrays",
    "kmeans_from_arrays",
    "recast",
]
