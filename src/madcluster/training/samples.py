"""How the training loop cuts its training tensor into samples: the :class:`Sampler` contract and
the windows of a series (images bring their own, :mod:`madcluster.images.detector`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import torch

from madcluster.data.windows import gather_windows, window_starts


class Sampler(Protocol):
    """How the loop cuts its training tensor into samples (windows of a series, whole images...)."""

    def starts(self, n_samples: int, *, tiles: bool = False) -> np.ndarray:
        """Sample indices: every training sample, or (``tiles``) a non-overlapping cover for eval
        passes."""

    def gather(self, data: torch.Tensor, index: torch.Tensor | np.ndarray) -> torch.Tensor:
        """The batch of samples at ``index``."""


@dataclass(frozen=True)
class SeriesWindows:
    """Windows ``[B, L, D]`` of a series ``[T, D]``: every ``stride`` steps, or tiled."""

    window_size: int
    stride: int = 1

    def starts(self, n_samples: int, *, tiles: bool = False) -> np.ndarray:
        return window_starts(
            n_samples, self.window_size, self.window_size if tiles else self.stride
        )

    def gather(self, data: torch.Tensor, index: torch.Tensor | np.ndarray) -> torch.Tensor:
        return gather_windows(data, index, self.window_size)
