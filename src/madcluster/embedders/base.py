"""The Base Embedder contract.

A Base Embedder maps windows ``x [B, L, D]`` to per-step features ``h [B, L, f]``. When it is an
anomaly detector in its own right (DeepSVDD, USAD, BeatGAN, ...) it also returns its own training
loss and per-step score, and MADCluster adds its loss and score to them.

Training goes through hooks, so no model ever edits the training loop:

- :meth:`BaseEmbedder.init_from_data`: one look at the training windows before training (DeepSVDD's
  fixed center, THOC's k-means centers);
- :meth:`BaseEmbedder.configure_optimizers` and :meth:`BaseEmbedder.training_step` (which gets the
  epoch number): models that train with alternating optimiser steps (USAD's two phases and 1/n
  weights, BeatGAN's discriminator, Anomaly Transformer's minimax) override these two;
- :meth:`BaseEmbedder.on_epoch_end`: learning-rate schedules, temperature annealing.

Class attributes describe the model to the estimator, so it never special-cases a name: ``causal``
says whether h_t depends only on steps <= t (scoring then keeps, for each point, the window
position with the most history); ``window_dependent`` whether the constructor takes
``window_size`` (the estimator passes its own); ``default_roughness_window`` the roughness channels
the estimator adds by default; ``paper_params`` the settings ``MADCluster.from_preset("paper")``
pins; ``size_options`` maps constructor arguments to the command line's size flags. A plain
``nn.Module`` returning ``h`` is adapted by
:class:`ModuleEmbedder`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

import torch
from torch import nn

from madcluster.defaults import DEFAULT_BATCH_SIZE, DEFAULT_EPOCH_WINDOWS
from madcluster.embedders.optim import Adam, Optimizer


@dataclass
class EmbedderOutput:
    """What a Base Embedder returns for a batch of windows.

    h: features ``[B, L, f]``, one vector per time step.
    loss: the base model's own scalar training loss, or None.
    score: the base model's own per-step anomaly score ``[B, L]``, or None.
    """

    h: torch.Tensor
    loss: torch.Tensor | None = None
    score: torch.Tensor | None = None

    def float(self) -> EmbedderOutput:
        """The same output in float32 (after mixed precision: the head's cosines near 1 and the
        scores need more than bfloat16's 8 bits)."""
        return EmbedderOutput(
            h=self.h.float(),
            loss=None if self.loss is None else self.loss.float(),
            score=None if self.score is None else self.score.float(),
        )


# The objective a training step minimises: MADCluster's loss of an EmbedderOutput.
Objective = Callable[[EmbedderOutput], "torch.Tensor"]
#: What ``configure_optimizers`` returns and ``training_step`` receives.
Optimizers = list[Optimizer]


class BaseEmbedder(nn.Module):
    """Base class of every Base Embedder. Subclasses set ``out_features`` and implement
    ``forward``."""

    out_features: int
    causal: ClassVar[bool] = False
    window_dependent: ClassVar[bool] = False
    default_roughness_window: ClassVar[int] = 0
    # (windows per batch, windows per epoch) of the estimator's batch_size / epoch_windows "auto"
    training_batch: ClassVar[tuple[int, int]] = (DEFAULT_BATCH_SIZE, DEFAULT_EPOCH_WINDOWS)
    paper_params: ClassVar[dict[str, Any]] = {}
    size_options: ClassVar[dict[str, str]] = {}

    def forward(self, x: torch.Tensor) -> EmbedderOutput:  # pragma: no cover - abstract
        raise NotImplementedError

    def configure_optimizers(
        self, head_params: Iterable[nn.Parameter], *, lr: float, weight_decay: float
    ) -> Optimizers:
        """One Adam over embedder and head; weight decay (lambda * Omega(W)) on the embedder
        only."""
        groups = [
            {
                "params": [p for p in self.parameters() if p.requires_grad],
                "weight_decay": weight_decay,
            },
            {"params": [p for p in head_params if p.requires_grad], "weight_decay": 0.0},
        ]
        return [Adam(groups, lr=lr)]

    def init_from_data(self, windows: Callable[[], Iterable[torch.Tensor]]) -> None:
        """Called once before training; ``windows()`` iterates over batches of training windows."""

    def on_epoch_end(self, epoch: int) -> None:
        """Called after each epoch (1-based), before the head's update and validation."""

    def training_step(
        self, x: torch.Tensor, objective: Objective, optimizers: Optimizers, epoch: int = 1
    ) -> torch.Tensor:
        """One optimisation step on windows ``x``; returns the loss that was minimised (detached).

        ``objective(output)`` gives MADCluster's total loss, including ``output.loss`` if any.
        ``epoch`` is 1-based. Zero every gradient before each phase when you override this.
        Override for alternating updates (e.g. a discriminator step before the generator step).
        """
        (optimizer,) = optimizers
        optimizer.zero_grad(set_to_none=True)
        loss = objective(self(x))
        loss.backward()
        optimizer.step()
        return loss.detach()


class ModuleEmbedder(BaseEmbedder):
    """Adapts a user's ``nn.Module`` whose ``forward(x)`` returns ``h [B, L, f]`` (or an
    EmbedderOutput)."""

    def __init__(self, module: nn.Module, out_features: int) -> None:
        super().__init__()
        self.module = module
        self.out_features = out_features

    def forward(self, x: torch.Tensor) -> EmbedderOutput:
        out = self.module(x)
        return out if isinstance(out, EmbedderOutput) else EmbedderOutput(h=out)
