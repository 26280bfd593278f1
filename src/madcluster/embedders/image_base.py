"""The Base Embedder contract for images.

An image embedder takes images ``x [B, C, H, W]`` and returns, like every Base Embedder, features
``h [B, L, f]``, its own training loss and its own score; the score is the base model's anomaly
map at the input resolution, flattened to ``[B, H * W]``.

How a feature map ``[B, C', h', w']`` becomes the sequence ``h [B, L, f]`` MADCluster needs is the
``layout`` (the paper's appendix gives one sentence: "[B, C, H x W]"):

- ``channels`` (the ``paper`` configuration, the literal reading): the sequence runs over the C'
  channels, each a vector of its h' x w' spatial values; MADCluster's terms are then per channel,
  so they give an image-level score but no pixel map;
- ``pixels``: the sequence runs over the h' x w' positions, each a vector of C' channel values (one
  h per spatial position); MADCluster's terms then form an ``[h', w']`` map, which the image
  detector upsamples and adds to the base model's pixel map.

Scale: image features are unnormalised (ReLU codes, flow latents), and with ``f`` in the hundreds
``||h - c||^2`` is orders of magnitude above the base model's own loss, so MADCluster's distance
loss would swamp it. Before training, :meth:`ImageEmbedder.init_from_data` therefore fixes one
scale ``s`` from the training images so that h's vectors have unit mean norm, and h = features / s
from then on. A fixed linear rescaling: the base model and its score are unchanged; the cluster
term (cosines) is unchanged; only the distance term's weight against the base loss is set.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import torch
from torch import nn

from madcluster.embedders.base import BaseEmbedder
from madcluster.exceptions import ParameterError

LAYOUTS = ("channels", "pixels")


def check_layout(layout: str) -> str:
    if layout not in LAYOUTS:
        raise ParameterError(f"unknown layout {layout!r}; choose one of {', '.join(LAYOUTS)}")
    return layout


class ImageEmbedder(BaseEmbedder):
    """Base class of image embedders; subclasses call :meth:`set_feature_shape` in ``__init__``."""

    layout: str = "channels"
    feature_shape: tuple[int, int, int]  # (C', h', w') of the map that becomes h

    def set_feature_shape(
        self, channels: int, height: int, width: int, layout: str, detach_h: bool = False
    ) -> None:
        """Declare the map that becomes h; ``detach_h`` stops MADCluster's gradient at h (the head
        then learns on the base model's features without changing them)."""
        self.layout = check_layout(layout)
        self.detach_h = bool(detach_h)
        self.feature_shape = (channels, height, width)
        self.out_features = height * width if layout == "channels" else channels
        self.register_buffer("h_scale", torch.ones(()))

    def to_sequence(self, features: torch.Tensor) -> torch.Tensor:
        """``[B, C', h', w']`` -> ``h``: ``[B, C', h' w']`` (channels) or ``[B, h' w', C']``
        (pixels), divided by the fixed scale ``h_scale``."""
        flat = (features.detach() if self.detach_h else features).flatten(2) / self.h_scale
        return flat if self.layout == "channels" else flat.transpose(1, 2)

    @torch.no_grad()
    def init_from_data(self, windows: Callable[[], Iterable[torch.Tensor]]) -> None:
        """Calibrate batch-norm statistics on the training images (else the eval-mode pass that
        initialises MADCluster's center sees untrained statistics, far from what training sees),
        then fix ``h_scale`` so that h's vectors have unit mean norm."""
        was_training = self.training
        calibrate_batch_norm(self, windows, trainable_only=True)
        self.eval()
        self.h_scale.fill_(1.0)
        total, count = 0.0, 0
        for x in windows():
            h = self(x).h.float()
            total += float(h.pow(2).sum(-1).sqrt().sum())
            count += h.shape[0] * h.shape[1]
        if count and total > 0:
            self.h_scale.fill_(total / count)
        self.train(was_training)

    def head_map(self, terms: torch.Tensor) -> torch.Tensor | None:
        """Per-step head terms ``[B, L]`` as a spatial map ``[B, h', w']`` (pixels layout), else
        None."""
        if self.layout != "pixels":
            return None
        _, height, width = self.feature_shape
        return terms.reshape(terms.shape[0], height, width)


def gaussian_blur(maps: torch.Tensor, sigma: float) -> torch.Tensor:
    """Separable Gaussian smoothing of ``[B, H, W]`` maps (reflect padding); sigma <= 0:
    unchanged."""
    if sigma <= 0:
        return maps
    radius = max(1, round(3 * sigma))
    offsets = torch.arange(-radius, radius + 1, dtype=maps.dtype, device=maps.device)
    kernel = torch.exp(-0.5 * (offsets / sigma) ** 2)
    kernel = kernel / kernel.sum()
    x = maps[:, None]
    pad = min(radius, maps.shape[-1] - 1, maps.shape[-2] - 1)
    if pad < radius:  # maps smaller than the kernel: truncate it
        kernel = (
            kernel[radius - pad : radius + pad + 1] / kernel[radius - pad : radius + pad + 1].sum()
        )
    x = torch.nn.functional.pad(x, (pad, pad, 0, 0), mode="reflect")
    x = torch.nn.functional.conv2d(x, kernel.view(1, 1, 1, -1))
    x = torch.nn.functional.pad(x, (0, 0, pad, pad), mode="reflect")
    x = torch.nn.functional.conv2d(x, kernel.view(1, 1, -1, 1))
    return x[:, 0]


@torch.no_grad()
def calibrate_batch_norm(
    module: nn.Module,
    batches: Callable[[], Iterable[torch.Tensor]],
    *,
    trainable_only: bool,
    run: Callable[[torch.Tensor], object] | None = None,
) -> None:
    """Set the running statistics of ``module``'s batch norms to their average over one pass of
    ``batches`` (``run(x)``, default ``module(x)``, in train mode); ``trainable_only`` skips frozen
    ones. ``module`` is left in eval mode."""
    norms = [
        m
        for m in module.modules()
        if isinstance(m, nn.BatchNorm2d)
        and (not trainable_only or any(p.requires_grad for p in m.parameters()))
    ]
    if not norms:
        return
    momenta = [m.momentum for m in norms]
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # cumulative average over the pass
    module.train()
    for m in norms:
        m.train()
    for x in batches():
        (run or module)(x)
    for m, momentum in zip(norms, momenta):
        m.momentum = momentum
    module.eval()
