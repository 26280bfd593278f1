"""BeatGAN (Zhou et al., IJCAI 2019): a Conv1d autoencoder regularised by a discriminator.

Generator G: Conv1d encoder 32 -> 64 -> 128 -> 256 -> 512 (kernel 4, stride 2, padding 1,
BatchNorm, LeakyReLU .2), a last Conv1d whose kernel spans the remaining length to nz = 50, and
the mirrored ConvTranspose1d decoder (BatchNorm, ReLU) ending in tanh. Inputs are min-max scaled
to [-1, 1] with the training range (the official code scales each test sample with its own range,
which leaks). Discriminator D: the same encoder with one output and a sigmoid; its features are
the encoder's map before the last conv.

h is the decoder's last feature map (32 channels at L/2 positions) resampled to L steps by
nearest neighbour (:func:`~madcluster.embedders.blocks.feature_map_to_steps`): step t takes the
map position that covers it. h depends on the whole window (not causal).

Training, per batch (BeatGAN's code): D step on ``BCE(D(x), 1) + BCE(D(G(x)), 0)``, then G step
on ``MSE(G(x), x) + w_adv * MSE(f_D(G(x)), f_D(x))`` plus MADCluster's loss (the G phase trains
the layers that make h); every gradient is zeroed before each phase; D is re-initialised when its
loss falls below 5e-6. Adam with betas (.5, .999) and BeatGAN's learning rate 1e-4 (``lr=None``:
the detector's), the MADCluster head at the detector's rate. Per-step score: the mean over
channels of (x - G(x))^2; the loss ``forward`` reports (validation) is its mean. A window too
short for the convolutions raises at construction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import ClassVar

import torch
import torch.nn.functional as F
from torch import nn

from madcluster.defaults import DEFAULT_WINDOW_SIZE
from madcluster.embedders.base import BaseEmbedder, EmbedderOutput, Objective, Optimizers
from madcluster.embedders.blocks import (
    RangeScaler,
    adam_groups,
    conv_decoder,
    conv_encoder,
    dcgan_init,
    feature_map_to_steps,
    halved_lengths,
    zero_every_grad,
)
from madcluster.embedders.optim import Adam
from madcluster.exceptions import ParameterError

D_RESET_LOSS = 5e-6
BETAS = (0.5, 0.999)


def discriminator_loss(real_prob: torch.Tensor, fake_prob: torch.Tensor) -> torch.Tensor:
    """BCE(D(x), 1) + BCE(D(G(x)), 0), each a mean over the batch."""
    return F.binary_cross_entropy(real_prob, torch.ones_like(real_prob)) + F.binary_cross_entropy(
        fake_prob, torch.zeros_like(fake_prob)
    )


def generator_loss(
    x: torch.Tensor,
    fake: torch.Tensor,
    feat_real: torch.Tensor,
    feat_fake: torch.Tensor,
    w_adv: float,
) -> torch.Tensor:
    """Reconstruction MSE plus ``w_adv`` times the discriminator feature-matching MSE."""
    return F.mse_loss(fake, x) + w_adv * F.mse_loss(feat_fake, feat_real)


class Discriminator(nn.Module):
    """The encoder stack (features) and its last conv to one logit, then a sigmoid."""

    def __init__(self, n_features: int, channels: Sequence[int], length: int) -> None:
        super().__init__()
        layers = list(conv_encoder(n_features, channels, 1, length).children())
        self.features = nn.Sequential(*layers[:-1])
        self.classifier = layers[-1]

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        feat = self.features(x)
        prob = torch.sigmoid(self.classifier(feat)).flatten()
        return prob, feat


class BeatGAN(BaseEmbedder):
    """BeatGAN as a Base Embedder (see the module docstring)."""

    window_dependent = True

    causal = False
    test_params: ClassVar[dict] = {"channels": (4, 8), "nz": 4}

    def __init__(
        self,
        n_features: int,
        window_size: int = DEFAULT_WINDOW_SIZE,
        channels: Sequence[int] = (32, 64, 128, 256, 512),
        nz: int = 50,
        w_adv: float = 1.0,
        lr: float | None = 1e-4,
        d_reset_loss: float = D_RESET_LOSS,
    ) -> None:
        super().__init__()
        channels = tuple(int(c) for c in channels)
        if not channels or min(channels) < 1 or nz < 1:
            raise ParameterError(
                "BeatGAN needs at least one conv layer, positive channel counts and nz >= 1"
            )
        lengths = halved_lengths(window_size, len(channels))
        if lengths[-1] < 2:  # BatchNorm needs > 1 value per channel even in a batch of one window
            fits = max(
                (n for n in range(len(channels)) if halved_lengths(window_size, n)[-1] >= 2),
                default=0,
            )
            hint = (
                f"at most {fits} layers, e.g. channels={channels[:fits]}"
                if fits
                else "a longer window"
            )
            raise ParameterError(
                f"BeatGAN with {len(channels)} stride-2 conv layers needs window_size >= "
                f"{2 ** (len(channels) + 1)} (got {window_size}); use {hint}"
            )
        self.window_size, self.w_adv, self.lr = window_size, w_adv, lr
        self.d_reset_loss = d_reset_loss
        self.last_d_loss, self.d_resets = float("nan"), 0
        self.scaler = RangeScaler(n_features, -1.0, 1.0)
        self.encoder = conv_encoder(n_features, channels, nz, window_size)
        decoder = list(conv_decoder(nz, channels, n_features, window_size).children())
        self.decoder_features = nn.Sequential(*decoder[:-1])
        self.decoder_out = decoder[-1]
        self.discriminator = Discriminator(n_features, channels, window_size)
        self.apply(dcgan_init)
        self.out_features = channels[0]

    @torch.no_grad()
    def init_from_data(self, windows: Callable[[], Iterable[torch.Tensor]]) -> None:
        """Fit the [-1, 1] range on the training windows, then set the generator's BatchNorm running
        statistics from one pass (no weight changes): otherwise eval-mode h, from which MADCluster
        sets c and R before training, would differ from training-mode h by untrained BN stats."""
        self.scaler.fit(windows)
        norms = [
            m
            for m in (*self.encoder.modules(), *self.decoder_features.modules())
            if isinstance(m, nn.BatchNorm1d)
        ]
        momenta = [m.momentum for m in norms]
        for m in norms:
            m.reset_running_stats()
            m.momentum = None  # cumulative average over the pass
        was_training = self.training
        self.train()
        for x in windows():
            self.generate(x)
        self.train(was_training)
        for m, momentum in zip(norms, momenta):
            m.momentum = momentum

    def generate(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Scaled input ``[B, D, L]``, its reconstruction G(x) ``[B, D, L]`` and h ``[B, L, f]``."""
        real = self.scaler(x).transpose(1, 2)
        feat = self.decoder_features(self.encoder(real))
        fake = torch.tanh(self.decoder_out(feat))
        return real, fake, feature_map_to_steps(feat, self.window_size)

    def forward(self, x: torch.Tensor) -> EmbedderOutput:
        real, fake, h = self.generate(x)
        error = (real - fake).pow(2).mean(dim=1)  # [B, L]
        return EmbedderOutput(h=h, loss=error.mean(), score=error)

    def configure_optimizers(
        self, head_params: Iterable[nn.Parameter], *, lr: float, weight_decay: float
    ) -> Optimizers:
        """Adam for G (and the head, at the detector's lr) and Adam for D, betas (.5, .999)."""
        own_lr = self.lr if self.lr is not None else lr
        g_params = [
            *self.encoder.parameters(),
            *self.decoder_features.parameters(),
            *self.decoder_out.parameters(),
        ]
        opt_g = Adam(
            adam_groups(g_params, head_params, weight_decay, head_lr=lr), lr=own_lr, betas=BETAS
        )
        opt_d = Adam(
            adam_groups(self.discriminator.parameters(), None, weight_decay), lr=own_lr, betas=BETAS
        )
        return [opt_g, opt_d]

    def training_step(
        self, x: torch.Tensor, objective: Objective, optimizers: Optimizers, epoch: int = 1
    ) -> torch.Tensor:
        """D step, then G step (+ MADCluster's loss); D re-initialised when its loss < 5e-6."""
        opt_g, opt_d = optimizers
        zero_every_grad(self, optimizers)
        real, fake, _ = self.generate(x)
        prob_real, _ = self.discriminator(real)
        prob_fake, _ = self.discriminator(fake.detach())
        loss_d = discriminator_loss(prob_real, prob_fake)
        loss_d.backward()
        opt_d.step()
        self.last_d_loss = float(loss_d.detach())
        if self.last_d_loss < self.d_reset_loss:
            self.discriminator.apply(dcgan_init)
            self.d_resets += 1

        zero_every_grad(self, optimizers)
        real, fake, h = self.generate(x)
        _, feat_fake = self.discriminator(fake)
        with torch.no_grad():
            _, feat_real = self.discriminator(real)
        error = (real - fake).pow(2).mean(dim=1)
        loss_g = generator_loss(real, fake, feat_real, feat_fake, self.w_adv)
        total = objective(EmbedderOutput(h=h, loss=loss_g, score=error))
        total.backward()
        opt_g.step()
        return total.detach()
