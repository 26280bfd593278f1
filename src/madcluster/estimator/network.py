"""The network the estimator's parameters describe: the objective's options
(:func:`method_config`), the roughness channels and the training batch they resolve to, and the
embedder and head they build (:func:`build_network`), for a fit
(:mod:`madcluster.estimator.fitting`) and for a model file
(:mod:`madcluster.estimator.persistence`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from madcluster.defaults import AUTO
from madcluster.embedders import EMBEDDERS, make_embedder
from madcluster.embedders.base import BaseEmbedder
from madcluster.method.config import MethodConfig
from madcluster.method.heads import build_head
from madcluster.training.network import PRECISIONS, MADClusterNet


def method_config(params: Mapping[str, Any]) -> MethodConfig:
    """The objective options among ``params`` as a validated :class:`MethodConfig`."""
    return MethodConfig(
        **{name: params[name] for name in MethodConfig.field_names() if name != "eps"}
    )


def resolve_roughness(params: Mapping[str, Any]) -> int:
    """``roughness_window``, with None resolved to the embedder class's default (0 for a module)."""
    if params["roughness_window"] is not None:
        return int(params["roughness_window"])
    embedder = params["embedder"]
    registered = EMBEDDERS.get(embedder) if isinstance(embedder, str) else None
    return int(getattr(registered, "default_roughness_window", 0))


def resolve_training_batch(params: Mapping[str, Any]) -> tuple[int, int | None]:
    """``(batch_size, epoch_windows)``, each ``"auto"`` resolved to the embedder class's
    ``training_batch`` (128 and 1,920 for a module)."""
    embedder = params["embedder"]
    registered = EMBEDDERS.get(embedder) if isinstance(embedder, str) else None
    batch, windows = getattr(registered, "training_batch", BaseEmbedder.training_batch)
    return (
        batch if params["batch_size"] == AUTO else int(params["batch_size"]),
        windows if params["epoch_windows"] == AUTO else params["epoch_windows"],
    )


def build_network(
    params: Mapping[str, Any], width: int, n_hidden: int | None = None
) -> MADClusterNet:
    """Embedder and head for input ``width`` (D, or 2D with roughness channels); ``n_hidden``: the
    head's input size when it is known (a model file), else the embedder's."""
    embedder = make_embedder(
        params["embedder"], width, params["window_size"], params["embedder_params"]
    )
    head = build_head(n_hidden or embedder.out_features, method_config(params))
    return MADClusterNet(embedder, head, PRECISIONS[params["precision"]])
