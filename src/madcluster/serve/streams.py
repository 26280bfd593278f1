"""One served stream: its record (model, version, scorer, step offset), the rows it keeps for a
handover to another version of its model, its state file's contents, and the errors the store
answers with."""

from __future__ import annotations

import dataclasses
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from madcluster.estimator.archive import read_archive
from madcluster.estimator.detector import MADCluster
from madcluster.estimator.stream_state import STATE_FILE, state_model_fingerprint
from madcluster.estimator.streaming import StreamResult, StreamScorer
from madcluster.exceptions import MADClusterError, ModelFileError
from madcluster.serve.footprint import compact
from madcluster.serve.kept import KEPT_FOLDER
from madcluster.serve.rows import STREAM_ID


class NotFound(MADClusterError):
    """An unknown model or stream (HTTP 404)."""


class Conflict(MADClusterError):
    """A request that contradicts the server's state, e.g. another model for an open stream
    (409)."""


class TooManyStreams(MADClusterError):
    """A new stream past ``--max-streams`` (HTTP 429)."""


class StreamMemoryFull(MADClusterError):
    """A new stream past ``--max-stream-memory`` with nothing to park (HTTP 507)."""


@dataclass
class Stream:
    """An open stream: its model (name and version), scorer, lock and the rows a handover to
    another version of its model replays. The scorer's step i is the stream's step i + offset."""

    model: str
    scorer: StreamScorer
    lock: threading.Lock
    tail: RowTail
    version: int = 1
    offset: int = 0
    last_used: float = field(default_factory=time.monotonic)
    held: int = 0  # bytes it holds, as last measured (footprint.stream_bytes)
    updates: int = 0

    @property
    def steps_seen(self) -> int:
        return self.scorer.steps_seen + self.offset

    def shifted(self, result: StreamResult) -> StreamResult:
        """``result`` with the stream's step numbers."""
        if not self.offset:
            return result
        moved = {
            name: tuple(i.shifted(self.offset) for i in getattr(result, name))
            for name in ("incidents_opened", "incidents_closed", "incidents_confirmed")
        }
        return dataclasses.replace(
            result,
            steps=result.steps + self.offset,
            final_steps=result.final_steps + self.offset,
            **moved,
        )


@dataclass(frozen=True)
class Update:
    """A stream update's outcome: the stream's model and version, and the scores."""

    model: str
    version: int
    result: StreamResult
    far: tuple[dict[str, Any], ...] = ()  # columns far from training (estimator.far_columns)


#: the rows a stream keeps for a handover: float32, the precision its scorer reads them in (its
#: input checks make every row float32), so a replay gives the same scores at half the memory
TAIL_DTYPE = np.float32


class RowTail:
    """The last ``capacity`` rows of a stream, as its scorer read them (a ring: one copy per
    update). Its array grows with the rows up to ``capacity``: a new stream holds its few rows,
    not a full ring (1,024 rows of 8 columns: 32 KB)."""

    def __init__(self, capacity: int, n_features: int) -> None:
        self._capacity = int(capacity)
        self._rows = np.empty((0, n_features), dtype=TAIL_DTYPE)
        self._end = 0  # rows ever appended; the ring holds the last min(_end, capacity)

    @property
    def capacity(self) -> int:
        return self._capacity

    @property
    def nbytes(self) -> int:
        return int(self._rows.nbytes)

    def __len__(self) -> int:
        return min(self._end, self.capacity)

    def append(self, rows: np.ndarray) -> None:
        rows = rows[-self.capacity :]
        needed = self._end + len(rows)
        if len(self._rows) < self.capacity and needed > len(self._rows):
            # not wrapped yet (the array fills up before the ring turns): grow, doubling
            size = min(self.capacity, max(needed, 2 * len(self._rows)))
            grown = np.empty((size, self._rows.shape[1]), dtype=TAIL_DTYPE)
            grown[: self._end] = self._rows[: self._end]
            self._rows = grown
        start = self._end % self.capacity
        first = min(len(rows), self.capacity - start)
        self._rows[start : start + first] = rows[:first]
        self._rows[: len(rows) - first] = rows[first:]
        self._end += len(rows)

    def rows(self) -> np.ndarray:
        """The kept rows, oldest first (a copy)."""
        if self._end <= self.capacity:
            return self._rows[: self._end].copy()
        start = self._end % self.capacity
        return np.concatenate([self._rows[start:], self._rows[:start]])

    @classmethod
    def of(cls, rows: np.ndarray, capacity: int) -> RowTail:
        """A tail holding the last ``capacity`` of ``rows`` (a state file's, or a handover's)."""
        tail = cls(capacity, rows.shape[1])
        tail.append(np.asarray(rows, dtype=TAIL_DTYPE))
        return tail


def stream_state(stream: Stream) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """What a stream's state file holds: the scorer's state, its step offset and its tail."""
    meta, arrays = stream.scorer.state()
    meta["served"] = {"offset": stream.offset, "model_version": stream.version}
    arrays["served/tail"] = stream.tail.rows()
    return meta, arrays


def restore_stream(path: Path, name: str, model: MADCluster, version: int) -> Stream:
    """A stream of model ``name`` read back from its state file (one written before model
    versions: offset 0 and no tail, so a handover replays only the rows sent after the
    restart)."""
    scorer = StreamScorer.restore(model.model_, path, model.n_jobs)
    header, arrays = read_archive(path, STATE_FILE)
    offset = int(header.get("served", {}).get("offset", 0))
    n_features = int(model.n_features_in_)
    rows = arrays.get("served/tail", np.empty((0, n_features)))
    tail = RowTail.of(rows.reshape(-1, n_features), handover_rows(model))
    return Stream(name, scorer, threading.Lock(), tail, version, offset)


#: rows a handover replays at least: several windows, so every part's trailing reach is covered
MIN_HANDOVER_ROWS = 1024


def handover_rows(detector: MADCluster) -> int:
    """Rows a stream keeps for a handover to ``detector``: enough for the parts' reach (the
    longest final-after and two windows), at least :data:`MIN_HANDOVER_ROWS`."""
    model = detector.model_
    final_after = model.combination.final_after() if model.grid.causal else 0
    return max(MIN_HANDOVER_ROWS, 2 * int(final_after) + 2 * int(detector.window_size))


class StateFolder:
    """A server's ``--state-dir``: one ``<stream id>.mcs`` state file per stream, naming (by its
    fingerprint) the model it belongs to, and the refitted models no model file holds
    (:mod:`madcluster.serve.kept`)."""

    SUFFIX = ".mcs"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)

    def file(self, stream_id: str) -> Path:
        return self.path / f"{stream_id}{self.SUFFIX}"

    def stream_ids(self) -> list[str]:
        return [p.name[: -len(self.SUFFIX)] for p in sorted(self.path.glob(f"*{self.SUFFIX}"))]

    def fingerprint(self, stream_id: str) -> str:
        """The fingerprint of the model the stream's file was saved under."""
        return state_model_fingerprint(self.file(stream_id))

    def read(self, stream_id: str, name: str, model: MADCluster, version: int) -> Stream:
        """The stream saved in the folder, as a stream of ``model`` (named ``name``)."""
        if not STREAM_ID.match(stream_id):
            raise ModelFileError(
                f"{str(self.file(stream_id))!r} is no stream's state: its name is no stream id; "
                "move it away"
            )
        return restore_stream(self.file(stream_id), name, model, version)

    def remove_leftovers(self) -> int:
        """Delete the temporary files of atomic writes a killed server left (``.NAME.XXXX.tmp``,
        never renamed into place); returns how many."""
        removed = 0
        for folder in (self.path, self.path / KEPT_FOLDER):
            for leftover in folder.glob(".*.tmp") if folder.is_dir() else ():
                leftover.unlink(missing_ok=True)
                removed += 1
        return removed


def handover(detector: MADCluster, tail: np.ndarray, steps: int) -> tuple[StreamScorer, int]:
    """A stream of ``detector`` that goes on at step ``steps`` after replaying ``tail`` (the rows
    just before it): ``(scorer, offset)``, the scorer's step i being the stream's step i +
    offset."""
    scorer = detector.stream()
    if len(tail):
        scorer.update(tail)  # the answers are the replayed rows': dropped
        compact(scorer)
    return scorer, steps - len(tail)


__all__ = [
    "MIN_HANDOVER_ROWS",
    "Conflict",
    "NotFound",
    "RowTail",
    "StateFolder",
    "Stream",
    "StreamMemoryFull",
    "TooManyStreams",
    "Update",
    "handover",
    "handover_rows",
    "restore_stream",
    "stream_state",
]
