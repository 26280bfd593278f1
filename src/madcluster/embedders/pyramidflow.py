"""PyramidFlow (Lei et al., CVPR 2023), small and from scratch: a fully convolutional,
volume-preserving normalizing flow on an image pyramid, scored by the distance of its latent to a
template of normal latents.

- pyramid: the image is pixel-unshuffled (2 x 2 -> channels; invertible) and split into a Laplacian
  pyramid of ``levels`` bands (fixed, invertible);
- invertible pyramid coupling: each block mixes channels per level with a 1 x 1 convolution, then
  couples adjacent levels both ways: the finer band gets an affine transform whose scale and shift
  come from the (upsampled) coarser band, then the coarser band one from the (pooled) finer band;
- volume normalisation: every log-scale map is centred (its mean over channels and positions is
  subtracted, per image) and every 1 x 1 weight is divided by ``|det W|^(1/C)``, so the flow keeps
  volume exactly and needs no log-determinant term: it cannot shrink every latent onto the template;
- loss: the squared difference of the latents of the images in a batch, level by level (the
  paper's pairwise latent difference, taken against the batch mean, which is the same up to a
  factor);
- score: the anomaly map, sum over levels of the channel-mean squared difference between the latent
  and the template (a running mean of training latents, kept like batch-norm statistics), upsampled
  to the input size; the image score is its maximum (taken by the image detector);
- h: the finest latent band ``[B, 4 C, H/2, W/2]``, in the chosen layout.

The paper's full model also runs on features of a pretrained encoder; this one sees pixels only.
"""

from __future__ import annotations

from typing import ClassVar

import torch
from torch import nn
from torch.nn import functional as F

from madcluster.embedders.base import EmbedderOutput
from madcluster.embedders.image_base import ImageEmbedder
from madcluster.exceptions import ParameterError


def _resize(z: torch.Tensor, size: torch.Size) -> torch.Tensor:
    if z.shape[-1] < size[-1]:
        return F.interpolate(z, size=size, mode="bilinear", align_corners=False)
    return F.adaptive_avg_pool2d(z, size)


class VolumeNormConv(nn.Module):
    """Invertible 1 x 1 convolution with |det W| = 1 (volume normalisation of the weight)."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(nn.init.orthogonal_(torch.empty(channels, channels)))

    def matrix(self) -> torch.Tensor:
        logdet = torch.linalg.slogdet(self.weight)[1]
        return self.weight * torch.exp(-logdet / self.weight.shape[0])

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return torch.einsum("oc,bchw->bohw", self.matrix(), z)

    def inverse(self, z: torch.Tensor) -> torch.Tensor:
        return torch.einsum("oc,bchw->bohw", torch.linalg.inv(self.matrix()), z)


class CrossLevelCoupling(nn.Module):
    """Affine coupling of one pyramid level conditioned on another, with a volume-normalised
    scale."""

    def __init__(self, channels: int, hidden: int, clamp: float = 2.0) -> None:
        super().__init__()
        self.clamp = clamp
        last = nn.Conv2d(hidden, 2 * channels, 3, padding=1)
        nn.init.zeros_(last.weight)  # starts as the identity
        nn.init.zeros_(last.bias)
        self.net = nn.Sequential(
            nn.Conv2d(channels, hidden, 3, padding=1), nn.ReLU(inplace=True), last
        )

    def scale_shift(
        self, cond: torch.Tensor, size: torch.Size
    ) -> tuple[torch.Tensor, torch.Tensor]:
        s, t = self.net(_resize(cond, size)).chunk(2, dim=1)
        s = self.clamp * torch.tanh(s / self.clamp)
        return s - s.mean(dim=(1, 2, 3), keepdim=True), t  # sum of log-scales = 0: volume kept

    def forward(self, z: torch.Tensor, cond: torch.Tensor) -> torch.Tensor:
        s, t = self.scale_shift(cond, z.shape[-2:])
        return z * torch.exp(s) + t

    def inverse(self, y: torch.Tensor, cond: torch.Tensor) -> torch.Tensor:
        s, t = self.scale_shift(cond, y.shape[-2:])
        return (y - t) * torch.exp(-s)


class PyramidBlock(nn.Module):
    """Per-level 1 x 1 mixing, then fine<-coarse and coarse<-fine couplings of each adjacent
    pair."""

    def __init__(self, channels: int, levels: int, hidden: int) -> None:
        super().__init__()
        self.mix = nn.ModuleList(VolumeNormConv(channels) for _ in range(levels))
        self.fine = nn.ModuleList(CrossLevelCoupling(channels, hidden) for _ in range(levels - 1))
        self.coarse = nn.ModuleList(CrossLevelCoupling(channels, hidden) for _ in range(levels - 1))

    def forward(self, zs: list[torch.Tensor]) -> list[torch.Tensor]:
        zs = [mix(z) for mix, z in zip(self.mix, zs)]
        for i in range(len(zs) - 1):
            zs[i] = self.fine[i](zs[i], zs[i + 1])
            zs[i + 1] = self.coarse[i](zs[i + 1], zs[i])
        return zs

    def inverse(self, zs: list[torch.Tensor]) -> list[torch.Tensor]:
        zs = list(zs)
        for i in reversed(range(len(zs) - 1)):
            zs[i + 1] = self.coarse[i].inverse(zs[i + 1], zs[i])
            zs[i] = self.fine[i].inverse(zs[i], zs[i + 1])
        return [mix.inverse(z) for mix, z in zip(self.mix, zs)]


class PyramidFlow(ImageEmbedder):
    """Small from-scratch PyramidFlow; see the module docstring.

    n_channels: input channels. image_size: input side (divisible by 2^levels). levels: pyramid
    levels. blocks: coupling blocks. hidden: channels of the coupling networks. momentum: of the
    template's running mean. layout, detach_h: see image_base.
    """

    test_params: ClassVar[dict] = {"image_size": 32, "blocks": 1, "hidden": 8}

    def __init__(
        self,
        n_channels: int = 3,
        image_size: int = 256,
        levels: int = 3,
        blocks: int = 4,
        hidden: int = 32,
        momentum: float = 0.1,
        layout: str = "channels",
        detach_h: bool = False,
    ) -> None:
        super().__init__()
        if levels < 2:
            raise ParameterError(f"PyramidFlow needs at least 2 pyramid levels, got {levels}")
        if image_size % (2**levels):
            raise ParameterError(
                f"image_size must be divisible by 2^levels = {2**levels}, got {image_size}"
            )
        self.levels = levels
        self.momentum = momentum
        channels = 4 * n_channels
        self.blocks = nn.ModuleList(PyramidBlock(channels, levels, hidden) for _ in range(blocks))
        side = image_size // 2
        for level in range(levels):
            self.register_buffer(
                f"template{level}", torch.zeros(channels, side >> level, side >> level)
            )
        self.register_buffer("template_updates", torch.zeros((), dtype=torch.long))
        self.set_feature_shape(channels, side, side, layout, detach_h)

    def pyramid(self, x: torch.Tensor) -> list[torch.Tensor]:
        """Pixel-unshuffle, then Laplacian bands (finest first; the last is the low-pass
        residual)."""
        g = F.pixel_unshuffle(x - 0.5, 2)
        bands = []
        for _ in range(self.levels - 1):
            low = F.avg_pool2d(g, 2)
            bands.append(g - F.interpolate(low, scale_factor=2, mode="nearest"))
            g = low
        return [*bands, g]

    def unpyramid(self, bands: list[torch.Tensor]) -> torch.Tensor:
        g = bands[-1]
        for band in reversed(bands[:-1]):
            g = band + F.interpolate(g, scale_factor=2, mode="nearest")
        return F.pixel_shuffle(g, 2) + 0.5

    def encode(self, x: torch.Tensor) -> list[torch.Tensor]:
        zs = self.pyramid(x)
        for block in self.blocks:
            zs = block(zs)
        return zs

    def decode(self, zs: list[torch.Tensor]) -> torch.Tensor:
        for block in reversed(self.blocks):
            zs = block.inverse(zs)
        return self.unpyramid(zs)

    def templates(self) -> list[torch.Tensor]:
        return [getattr(self, f"template{level}") for level in range(self.levels)]

    def forward(self, x: torch.Tensor) -> EmbedderOutput:
        zs = self.encode(x)
        if self.training:
            references = [z.mean(dim=0, keepdim=True) for z in zs]
            with torch.no_grad():
                rate = 1.0 if int(self.template_updates) == 0 else self.momentum
                for template, ref in zip(self.templates(), references):
                    template.lerp_(ref[0].detach(), rate)
                self.template_updates += 1
        else:
            references = [t[None] for t in self.templates()]
        loss = sum(((z - ref) ** 2).mean() for z, ref in zip(zs, references))
        size = x.shape[-2:]
        maps = sum(
            F.interpolate(
                ((z - ref) ** 2).mean(dim=1, keepdim=True),
                size=size,
                mode="bilinear",
                align_corners=False,
            )
            for z, ref in zip(zs, references)
        )[:, 0]
        return EmbedderOutput(h=self.to_sequence(zs[0]), loss=loss, score=maps.flatten(1))
