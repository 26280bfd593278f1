"""Refitted models kept in the state folder, so a restart comes back after a refit not saved.

A stream's state file names its model by fingerprint. After a refit swapped in without ``save``
the streams are saved under the refitted model, which the model file does not hold: a restart
that loads only the file would find their state belongs to no model. So with ``--state-dir``
each swapped-in model is written (atomically, before any stream is saved under it) to
``STATE/models/NAME.vVERSION.mcz`` beside a small ``.json`` naming its version, its fingerprint and
the fingerprint of the model file it descends from (:class:`KeptModels`). At start
(:func:`served_models`) a model's latest kept version is served when it descends from the file
being served (an unsaved refit: each stream resumes on the version it was last answered by); when
the file was replaced since, the file's model is served as the next version (and kept under that
number, so a later restart serves it as the same version) and the streams of the kept one are
handed over to it. Older versions are deleted once no stream is saved under them.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

from madcluster.atomic import atomic_write_text
from madcluster.estimator.detector import MADCluster
from madcluster.estimator.stream_state import model_fingerprint

logger = logging.getLogger(__name__)
KEPT_FOLDER = "models"  # never a stream's file: those end in .mcs


@dataclass(frozen=True)
class KeptModel:
    """One kept model: its name, version, fingerprint and the model file it descends from."""

    name: str
    version: int
    fingerprint: str
    based_on: str  # the fingerprint of the model file served when it was swapped in
    path: Path  # its .mcz file

    def load(self) -> MADCluster:
        return MADCluster.load(self.path)


def fingerprint(detector: MADCluster) -> str:
    """The fingerprint stream state files name their model by."""
    return model_fingerprint(detector.model_)


class KeptModels:
    """The ``models`` folder of a state folder: the served models that no model file holds."""

    def __init__(self, state_dir: Path) -> None:
        self.path = Path(state_dir) / KEPT_FOLDER

    def keep(self, name: str, version: int, detector: MADCluster, based_on: str) -> KeptModel:
        """Write ``detector`` as version ``version`` of model ``name``: its model file first, then
        the record naming it, each atomically (a record never names a missing file)."""
        self.path.mkdir(parents=True, exist_ok=True)
        stem = self.path / f"{name}.v{version}"
        entry = KeptModel(
            name, version, fingerprint(detector), based_on, stem.with_name(stem.name + ".mcz")
        )
        detector.save(entry.path)
        record = {
            "model": name,
            "version": version,
            "fingerprint": entry.fingerprint,
            "based_on": based_on,
        }
        atomic_write_text(stem.with_name(stem.name + ".json"), json.dumps(record, indent=2))
        return entry

    def entries(self, name: str | None = None) -> list[KeptModel]:
        """The kept models (of model ``name``), oldest version first; an unreadable record is
        logged and skipped."""
        found = []
        for record in sorted(self.path.glob("*.json")) if self.path.is_dir() else ():
            try:
                data = json.loads(record.read_text(encoding="utf-8"))
                entry = KeptModel(
                    str(data["model"]),
                    int(data["version"]),
                    str(data["fingerprint"]),
                    str(data["based_on"]),
                    record.with_suffix(".mcz"),
                )
            except (OSError, ValueError, KeyError, TypeError) as exc:
                logger.warning("skipping kept model record %s: %s", record, exc)
                continue
            if not entry.path.is_file():
                logger.warning("skipping kept model record %s: %s is missing", record, entry.path)
                continue
            if name is None or entry.name == name:
                found.append(entry)
        return sorted(found, key=lambda e: (e.name, e.version))

    def drop_older(self, name: str, version: int) -> int:
        """Delete the kept versions of ``name`` before ``version`` (no stream is saved under them
        any more); returns how many. The record goes first: a file without one is ignored."""
        dropped = 0
        for entry in self.entries(name):
            if entry.version < version:
                entry.path.with_suffix(".json").unlink(missing_ok=True)
                entry.path.unlink(missing_ok=True)
                dropped += 1
        return dropped


def _keep_number(
    kept: KeptModels, name: str, version: int, detector: MADCluster, base: str
) -> None:
    """Keep a replaced file's model as the version it is served as, so that a later restart
    serves it under that number (the kept refit it replaces is deleted once its streams moved:
    without this record the file would be version 1 again, a stream's version going back). A
    failed write is logged, not raised: a restart must come back."""
    try:
        kept.keep(name, version, detector, base)
    except OSError as exc:
        logger.warning(
            "model %r: could not keep version %d in %s (%s); a later restart may number it 1",
            name,
            version,
            kept.path,
            exc,
        )


#: a model a stream may still be saved under: its name and the kept version or the file's model
Former = tuple[str, KeptModel | MADCluster]


def served_models(
    models: dict[str, MADCluster], kept: KeptModels
) -> tuple[dict[str, MADCluster], dict[str, int], dict[str, Former]]:
    """What a restarting server serves: ``(models, versions, others)``. For each model its latest
    kept version when that descends from the model file given (an unsaved refit), else the file's
    model (a later version than any kept one when the file was replaced since); ``others``: the
    models a stream may still be saved under, by fingerprint (kept versions not served, and the
    file's model when a refit of it is served), for the streams to be handed over."""
    served, versions = dict(models), {name: 1 for name in models}
    others: dict[str, Former] = {}
    for name, detector in models.items():
        entries = kept.entries(name)
        if not entries:
            continue
        latest, base = entries[-1], fingerprint(detector)
        for entry in entries[:-1]:
            others[entry.fingerprint] = (name, entry)
        if latest.fingerprint == base:  # a refit saved over the file: the same model
            versions[name] = latest.version
        elif latest.based_on == base:
            served[name] = latest.load()
            versions[name] = latest.version
            others[base] = (name, detector)
            logger.info(
                "model %r: serving its refit kept in %s (version %d), which its file does not hold",
                name,
                latest.path,
                latest.version,
            )
        else:
            versions[name] = latest.version + 1
            others[latest.fingerprint] = (name, latest)
            logger.warning(
                "model %r: its file changed since version %d was refitted; serving the file as "
                "version %d, the streams of version %d are handed over to it",
                name,
                latest.version,
                versions[name],
                latest.version,
            )
            _keep_number(kept, name, versions[name], detector, base)
    return served, versions, others


__all__ = ["KEPT_FOLDER", "Former", "KeptModel", "KeptModels", "fingerprint", "served_models"]
