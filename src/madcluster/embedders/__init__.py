"""Base Embedders: the registry of built-in ones and the contract for your own.

``build_embedder("drnn", n_features, **params)`` builds a registered embedder. To use your own
``nn.Module`` pass the instance to ``MADCluster(embedder=...)``; it is adapted by ModuleEmbedder.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from madcluster.embedders.anomaly_transformer import AnomalyTransformer
from madcluster.embedders.base import BaseEmbedder, EmbedderOutput, ModuleEmbedder
from madcluster.embedders.beatgan import BeatGAN
from madcluster.embedders.dcdetector import DCdetector
from madcluster.embedders.deepsvdd import DeepSVDD
from madcluster.embedders.drnn import DilatedRNN
from madcluster.embedders.omnianomaly import OmniAnomaly
from madcluster.embedders.thoc import THOC
from madcluster.embedders.usad import USAD
from madcluster.exceptions import ParameterError

EMBEDDERS: dict[str, Callable[..., BaseEmbedder]] = {
    "drnn": DilatedRNN,
    "deepsvdd": DeepSVDD,
    "usad": USAD,
    "beatgan": BeatGAN,
    "omnianomaly": OmniAnomaly,
    "anomaly_transformer": AnomalyTransformer,
    "dcdetector": DCdetector,
    "thoc": THOC,
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
        raise ParameterError(f"unknown embedder {name!r}; available: {', '.join(sorted(EMBEDDERS))}")
    if window_size is not None and "window_size" in inspect.signature(EMBEDDERS[key]).parameters:
        given = params.setdefault("window_size", window_size)
        if given != window_size:
            raise ParameterError(f"embedder_params window_size={given} != window_size={window_size}")
    try:
        return EMBEDDERS[key](n_features, **params)
    except TypeError as exc:
        raise ParameterError(f"bad embedder_params for {name!r}: {exc}") from None


__all__ = [
    "EMBEDDERS", "THOC", "USAD", "AnomalyTransformer", "BaseEmbedder", "BeatGAN", "DCdetector",
    "DeepSVDD", "DilatedRNN", "EmbedderOutput",
    "ModuleEmbedder", "OmniAnomaly", "build_embedder",
]
