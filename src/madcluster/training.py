"""The training loop: initial pass, epochs over shuffled windows, radius update, early stopping.

Kept apart from the modules (anomalib style): ``MADClusterNet`` is the plain torch module,
``train_network`` is the procedure. Per-epoch values go to a history dict (the curves of the
paper's training figure: threshold nu, radius R, distance and losses).
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn
from tqdm.auto import tqdm

from madcluster.data.windows import gather_windows, window_starts
from madcluster.embedders.base import BaseEmbedder, EmbedderOutput
from madcluster.method.head import LossParts, MADClusterHead

HISTORY_KEYS = (
    "epoch", "nu", "radius", "mean_distance", "distance_loss", "cluster_loss", "train_loss",
    "val_loss", "seconds",
)


class MADClusterNet(nn.Module):
    """A Base Embedder with the MADCluster head on top."""

    def __init__(self, embedder: BaseEmbedder, head: MADClusterHead) -> None:
        super().__init__()
        self.embedder = embedder
        self.head = head

    def forward(self, x: torch.Tensor) -> EmbedderOutput:
        return self.embedder(x)

    def loss(self, out: EmbedderOutput) -> LossParts:
        return self.head.loss(out.h, out.loss)

    @torch.no_grad()
    def score(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Per-step MADCluster score ``[B, L]`` and the base model's own score (or None)."""
        out = self.embedder(x)
        return self.head.score(out.h), out.score


@dataclass
class TrainSettings:
    window_size: int = 100
    stride: int = 1
    epochs: int = 10
    batch_size: int = 128
    lr: float = 1e-3
    weight_decay: float = 1e-5
    patience: int = 3
    progress: bool = False
    description: str = "MADCluster"


@dataclass
class _EpochMeter:
    """Accumulates the loss parts that the objective sees during one epoch."""

    sums: dict[str, float] = field(default_factory=lambda: {"train_loss": 0.0, "distance_loss": 0.0, "cluster_loss": 0.0})
    batches: int = 0

    def add(self, parts: LossParts) -> None:
        self.sums["train_loss"] += float(parts.total.detach())
        self.sums["distance_loss"] += float(parts.distance.detach())
        self.sums["cluster_loss"] += float(parts.cluster.detach())
        self.batches += 1

    def means(self) -> dict[str, float]:
        return {k: v / max(self.batches, 1) for k, v in self.sums.items()}


@torch.no_grad()
def _tile_pass(net: MADClusterNet, series: torch.Tensor, settings: TrainSettings) -> tuple[torch.Tensor, np.ndarray, float]:
    """Eval-mode pass over non-overlapping windows covering ``series``.

    Returns the mean feature, the squared distances to the current center, and the mean loss.
    """
    net.eval()
    starts = window_starts(len(series), settings.window_size, settings.window_size)
    h_sum = None
    n_steps = 0
    distances, losses, weights = [], [], []
    for i in range(0, len(starts), settings.batch_size):
        x = gather_windows(series, starts[i : i + settings.batch_size], settings.window_size)
        out = net(x)
        h = out.h
        h_sum = h.sum(dim=(0, 1)) if h_sum is None else h_sum + h.sum(dim=(0, 1))
        n_steps += h.shape[0] * h.shape[1]
        distances.append(net.head.distances(h).flatten().cpu().numpy())
        losses.append(float(net.loss(out).total))
        weights.append(len(x))
    return h_sum / n_steps, np.concatenate(distances), float(np.average(losses, weights=weights))


def initialise_head(net: MADClusterNet, train: torch.Tensor, settings: TrainSettings) -> None:
    """Center = mean of h over an initial pass (if configured), then R from the distances to it."""
    mean_h, _, _ = _tile_pass(net, train, settings)
    net.head.init_center(mean_h)
    _, distances, _ = _tile_pass(net, train, settings)
    net.head.set_radius_from_distances(distances)


def train_network(
    net: MADClusterNet,
    train: torch.Tensor,
    val: torch.Tensor | None,
    settings: TrainSettings,
    generator: torch.Generator,
) -> dict[str, list[float]]:
    """Train ``net`` on windows of ``train [T, D]``; early-stop on ``val`` (end of the training series).

    After each epoch R is recomputed as the (1 - rho) quantile of sqrt(d) over the training series
    (eval mode). The best state by validation loss is restored at the end.
    """
    history: dict[str, list[float]] = {k: [] for k in HISTORY_KEYS}
    initialise_head(net, train, settings)
    optimizers = net.embedder.configure_optimizers(net.head.parameters(), lr=settings.lr, weight_decay=settings.weight_decay)
    starts = torch.as_tensor(window_starts(len(train), settings.window_size, settings.stride))
    n_batches = (len(starts) + settings.batch_size - 1) // settings.batch_size

    best_loss, best_state, bad_epochs = float("inf"), None, 0
    epochs = tqdm(range(1, settings.epochs + 1), desc=settings.description, unit="epoch", disable=not settings.progress)
    for epoch in epochs:
        t0 = time.perf_counter()
        net.train()
        meter = _EpochMeter()

        def objective(out: EmbedderOutput) -> torch.Tensor:
            parts = net.loss(out)
            meter.add(parts)
            return parts.total

        order = starts[torch.randperm(len(starts), generator=generator)]
        batches = tqdm(range(n_batches), desc=f"epoch {epoch}", unit="batch", leave=False, disable=not settings.progress)
        for b in batches:
            x = gather_windows(train, order[b * settings.batch_size : (b + 1) * settings.batch_size], settings.window_size)
            net.embedder.training_step(x, objective, optimizers)

        _, distances, _ = _tile_pass(net, train, settings)
        net.head.set_radius_from_distances(distances)
        val_loss = _tile_pass(net, val, settings)[2] if val is not None else float("nan")
        record = {
            "epoch": epoch,
            "nu": float(net.head.nu.detach()),
            "radius": float(net.head.radius),
            "mean_distance": float(distances.mean()),
            **meter.means(),
            "val_loss": val_loss,
            "seconds": time.perf_counter() - t0,
        }
        for k in HISTORY_KEYS:
            history[k].append(record[k])
        epochs.set_postfix(loss=f"{record['train_loss']:.4f}", val=f"{val_loss:.4f}", nu=f"{record['nu']:.3f}")

        if val is not None:
            if val_loss < best_loss - 1e-6:
                best_loss, best_state, bad_epochs = val_loss, copy.deepcopy(net.state_dict()), 0
            else:
                bad_epochs += 1
                if bad_epochs >= settings.patience:
                    break
    if best_state is not None:
        net.load_state_dict(best_state)
    net.eval()
    return history
