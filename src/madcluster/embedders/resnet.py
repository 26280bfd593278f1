"""ResNet / WideResNet stems and stages 1-3 with torchvision's ``state_dict`` keys.

torchvision cannot be installed beside this project's torch, so RD4AD's teacher is defined here;
its parameter names (``conv1``, ``bn1``, ``layer1.0.conv1``, ``layer1.0.downsample.0``, ...) are
torchvision's, so the ``.pth`` of ``torchvision.models.wide_resnet50_2(weights=...)`` (or resnet18 /
34 / 50) loads with :func:`load_torchvision_weights`; ``layer4`` and ``fc`` are not used.
"""

from __future__ import annotations

import os

import torch
from torch import nn

from madcluster.exceptions import ModelFileError, ParameterError

# name -> (block, blocks per stage, width per group)
ARCHITECTURES: dict[str, tuple[str, tuple[int, int, int, int], int]] = {
    "resnet18": ("basic", (2, 2, 2, 2), 64),
    "resnet34": ("basic", (3, 4, 6, 3), 64),
    "resnet50": ("bottleneck", (3, 4, 6, 3), 64),
    "wide_resnet50_2": ("bottleneck", (3, 4, 6, 3), 128),
}


def conv3x3(cin: int, cout: int, stride: int = 1) -> nn.Conv2d:
    return nn.Conv2d(cin, cout, 3, stride, 1, bias=False)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(
        self, inplanes: int, planes: int, stride: int = 1, width_per_group: int = 64
    ) -> None:
        super().__init__()
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = _shortcut(inplanes, planes, stride)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + (x if self.downsample is None else self.downsample(x)))


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(
        self, inplanes: int, planes: int, stride: int = 1, width_per_group: int = 64
    ) -> None:
        super().__init__()
        width = planes * width_per_group // 64
        self.conv1 = nn.Conv2d(inplanes, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = conv3x3(width, width, stride)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, planes * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = _shortcut(inplanes, planes * 4, stride)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + (x if self.downsample is None else self.downsample(x)))


def _shortcut(cin: int, cout: int, stride: int) -> nn.Sequential | None:
    if stride == 1 and cin == cout:
        return None
    return nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))


BLOCKS = {"basic": BasicBlock, "bottleneck": Bottleneck}


def make_stage(
    block: type[nn.Module],
    inplanes: int,
    planes: int,
    blocks: int,
    stride: int,
    width_per_group: int = 64,
) -> nn.Sequential:
    """A ResNet stage: ``blocks`` residual blocks, the first one with ``stride``."""
    expansion = block.expansion  # type: ignore[attr-defined]
    layers = [block(inplanes, planes, stride, width_per_group)]
    layers += [block(planes * expansion, planes, 1, width_per_group) for _ in range(blocks - 1)]
    return nn.Sequential(*layers)


class ResNetEncoder(nn.Module):
    """ResNet stem + stages 1-3; returns the three stage outputs (strides 4, 8, 16)."""

    def __init__(self, architecture: str = "wide_resnet50_2") -> None:
        super().__init__()
        if architecture not in ARCHITECTURES:
            raise ParameterError(
                f"unknown backbone {architecture!r}; choose one of {', '.join(ARCHITECTURES)}"
            )
        kind, counts, width = ARCHITECTURES[architecture]
        block = BLOCKS[kind]
        self.block = block
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        e = block.expansion
        self.layer1 = make_stage(block, 64, 64, counts[0], 1, width)
        self.layer2 = make_stage(block, 64 * e, 128, counts[1], 2, width)
        self.layer3 = make_stage(block, 128 * e, 256, counts[2], 2, width)
        self.channels = (64 * e, 128 * e, 256 * e)

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        f1 = self.layer1(x)
        f2 = self.layer2(f1)
        return [f1, f2, self.layer3(f2)]


def load_torchvision_weights(encoder: ResNetEncoder, path: str | os.PathLike) -> None:
    """Load a torchvision ResNet ``state_dict`` (``.pth``) into ``encoder``; ``layer4.*`` and
    ``fc.*`` are ignored, anything else missing or mis-shaped is a ``ModelFileError``."""
    if not os.path.isfile(path):
        raise ModelFileError(
            f"teacher weights {os.fspath(path)!r} not found: pass the .pth of a torchvision "
            "ResNet, e.g. torch.save(wide_resnet50_2(weights='IMAGENET1K_V1').state_dict(), path)"
        )
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - pickle/zip errors of any kind: name the file
        raise ModelFileError(f"cannot read teacher weights {os.fspath(path)!r}: {exc}") from None
    if isinstance(state, dict) and "state_dict" in state:
        state = state["state_dict"]
    if not isinstance(state, dict):
        raise ModelFileError(f"{os.fspath(path)!r} does not hold a state_dict")
    used = {k: v for k, v in state.items() if not k.startswith(("layer4.", "fc."))}
    try:
        encoder.load_state_dict(used, strict=True)
    except RuntimeError as exc:
        raise ModelFileError(
            f"{os.fspath(path)!r} does not match the teacher architecture: {exc}"
        ) from None
