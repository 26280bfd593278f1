"""A served model replaced, in the store: a swapped-in model kept for a restart, its streams (and
those saved under a former version) handed over, and the recent rows a refit is checked on.

:class:`ModelVersions` is a part of :class:`~madcluster.serve.registry.StreamStore`; the refits that
call it are :mod:`madcluster.serve.swap`'s, the kept models :mod:`madcluster.serve.kept`'s.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import numpy as np

from madcluster.estimator.detector import MADCluster
from madcluster.exceptions import DataError, ModelFileError
from madcluster.serve.kept import Former, KeptModel, KeptModels, fingerprint
from madcluster.serve.refit_checks import RECENT_ROWS, RECENT_STREAMS
from madcluster.serve.streams import RowTail, StateFolder, Stream, handover, handover_rows

logger = logging.getLogger("madcluster.serve.registry")


class ModelVersions:
    """Model versions in the store: swaps, handovers, the kept models."""

    models: dict[str, MADCluster]
    versions: dict[str, int]
    folder: StateFolder | None
    state_dir: Any
    kept: KeptModels | None
    _streams: dict[str, Stream]
    _parked: dict[str, str]
    _dirty: set[str]
    _swapping: set[str]
    _lock: threading.Lock
    _prints: dict[str, str]
    _file_prints: dict[str, str]
    _formers: dict[str, Former]

    def _read_back(self, stream_id: str) -> Stream:
        """A stream from its state file: a stream of the served model it was saved under, or, saved
        under a former version of a served model (a restart after a crash during a swap, or after
        the model file was replaced), handed over to the served one (a swap's replay)."""
        assert self.folder is not None
        saved_under = self.folder.fingerprint(stream_id)
        for name, served in self._prints.items():
            if served == saved_under:
                return self.folder.read(stream_id, name, self.models[name], self.versions[name])
        former = self._formers.get(saved_under)
        if former is None:
            kept = "" if self.kept is None else f" nor to a refit kept in {str(self.kept.path)!r}"
            raise ModelFileError(
                f"stream state {str(self.folder.file(stream_id))!r} belongs to none of the "
                f"loaded models{kept}; move it away or serve its model"
            )
        name, source = former
        if isinstance(source, KeptModel):
            source = source.load()
            self._formers[saved_under] = (name, source)
        old = self.folder.read(stream_id, name, source, 0)
        rows, detector = old.tail.rows(), self.models[name]
        scorer, offset = handover(detector, rows, old.steps_seen)
        tail = RowTail.of(rows, handover_rows(detector))
        logger.info(
            "stream %r: saved under a former version of model %r, handed over to version %d",
            stream_id,
            name,
            self.versions[name],
        )
        self._dirty.add(stream_id)
        return Stream(name, scorer, threading.Lock(), tail, self.versions[name], offset)

    def _drop_kept(self, names: list[str]) -> None:
        """Save the streams handed over, then delete the kept versions of ``names`` older than the
        served ones (kept, to be read back, when a save fails)."""
        if self.kept is None:
            return
        try:
            self.flush()
        except OSError as exc:
            logger.warning("kept the former model versions: saving the streams failed: %s", exc)
            return
        for name in names:
            self.kept.drop_older(name, self.versions[name])

    def swap_model(self, name: str, detector: MADCluster, saved: bool = False) -> tuple[int, int]:
        """Serve ``detector`` as model ``name`` from now on (a refit of it: the same columns) and
        hand each of its streams over (:func:`~madcluster.serve.streams.handover`); returns the
        new version and how many streams moved. A stream answers with the old version until its
        turn comes (one stream locked at a time: the others keep answering). With a state folder
        the model is kept there first (``saved``: its model file now holds it), so a restart
        serves it (:mod:`madcluster.serve.kept`)."""
        old = self.model(name)
        if int(detector.n_features_in_) != int(old.n_features_in_):
            raise DataError(
                f"model {name!r} takes {old.n_features_in_} columns; its replacement takes "
                f"{detector.n_features_in_}: serve a model of other columns under another name"
            )
        if saved:
            self._file_prints[name] = fingerprint(detector)
        if self.kept is not None:  # before any stream is saved under it
            self.kept.keep(name, self.versions[name] + 1, detector, self._file_prints[name])
        with self._lock:
            self._swapping.add(name)  # none of its streams expires during the handover
            for stream_id in sorted(self._parked):  # read back while the old model is served
                if self._parked[stream_id] == name:
                    self._unpark(stream_id)
            self.models[name] = detector
            self._prints[name] = fingerprint(detector)
            self.versions[name] += 1
            version = self.versions[name]
            streams = [(sid, s) for sid, s in self._streams.items() if s.model == name]
        try:
            moved = self._move_streams(streams, detector, version)
        finally:
            with self._lock:
                self._swapping.discard(name)
        self._drop_kept([name])
        return version, moved

    def _move_streams(
        self, streams: list[tuple[str, Stream]], detector: MADCluster, version: int
    ) -> int:
        """Hand ``streams`` over to ``detector`` (version ``version``); returns how many moved."""
        moved = 0
        for stream_id, stream in streams:
            with stream.lock:  # a snapshot; the replay (~0.1 s) runs without the lock
                rows, steps = stream.tail.rows(), stream.steps_seen
            scorer, offset = handover(detector, rows, steps)
            with stream.lock:  # then only the rows sent meanwhile, under it
                if self._streams.get(stream_id) is not stream:  # closed meanwhile
                    continue
                newer, kept = stream.steps_seen - steps, stream.tail.rows()
                if newer > len(kept):  # more than the tail holds came meanwhile: replay again
                    scorer, offset = handover(detector, kept, stream.steps_seen)
                elif newer:
                    scorer.update(kept[len(kept) - newer :])
                stream.scorer, stream.offset, stream.version = scorer, offset, version
                stream.tail = RowTail.of(kept, handover_rows(detector))
                self._measure(stream_id, stream)
            if self.state_dir is not None:
                with self._lock:
                    self._dirty.add(stream_id)
            moved += 1
        return moved

    def recent_rows(
        self, name: str, streams: int = RECENT_STREAMS, rows: int = RECENT_ROWS
    ) -> list[np.ndarray]:
        """The kept rows of model ``name``'s most recently updated open streams (at most
        ``streams`` of them and ``rows`` rows, each at least a window), which a refitted model is
        checked on (:mod:`madcluster.serve.refit_checks`)."""
        window = int(self.model(name).window_size)
        with self._lock:
            recent = sorted(
                (s for s in self._streams.values() if s.model == name),
                key=lambda s: s.last_used,
                reverse=True,
            )
        out: list[np.ndarray] = []
        left = rows
        for stream in recent:
            if len(out) >= streams or left < window:
                break
            with stream.lock:
                tail = stream.tail.rows()[-left:]
            if len(tail) >= window:
                out.append(tail)
                left -= len(tail)
        return out


__all__ = ["ModelVersions"]
