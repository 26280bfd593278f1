"""The training loop: initial pass, epochs over shuffled windows, head updates, early stopping.

Kept apart from the modules (anomalib style): ``MADClusterNet`` is the plain torch module
(:mod:`madcluster.training.network`), ``train_network`` is the procedure, and its samples come
from a :class:`~madcluster.training.samples.Sampler`. The loop talks only to the embedder contract
(``init_from_data``, ``configure_optimizers``, ``training_step``, ``on_epoch_end``) and the head
contract (``start``, ``begin_epoch``, ``loss``, ``end_epoch``), so a new base model or head never
edits it. Per-epoch values go to a history dict: the losses, the seconds, and whatever the head
reports (for the single-cluster head: nu, R and the collapse diagnostics).
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import torch

from madcluster.embedders.base import EmbedderOutput
from madcluster.embedders.optim import Optimizer
from madcluster.exceptions import ParameterError
from madcluster.method.head import LossParts
from madcluster.training.checkpoint import (
    Checkpointing,
    TrainingInterrupted,
    TrainingSnapshot,
    load_checkpoint,
    restore,
    save_checkpoint,
)
from madcluster.training.network import MADClusterNet, precision_context
from madcluster.training.progress import TrainingProgress

# TrainSettings is read from here too (its home: madcluster.training.settings)
from madcluster.training.settings import EARLY_STOPPING, TrainSettings

logger = logging.getLogger(__name__)
LOSS_KEYS = ("train_loss", "distance_loss", "cluster_loss", "base_loss")


@dataclass
class _EpochMeter:
    """Accumulates the loss parts that the objective sees during one epoch."""

    sums: dict[str, float] = field(default_factory=lambda: dict.fromkeys(LOSS_KEYS, 0.0))
    batches: int = 0

    def add(self, parts: LossParts) -> None:
        self.sums["train_loss"] += float(parts.total.detach())
        self.sums["distance_loss"] += float(parts.distance)
        self.sums["cluster_loss"] += float(parts.cluster)
        self.sums["base_loss"] += float(parts.base)
        self.batches += 1

    def means(self) -> dict[str, float]:
        return {k: v / max(self.batches, 1) for k, v in self.sums.items()}


def _tiles(series: torch.Tensor, settings: TrainSettings) -> Iterator[torch.Tensor]:
    """Batches of non-overlapping samples covering ``series`` (windows: the last one
    end-aligned)."""
    sampler = settings.samples()
    starts = sampler.starts(len(series), tiles=True)
    size = settings.eval_batch_size or settings.batch_size
    for i in range(0, len(starts), size):
        yield sampler.gather(series, starts[i : i + size])


def feature_source(
    net: MADClusterNet, series: torch.Tensor, settings: TrainSettings, *more: torch.Tensor
):
    """A callable yielding eval-mode features h over ``series`` (then each of ``more``, tiled
    apart so that no window spans two series): what heads initialise from."""

    def features() -> Iterator[torch.Tensor]:
        net.eval()
        with torch.no_grad():
            for part in (series, *more):
                for x in _tiles(part, settings):
                    yield net(x).h

    return features


def validation_rows(length: int, validation_size: float, window_size: int) -> int:
    """Rows at the end of a training series of ``length`` held out for early stopping: 0 when
    either part would be shorter than one window (with a warning)."""
    n_val = int(length * validation_size)
    if n_val and (n_val < window_size or length - n_val < window_size):
        logger.warning(
            "series too short for a %s validation split of windows of %d; early stopping disabled",
            validation_size,
            window_size,
        )
        return 0
    return n_val


@torch.no_grad()
def validation_loss(net: MADClusterNet, series: torch.Tensor, settings: TrainSettings) -> float:
    """Mean validation criterion: the total objective (``loss``), the base model's own loss
    (``base-loss``; the total when the embedder has none), or how far validation steps fall outside
    the training sphere relative to its size (``relative-distance``; the total for heads without a
    sphere)."""
    net.eval()
    losses, weights = [], []
    for x in _tiles(series, settings):
        out = net(x)
        parts = net.loss(out)
        value = parts.total
        if settings.early_stopping == "base-loss" and out.loss is not None:
            value = parts.base
        elif settings.early_stopping == "relative-distance":
            relative = net.head.outside_fraction(out.h)
            value = relative if relative is not None else parts.total
        losses.append(float(value))
        weights.append(len(x))
    return float(np.average(losses, weights=weights))


def train_network(
    net: MADClusterNet,
    train: torch.Tensor,
    val: torch.Tensor | None,
    settings: TrainSettings,
    generator: torch.Generator,
    observe_epoch: Callable[[int, MADClusterNet], None] | None = None,
    radius_extra: torch.Tensor | None = None,
    checkpointing: Checkpointing | None = None,
) -> dict[str, list[float]]:
    """Train ``net`` on windows of ``train [T, D]`` (or the samples ``settings.sampler`` draws, e.g.
    whole images); early-stop on ``val`` (end of the training series).

    The embedder first sees the training windows (``init_from_data``) and, for ``pretrain_epochs``,
    trains on its own loss alone (DeepSVDD's pretraining: the center is then taken from informative
    features); then the head initialises from an eval pass. After each epoch the head updates (R)
    from the training series and reports its diagnostics. The best state by validation loss is
    restored at the end.

    Each epoch trains on ``epoch_windows`` windows drawn without replacement from all of them
    (every window when None or when there are fewer): the cost of an epoch stops growing with the
    series, and overlapping stride-1 windows are mostly repeats of each other anyway.

    ``radius_extra``, if given, joins the training series in the head's per-epoch update (R pooled
    over both): the released code's leak when it is the test set; off by default.

    ``observe_epoch(epoch, net)``, if given, sees the net once the head has started (epoch =
    ``pretrain_epochs``) and after every later epoch: read-only observers such as the center's path.

    ``checkpointing``: on Ctrl-C the state after the last completed epoch is saved there and
    :class:`~madcluster.training.checkpoint.TrainingInterrupted` raised; with ``resume`` the loop
    first loads it and goes on after its epoch (:mod:`madcluster.training.checkpoint`).
    """
    if settings.early_stopping not in EARLY_STOPPING:
        raise ParameterError(
            f"unknown early_stopping {settings.early_stopping!r}; choose one of "
            f"{', '.join(EARLY_STOPPING)}"
        )
    keys = ("epoch", *LOSS_KEYS, "val_loss", *net.head.history_keys, "seconds")
    history: dict[str, list[float]] = {k: [] for k in keys}
    net.embedder.init_from_data(lambda: _tiles(train, settings))
    features = feature_source(net, train, settings)
    epoch_features = (
        features if radius_extra is None else feature_source(net, train, settings, radius_extra)
    )
    if settings.pretrain_epochs == 0:
        net.head.start(features)
        if observe_epoch is not None:
            observe_epoch(0, net)
    optimizers = net.embedder.configure_optimizers(
        net.head.parameters(), lr=settings.lr, weight_decay=settings.weight_decay
    )
    starts = torch.as_tensor(settings.samples().starts(len(train)))
    per_epoch = (
        len(starts) if settings.epoch_windows is None else min(len(starts), settings.epoch_windows)
    )
    n_batches = (per_epoch + settings.batch_size - 1) // settings.batch_size

    best_loss, best_state, best_epoch, bad_epochs, first_epoch = float("inf"), None, None, 0, 1
    extra = checkpointing.extra if checkpointing is not None else []
    if checkpointing is not None and checkpointing.resume:
        saved = load_checkpoint(checkpointing.path, checkpointing.fingerprint)
        restore(saved, net, optimizers, generator, extra)
        history = {k: list(saved.history[k]) for k in keys}
        best_loss, best_state, best_epoch, bad_epochs = (
            saved.best_loss,
            saved.best_state,
            saved.best_epoch,
            saved.bad_epochs,
        )
        first_epoch = saved.epoch + 1
        if val is not None and bad_epochs >= settings.patience:
            first_epoch = settings.epochs + 1  # early stopping had already ended that fit
    snapshot: TrainingSnapshot | None = None
    progress = TrainingProgress(
        enabled=settings.progress,
        epochs=settings.epochs,
        batches_per_epoch=n_batches,
        first_epoch=first_epoch,
        description=settings.description,
    )
    try:
        for epoch in range(first_epoch, settings.epochs + 1):
            t0 = time.perf_counter()
            pretraining = epoch <= settings.pretrain_epochs
            if epoch == settings.pretrain_epochs + 1 and epoch > 1:
                net.head.start(features)  # the center and R from the pretrained features
                if observe_epoch is not None:
                    observe_epoch(epoch - 1, net)
            order = starts[torch.randperm(len(starts), generator=generator)][:per_epoch]
            meter = _train_epoch(net, train, settings, order, epoch, optimizers, progress)
            head_record = {} if pretraining else net.head.end_epoch(epoch_features)
            head_record = {k: head_record.get(k, float("nan")) for k in net.head.history_keys}
            if observe_epoch is not None and not pretraining:
                observe_epoch(epoch, net)
            val_loss = (
                validation_loss(net, val, settings)
                if val is not None and not pretraining
                else float("nan")
            )
            record = {
                "epoch": epoch,
                **meter.means(),
                "val_loss": val_loss,
                **head_record,
                "seconds": time.perf_counter() - t0,
            }
            for k in keys:
                history[k].append(float(record[k]))
            progress.end_epoch(epoch, _shown(record))
            stop = False
            if val is not None and not pretraining:
                if val_loss < best_loss - 1e-6:
                    best_loss, best_state, best_epoch, bad_epochs = (
                        val_loss,
                        copy.deepcopy(net.state_dict()),
                        epoch,
                        0,
                    )
                else:
                    bad_epochs += 1
                    stop = bad_epochs >= settings.patience
            if checkpointing is not None:
                snapshot = TrainingSnapshot.take(
                    epoch=epoch,
                    net=net,
                    optimizers=optimizers,
                    generator=generator,
                    best_loss=best_loss,
                    best_state=best_state,
                    best_epoch=best_epoch,
                    bad_epochs=bad_epochs,
                    history=history,
                    extra=extra,
                )
            if stop:
                break
    except KeyboardInterrupt:
        progress.close()
        if checkpointing is None:
            raise
        if snapshot is not None:
            save_checkpoint(checkpointing.path, snapshot, checkpointing.fingerprint)
            raise TrainingInterrupted(
                checkpointing.path, snapshot.epoch, snapshot.best_epoch
            ) from None
        # nothing new since the start: after a resume the file on disk is still the state
        raise TrainingInterrupted(
            checkpointing.path if first_epoch > 1 else None, first_epoch - 1, best_epoch
        ) from None
    progress.close()
    # kept until the fitted model is written: a Ctrl-C
    if checkpointing is not None and snapshot is not None:
        # while it is finished loses nothing
        save_checkpoint(checkpointing.path, snapshot, checkpointing.fingerprint)
    if best_state is not None:
        net.load_state_dict(best_state)
    net.eval()
    return history


def _shown(record: dict[str, float]) -> dict[str, float]:
    """The values an epoch line shows: losses and, where the head has them, nu and R."""
    names = {"train_loss": "loss", "val_loss": "val", "nu": "nu", "radius": "R"}
    return {
        label: record[key]
        for key, label in names.items()
        if key in record and np.isfinite(record[key])
    }


def _train_epoch(
    net: MADClusterNet,
    train: torch.Tensor,
    settings: TrainSettings,
    order: torch.Tensor,
    epoch: int,
    optimizers: list[Optimizer],
    progress: TrainingProgress,
) -> _EpochMeter:
    """One epoch of optimisation steps on the windows starting at ``order``; its loss parts."""
    pretraining = epoch <= settings.pretrain_epochs
    net.head.begin_epoch(epoch)
    net.train()
    meter = _EpochMeter()
    sampler = settings.samples()
    progress.begin_epoch(epoch)

    def objective(out: EmbedderOutput) -> torch.Tensor:
        if net.precision is not None:
            with precision_context(train.device, None):  # the head in float32
                return _objective(out.float())
        return _objective(out)

    def _objective(out: EmbedderOutput) -> torch.Tensor:
        if pretraining:
            if out.loss is None:
                raise ParameterError("pretrain_epochs > 0 needs an embedder with its own loss")
            zero = out.loss.new_zeros(())
            parts = LossParts(total=out.loss, distance=zero, cluster=zero, base=out.loss.detach())
        else:
            parts = net.loss(out)
        meter.add(parts)
        return parts.total

    for b in range(0, len(order), settings.batch_size):
        x = sampler.gather(train, order[b : b + settings.batch_size])
        with precision_context(train.device, net.precision):
            net.embedder.training_step(x, objective, optimizers, epoch=epoch)
        progress.batch_done(b // settings.batch_size)
    net.embedder.on_epoch_end(epoch)
    return meter
