"""Streams out of memory: idle ones expired, and the least recently used parked past the memory
budget (``--max-stream-memory``), with a state folder saved first and read back on their next use.

:class:`Parking` is a part of :class:`~madcluster.serve.registry.StreamStore` (its state: the
streams, their locks, the parked ids and what the streams in memory hold); the store calls
:meth:`Parking._add` / :meth:`Parking._remove` whenever a stream enters or leaves memory, so
``stream_memory`` is the sum of what each holds (:func:`~madcluster.serve.footprint.stream_bytes`,
measured when it opens, every few updates and after a large one).
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

from madcluster.serve.footprint import NEW_STREAM_BYTES, stream_bytes
from madcluster.serve.streams import StateFolder, Stream, StreamMemoryFull, stream_state

logger = logging.getLogger("madcluster.serve.registry")
PARK_TO = 0.9  # past the stream memory budget, park streams until they hold this share of it
BUDGET_SECONDS = 1.0  # how often the streams' growth is held to the budget (a state folder)


class Parking:
    """The store's streams leaving memory (idle, or past the budget) and the count of what the
    streams in memory hold."""

    _streams: dict[str, Stream]
    _parked: dict[str, str]
    _dirty: set[str]
    _swapping: set[str]
    _lock: threading.Lock
    _files: threading.Lock
    _stop: threading.Event
    folder: StateFolder | None
    state_dir: Path | None
    idle_seconds: float
    max_stream_memory: int
    stream_memory: int

    def expire_idle(self, now: float | None = None) -> int:
        """Expire the streams not updated for ``idle_seconds``; returns how many. With a state
        folder each is saved first and read back when its id is used again."""
        if self.idle_seconds <= 0:
            return 0
        now = time.monotonic() if now is None else now
        with self._lock:
            idle = [
                (sid, s)
                for sid, s in self._streams.items()
                if now - s.last_used >= self.idle_seconds
            ]
        expired = sum(self._park(sid, s, idle_since=now - self.idle_seconds) for sid, s in idle)
        if expired:
            kept = (
                f"; saved to {self.state_dir}, read back on their next use"
                if self.state_dir is not None
                else ""
            )
            logger.info(
                "expired %d stream(s) idle for %g s or more%s", expired, self.idle_seconds, kept
            )
        return expired

    def _park(self, stream_id: str, stream: Stream, idle_since: float | None = None) -> bool:
        """Take ``stream`` out of memory (with a state folder: saved first, read back on its next
        use; without: closed) unless it is busy, handed over, or (``idle_since``) used since;
        whether it was."""
        if not stream.lock.acquire(blocking=False):  # busy: not idle after all
            return False
        try:
            if (
                self._streams.get(stream_id) is not stream
                or (idle_since is not None and stream.last_used > idle_since)
                or stream.model in self._swapping
            ):
                return False
            if self.state_dir is not None:
                with self._files:
                    stream.scorer.save(self.folder.file(stream_id), stream_state(stream))
            with self._lock:
                self._remove(stream_id)
                if self.state_dir is not None:
                    self._parked[stream_id] = stream.model
            return True
        finally:
            stream.lock.release()

    def _add(self, stream_id: str, stream: Stream) -> None:
        """Hold ``stream`` in memory (under ``self._lock``, or before the threads start)."""
        self._streams[stream_id] = stream
        stream.held = stream_bytes(stream.scorer, stream.tail)
        self.stream_memory += stream.held

    def _remove(self, stream_id: str) -> Stream | None:
        """Under ``self._lock``: ``stream_id`` out of memory (and of the streams to save)."""
        stream = self._streams.pop(stream_id, None)
        self._dirty.discard(stream_id)
        if stream is not None:
            self.stream_memory -= stream.held
        return stream

    def _measure(self, stream_id: str, stream: Stream) -> None:
        """Under the stream's lock: count what it holds now."""
        held = stream_bytes(stream.scorer, stream.tail)
        with self._lock:
            if self._streams.get(stream_id) is stream:
                self.stream_memory += held - stream.held
            stream.held = held

    def _over_budget(self, more: int = 0) -> bool:
        return 0 < self.max_stream_memory < self.stream_memory + more

    def _budget_room(self, stream_id: str) -> None:
        """Under ``self._lock``, before ``stream_id`` is held in memory: past the budget, park the
        least recently used streams (a state folder), else refuse (:class:`StreamMemoryFull`)."""
        if not self._over_budget(NEW_STREAM_BYTES):
            return
        if self.folder is not None:
            self._lock.release()
            try:
                self.keep_budget(NEW_STREAM_BYTES, keep=stream_id)
            finally:
                self._lock.acquire()
        if self._over_budget(NEW_STREAM_BYTES):
            each = self.stream_memory / max(len(self._streams), 1)
            parking = (
                "the streams in use could not be parked"
                if self.folder is not None
                else "serve with --state-dir to park the least recently used to disk instead"
            )
            raise StreamMemoryFull(
                f"cannot open stream {stream_id!r}: the {len(self._streams)} open streams hold "
                f"{_size(self.stream_memory)} (about {_size(each)} each), the limit is "
                f"{_size(self.max_stream_memory)} (--max-stream-memory); close streams with "
                f"DELETE /streams/ID, or {parking}"
            )

    def keep_budget(self, more: int = 0, keep: str | None = None) -> int:
        """With a state folder, park the least recently used streams (not ``keep``) until those in
        memory hold at most ``PARK_TO`` of the budget (``more`` bytes to come); returns how many."""
        if self.folder is None or not self._over_budget(more):
            return 0
        with self._lock:
            oldest = sorted(self._streams.items(), key=lambda item: item[1].last_used)
        target, parked = PARK_TO * self.max_stream_memory - more, 0
        for stream_id, stream in oldest:
            if self.stream_memory <= target:
                break
            if stream_id != keep and self._park(stream_id, stream):
                parked += 1
        if parked:
            logger.info(
                "parked %d least recently used stream(s) in %s: the streams held over "
                "--max-stream-memory (%s)",
                parked,
                self.state_dir,
                _size(self.max_stream_memory),
            )
        return parked

    def _expire_loop(self) -> None:
        every = min(max(self.idle_seconds / 2, 0.05), 30.0) if self.idle_seconds > 0 else 30.0
        if self.max_stream_memory > 0 and self.folder is not None:
            every = min(every, BUDGET_SECONDS)
        while not self._stop.wait(every):
            try:
                self.expire_idle()
                self.keep_budget()
            except Exception:
                logger.exception("expiring idle streams failed")


def _size(n_bytes: float) -> str:
    """A size in MiB, or KiB below one MiB."""
    return f"{n_bytes / 2**20:.1f} MiB" if n_bytes >= 2**20 else f"{n_bytes / 1024:.0f} KiB"


__all__ = ["BUDGET_SECONDS", "PARK_TO", "Parking"]
