"""The torch part of :meth:`MADCluster.fit <madcluster.estimator.detector.MADCluster.fit>`: seeds,
the network, the training / validation split (the END of the training series, never test data), the
optional checkpoint, and the loop of :func:`madcluster.training.loop.train_network`; and building a
network from the estimator's parameters (for a fit and for a model file).

It returns what training produced (:class:`TrainedNetwork`) and writes nothing onto the estimator.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from madcluster.data.validation import check_device
from madcluster.defaults import AUTO, DEFAULT_BATCH_SIZE
from madcluster.embedders import EMBEDDERS, make_embedder
from madcluster.embedders.base import BaseEmbedder
from madcluster.method.config import MethodConfig
from madcluster.method.heads import build_head, head_centers
from madcluster.training.checkpoint import Checkpointing, data_digest
from madcluster.training.loop import TrainSettings, train_network, validation_rows
from madcluster.training.network import PRECISIONS, MADClusterNet


@dataclass(frozen=True)
class TrainedNetwork:
    """What training produced: the network, the device it is on, the per-epoch history and the
    center's path (row 0 its initial value; None for base-only)."""

    net: MADClusterNet
    device: str
    history: dict[str, Any]
    center_path: np.ndarray | None


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


def train_detector_network(
    params: Mapping[str, Any],
    build: Callable[[], MADClusterNet],
    identity: dict[str, str],
    scaled: np.ndarray,
    extra_val: np.ndarray | None,
    pool_radius: bool,
    checkpoint: str | os.PathLike | None,
    resume: bool,
) -> TrainedNetwork:
    """Build (``build``) and train a network on the model input ``scaled`` with the estimator's
    ``params``; ``identity``: the parameters a resumed fit must share with the interrupted one."""
    n_val = (
        0
        if extra_val is not None
        else validation_rows(len(scaled), params["validation_size"], params["window_size"])
    )
    device = check_device(params["device"])  # one-line DeviceError for e.g. cuda on CPU-only torch
    seed = params["random_state"]
    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
        if seed is not None:
            torch.manual_seed(seed)
        generator = torch.Generator().manual_seed(
            seed if seed is not None else int(torch.seed() % 2**63)
        )
        net = build().to(device)
        series = torch.from_numpy(scaled).to(device)
        train_part = series[: len(series) - n_val]
        val_part = series[len(series) - n_val :] if n_val else None
        if extra_val is not None:
            val_part = torch.from_numpy(extra_val).to(device)
        batch_size, epoch_windows = resolve_training_batch(params)
        settings = TrainSettings(
            **{k: params[k] for k in TrainSettings.from_estimator},
            batch_size=batch_size,
            epoch_windows=epoch_windows,
            # a batch the user chose may be what fits the device's memory: theirs for every pass
            eval_batch_size=(
                max(batch_size, DEFAULT_BATCH_SIZE) if params["batch_size"] == AUTO else None
            ),
            progress=bool(params["verbose"]),
        )
        path: list[np.ndarray] = []
        checkpointing = None
        if checkpoint is not None:
            digests = {
                "train": data_digest(scaled),
                "validation": None if extra_val is None else data_digest(extra_val),
            }
            checkpointing = Checkpointing(Path(checkpoint), {**identity, **digests}, resume, path)
        history = train_network(
            net,
            train_part,
            val_part,
            settings,
            generator,
            observe_epoch=lambda epoch, net: path.extend(head_centers(net.head)),
            radius_extra=val_part if pool_radius else None,
            checkpointing=checkpointing,
        )
    return TrainedNetwork(net, str(device), history, np.stack(path) if path else None)
