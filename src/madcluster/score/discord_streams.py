"""The discord parts' streams (:mod:`madcluster.score.discord`, the sampled reading of older
files): one join's over a growing series (:class:`DiscordStream`: its last m - 1 rows, the
distances a pending step still reads, the sliding products) and a part's joins together
(:class:`JoinsStream`), a stream fed row by row giving the whole series' values.

Why a module of its own: the joins decide what a subsequence's distance is; this is how a stream
keeps what its next rows and pending steps need, and what its state saves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from madcluster.score.discord_sliding import SlidingProducts
from madcluster.score.parts import PartStream


@dataclass
class DiscordStream(PartStream):
    """A discord part over a growing series: its last m - 1 standardised rows and the distances
    of the subsequences it has completed that a pending step still reads (from ``first_start``)."""

    part: Any  # a SubsequenceReadings (discord_subsequences; not imported: it imports this)
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
    :meth:`Discord.combined` combines them, and the at-once join's where it has one of its own
    (only its subsequences ending at the new rows are read)."""

    part: Any  # a madcluster.score.discord.Discord (not imported: it imports this module)
    streams: list[DiscordStream]
    #: the join read at once where it is not one of ``streams`` (its steps' values never read)
    at_once: DiscordStream | None = None

    def append(self, rows: np.ndarray, given: np.ndarray | None = None) -> np.ndarray:
        for stream in self.streams:
            stream.append(rows)
        if self.at_once is None:
            return self.streams[self.part.at_once_join].trailing.copy()
        self.at_once.append(rows)
        self.at_once.forget_before(self.at_once.steps_seen)
        return self.at_once.trailing.copy()

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

    @property
    def join_streams(self) -> list[tuple[str, DiscordStream]]:
        """The streams by their key in :meth:`state`: the joins' by index, then ``at_once``."""
        extra = [("at_once", self.at_once)] if self.at_once is not None else []
        return [*((str(i), s) for i, s in enumerate(self.streams)), *extra]

    def state(self) -> dict[str, np.ndarray]:
        return {f"{name}/{k}": v for name, s in self.join_streams for k, v in s.state().items()}

    def load(self, arrays: dict[str, np.ndarray]) -> None:
        for name, stream in self.join_streams:
            stream.load({k: arrays[f"{name}/{k}"] for k in ("steps", "rows", "distances")})


__all__ = ["DiscordStream", "JoinsStream"]
