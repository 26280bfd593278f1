"""Base Embedders: the registries of built-in ones (time series, images) and the contract for your
own.

``build_embedder("drnn", n_features, **params)`` builds a registered embedder. To use your own
``nn.Module`` pass the instance to ``MADCluster(embedder=...)``; it is adapted by ModuleEmbedder.
"""

from __future__ import annotations

import copy
from typing import Any

import torch
from torch import nn

from madcluster.embedders.anomaly_transformer import AnomalyTransformer
from madcluster.embedders.base import BaseEmbedder, EmbedderOutput, ModuleEmbedder
from madcluster.embedders.beatgan import BeatGAN
from madcluster.embedders.dcdetector import DCdetector
from madcluster.embedders.deepsvdd import DeepSVDD
from madcluster.embedders.drnn import DilatedRNN
from madcluster.embedders.image_base import ImageEmbedder
from madcluster.embedders.omnianomaly import OmniAnomaly
from madcluster.embedders.pyramidflow import PyramidFlow
from madcluster.embedders.rd4ad import RD4AD
from madcluster.embedders.thoc import THOC
from madcluster.embedders.usad import USAD
from madcluster.exceptions import ParameterError

EMBEDDERS: dict[str, type[BaseEmbedder]] = {
    "drnn": DilatedRNN,
    "deepsvdd": DeepSVDD,
    "usad": USAD,
    "beatgan": BeatGAN,
    "omnianomaly": OmniAnomaly,
    "anomaly_transformer": AnomalyTransformer,
    "dcdetector": DCdetector,
    "thoc": THOC,
}

# Image base models (inputs [B, C, H, W]); kept apart so the time-series paths never list them.
IMAGE_EMBEDDERS: dict[str, type[ImageEmbedder]] = {
    "rd4ad": RD4AD,
    "pyramidflow": PyramidFlow,
}


def build_embedder(
    name: str, n_features: int, window_size: int | None = None, **params: Any
) -> BaseEmbedder:
    """Build the registered embedder ``name`` for inputs with ``n_features`` channels.

    ``window_size`` is passed on to embedders whose size depends on it (USAD, BeatGAN), so a window
    they cannot handle is refused here, at construction.
    """
    key = name.lower()
    if key not in EMBEDDERS:
        raise ParameterError(
            f"unknown embedder {name!r}; available: {', '.join(sorted(EMBEDDERS))}"
        )
    if window_size is not None and EMBEDDERS[key].window_dependent:
        given = params.setdefault("window_size", window_size)
        if given != window_size:
            raise ParameterError(
                f"embedder_params window_size={given} != window_size={window_size}"
            )
    try:
        return EMBEDDERS[key](n_features, **params)
    except TypeError as exc:
        raise ParameterError(f"bad embedder_params for {name!r}: {exc}") from None


def build_image_embedder(
    name: str, n_channels: int, image_size: int, **params: Any
) -> ImageEmbedder:
    """Build the registered image embedder ``name`` for ``n_channels``-channel square images."""
    key = name.lower()
    if key not in IMAGE_EMBEDDERS:
        raise ParameterError(
            f"unknown image embedder {name!r}; available: {', '.join(sorted(IMAGE_EMBEDDERS))}"
        )
    given = params.setdefault("image_size", image_size)
    if given != image_size:
        raise ParameterError(f"embedder_params image_size={given} != image_size={image_size}")
    try:
        return IMAGE_EMBEDDERS[key](n_channels, **params)
    except TypeError as exc:
        raise ParameterError(f"bad embedder_params for {name!r}: {exc}") from None


def embedder_name(embedder: nn.Module) -> str:
    """The registered name of ``embedder``'s kind (its class name for a custom module), for
    messages."""
    module = getattr(embedder, "module", embedder)  # a ModuleEmbedder: the user's module
    names = [n for n, kind in EMBEDDERS.items() if type(embedder) is kind]
    return names[0] if names else type(module).__name__


def make_embedder(
    spec: str | nn.Module, n_features: int, window_size: int, params: dict[str, Any] | None = None
) -> BaseEmbedder:
    """The embedder ``MADCluster(embedder=spec)`` trains: a registered one by name, or a copy of
    the user's module (a plain ``nn.Module`` adapted by :class:`ModuleEmbedder`)."""
    if isinstance(spec, str):
        return build_embedder(spec, n_features, window_size=window_size, **(params or {}))
    if isinstance(spec, BaseEmbedder):
        return copy.deepcopy(spec)
    if isinstance(spec, nn.Module):
        module = copy.deepcopy(spec)
        return ModuleEmbedder(module, out_features=_probe_features(module, n_features, window_size))
    raise ParameterError(
        f"embedder must be a registered name or a torch.nn.Module, got {type(spec).__name__}"
    )


def _probe_features(module: nn.Module, n_features: int, window_size: int) -> int:
    """Run a tiny batch through a user's module to check its output shape and read f."""
    x = torch.zeros(2, window_size, n_features)
    try:
        with torch.no_grad():
            out = module(x)
    except Exception as exc:  # noqa: BLE001 - a user's module can fail in any way; say where
        raise ParameterError(
            f"the embedder module failed on a batch of shape {tuple(x.shape)} [B, L, D]: {exc}"
        ) from None
    h = getattr(out, "h", out)
    if not isinstance(h, torch.Tensor) or h.dim() != 3 or tuple(h.shape[:2]) != (2, window_size):
        shape = tuple(h.shape) if isinstance(h, torch.Tensor) else type(h).__name__
        raise ParameterError(
            f"the embedder module must return h of shape [B, L, f] = [2, {window_size}, f] for "
            f"input {tuple(x.shape)}; got {shape}"
        )
    return int(h.shape[-1])


__all__ = [
    "EMBEDDERS",
    "IMAGE_EMBEDDERS",
    "RD4AD",
    "THOC",
    "USAD",
    "AnomalyTransformer",
    "BaseEmbedder",
    "BeatGAN",
    "DCdetector",
    "DeepSVDD",
    "DilatedRNN",
    "EmbedderOutput",
    "ImageEmbedder",
    "ModuleEmbedder",
    "OmniAnomaly",
    "PyramidFlow",
    "build_embedder",
    "build_image_embedder",
    "embedder_name",
    "make_embedder",
]
