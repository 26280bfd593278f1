"""Deep SVDD (Ruff et al., ICML 2018) on the Dilated RNN, as the paper's DeepSVDD row.

h is the D-RNN's last layer output ``[B, L, f]`` (one vector per step; no window-level latent), so
the model is causal. Ruff et al.'s remedies against hypersphere collapse (Prop. 2-3) are kept: the
RNN has no bias terms and the center c is fixed, the mean of h over an initial pass of the
training windows (components with |c_j| < 0.1 pushed to +-0.1).

Objective (Ruff et al., Eq. 4, one-class): ``mean_t ||h_t - c||^2``; or Eq. 3, soft-boundary:
``R^2 + (1/nu) mean_t max(0, ||h_t - c||^2 - R^2)`` with R the (1 - nu) quantile of the batch's
distances after ``warmup`` epochs (as Ruff's code). Per-step score: ``||h_t - c||^2`` (minus R^2
for soft-boundary). Weight decay is the detector's. The paper's compute table counts 311.6K
parameters for its DeepSVDD; the D-RNN of 3 x 64 GRU units without biases has 72K at D = 55.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import ClassVar

import numpy as np
import torch

from madcluster.embedders.base import BaseEmbedder, EmbedderOutput, Objective, Optimizers
from madcluster.embedders.drnn import DilatedRNN
from madcluster.exceptions import ParameterError
from madcluster.method.head import CENTER_EPS

OBJECTIVES = ("one-class", "soft-boundary")


class DeepSVDD(BaseEmbedder):
    """Deep SVDD with a bias-free D-RNN encoder and a fixed center (see the module docstring)."""

    causal = True
    test_params: ClassVar[dict] = {"hidden_size": 8, "n_layers": 2}

    def __init__(
        self,
        n_features: int,
        hidden_size: int = 64,
        n_layers: int = 3,
        cell: str = "gru",
        objective: str = "one-class",
        nu: float = 0.1,
        warmup: int = 10,
    ) -> None:
        super().__init__()
        if objective not in OBJECTIVES:
            raise ParameterError(
                f"unknown objective {objective!r}; choose one of {', '.join(OBJECTIVES)}"
            )
        if not 0.0 < nu <= 1.0:
            raise ParameterError(f"nu must be in (0, 1], got {nu}")
        self.encoder = DilatedRNN(
            n_features,
            hidden_size=hidden_size,
            n_layers=n_layers,
            cell=cell,
            auxiliary="none",
            bias=False,
        )
        self.objective, self.nu, self.warmup = objective, nu, warmup
        self.out_features = hidden_size
        self.register_buffer("center", torch.zeros(hidden_size))
        self.register_buffer("radius", torch.zeros(()))

    def forward(self, x: torch.Tensor) -> EmbedderOutput:
        h = self.encoder(x).h
        d = (h - self.center).pow(2).sum(dim=-1)  # [B, L]
        if self.objective == "soft-boundary":
            r2 = self.radius.pow(2)
            return EmbedderOutput(h=h, loss=r2 + torch.relu(d - r2).mean() / self.nu, score=d - r2)
        return EmbedderOutput(h=h, loss=d.mean(), score=d)

    @torch.no_grad()
    def init_from_data(self, windows: Callable[[], Iterable[torch.Tensor]]) -> None:
        """c = mean of h over one eval-mode pass of the training windows, then the +-0.1 guard."""
        was_training = self.training
        self.eval()
        total, count = torch.zeros_like(self.center), 0
        for x in windows():
            h = self.encoder(x).h
            total += h.reshape(-1, h.shape[-1]).sum(0)
            count += h.shape[0] * h.shape[1]
        self.train(was_training)
        c = total / max(count, 1)
        small = c.abs() < CENTER_EPS
        c[small] = torch.where(c[small] < 0, -CENTER_EPS, CENTER_EPS)
        self.center.copy_(c)

    def training_step(
        self, x: torch.Tensor, objective: Objective, optimizers: Optimizers, epoch: int = 1
    ) -> torch.Tensor:
        """One step; soft-boundary: after ``warmup`` epochs R comes from the batch (as Ruff)."""
        (optimizer,) = optimizers
        optimizer.zero_grad(set_to_none=True)
        out = self(x)
        loss = objective(out)
        loss.backward()
        optimizer.step()
        if self.objective == "soft-boundary" and epoch > self.warmup:
            d = (out.h.detach() - self.center).pow(2).sum(dim=-1)
            self.radius.fill_(float(np.quantile(d.sqrt().cpu().numpy(), 1.0 - self.nu)))
        return loss.detach()
