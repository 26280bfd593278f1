"""The torch part of :meth:`MADCluster.fit <madcluster.estimator.detector.MADCluster.fit>`: seeds, the
network, the training / validation split (the END of the training series, never test data), the
optional checkpoint, and the loop of :func:`madcluster.training.loop.train_network`.

Kept apart from the estimator so ``detector.py`` reads as the estimator's contract; what it sets on
the detector (``net_``, ``device_``, ``history_``, ``center_path_``) is documented there.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

from madcluster.data.validation import check_device
from madcluster.method.heads import head_centers
from madcluster.training.checkpoint import Checkpointing, data_digest
from madcluster.training.loop import MADClusterNet, TrainSettings, train_network, validation_rows

if TYPE_CHECKING:
    from madcluster.estimator.contracts import TrainableDetector


def train_detector_network(
    detector: TrainableDetector, build_network: Callable[[], MADClusterNet], identity: dict[str, str],
    scaled: np.ndarray, extra_val: np.ndarray | None, pool_radius: bool,
    checkpoint: str | os.PathLike | None, resume: bool,
) -> None:
    """Build (``build_network``) and train ``detector.net_`` on the model input ``scaled``;
    ``identity``: the parameters a resumed fit must share with the interrupted one."""
    n_val = 0 if extra_val is not None else validation_rows(len(scaled), detector.validation_size, detector.window_size)
    device = check_device(detector.device)  # one-line DeviceError for e.g. cuda on CPU-only torch
    detector.device_ = str(device)
    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
        if detector.random_state is not None:
            torch.manual_seed(detector.random_state)
        generator = torch.Generator().manual_seed(detector.random_state if detector.random_state is not None else int(torch.seed() % 2**63))
        detector.net_ = build_network().to(device)
        series = torch.from_numpy(scaled).to(device)
        train_part = series[: len(series) - n_val]
        val_part = series[len(series) - n_val :] if n_val else None
        if extra_val is not None:
            val_part = torch.from_numpy(extra_val).to(device)
        settings = TrainSettings(**{k: getattr(detector, k) for k in TrainSettings.from_estimator}, progress=bool(detector.verbose))
        path: list[np.ndarray] = []
        checkpointing = None
        if checkpoint is not None:
            digests = {"train": data_digest(scaled), "validation": None if extra_val is None else data_digest(extra_val)}
            checkpointing = Checkpointing(Path(checkpoint), {**identity, **digests}, resume, path)
        detector.history_ = train_network(
            detector.net_, train_part, val_part, settings, generator,
            observe_epoch=lambda epoch, net: path.extend(head_centers(net.head)),
            radius_extra=val_part if pool_radius else None, checkpointing=checkpointing,
        )
    # c after epoch pretrain_epochs + i (row 0: its initial value); None for base-only
    detector.center_path_ = np.stack(path) if path else None

