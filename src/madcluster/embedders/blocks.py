"""Building blocks shared by the base-model embedders (DeepSVDD, USAD, BeatGAN, OmniAnomaly).

Kept in one place so no model copies another's code: MLP stacks, the strided Conv1d encoder and
its mirrored decoder, a min-max range scaler fitted on training windows, the two ways a
window-level tensor becomes per-step features ``[B, L, f]``, Gaussian log-densities with a
floored standard deviation, and gradient zeroing for alternating optimiser phases.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from madcluster.embedders.optim import Optimizer
from madcluster.exceptions import ParameterError

STD_FLOOR = 1e-4  # OmniAnomaly's std_epsilon: a std that can reach 0 makes log p infinite


def mlp(sizes: Sequence[int], out_activation: nn.Module | None = None) -> nn.Sequential:
    """Linear layers ``sizes[0] -> sizes[1] -> ...`` with ReLU between them (USAD's blocks)."""
    layers: list[nn.Module] = []
    for i, (n_in, n_out) in enumerate(itertools.pairwise(sizes)):
        layers.append(nn.Linear(n_in, n_out))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    if out_activation is not None:
        layers.append(out_activation)
    return nn.Sequential(*layers)


# ---------------------------------------------------------------------------- strided convolutions
def halved_lengths(length: int, n_layers: int) -> list[int]:
    """Lengths after each Conv1d(kernel 4, stride 2, padding 1): ``l -> (l - 2) // 2 + 1``."""
    lengths = [length]
    for _ in range(n_layers):
        lengths.append((lengths[-1] - 2) // 2 + 1)
    return lengths


def conv_encoder(n_in: int, channels: Sequence[int], n_out: int, length: int) -> nn.Sequential:
    """DCGAN-style encoder (BeatGAN): Conv1d k4 s2 p1 per entry of ``channels`` (BatchNorm after
    all but the first, LeakyReLU .2), then a Conv1d to ``n_out`` whose kernel spans the remaining
    length, so the output is ``[B, n_out, 1]`` for any window length."""
    lengths = halved_lengths(length, len(channels))
    layers: list[nn.Module] = []
    prev = n_in
    for i, ch in enumerate(channels):
        layers.append(nn.Conv1d(prev, ch, 4, 2, 1, bias=False))
        if i:
            layers.append(nn.BatchNorm1d(ch))
        layers.append(nn.LeakyReLU(0.2, inplace=True))
        prev = ch
    layers.append(nn.Conv1d(prev, n_out, lengths[-1], 1, 0, bias=False))
    return nn.Sequential(*layers)


def conv_decoder(n_latent: int, channels: Sequence[int], n_out: int, length: int) -> nn.Sequential:
    """The mirror of :func:`conv_encoder` with ConvTranspose1d; ``output_padding`` restores the odd
    lengths the encoder rounded down (e.g. 25 -> 12 -> 25). The last module is the
    output layer (ConvTranspose1d to ``n_out``); everything before it is the feature stack."""
    lengths = halved_lengths(length, len(channels))
    rev = list(reversed(channels))
    layers: list[nn.Module] = [
        nn.ConvTranspose1d(n_latent, rev[0], lengths[-1], 1, 0, bias=False),
        nn.BatchNorm1d(rev[0]),
        nn.ReLU(inplace=True),
    ]
    # going up: from lengths[k] to lengths[k - 1]; ConvTranspose1d(k4 s2 p1) gives 2 * l_in + pad
    for i in range(len(rev) - 1):
        l_in, l_out = lengths[len(rev) - i], lengths[len(rev) - i - 1]
        layers += [
            nn.ConvTranspose1d(
                rev[i], rev[i + 1], 4, 2, 1, output_padding=l_out - 2 * l_in, bias=False
            ),
            nn.BatchNorm1d(rev[i + 1]),
            nn.ReLU(inplace=True),
        ]
    layers.append(
        nn.ConvTranspose1d(
            rev[-1], n_out, 4, 2, 1, output_padding=lengths[0] - 2 * lengths[1], bias=False
        )
    )
    return nn.Sequential(*layers)


def dcgan_init(module: nn.Module) -> None:
    """DCGAN / BeatGAN init: conv weights N(0, .02), BatchNorm weights N(1, .02), bias 0."""
    if isinstance(module, (nn.Conv1d, nn.ConvTranspose1d)):
        nn.init.normal_(module.weight, 0.0, 0.02)
    elif isinstance(module, nn.BatchNorm1d):
        nn.init.normal_(module.weight, 1.0, 0.02)
        nn.init.zeros_(module.bias)


# ---------------------------------------------------------------------------- window -> per step
def latent_to_steps(z: torch.Tensor, length: int) -> torch.Tensor:
    """A flat window latent ``[B, L * f]`` viewed as ``[B, L, f]``: step t gets units t*f..t*f+f-1.

    For a fully connected encoder (USAD) this assignment is a convention, not structure: every
    block depends on the whole window.
    """
    if z.shape[-1] % length:
        raise ParameterError(
            f"latent size {z.shape[-1]} is not a multiple of the window length {length}"
        )
    return z.reshape(z.shape[0], length, z.shape[-1] // length)


def feature_map_to_steps(feature_map: torch.Tensor, length: int) -> torch.Tensor:
    """A conv feature map ``[B, C, L']`` as ``[B, L, C]``: nearest-neighbour resampling to L steps
    (step t takes the map position covering it; L' = L / 2 repeats each position twice)."""
    if feature_map.shape[-1] != length:
        feature_map = F.interpolate(feature_map, size=length, mode="nearest")
    return feature_map.transpose(1, 2)


# ---------------------------------------------------------------------------- scaling
class RangeScaler(nn.Module):
    """Per-channel min-max scaling to ``[low, high]`` with the training range (buffers, so it is
    saved with the model). USAD's sigmoid and BeatGAN's tanh outputs need inputs in their range; the
    detector's z-scores are not. Test values outside the training range are not clipped: their
    reconstruction error is the signal. A constant channel gets range 1 (no division by 0)."""

    def __init__(self, n_features: int, low: float = 0.0, high: float = 1.0) -> None:
        super().__init__()
        self.low, self.high = low, high
        self.register_buffer("minimum", torch.zeros(n_features))
        self.register_buffer("span", torch.ones(n_features))

    @torch.no_grad()
    def fit(self, windows: Callable[[], Iterable[torch.Tensor]]) -> None:
        lo = hi = None
        for x in windows():
            flat = x.reshape(-1, x.shape[-1])
            b_lo, b_hi = flat.min(0).values, flat.max(0).values
            lo = b_lo if lo is None else torch.minimum(lo, b_lo)
            hi = b_hi if hi is None else torch.maximum(hi, b_hi)
        if lo is None:
            return
        span = hi - lo
        self.minimum.copy_(lo)
        self.span.copy_(torch.where(span > 1e-8, span, torch.ones_like(span)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.low + (self.high - self.low) * (x - self.minimum) / self.span


# ---------------------------------------------------------------------------- densities
def positive_std(raw: torch.Tensor, floor: float = STD_FLOOR) -> torch.Tensor:
    """A standard deviation from an unconstrained output: softplus + floor (never 0, never NaN)."""
    return F.softplus(raw) + floor


def gaussian_log_prob(x: torch.Tensor, mean: torch.Tensor, std: torch.Tensor) -> torch.Tensor:
    """Element-wise log N(x; mean, std^2)."""
    return -0.5 * ((x - mean) / std).pow(2) - torch.log(std) - 0.5 * math.log(2 * math.pi)


# ---------------------------------------------------------------------------- alternating phases
def zero_every_grad(module: nn.Module, optimizers: Iterable[Optimizer]) -> None:
    """Zero the gradients of the embedder and of every optimiser's parameters (the head's too), so
    no phase sees gradients left by another (USAD's official loop leaks them between phases)."""
    module.zero_grad(set_to_none=True)
    for optimizer in optimizers:
        optimizer.zero_grad(set_to_none=True)


def adam_groups(
    params: Iterable[nn.Parameter],
    head_params: Iterable[nn.Parameter] | None,
    weight_decay: float,
    head_lr: float | None = None,
) -> list[dict]:
    """Adam parameter groups: weight decay on the model's own parameters, none on the head's
    (as :meth:`BaseEmbedder.configure_optimizers`); ``head_lr`` overrides the head's rate."""
    groups = [{"params": [p for p in params if p.requires_grad], "weight_decay": weight_decay}]
    if head_params is not None:
        head = {"params": [p for p in head_params if p.requires_grad], "weight_decay": 0.0}
        if head_lr is not None:
            head["lr"] = head_lr
        groups.append(head)
    return groups


def at_least_float32(x: torch.Tensor) -> torch.Tensor:
    """``x`` in float32, or as it is when float64: maps kept in float32 under mixed precision,
    and in float64 when the fitted model scores in float64 (:mod:`madcluster.estimator.fitted`)."""
    return x if x.dtype == torch.float64 else x.float()
