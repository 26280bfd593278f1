"""Anomaly Transformer (Xu et al., ICLR 2022): reconstruction with association discrepancy.

DataEmbedding (bias-free circular Conv1d k3 + sinusoidal position) -> ``n_layers`` encoder layers
(AnomalyAttention, residual + LayerNorm, feed-forward d_model -> d_ff -> d_model with GELU, residual
+ LayerNorm) -> LayerNorm -> linear projection back to the D channels. Defaults are the paper's:
d_model 512, 8 heads, 3 layers, d_ff 512, k = 3, Adam at 1e-4 halved after every epoch.

AnomalyAttention keeps two maps per head: the learned *series* association
``softmax(QK^T / sqrt(E))`` and the *prior* association, a Gaussian over the distance |i - j| with a
learned, per-step scale ``sigma = 3^(sigmoid(5 s) + 1e-5) - 1`` (s = a linear map of the layer's
input to one value per head; the official transform, sigma in (0, 2)). The Gaussian rows are
normalised to sum to 1, computed as ``softmax_j(-|i - j|^2 / (2 sigma_i^2))``, which equals the
normalised density and cannot divide by a vanishing sum. The |i - j| grid is made on the input's
device at each call (the official code builds it once with ``.cuda()``).

**h is the encoder output after its final LayerNorm, ``[B, L, d_model]``** (the projection's input).
Attention spans the window, so the model is not causal.

Training (the minimax strategy) with ``series_loss`` = symKL(series, prior.detach()) and
``prior_loss`` = symKL(prior, series.detach()) (averaged over heads, steps and layers):
``loss1 = rec - k * series_loss`` (pushes the series association away from the prior: the phase
that trains the layers producing h, so MADCluster's loss goes into it) and ``loss2 = rec + k *
prior_loss`` (pulls the prior towards the series). ``minimax="joint"`` (default) is the official
update: one forward, the gradients of both phases summed, one Adam step; ``"alternating"`` runs the
phases one after the other, each on a fresh forward with every gradient zeroed first and its own
Adam step (twice the cost). The head trains at the detector's learning rate and is not halved.

Per-step score (the official test code): ``softmax_L(-(sum over layers of symKL) * 50) x`` the
per-step reconstruction MSE (mean over channels). The loss ``forward`` reports (validation, early
stopping) is the reconstruction MSE: the minimax terms can grow without bound and say nothing about
fit. The official code also holds an unused LayerNorm per layer, left out here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

import torch
import torch.nn.functional as F
from torch import nn

from madcluster.embedders.attention import (
    SCORE_TEMPERATURE,
    DataEmbedding,
    QueryKeyAttention,
    discrepancy_losses,
    discrepancy_score,
    step_discrepancy,
)
from madcluster.embedders.base import BaseEmbedder, EmbedderOutput, Objective, Optimizers
from madcluster.embedders.blocks import adam_groups, at_least_float32, zero_every_grad
from madcluster.embedders.optim import Adam
from madcluster.exceptions import ParameterError

MINIMAX = ("joint", "alternating")


def learned_sigma(raw: torch.Tensor) -> torch.Tensor:
    """The official map of an unconstrained value to the prior's scale:
    ``3^(sigmoid(5 s) + 1e-5) - 1``, bounded in (1e-5, 2), so the prior never degenerates to NaN nor
    spreads over the whole window."""
    return torch.pow(3.0, torch.sigmoid(raw * 5.0) + 1e-5) - 1.0


def gaussian_prior(sigma: torch.Tensor) -> torch.Tensor:
    """Row-normalised Gaussian prior ``[B, H, L, L]`` from per-step scales ``sigma [B, H, L]``:
    row i is N(j; i, sigma_i^2) over j = 0..L-1, divided by its sum (the paper's Rescale)."""
    length = sigma.shape[-1]
    steps = torch.arange(length, device=sigma.device, dtype=sigma.dtype)
    distance_sq = (steps[:, None] - steps[None, :]).pow(2)  # [L, L]
    return torch.softmax(-distance_sq / (2.0 * sigma.unsqueeze(-1).pow(2)), dim=-1)


class AnomalyAttention(QueryKeyAttention):
    """Multi-head attention that also returns its series and prior associations, each
    ``[B, H, L, L]``."""

    def __init__(self, d_model: int, n_heads: int) -> None:
        super().__init__(d_model, n_heads)
        self.value = nn.Linear(d_model, d_model)
        self.sigma = nn.Linear(d_model, n_heads)
        self.out = nn.Linear(d_model, d_model)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        b, length, d = x.shape
        series = self.attention_map(x)
        v = self.value(x).view(b, length, self.n_heads, -1)
        mixed = torch.einsum("bhls,bshe->blhe", series, v).reshape(b, length, d)
        prior = gaussian_prior(learned_sigma(at_least_float32(self.sigma(x))).transpose(1, 2))
        return self.out(mixed), series, prior


class EncoderLayer(nn.Module):
    """AnomalyAttention and a position-wise feed-forward block, each with a residual and LayerNorm
    (the official 1x1 Conv1d pair is a Linear pair here: the same map and parameter count)."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int) -> None:
        super().__init__()
        self.attention = AnomalyAttention(d_model, n_heads)
        self.norm1 = nn.LayerNorm(d_model)
        self.ff1 = nn.Linear(d_model, d_ff)
        self.ff2 = nn.Linear(d_ff, d_model)
        self.norm2 = nn.LayerNorm(d_model)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        attended, series, prior = self.attention(x)
        x = self.norm1(x + attended)
        return self.norm2(x + self.ff2(F.gelu(self.ff1(x)))), series, prior


class AnomalyTransformer(BaseEmbedder):
    """Anomaly Transformer as a Base Embedder (see the module docstring); h is
    ``[B, L, d_model]``."""

    causal = False
    test_params: ClassVar[dict] = {"d_model": 8, "n_heads": 2, "n_layers": 2, "d_ff": 8}

    def __init__(
        self,
        n_features: int,
        d_model: int = 512,
        n_heads: int = 8,
        n_layers: int = 3,
        d_ff: int = 512,
        k: float = 3.0,
        lr: float | None = 1e-4,
        temperature: float = SCORE_TEMPERATURE,
        minimax: str = "joint",
    ) -> None:
        super().__init__()
        if min(n_features, d_model, n_heads, n_layers, d_ff) < 1:
            raise ParameterError(
                "AnomalyTransformer needs positive n_features, d_model, n_heads, n_layers, d_ff"
            )
        if minimax not in MINIMAX:
            raise ParameterError(f"unknown minimax {minimax!r}; choose one of {', '.join(MINIMAX)}")
        self.k, self.lr, self.temperature, self.minimax = float(k), lr, float(temperature), minimax
        self.embedding = DataEmbedding(n_features, d_model)
        self.layers = nn.ModuleList(EncoderLayer(d_model, n_heads, d_ff) for _ in range(n_layers))
        self.norm = nn.LayerNorm(d_model)
        self.projection = nn.Linear(d_model, n_features)
        self.out_features = d_model
        self._halved_groups: list[dict] = []  # the model's own Adam groups, halved per epoch
        self._base_lr = 0.0

    def encode(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, list, list]:
        """h ``[B, L, d_model]``, the reconstruction ``[B, L, D]`` and each layer's series / prior
        maps."""
        z = self.embedding(x)
        series, prior = [], []
        for layer in self.layers:
            z, s, p = layer(z)
            series.append(s)
            prior.append(p)
        h = self.norm(z)
        return h, self.projection(h), series, prior

    def minimax_losses(
        self, x: torch.Tensor, recon: torch.Tensor, series: list, prior: list
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(rec - k * series_loss, rec + k * prior_loss)`` with the other side detached in
        each."""
        rec = F.mse_loss(recon, x)
        series_loss, prior_loss = discrepancy_losses(series, prior)
        return rec - self.k * series_loss, rec + self.k * prior_loss

    @torch.no_grad()
    def _score(
        self, x: torch.Tensor, recon: torch.Tensor, series: list, prior: list
    ) -> torch.Tensor:
        error = (x - recon).pow(2).mean(dim=-1)
        return discrepancy_score(step_discrepancy(series, prior), self.temperature) * error

    def forward(self, x: torch.Tensor) -> EmbedderOutput:
        h, recon, series, prior = self.encode(x)
        return EmbedderOutput(
            h=h, loss=F.mse_loss(recon, x), score=self._score(x, recon, series, prior)
        )

    def configure_optimizers(
        self, head_params: Iterable[nn.Parameter], *, lr: float, weight_decay: float
    ) -> Optimizers:
        """One Adam: the model at its own rate (1e-4; ``lr=None``: the detector's), halved after
        each epoch by :meth:`on_epoch_end`, and the head at the detector's rate."""
        self._base_lr = self.lr if self.lr is not None else lr
        optimizer = Adam(
            adam_groups(self.parameters(), head_params, weight_decay, head_lr=lr), lr=self._base_lr
        )
        self._halved_groups = [optimizer.param_groups[0]]
        return [optimizer]

    def on_epoch_end(self, epoch: int) -> None:
        """The official schedule: epoch e + 1 trains at ``lr * 0.5^e`` (set, not multiplied, so a
        second call for the same epoch changes nothing)."""
        for group in self._halved_groups:
            group["lr"] = self._base_lr * 0.5**epoch

    def training_step(
        self, x: torch.Tensor, objective: Objective, optimizers: Optimizers, epoch: int = 1
    ) -> torch.Tensor:
        """The minimax update; MADCluster's objective wraps phase 1 (``loss1``) only."""
        zero_every_grad(self, optimizers)
        h, recon, series, prior = self.encode(x)
        loss1, loss2 = self.minimax_losses(x, recon, series, prior)
        total = objective(EmbedderOutput(h=h, loss=loss1))
        if self.minimax == "joint":
            (total + loss2).backward()  # = loss1.backward(retain_graph) then loss2.backward()
            for optimizer in optimizers:
                optimizer.step()
            return (total + loss2).detach()
        total.backward()
        for optimizer in optimizers:
            optimizer.step()
        zero_every_grad(self, optimizers)
        _, recon, series, prior = self.encode(x)
        loss2 = self.minimax_losses(x, recon, series, prior)[1]
        loss2.backward()
        for optimizer in optimizers:
            optimizer.step()
        return total.detach()
