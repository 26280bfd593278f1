"""RD4AD (Deng & Li, CVPR 2022): anomaly detection by reverse distillation.

A frozen teacher encoder (a ResNet / WideResNet, stages 1-3) gives features at strides 4, 8 and
16; a trainable one-class bottleneck embedding (OCBE) fuses them (stage 1 and 2 outputs are
strided down to stage 3's size, concatenated, then one residual stage with stride 2) into a compact
code; a student decoder, the teacher's mirror, rebuilds the three teacher features from that code.

- loss: sum over the three scales of ``1 - cos`` between teacher and student features, each
  flattened per image (the paper's Eq. 2-3);
- score: the anomaly map, sum over the scales of the per-position ``1 - cos`` along channels,
  upsampled to the input size and Gaussian-smoothed (sigma 4 at 256 px, scaled with the size); the
  image score is its maximum (taken by the image detector);
- h: the OCBE output ``[B, 512 e, H/32, W/32]`` (e = the block expansion), the "one-class"
  embedding, given to MADCluster in the chosen layout.

The paper's teacher is an ImageNet-pretrained WideResNet-50-2. Pass its torchvision ``.pth`` as
``weights``; without it the teacher is randomly initialised (and frozen), which is NOT the paper's
model: its numbers are then a check that the pipeline works, not a reproduction.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import ClassVar

import torch
from torch import nn
from torch.nn import functional as F

from madcluster.embedders.base import EmbedderOutput
from madcluster.embedders.image_base import ImageEmbedder, calibrate_batch_norm, gaussian_blur
from madcluster.embedders.resnet import ResNetEncoder, load_torchvision_weights, make_stage
from madcluster.exceptions import DataError, ParameterError

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


def _conv_bn_relu(cin: int, cout: int, stride: int) -> list[nn.Module]:
    return [
        nn.Conv2d(cin, cout, 3, stride, 1, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
    ]


def _up_stage(
    block: type[nn.Module], cin: int, cout: int, blocks: int, width_per_group: int
) -> nn.Sequential:
    """The student's mirror of a teacher stage: a stride-2 transposed conv, then residual blocks."""
    expansion = block.expansion  # type: ignore[attr-defined]
    up = [
        nn.ConvTranspose2d(cin, cout, 2, 2, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
    ]
    return nn.Sequential(
        *up, *make_stage(block, cout, cout // expansion, blocks, 1, width_per_group)
    )


class RD4AD(ImageEmbedder):
    """Reverse distillation with a frozen teacher; see the module docstring.

    n_channels: input channels (1 grayscale, repeated to RGB for the teacher; 3 RGB).
    image_size: input side (a multiple of 32). backbone: the teacher architecture (torchvision
        name).
    weights: path of the teacher's torchvision ``state_dict``, loaded in :meth:`init_from_data`
        (None: random teacher). decoder_blocks: residual blocks per student stage.
    sigma: smoothing of the map in pixels (None: 4 * image_size / 256). layout, detach_h: see
        image_base.
    """

    test_params: ClassVar[dict] = {"backbone": "resnet18", "image_size": 32}

    def __init__(
        self,
        n_channels: int = 3,
        image_size: int = 256,
        backbone: str = "wide_resnet50_2",
        weights: str | None = None,
        decoder_blocks: int = 1,
        sigma: float | None = None,
        layout: str = "channels",
        detach_h: bool = False,
    ) -> None:
        super().__init__()
        if n_channels not in (1, 3):
            raise DataError(
                f"RD4AD takes grayscale or RGB images (1 or 3 channels), got {n_channels}"
            )
        if image_size % 32 or image_size < 32:
            raise ParameterError(
                f"RD4AD needs an image_size that is a multiple of 32, got {image_size}"
            )
        self.n_channels = n_channels
        self.weights = os.fspath(weights) if weights is not None else None
        self.sigma = 4.0 * image_size / 256 if sigma is None else float(sigma)
        self.teacher = ResNetEncoder(backbone)
        self.teacher.requires_grad_(False)
        block = self.teacher.block
        e = block.expansion  # type: ignore[attr-defined]
        width = 128 if backbone.startswith("wide") else 64
        c1, c2, c3 = self.teacher.channels
        self.down1 = nn.Sequential(*_conv_bn_relu(c1, c2, 2), *_conv_bn_relu(c2, c3, 2))
        self.down2 = nn.Sequential(*_conv_bn_relu(c2, c3, 2))
        self.fuse = make_stage(block, 3 * c3, 512, 1, 2, width)
        self.decoder = nn.ModuleList(
            [
                _up_stage(block, 512 * e, c3, decoder_blocks, width),
                _up_stage(block, c3, c2, decoder_blocks, width),
                _up_stage(block, c2, c1, decoder_blocks, width),
            ]
        )
        self.set_feature_shape(512 * e, image_size // 32, image_size // 32, layout, detach_h)

    def train(self, mode: bool = True) -> RD4AD:
        super().train(mode)
        self.teacher.eval()  # frozen: its batch-norm statistics never move in training
        return self

    def init_from_data(self, windows: Callable[[], Iterable[torch.Tensor]]) -> None:
        """Load the teacher's pretrained weights, if a file was given (once, before training); a
        random teacher instead gets its batch-norm statistics from the training images (else its
        activations are unnormalised). Then fix h's scale (see image_base)."""
        if self.weights is not None:
            load_torchvision_weights(self.teacher, self.weights)
        else:
            calibrate_batch_norm(
                self.teacher,
                windows,
                trainable_only=False,
                run=lambda x: self.teacher(self.normalise(x)),
            )
        super().init_from_data(windows)

    @staticmethod
    def normalise(x: torch.Tensor) -> torch.Tensor:
        """Images in [0, 1] as the teacher expects them: RGB, ImageNet mean and std."""
        if x.shape[1] == 1:
            x = x.expand(-1, 3, -1, -1)
        mean = x.new_tensor(IMAGENET_MEAN).view(1, 3, 1, 1)
        std = x.new_tensor(IMAGENET_STD).view(1, 3, 1, 1)
        return (x - mean) / std

    def forward(self, x: torch.Tensor) -> EmbedderOutput:
        with torch.no_grad():
            teacher = self.teacher(self.normalise(x))
        f1, f2, f3 = teacher
        code = self.fuse(torch.cat([self.down1(f1), self.down2(f2), f3], dim=1))
        student, s = [], code
        for stage in self.decoder:
            s = stage(s)
            student.append(s)
        student = student[::-1]  # strides 4, 8, 16 as the teacher's
        loss = sum(
            (1 - F.cosine_similarity(t.flatten(1), s.flatten(1), dim=1)).mean()
            for t, s in zip(teacher, student)
        )
        size = x.shape[-2:]
        maps = sum(
            F.interpolate(
                (1 - F.cosine_similarity(t, s, dim=1))[:, None],
                size=size,
                mode="bilinear",
                align_corners=False,
            )
            for t, s in zip(teacher, student)
        )[:, 0]
        maps = gaussian_blur(maps, self.sigma)
        return EmbedderOutput(h=self.to_sequence(code), loss=loss, score=maps.flatten(1))
