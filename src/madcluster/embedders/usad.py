"""USAD (Audibert et al., KDD 2020): two autoencoders with a shared encoder, trained adversarially.

The window ``[B, L, D]`` is min-max scaled with the training range (the decoders end in a
sigmoid) and flattened to w = L * D; the encoder maps w -> w/2 -> w/4 -> z (ReLU), the decoders
z -> w/4 -> w/2 -> w (sigmoid). z = L * hidden (hidden = 100 in the official code).

h is the latent z viewed as ``[B, L, hidden]`` (``blocks.latent_to_steps``): step t gets latent
units t*hidden .. (t+1)*hidden - 1. Every block depends on the whole window, so the model is not
causal.

Training (USAD Eq. 7-8, epoch n 1-based), two Adams, two phases per batch, each on a fresh forward
pass with every gradient zeroed first:
``L1 = 1/n ||x - w1||^2 + (1 - 1/n) ||x - w3||^2`` (encoder + decoder 1, and the MADCluster head:
the MADCluster loss goes into this phase), ``L2 = 1/n ||x - w2||^2 - (1 - 1/n) ||x - w3||^2``
(encoder + decoder 2), with w1 = D1(E(x)), w2 = D2(E(x)), w3 = D2(E(w1)); norms are means over
the window's values. Per-step score (Eq. 10): ``alpha ||x - w1||^2 + beta ||x - w3||^2`` per value,
reshaped ``[B, L, D]`` and averaged over D. The loss that ``forward`` reports (validation, early
stopping) is the mean of that score: the epoch-weighted L1 is not comparable across epochs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import ClassVar

import torch
from torch import nn

from madcluster.defaults import DEFAULT_WINDOW_SIZE
from madcluster.embedders.base import BaseEmbedder, EmbedderOutput, Objective, Optimizers
from madcluster.embedders.blocks import (
    RangeScaler,
    adam_groups,
    latent_to_steps,
    mlp,
    zero_every_grad,
)
from madcluster.embedders.optim import Adam
from madcluster.exceptions import ParameterError


def usad_losses(
    x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor, w3: torch.Tensor, epoch: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """USAD's phase losses (Eq. 7-8) at epoch ``n`` (1-based): the weights move from
    reconstruction (1/n) to the adversarial term (1 - 1/n)."""
    n = float(epoch)
    adv = (x - w3).pow(2).mean()
    loss1 = (x - w1).pow(2).mean() / n + (1.0 - 1.0 / n) * adv
    loss2 = (x - w2).pow(2).mean() / n - (1.0 - 1.0 / n) * adv
    return loss1, loss2


class USAD(BaseEmbedder):
    """USAD as a Base Embedder (see the module docstring)."""

    window_dependent = True

    causal = False
    test_params: ClassVar[dict] = {"hidden": 4}

    def __init__(
        self,
        n_features: int,
        window_size: int = DEFAULT_WINDOW_SIZE,
        hidden: int = 100,
        alpha: float = 0.5,
        beta: float = 0.5,
    ) -> None:
        super().__init__()
        w = window_size * n_features
        if window_size < 1 or hidden < 1 or w < 4:
            raise ParameterError(
                f"USAD needs window_size * n_features >= 4 and hidden >= 1 (got window_size="
                f"{window_size}, n_features={n_features}, hidden={hidden})"
            )
        self.window_size, self.n_features, self.hidden = window_size, n_features, hidden
        self.alpha, self.beta = alpha, beta
        z = window_size * hidden
        self.scaler = RangeScaler(n_features, 0.0, 1.0)
        self.encoder = mlp([w, w // 2, w // 4, z], out_activation=nn.ReLU())
        self.decoder1 = mlp([z, w // 4, w // 2, w], out_activation=nn.Sigmoid())
        self.decoder2 = mlp([z, w // 4, w // 2, w], out_activation=nn.Sigmoid())
        self.out_features = hidden

    def init_from_data(self, windows: Callable[[], Iterable[torch.Tensor]]) -> None:
        """Fit the min-max range on the training windows (official USAD: MinMaxScaler on train)."""
        self.scaler.fit(windows)

    def reconstruct(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """The flat scaled window and its reconstructions ``(x, z, w1, w2, w3)``, each
        ``[B, .]``."""
        flat = self.scaler(x).reshape(x.shape[0], -1)
        z = self.encoder(flat)
        w1 = self.decoder1(z)
        w2 = self.decoder2(z)
        w3 = self.decoder2(self.encoder(w1))
        return flat, z, w1, w2, w3

    def _score(self, flat: torch.Tensor, w1: torch.Tensor, w3: torch.Tensor) -> torch.Tensor:
        err = self.alpha * (flat - w1).pow(2) + self.beta * (flat - w3).pow(2)
        return err.reshape(flat.shape[0], self.window_size, self.n_features).mean(dim=-1)

    def forward(self, x: torch.Tensor) -> EmbedderOutput:
        flat, z, w1, _, w3 = self.reconstruct(x)
        score = self._score(flat, w1, w3)
        return EmbedderOutput(
            h=latent_to_steps(z, self.window_size), loss=score.mean(), score=score
        )

    def configure_optimizers(
        self, head_params: Iterable[nn.Parameter], *, lr: float, weight_decay: float
    ) -> Optimizers:
        """Adam 1: encoder + decoder 1 + the head; Adam 2: encoder + decoder 2 (as the official)."""
        ae1 = [*self.encoder.parameters(), *self.decoder1.parameters()]
        ae2 = [*self.encoder.parameters(), *self.decoder2.parameters()]
        return [
            Adam(adam_groups(ae1, head_params, weight_decay), lr=lr),
            Adam(adam_groups(ae2, None, weight_decay), lr=lr),
        ]

    def training_step(
        self, x: torch.Tensor, objective: Objective, optimizers: Optimizers, epoch: int = 1
    ) -> torch.Tensor:
        """Phase 1 (L1 + MADCluster's loss, Adam 1), then phase 2 (L2, Adam 2), fresh forward."""
        opt1, opt2 = optimizers
        zero_every_grad(self, optimizers)
        flat, z, w1, w2, w3 = self.reconstruct(x)
        loss1, _ = usad_losses(flat, w1, w2, w3, epoch)
        out = EmbedderOutput(
            h=latent_to_steps(z, self.window_size), loss=loss1, score=self._score(flat, w1, w3)
        )
        total = objective(out)
        total.backward()
        opt1.step()

        zero_every_grad(self, optimizers)
        flat, _, w1, w2, w3 = self.reconstruct(x)
        _, loss2 = usad_losses(flat, w1, w2, w3, epoch)
        loss2.backward()
        opt2.step()
        return total.detach()
