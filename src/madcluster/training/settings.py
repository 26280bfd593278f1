"""What the training loop (:mod:`madcluster.training.loop`) is told: window, epochs, batches,
optimiser and early stopping, filled from the estimator's parameters of the same names.

Why a module of its own: the estimator, the image detector and the tests build settings without
reading the loop, and the loop's module stays the procedure alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from madcluster.defaults import DEFAULT_BATCH_SIZE, DEFAULT_EPOCHS, DEFAULT_WINDOW_SIZE
from madcluster.training.samples import Sampler, SeriesWindows

EARLY_STOPPING = ("loss", "base-loss", "relative-distance")


@dataclass
class TrainSettings:
    """What the loop needs; the estimator's parameters of the same names fill the fields."""

    from_estimator: ClassVar[tuple[str, ...]] = (
        "window_size",
        "stride",
        "epochs",
        "lr",
        "weight_decay",
        "patience",
        "early_stopping",
        "pretrain_epochs",
    )  # batch_size and epoch_windows: resolved first (the estimator's may say "auto")
    window_size: int = DEFAULT_WINDOW_SIZE
    stride: int = 1
    epochs: int = DEFAULT_EPOCHS
    batch_size: int = DEFAULT_BATCH_SIZE
    lr: float = 1e-3
    weight_decay: float = 1e-5
    patience: int = 3
    early_stopping: str = "loss"
    pretrain_epochs: int = 0
    epoch_windows: int | None = None
    progress: bool = False
    description: str = "MADCluster"
    sampler: Sampler | None = None  # None: windows of window_size every stride steps
    # windows per batch of the passes without gradients (the head's start and per-epoch update,
    # validation); None: batch_size. Larger than a small training batch is cheaper on a CPU (512
    # windows of the D-RNN: 0.21 against 0.28 s in batches of 128 and 32) and the same numbers.
    eval_batch_size: int | None = None

    def samples(self) -> Sampler:
        return (
            self.sampler
            if self.sampler is not None
            else SeriesWindows(self.window_size, self.stride)
        )
