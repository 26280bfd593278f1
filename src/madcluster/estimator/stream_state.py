"""A stream's state file (:meth:`StreamScorer.save
<madcluster.estimator.streaming.StreamScorer.save>`): its format, reading it back, and the
fingerprint naming the model it belongs to (a stream restored onto another model is refused).

Two prints name the model: ``model`` (the weights, scaler, threshold and the parts' arrays; what a
server matches state files to its models by) and ``scoring`` (how the parts' readings become the
score: their statistics, weights, smoothing, rule, series scales and evidence). Files written
before ``scoring`` was recorded are matched on ``model`` alone.

A state file is a zip of JSON and ``.npz`` (never a pickle), written atomically
(:mod:`madcluster.estimator.archive`).
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

import numpy as np

from madcluster.estimator.archive import ArchiveKind, read_archive
from madcluster.estimator.fitted import FittedModel
from madcluster.exceptions import StreamError
from madcluster.score.schema import combination_arrays, combination_record

STATE_FORMAT = "madcluster-stream"
STATE_VERSION = 1
STATE_FILE = ArchiveKind(
    STATE_FORMAT, STATE_VERSION, "stream.json", "buffer.npz", StreamError, "stream state file"
)


def read_state(
    path: str | os.PathLike,
) -> tuple[dict[str, Any], np.ndarray, np.ndarray | None, dict[str, np.ndarray]]:
    """A state file's meta (its step counts as ints), buffer, last row (None: none recorded) and
    arrays; a ``StreamError`` naming the file where it is not one."""
    meta, arrays = read_archive(path, STATE_FILE)
    try:
        meta["steps_seen"], meta["buffer_start"] = (
            int(meta["steps_seen"]),
            int(meta["buffer_start"]),
        )
        buffer = arrays["buffer"]
    except (KeyError, TypeError, ValueError) as exc:
        raise StreamError(
            f"{os.fspath(path)!r} is not a readable stream state file: {exc}"
        ) from None
    # last_row: written once a row was seen (state files from before it was recorded lack it too,
    # and mean the same: constant columns step from their training value)
    return meta, buffer, arrays.get("last_row"), arrays


def state_model_fingerprint(path: str | os.PathLike) -> str:
    """The :func:`model_fingerprint` of the model a saved stream belongs to."""
    return str(read_state(path)[0].get("model"))


def model_fingerprint(fitted: FittedModel) -> str:
    """SHA-256 of a fitted model's weights, scaler, threshold and parts: a stream names its
    model."""
    digest = hashlib.sha256()
    for name, tensor in sorted(fitted.net.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().numpy().tobytes())
    for array in (
        fitted.inputs.scaler_mean,
        fitted.inputs.scaler_scale,
        np.asarray([fitted.threshold]),
    ):
        digest.update(np.ascontiguousarray(array, dtype=np.float64).tobytes())
    # none: as before terms streamed
    for name, array in sorted(combination_arrays(fitted.combination).items()):
        digest.update(name.encode())
        digest.update(np.ascontiguousarray(array).tobytes())
    if fitted.combination.scale_rows:  # none: as before series scales
        digest.update(f"scale_rows={fitted.combination.scale_rows}".encode())
    return digest.hexdigest()


def scoring_fingerprint(fitted: FittedModel) -> str:
    """SHA-256 of the combination's record: a stream's held terms were standardised and weighed
    by it, so a model that combines them otherwise is another model."""
    record = json.dumps(combination_record(fitted.combination), sort_keys=True, default=str)
    return hashlib.sha256(record.encode()).hexdigest()


def model_prints(fitted: FittedModel) -> dict[str, str]:
    """The prints a state file names its model by (module docstring)."""
    return {"model": model_fingerprint(fitted), "scoring": scoring_fingerprint(fitted)}


def check_belongs(meta: dict[str, Any], fitted: FittedModel, path: str | os.PathLike) -> None:
    """A ``StreamError`` unless the state ``meta`` read from ``path`` names ``fitted``."""
    prints = model_prints(fitted)
    scoring = meta.get("scoring", prints["scoring"])  # files from before it: on ``model`` alone
    if meta.get("model") != prints["model"] or scoring != prints["scoring"]:
        raise StreamError(
            f"{os.fspath(path)!r} holds the stream of another model; open a new stream"
        )


__all__ = [
    "STATE_FILE",
    "check_belongs",
    "model_fingerprint",
    "model_prints",
    "read_state",
    "scoring_fingerprint",
    "state_model_fingerprint",
]
