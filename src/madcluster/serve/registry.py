"""What the server holds: the models it loaded and the streams it keeps (no HTTP here).

A model path is one ``.mcz`` file (its name: the file stem) or a fleet folder of them (one model
per entity, named after the entity). Streams are
:class:`~madcluster.estimator.streaming.StreamScorer` objects by id; with a state folder each
changed stream's state is saved atomically every ``save_interval`` seconds by a background thread
(0: after every update), at shutdown, and read back at start-up, so streams survive a restart; a
crash loses at most the last interval's rows. Saving once an interval, not once an update, keeps
``--state-dir`` near the in-memory cost: a save (a zip of the stream's state, ~ms) per update was
most of an update's time. The saver copies a stream's state under its lock and writes the file (~8
ms with the fsync) after releasing it, so an update never waits for a file.

A model can be replaced while streams run (:meth:`StreamStore.swap_model`, the refits of
:mod:`madcluster.serve.swap`): each model has a version, each stream keeps its last rows and hands
itself over to the new model, its step numbers going on. The store's two other parts: streams
leaving memory, idle or past the memory budget (:mod:`madcluster.serve.parking`), and model
versions, swaps and handovers (:mod:`madcluster.serve.versions`).
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

from madcluster.estimator.detector import MADCluster
from madcluster.estimator.far_columns import far_columns
from madcluster.exceptions import DataError
from madcluster.serve.footprint import (
    COMPACT_ROWS,
    MEASURE_EVERY,
    NEW_STREAM_BYTES,
    compact,
)
from madcluster.serve.kept import Former, KeptModels, fingerprint, served_models
from madcluster.serve.limits import (
    DEFAULT_IDLE_SECONDS,
    DEFAULT_MAX_STREAM_MEMORY,
    DEFAULT_MAX_STREAMS,
    DEFAULT_SAVE_INTERVAL,
)
from madcluster.serve.parking import Parking
from madcluster.serve.rows import check_stream_id, rows_array
from madcluster.serve.streams import (
    Conflict,
    NotFound,
    RowTail,
    StateFolder,
    Stream,
    TooManyStreams,
    Update,
    handover_rows,
    stream_state,
)
from madcluster.serve.versions import ModelVersions

logger = logging.getLogger(__name__)


class StreamStore(Parking, ModelVersions):
    """Open streams by id, each bound to one model, saved to ``state_dir`` when given.

    At most ``max_streams`` streams are known at once (open in memory, or expired to the state
    folder): a new one past that is refused (:class:`TooManyStreams`, HTTP 429), so a client
    looping over new ids cannot take the memory and the disk. A stream not updated for
    ``idle_seconds`` (0: never) is expired: without a state folder it is closed; with one, its
    state is saved and it leaves memory, to be read back when its id is used again.
    """

    def __init__(
        self,
        models: dict[str, MADCluster],
        state_dir: str | Path | None = None,
        save_interval: float = DEFAULT_SAVE_INTERVAL,
        max_streams: int = DEFAULT_MAX_STREAMS,
        idle_seconds: float = DEFAULT_IDLE_SECONDS,
        max_stream_memory: int = DEFAULT_MAX_STREAM_MEMORY,
    ) -> None:
        self.models = models
        self.versions = {name: 1 for name in models}  # + 1 at each swap_model
        self.folder = StateFolder(state_dir) if state_dir is not None else None
        # the fingerprints of the models read from files (a refit descends from one)
        self._file_prints = {name: fingerprint(m) for name, m in models.items()}
        self._formers: dict[str, Former] = {}  # at start: models a stream may be saved under
        self.kept = None if self.folder is None else KeptModels(self.folder.path)
        if self.folder is not None and self.kept is not None:
            self.folder.remove_leftovers()
            self.models, self.versions, self._formers = served_models(models, self.kept)
        self.state_dir = None if self.folder is None else self.folder.path
        self.save_interval = save_interval
        self.max_streams, self.idle_seconds = max_streams, idle_seconds
        self.max_stream_memory = max_stream_memory  # bytes the open streams may hold; 0: no limit
        self.stream_memory = 0  # bytes the open streams hold (footprint.stream_bytes), summed
        # expired streams whose state is in state_dir: their model's name
        self._parked: dict[str, str] = {}
        self._swapping: set[str] = set()  # models whose streams are being handed over
        self._janitor: threading.Thread | None = None
        self._streams: dict[str, Stream] = {}
        self._lock = threading.Lock()
        self._files = threading.Lock()  # held while a state file is written or removed
        self._dirty: set[str] = set()
        self._stop = threading.Event()
        self._saver: threading.Thread | None = None
        self._flushing = threading.Lock()  # one flush at a time: a later one writes later
        self._prints = {name: fingerprint(m) for name, m in self.models.items()}
        if self.folder is not None:
            for stream_id in self.folder.stream_ids():
                self._add(stream_id, self._read_back(stream_id))
            self._formers = {}
            self._drop_kept(list(self.models))
            self.keep_budget()  # past the budget, the least recently used wait in the folder
            if save_interval > 0:
                self._saver = threading.Thread(
                    target=self._save_loop, name="stream-saver", daemon=True
                )
                self._saver.start()
        if idle_seconds > 0 or (max_stream_memory > 0 and self.folder is not None):
            self._janitor = threading.Thread(
                target=self._expire_loop, name="stream-expiry", daemon=True
            )
            self._janitor.start()

    def __len__(self) -> int:
        return len(self._streams)

    @property
    def parked(self) -> int:
        """Expired streams whose state waits in the state folder."""
        return len(self._parked)

    def model(self, name: str) -> MADCluster:
        if name not in self.models:
            raise NotFound(
                f"unknown model {name!r}; this server has {', '.join(sorted(self.models))}"
            )
        return self.models[name]

    def get(self, stream_id: str) -> Stream:
        check_stream_id(stream_id)
        if stream_id in self._parked:
            with self._lock:
                self._unpark(stream_id)
        if stream_id not in self._streams:
            raise NotFound(
                f"unknown stream {stream_id!r}: POST rows to /streams/{stream_id} to open it"
            )
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
                raise Conflict(
                    f"stream {stream_id!r} scores with model {stream.model!r}, not {model_name!r}"
                )
            return stream.model
        name = model_name or self._default_model(stream_id)
        self.model(name)  # unknown: NotFound
        return name

    def update(
        self,
        stream_id: str,
        model_name: str | None,
        rows: list[list[float]],
        columns: list[str] | None,
    ) -> Update:
        """Score ``rows`` as the next rows of the stream, opened on first use; a refused request
        (bad rows, unknown model) opens nothing."""
        result = self._update(stream_id, model_name, rows, columns, wait=True)
        assert result is not None
        return result

    def try_update(
        self,
        stream_id: str,
        model_name: str | None,
        rows: list[list[float]],
        columns: list[str] | None,
    ) -> Update | None:
        """:meth:`update`, or None at once when the stream is busy (another update or a save holds
        it): the server's event loop must never wait on a lock."""
        return self._update(stream_id, model_name, rows, columns, wait=False)

    def _update(
        self,
        stream_id: str,
        model_name: str | None,
        rows: list[list[float]],
        columns: list[str] | None,
        wait: bool,
    ) -> Update | None:
        if (
            not wait
            and self.state_dir is not None
            and (
                self.save_interval <= 0
                or stream_id in self._parked
                or (stream_id not in self._streams and self._over_budget(NEW_STREAM_BYTES))
            )
        ):
            # a save per update, or reading an expired stream back, is file I/O: never on the
            # event loop
            return None
        name = self.model_of(stream_id, model_name)
        model = self.models[name]
        data = rows_array(model, rows, columns)
        far = tuple(far_columns(model.model_.inputs, model.scaling, data))
        with self._lock:
            stream = self._streams.get(stream_id)
            if stream is None:
                self._make_room(stream_id)  # may release the lock: opened meanwhile?
                stream = self._streams.get(stream_id)
            if stream is None:
                model = self.models[name]
                tail = RowTail(handover_rows(model), int(model.n_features_in_))
                stream = Stream(name, model.stream(), threading.Lock(), tail, self.versions[name])
                self._add(stream_id, stream)
            stream.last_used = time.monotonic()
        if not stream.lock.acquire(blocking=wait):
            return None
        try:  # one update at a time per stream: rows keep their order
            result = stream.scorer.update(data)
            stream.tail.append(data)
            if len(data) >= COMPACT_ROWS:  # its parts' rows: slices of this update's arrays
                compact(stream.scorer)
            stream.updates += 1
            if len(data) >= COMPACT_ROWS or stream.updates % MEASURE_EVERY == 1:
                self._measure(stream_id, stream)
            if self.state_dir is not None and self.save_interval <= 0:
                stream.scorer.save(self.folder.file(stream_id), stream_state(stream))
            elif self.state_dir is not None:
                with self._lock:
                    self._dirty.add(stream_id)
        finally:
            stream.lock.release()
        return Update(stream.model, stream.version, stream.shifted(result), far)

    def flush(self) -> int:
        """Save every stream changed since its last save (the saver thread's step; also at
        shutdown, after which the thread stops); returns how many were saved."""
        if self.state_dir is None:
            return 0
        with self._flushing:
            return self._flush()

    def _flush(self) -> int:
        with self._lock:
            dirty, self._dirty = self._dirty, set()
        saved, order = 0, sorted(dirty)
        for done, stream_id in enumerate(order):
            stream = self._streams.get(stream_id)
            if stream is None:  # closed since: its file is gone and stays gone
                continue
            with stream.lock:  # the state is copied under the lock; the file is written after it
                if self._streams.get(stream_id) is not stream:
                    continue
                state = stream_state(stream)
            with self._files:
                if self._streams.get(stream_id) is not stream:  # closed meanwhile: no file
                    continue
                try:
                    stream.scorer.save(self.folder.file(stream_id), state)
                except OSError:
                    with self._lock:  # this one and those not tried yet: saved on the next round
                        self._dirty.update(order[done:])
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
        ones first, then refuse; past ``max_stream_memory``, park the least recently used (with a
        state folder), then refuse."""
        self._budget_room(stream_id)
        if len(self._streams) + len(self._parked) < self.max_streams:
            return
        if self.idle_seconds > 0:
            self._lock.release()
            try:
                self.expire_idle()
            finally:
                self._lock.acquire()
        if len(self._streams) + len(self._parked) >= self.max_streams:
            kept = (
                f", {len(self._parked)} of them expired to the state folder" if self._parked else ""
            )
            raise TooManyStreams(
                f"cannot open stream {stream_id!r}: {len(self._streams) + len(self._parked)} "
                f"streams are open{kept}, the "
                f"limit is {self.max_streams} (--max-streams); close streams with DELETE "
                "/streams/ID"
                + (
                    " or wait for idle ones to expire (--stream-idle-seconds "
                    f"{self.idle_seconds:g})"
                    if self.idle_seconds > 0
                    else ""
                )
            )

    def _unpark(self, stream_id: str) -> None:
        """Under ``self._lock``: read an expired stream back from its state file."""
        if stream_id not in self._parked or stream_id in self._streams:
            return
        self._budget_room(stream_id)  # may release the lock: read back meanwhile?
        if stream_id not in self._parked or stream_id in self._streams:
            return
        self._add(stream_id, self._read_back(stream_id))
        self._parked.pop(stream_id, None)

    def _save_loop(self) -> None:
        while not self._stop.wait(self.save_interval):
            try:
                self.flush()
            except Exception:
                logger.exception("saving stream states to %s failed", self.state_dir)

    def close(self, stream_id: str) -> None:
        check_stream_id(stream_id)
        if stream_id not in self._parked:
            self.get(stream_id)
        with self._files, self._lock:
            self._remove(stream_id)
            self._parked.pop(stream_id, None)
            if self.state_dir is not None:
                self.folder.file(stream_id).unlink(missing_ok=True)

    def _default_model(self, stream_id: str) -> str:
        if stream_id in self.models:
            return stream_id
        if len(self.models) == 1:
            return next(iter(self.models))
        raise DataError(
            f'name the model of new stream {stream_id!r} ("model": one of '
            f"{', '.join(sorted(self.models))})"
        )


__all__ = ["StreamStore"]
