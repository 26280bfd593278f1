"""Base Embedders: the registry of built-in ones and the contract for your own.

``build_embedder("drnn", n_features, **params)`` builds a registered embedder. To use your own
``nn.Module`` pass the instance to ``MADCluster(embedder=...)``; it is adapted by ModuleEmbedder.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from madcluster.embedders.base import BaseEmbedder, EmbedderOutput, ModuleEmbedder
from madcluster.embedders.drnn import DilatedRNN

EMBEDDERS: dict[str, Callable[..., BaseEmbedder]] = {
    "drnn": DilatedRNN,
}


def build_embedder(name: str, n_features: int, **params: Any) -> BaseEmbedder:
    """Build the registered embedder ``name`` for inputs with ``n_features`` channels."""
    key = name.lower()
    if key not in EMBEDDERS:
        raise ValueError(f"unknown embedder {name!r}; available: {', '.join(sorted(EMBEDDERS))}")
    try:
        return EMBEDDERS[key](n_features, **params)
    except TypeError as exc:
        raise ValueError(f"bad embedder_params for {name!r}: {exc}") from None


__all__ = ["EMBEDDERS", "BaseEmbedder", "DilatedRNN", "EmbedderOutput", "ModuleEmbedder", "build_embedder"]
