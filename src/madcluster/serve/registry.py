"""What the server holds: the models it loaded and the streams it keeps (no HTTP here).

A model path is one ``.mcz`` file (its name: the file stem) or a fleet folder of them (one model
per entity, named after the entity). Streams are :class:`~madcluster.estimator.streaming.StreamScorer`
objects by id; with a state folder each changed stream's state is saved atomically every
``save_interval`` seconds by a background thread (0: after every update), at shutdown, and read
back at start-up, so streams survive a restart; a crash loses at most the last interval's rows.
Saving once an interval, not once an update, keeps ``--state-dir`` near the in-memory cost: a save
(a zip of the stream's state, ~ms) per update was most of an update's time. The saver copies a
stream's state under its lock and writes the file (~8 ms with the fsync) after releasing it, so an
update never waits for a file.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from madcluster.data.validation import MAX_ABS_VALUE
from madcluster.estimator.detector import MADCluster
from madcluster.estimator.streaming import StreamScorer, model_fingerprint, state_model_fingerprint
from madcluster.exceptions import DataError, MADClusterError, ModelFileError
from madcluster.serve.limits import DEFAULT_IDLE_SECONDS, DEFAULT_MAX_STREAMS, DEFAULT_SAVE_INTERVAL

logger = logging.getLogger(__name__)
MODEL_SUFFIX = ".mcz"
STATE_SUFFIX = ".mcs"
STREAM_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


class NotFound(MADClusterError):
    """An unknown model or stream (HTTP 404)."""


class Conflict(MADClusterError):
    """A request that contradicts the server's state, e.g. another model for an open stream (409)."""


class TooManyStreams(MADClusterError):
    """A new stream past ``--max-streams`` (HTTP 429)."""


def load_models(path: str | Path) -> dict[str, MADCluster]:
    """``{name: detector}`` from one model file or a fleet folder of ``.mcz`` files."""
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.name.endswith(MODEL_SUFFIX))
        if not files:
            raise ModelFileError(f"{str(path)!r} holds no {MODEL_SUFFIX} model files: serve one model file, or a folder "
                                 f"of them (`madcluster fit FOLDER -o MODELS/` writes one per entity file)")
    else:
        files = [path]
    return {p.name[: -len(MODEL_SUFFIX)] if p.name.endswith(MODEL_SUFFIX) else p.stem: MADCluster.load(p) for p in files}


def rows_array(model: MADCluster, rows: list[list[float]], columns: list[str] | None) -> np.ndarray:
    """The request's rows as a ``(T, D)`` array in the model's column order, or a ``DataError``."""
    names = getattr(model, "feature_names_in_", None)
    names = None if names is None else [str(n) for n in names]
    expected = int(model.n_features_in_)
    lengths = {len(row) for row in rows} if isinstance(rows, list) and all(isinstance(r, list) for r in rows) else set()
    if len(lengths) > 1:
        first = len(rows[0])
        odd = next(i for i, row in enumerate(rows) if len(row) != first)
        raise DataError(f"rows must all have the same length: row 0 has {first} values, row {odd} has {len(rows[odd])}")
    try:
        data = np.asarray(rows, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataError(f"rows must be a list of equally long lists of numbers: {exc}") from None
    if data.ndim != 2 or data.shape[0] == 0:
        raise DataError(f"rows must be a non-empty list of rows (lists of {expected} numbers), got shape {data.shape}")
    if columns is None:
        if data.shape[1] != expected:
            hint = f" ({', '.join(names)})" if names is not None else ""
            raise DataError(f"each row needs {expected} values{hint}, got {data.shape[1]}")
        return _finite(data, names)
    if len(columns) != data.shape[1]:
        raise DataError(f"{len(columns)} columns named but rows have {data.shape[1]} values")
    repeated = sorted({c for c in columns if columns.count(c) > 1})
    if repeated:
        raise DataError(f"columns name {', '.join(map(repr, repeated))} more than once: each column once, please")
    if names is None:
        if len(columns) != expected:
            raise DataError(f"the model takes {expected} columns, got {len(columns)}")
        return _finite(data, list(columns))
    missing = [n for n in names if n not in columns]
    unexpected = [c for c in columns if c not in set(names)]
    if missing or unexpected:
        raise DataError(f"columns do not match the model's: missing {missing}, unexpected {unexpected}")
    order = [columns.index(n) for n in names]
    return _finite(data[:, order], names)


def _finite(data: np.ndarray, names: list[str] | None = None) -> np.ndarray:
    """``data``, or a ``DataError`` naming the first NaN / infinite / too large value by row and
    column (by name when the model has names, both for NaN and for 1e300)."""
    for bad, what in ((~np.isfinite(data), "NaN or infinite"), (np.abs(data) > MAX_ABS_VALUE, "too large")):
        where = np.argwhere(bad)
        if len(where):
            row, col = where[0]
            column = repr(names[col]) if names is not None else f"{col}"
            limit = f" (beyond {MAX_ABS_VALUE:.3g}, the float32 range the model computes in)" if what == "too large" else ""
            raise DataError(f"rows hold {len(where)} {what} value(s){limit}, the first at row {row}, column {column}: "
                            f"{float(data[row, col])!r}")
    return data


@dataclass
class Stream:
    model: str
    scorer: StreamScorer
    lock: threading.Lock
    last_used: float = field(default_factory=time.monotonic)


class StreamStore:
    """Open streams by id, each bound to one model, saved to ``state_dir`` when given.

    At most ``max_streams`` streams are known at once (open in memory, or expired to the state
    folder): a new one past that is refused (:class:`TooManyStreams`, HTTP 429), so a client
    looping over new ids cannot take the memory and the disk. A stream not updated for
    ``idle_seconds`` (0: never) is expired: without a state folder it is closed; with one, its
    state is saved and it leaves memory, to be read back when its id is used again.
    """

    def __init__(self, models: dict[str, MADCluster], state_dir: str | Path | None = None,
                 save_interval: float = DEFAULT_SAVE_INTERVAL, max_streams: int = DEFAULT_MAX_STREAMS,
                 idle_seconds: float = DEFAULT_IDLE_SECONDS) -> None:
        self.models = models
        self.state_dir = Path(state_dir) if state_dir is not None else None
        self.save_interval = save_interval
        self.max_streams, self.idle_seconds = max_streams, idle_seconds
        self._parked: set[str] = set()  # expired streams whose state is in state_dir
        self._janitor: threading.Thread | None = None
        self._streams: dict[str, Stream] = {}
        self._lock = threading.Lock()
        self._files = threading.Lock()  # held while a state file is written or removed
        self._dirty: set[str] = set()
        self._stop = threading.Event()
        self._saver: threading.Thread | None = None
        if self.state_dir is not None:
            self.state_dir.mkdir(parents=True, exist_ok=True)
            self._restore_all()
            if save_interval > 0:
                self._saver = threading.Thread(target=self._save_loop, name="stream-saver", daemon=True)
                self._saver.start()
        if idle_seconds > 0:
            self._janitor = threading.Thread(target=self._expire_loop, name="stream-expiry", daemon=True)
            self._janitor.start()

    def __len__(self) -> int:
        return len(self._streams)

    @property
    def parked(self) -> int:
        """Expired streams whose state waits in the state folder."""
        return len(self._parked)

    def model(self, name: str) -> MADCluster:
        if name not in self.models:
            raise NotFound(f"unknown model {name!r}; this server has {', '.join(sorted(self.models))}")
        return self.models[name]

    def get(self, stream_id: str) -> Stream:
        check_stream_id(stream_id)
        if stream_id in self._parked:
            with self._lock:
                self._unpark(stream_id)
        if stream_id not in self._streams:
            raise NotFound(f"unknown stream {stream_id!r}: POST rows to /streams/{stream_id} to open it")
        return self._streams[stream_id]

    def model_of(self, stream_id: str, model_name: str | None) -> str:
        """The model of stream ``stream_id``: its own if open, else ``model_name`` (default: the
        model of the same name, or the only model)."""
        check_stream_id(stream_id)
        stream = self._streams.get(stream_id)
        if stream is None and stream_id in self._parked:
            with self._lock:
                self._unpark(stream_id)
            stream = self._streams.get(stream_id)
        if stream is not None:
            if model_name is not None and model_name != stream.model:
                raise Conflict(f"stream {stream_id!r} scores with model {stream.model!r}, not {model_name!r}")
            return stream.model
        name = model_name or self._default_model(stream_id)
        self.model(name)  # unknown: NotFound
        return name

    def update(self, stream_id: str, model_name: str | None, rows: list[list[float]], columns: list[str] | None) -> tuple[str, Any]:
        """Score ``rows`` as the next rows of the stream, opened on first use; a refused request
        (bad rows, unknown model) opens nothing."""
        result = self._update(stream_id, model_name, rows, columns, wait=True)
        assert result is not None
        return result

    def try_update(self, stream_id: str, model_name: str | None, rows: list[list[float]], columns: list[str] | None) -> tuple[str, Any] | None:
        """:meth:`update`, or None at once when the stream is busy (another update or a save holds
        it): the server's event loop must never wait on a lock."""
        return self._update(stream_id, model_name, rows, columns, wait=False)

    def _update(self, stream_id: str, model_name: str | None, rows: list[list[float]], columns: list[str] | None,
                wait: bool) -> tuple[str, Any] | None:
        if not wait and self.state_dir is not None and (self.save_interval <= 0 or stream_id in self._parked):
            return None  # a save per update, or reading an expired stream back, is file I/O: never on the event loop
        name = self.model_of(stream_id, model_name)
        data = rows_array(self.models[name], rows, columns)
        with self._lock:
            stream = self._streams.get(stream_id)
            if stream is None:
                self._make_room(stream_id)
                stream = self._streams[stream_id] = Stream(name, self.models[name].stream(), threading.Lock())
            stream.last_used = time.monotonic()
        if not stream.lock.acquire(blocking=wait):
            return None
        try:  # one update at a time per stream: rows keep their order
            result = stream.scorer.update(data)
            if self.state_dir is not None and self.save_interval <= 0:
                stream.scorer.save(self._state_path(stream_id))
            elif self.state_dir is not None:
                with self._lock:
                    self._dirty.add(stream_id)
        finally:
            stream.lock.release()
        return stream.model, result

    def flush(self) -> int:
        """Save every stream changed since its last save (the saver thread's step; also at
        shutdown, after which the thread stops); returns how many were saved."""
        if self.state_dir is None:
            return 0
        with self._lock:
            dirty, self._dirty = self._dirty, set()
        saved = 0
        for stream_id in sorted(dirty):
            stream = self._streams.get(stream_id)
            if stream is None:  # closed since: its file is gone and stays gone
                continue
            with stream.lock:  # the state is copied under the lock; the file is written after it
                if self._streams.get(stream_id) is not stream:
                    continue
                state = stream.scorer.state()
            with self._files:
                if self._streams.get(stream_id) is not stream:  # closed meanwhile: no file
                    continue
                try:
                    stream.scorer.save(self._state_path(stream_id), state)
                except OSError:
                    with self._lock:  # saved on the next round
                        self._dirty.add(stream_id)
                    raise
            saved += 1
        return saved

    def stop(self) -> None:
        """Save what changed and stop the saver and expiry threads."""
        self._stop.set()
        for thread in (self._saver, self._janitor):
            if thread is not None:
                thread.join(timeout=30)
        self.flush()

    def _make_room(self, stream_id: str) -> None:
        """Under ``self._lock``, before a new stream opens: past ``max_streams``, expire the idle
        ones first, then refuse."""
        if len(self._streams) + len(self._parked) < self.max_streams:
            return
        if self.idle_seconds > 0:
            self._lock.release()
            try:
                self.expire_idle()
            finally:
                self._lock.acquire()
        if len(self._streams) + len(self._parked) >= self.max_streams:
            kept = f", {len(self._parked)} of them expired to the state folder" if self._parked else ""
            raise TooManyStreams(
                f"cannot open stream {stream_id!r}: {len(self._streams) + len(self._parked)} streams are open{kept}, the "
                f"limit is {self.max_streams} (--max-streams); close streams with DELETE /streams/ID"
                + (f" or wait for idle ones to expire (--stream-idle-seconds {self.idle_seconds:g})" if self.idle_seconds > 0 else "")
            )

    def expire_idle(self, now: float | None = None) -> int:
        """Expire the streams not updated for ``idle_seconds``; returns how many. With a state
        folder each is saved first and read back when its id is used again."""
        if self.idle_seconds <= 0:
            return 0
        now = time.monotonic() if now is None else now
        with self._lock:
            idle = [(sid, s) for sid, s in self._streams.items() if now - s.last_used >= self.idle_seconds]
        expired = 0
        for stream_id, stream in idle:
            if not stream.lock.acquire(blocking=False):  # busy: not idle after all
                continue
            try:
                if self._streams.get(stream_id) is not stream or now - stream.last_used < self.idle_seconds:
                    continue
                if self.state_dir is not None:
                    with self._files:
                        stream.scorer.save(self._state_path(stream_id))
                with self._lock:
                    self._streams.pop(stream_id, None)
                    self._dirty.discard(stream_id)
                    if self.state_dir is not None:
                        self._parked.add(stream_id)
                expired += 1
            finally:
                stream.lock.release()
        if expired:
            kept = f"; saved to {self.state_dir}, read back on their next use" if self.state_dir is not None else ""
            logger.info("expired %d stream(s) idle for %g s or more%s", expired, self.idle_seconds, kept)
        return expired

    def _expire_loop(self) -> None:
        while not self._stop.wait(min(max(self.idle_seconds / 2, 0.05), 30.0)):
            try:
                self.expire_idle()
            except Exception:
                logger.exception("expiring idle streams failed")

    def _unpark(self, stream_id: str) -> None:
        """Under ``self._lock``: read an expired stream back from its state file."""
        if stream_id not in self._parked or stream_id in self._streams:
            return
        path = self._state_path(stream_id)
        by_fingerprint = {model_fingerprint(m.model_): name for name, m in self.models.items()}
        name = by_fingerprint.get(state_model_fingerprint(path))
        if name is None:
            raise ModelFileError(f"stream state {str(path)!r} belongs to none of the loaded models")
        self._streams[stream_id] = Stream(name, StreamScorer.restore(self.models[name].model_, path, self.models[name].n_jobs), threading.Lock())
        self._parked.discard(stream_id)

    def _save_loop(self) -> None:
        while not self._stop.wait(self.save_interval):
            try:
                self.flush()
            except Exception:
                logger.exception("saving stream states to %s failed", self.state_dir)

    def _state_path(self, stream_id: str) -> Path:
        return self.state_dir / f"{stream_id}{STATE_SUFFIX}"

    def close(self, stream_id: str) -> None:
        check_stream_id(stream_id)
        if stream_id not in self._parked:
            self.get(stream_id)
        with self._files, self._lock:
            self._streams.pop(stream_id, None)
            self._parked.discard(stream_id)
            self._dirty.discard(stream_id)
            if self.state_dir is not None:
                (self.state_dir / f"{stream_id}{STATE_SUFFIX}").unlink(missing_ok=True)

    def _default_model(self, stream_id: str) -> str:
        if stream_id in self.models:
            return stream_id
        if len(self.models) == 1:
            return next(iter(self.models))
        raise DataError(f"name the model of new stream {stream_id!r} (\"model\": one of {', '.join(sorted(self.models))})")

    def _restore_all(self) -> None:
        by_fingerprint = {model_fingerprint(m.model_): name for name, m in self.models.items()}
        for path in sorted(self.state_dir.glob(f"*{STATE_SUFFIX}")):
            stream_id = path.name[: -len(STATE_SUFFIX)]
            name = by_fingerprint.get(state_model_fingerprint(path))
            if name is None or not STREAM_ID.match(stream_id):
                raise ModelFileError(f"stream state {str(path)!r} belongs to none of the loaded models; move it away or serve its model")
            scorer = StreamScorer.restore(self.models[name].model_, path, self.models[name].n_jobs)
            self._streams[stream_id] = Stream(name, scorer, threading.Lock())


def check_stream_id(stream_id: str) -> None:
    if not STREAM_ID.match(stream_id):
        raise DataError(f"stream id {stream_id!r} must be 1-128 letters, digits, '.', '_' or '-' (starting with a letter or digit)")


__all__ = ["Conflict", "NotFound", "StreamStore", "TooManyStreams", "load_models", "rows_array"]
