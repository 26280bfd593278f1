"""Ctrl-C during a fit keeps the training done so far; ``resume`` goes on from it.

After every completed epoch the training loop keeps, in memory, everything it needs to go on: the
weights, the optimizer's state, both random number generators, the best weights by validation loss
and the early-stopping counter, the history. When the fit is interrupted (``KeyboardInterrupt``)
that snapshot is written atomically to the checkpoint file (``model.mcz.partial`` next to the CLI's
output) and :class:`TrainingInterrupted` says where. A later fit with ``resume=True`` on the same
data and settings loads it and runs the remaining epochs.

Because the snapshot holds the generators' states, a resumed fit follows exactly the uninterrupted
fit's path on the same machine and thread count (the batches of the interrupted epoch are redone
from its start): same seeds, same scores (tested). ``epochs`` may differ between the two runs, so
``--resume --epochs K`` with K at most the epochs done writes the best model so far at once.
"""

from __future__ import annotations

import copy
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from madcluster.atomic import atomic_path
from madcluster.embedders.optim import Optimizer
from madcluster.exceptions import MADClusterError

PARTIAL_SUFFIX = ".partial"
FORMAT_VERSION = 1


class CheckpointError(MADClusterError):
    """A checkpoint is missing, unreadable, or was written for other data or settings."""


class TrainingInterrupted(KeyboardInterrupt):
    """Ctrl-C during a fit; ``path`` holds the state after ``epochs_done`` epochs (None: nothing
    saved)."""

    def __init__(self, path: Path | None, epochs_done: int, best_epoch: int | None) -> None:
        self.path, self.epochs_done, self.best_epoch = path, epochs_done, best_epoch
        super().__init__(self.describe())

    def describe(self) -> str:
        if self.path is None:
            return "interrupted before the first epoch finished: nothing saved"
        best = f", best validation loss at epoch {self.best_epoch}" if self.best_epoch else ""
        return (
            f"interrupted: the training state after epoch {self.epochs_done}{best} is saved in "
            f"{self.path}"
        )


@dataclass
class Checkpointing:
    """Where the loop saves on Ctrl-C, what identifies the fit, and whether to resume.

    ``fingerprint`` (settings and a digest of the data) must match on resume. ``extra`` is a list
    of arrays the caller fills during training (the center's path); saved and restored in place.
    """

    path: Path
    fingerprint: dict[str, Any]
    resume: bool = False
    extra: list[np.ndarray] = field(default_factory=list)


@dataclass
class TrainingSnapshot:
    """The loop's state after a completed epoch."""

    epoch: int
    net_state: dict[str, torch.Tensor]
    optimizer_states: list[dict[str, Any]]
    generator_state: torch.Tensor
    torch_rng_state: torch.Tensor
    best_loss: float
    best_state: dict[str, torch.Tensor] | None
    best_epoch: int | None
    bad_epochs: int
    history: dict[str, list[float]]
    extra: list[torch.Tensor] = field(default_factory=list)

    @classmethod
    def take(
        cls,
        *,
        epoch: int,
        net: torch.nn.Module,
        optimizers: list[Optimizer],
        generator: torch.Generator,
        best_loss: float,
        best_state: dict | None,
        best_epoch: int | None,
        bad_epochs: int,
        history: dict[str, list[float]],
        extra: list,
    ) -> TrainingSnapshot:
        return cls(
            epoch=epoch,
            net_state=copy.deepcopy(net.state_dict()),
            optimizer_states=[copy.deepcopy(o.state_dict()) for o in optimizers],
            generator_state=generator.get_state(),
            torch_rng_state=torch.get_rng_state(),
            best_loss=best_loss,
            best_state=best_state,
            best_epoch=best_epoch,
            bad_epochs=bad_epochs,
            history={k: list(v) for k, v in history.items()},
            extra=[torch.tensor(np.asarray(e)) for e in extra],
        )


def partial_path(output: str | os.PathLike) -> Path:
    """The checkpoint next to a model file: ``model.mcz`` -> ``model.mcz.partial``."""
    out = Path(output)
    return out.with_name(out.name + PARTIAL_SUFFIX)


def data_digest(array: np.ndarray) -> str:
    """A short digest of the training data, so a checkpoint is never resumed on other data."""
    data = np.ascontiguousarray(array)
    return hashlib.sha256(data.tobytes()).hexdigest()[:16] + f":{data.shape}"


def save_checkpoint(path: Path, snapshot: TrainingSnapshot, fingerprint: dict[str, Any]) -> None:
    """Write ``snapshot`` atomically (a crash mid-write leaves the previous file)."""
    payload = {"format": FORMAT_VERSION, "fingerprint": fingerprint, **snapshot.__dict__}
    with atomic_path(path) as tmp:
        torch.save(payload, tmp)


def load_checkpoint(path: Path, fingerprint: dict[str, Any]) -> TrainingSnapshot:
    """The snapshot in ``path``; ``CheckpointError`` naming the problem if it does not fit."""
    if not path.is_file():
        raise CheckpointError(
            f"nothing to resume: {str(path)!r} does not exist (it is written when a fit is "
            "interrupted)"
        )
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
        if payload.pop("format") != FORMAT_VERSION:
            raise KeyError("format")
        saved = payload.pop("fingerprint")
        snapshot = TrainingSnapshot(**payload)
    except Exception as exc:  # noqa: BLE001 - any unreadable file is the same problem to the user
        raise CheckpointError(
            f"{str(path)!r} is not a madcluster checkpoint of this version ({type(exc).__name__}): "
            "delete it and train again"
        ) from None
    differ = sorted(k for k in set(saved) | set(fingerprint) if saved.get(k) != fingerprint.get(k))
    if differ:
        raise CheckpointError(
            f"{str(path)!r} was written for other data or settings (differs in: "
            f"{', '.join(differ)}): resume with the same data and options, or delete it to start "
            "over"
        )
    return snapshot


def restore(
    snapshot: TrainingSnapshot,
    net: torch.nn.Module,
    optimizers: list[Optimizer],
    generator: torch.Generator,
    extra: list,
) -> None:
    """Put the loop's objects back in the snapshot's state."""
    net.load_state_dict(snapshot.net_state)
    if len(optimizers) != len(snapshot.optimizer_states):
        raise CheckpointError("the checkpoint's optimizers do not match this embedder's")
    for optimizer, state in zip(optimizers, snapshot.optimizer_states):
        optimizer.load_state_dict(state)
    generator.set_state(snapshot.generator_state)
    torch.set_rng_state(snapshot.torch_rng_state)
    extra[:] = [e.numpy() for e in snapshot.extra]
