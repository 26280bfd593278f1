"""The images a detector trains on and scores: the input checked and resized, and how the training
loop draws them (one image per sample, batches evened out for batch norm)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import torch
from torch.nn import functional as F

from madcluster.exceptions import DataError
from madcluster.images.io import read_images_or_folder


class ImageBatches:
    """How the training loop draws samples from images ``[N, C, H, W]``: one image per sample."""

    def starts(self, n_samples: int, *, tiles: bool = False) -> np.ndarray:
        if n_samples < 1:
            raise ValueError("no images to draw from")
        return np.arange(n_samples, dtype=np.int64)

    def gather(self, data: torch.Tensor, index: torch.Tensor | np.ndarray) -> torch.Tensor:
        return data[torch.as_tensor(index, dtype=torch.long, device=data.device)]


def training_batch_size(n_images: int, batch_size: int) -> int:
    """``batch_size``, unless it leaves a last batch of one image (MVTec's bottle: 209 = 13 x 16 +
    1), which batch norm cannot train on: then the same number of batches, evened out (209 -> 15s,
    last 14)."""
    if n_images <= batch_size or n_images % batch_size != 1:
        return batch_size
    n_batches = -(-n_images // batch_size)
    return -(-n_images // n_batches)


def check_images(
    X: Any, *, image_size: int, n_channels: int | None = None, name: str = "X"
) -> np.ndarray:
    """Images as float32 ``[N, C, image_size, image_size]`` in [0, 1], or ``DataError``.

    Accepts a folder (or an MVTec class folder: its ``train/good``), one image file, or an array
    ``[N, C, H, W]`` / ``[N, H, W]`` (floats in [0, 1] or uint8), resized (bilinear) when its side
    differs from ``image_size``.
    """
    if isinstance(X, (str, os.PathLike)):
        arr = read_images_or_folder(X, image_size)
    else:
        arr = np.asarray(X)
        if arr.dtype == np.uint8:
            arr = arr.astype(np.float32) / 255.0
        if not np.issubdtype(arr.dtype, np.number) or arr.dtype == object:
            raise DataError(f"{name} must be numeric images, got dtype {arr.dtype}")
        if arr.ndim == 3:
            arr = arr[:, None]
        if arr.ndim != 4:
            raise DataError(
                f"{name} must be images [N, C, H, W] (or a folder path), got shape {arr.shape}"
            )
        if len(arr) == 0:
            raise DataError(f"{name} holds no images")
        if not np.isfinite(arr).all():
            raise DataError(f"{name} contains NaN or inf")
        arr = arr.astype(np.float32)
        if arr.shape[-2:] != (image_size, image_size):
            arr = F.interpolate(
                torch.from_numpy(arr),
                size=(image_size, image_size),
                mode="bilinear",
                align_corners=False,
                antialias=True,
            ).numpy()
    if arr.shape[1] not in (1, 3):
        raise DataError(f"{name} must have 1 (grayscale) or 3 (RGB) channels, got {arr.shape[1]}")
    if n_channels is not None and arr.shape[1] != n_channels:
        kinds = {1: "grayscale", 3: "RGB"}
        raise DataError(
            f"{name} is {kinds[arr.shape[1]]} but the model was trained on {kinds[n_channels]} "
            "images"
        )
    return np.ascontiguousarray(arr, dtype=np.float32)
