"""What ``madcluster fit`` checks before training starts.

Sizes that cannot work are refused with one line and exit status 2, before any epoch runs:

- D-RNN layers whose dilation reaches past the window (layer i has dilation 2**i: with
  ``--layers 40`` the top layers see one step each, and the model allocated gigabytes for nothing);
- a model whose parameters, gradients, optimiser state and one batch's activations cannot fit in
  the memory available (``--hidden-size 100000`` asked for 120 GB in one tensor): estimated on
  torch's meta device, where building the network allocates nothing;
- a training stride or a part's smoothing longer than the training series.

Values that work but mean little are warned about, naming the window count or the series length:
fewer than :data:`FEW_WINDOWS` training windows, a batch larger than the windows an epoch draws.
An allocation that still fails during training ends in one line too (:func:`is_out_of_memory`,
used by :func:`madcluster.cli.main`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from madcluster.defaults import DEFAULT_WINDOW_SIZE
from madcluster.exceptions import ParameterError

#: Fewer training windows than this is warned about: a model of thousands of weights learns little
#: from a few dozen windows.
FEW_WINDOWS = 32
#: Bytes per parameter while training: float32 weight, gradient, Adam's two moments, and the
#: float64 copy the model scores with.
BYTES_PER_PARAMETER = 4 * 4 + 8
#: float32 values kept per step and hidden unit of each layer for the backward pass (a GRU's gates
#: and output, with margin).
ACTIVATION_VALUES = 6
# embedders built on the dilated RNN (layer i: dilation 2**i)
DILATED = ("drnn", "deepsvdd", "thoc")


def check_layers(params: dict[str, Any]) -> None:
    """Refuse D-RNN layers whose dilation 2**(layers - 1) is not shorter than the window."""
    if str(params.get("embedder", "drnn")).lower() not in DILATED:
        return
    layers = (params.get("embedder_params") or {}).get("n_layers")
    window = int(params.get("window_size") or DEFAULT_WINDOW_SIZE)
    if layers is None or not isinstance(layers, int) or window < 2:
        return
    # the most layers whose dilations stay below the window
    useful = max(1, (window - 1).bit_length())
    if layers > useful:
        raise ParameterError(
            f"--layers {layers}: layer {layers} would have dilation 2**{layers - 1} = "
            f"{2 ** (layers - 1):,}, beyond the window of {window} steps, where it sees one step "
            f"at a time; use --layers {useful} or fewer (dilations 1 to {2 ** (useful - 1)}) or a "
            "longer --window-size"
        )


def check_series_settings(detector: Any, n_rows: int, warn: Callable[[str], None]) -> None:
    """Refuse a stride or a smoothing longer than the training series; warn about few windows
    and a batch larger than an epoch (each message names the series length or window count)."""
    from madcluster.estimator.network import resolve_training_batch
    from madcluster.training.loop import validation_rows

    p = detector.get_params()
    window, stride = int(p["window_size"]), int(p["stride"])
    n_val = validation_rows(n_rows, p["validation_size"], window)
    train_rows = n_rows - n_val
    split = f" ({n_rows} rows less the {n_val}-row validation split)" if n_val else ""
    if train_rows < window:
        return  # the estimator refuses a series shorter than a window, with its own message
    windows = (train_rows - window) // stride + 1
    if stride > max(train_rows - window, 1):
        raise ParameterError(
            f"--stride {stride} leaves {windows} training window of the {train_rows} training "
            f"rows{split}: a stride longer than the series trains on one window; use at most "
            f"--stride {max((train_rows - window) // FEW_WINDOWS, 1)} for {FEW_WINDOWS} windows"
        )
    for part, steps in (p.get("part_smoothing") or {}).items():
        if isinstance(steps, int) and steps > train_rows:
            raise ParameterError(
                f"--part-smoothing {part}={steps}: a mean over {steps} steps is longer than the "
                f"{train_rows} training rows{split}, so every score would be about the series' "
                "mean; use fewer steps (1: none)"
            )
    if windows < FEW_WINDOWS:
        warn(
            f"--stride {stride} gives {windows} training windows of {window} rows from "
            f"{train_rows} training rows{split}: few windows teach the model little; a smaller "
            "--stride gives more"
        )
    batch, epoch_windows = resolve_training_batch(p)
    per_epoch = windows if epoch_windows is None else min(windows, int(epoch_windows))
    if batch > per_epoch:
        warn(
            f"--batch-size {batch} is more than the {per_epoch} windows an epoch trains "
            f"on ({windows} training windows): each epoch is one batch of {per_epoch}"
        )


def estimated_bytes(detector: Any, n_features: int, n_rows: int | None = None) -> tuple[int, int]:
    """``(bytes, parameters)`` a fit of ``detector`` needs at least: the network's parameters
    (weights, gradients, optimiser state, float64 copy) and one batch's activations (a batch holds
    at most the windows an epoch draws from ``n_rows`` rows). The network is built on the meta
    device: nothing is allocated."""
    import torch

    from madcluster.embedders import EMBEDDERS, build_embedder
    from madcluster.estimator.network import resolve_training_batch

    p = detector.get_params()
    if not isinstance(p["embedder"], str) or p["embedder"].lower() not in EMBEDDERS:
        return 0, 0
    width = 2 * n_features  # the input with roughness channels, at most twice the columns
    with torch.device("meta"):
        embedder = build_embedder(
            p["embedder"], width, p["window_size"], **(p["embedder_params"] or {})
        )
    parameters = sum(t.numel() for t in embedder.parameters())
    depth = len(getattr(embedder, "layers", ())) or 1
    hidden = int(getattr(embedder, "out_features", 0) or 0)
    batch, epoch_windows = resolve_training_batch(p)
    if epoch_windows is not None:
        batch = min(batch, int(epoch_windows))
    if n_rows is not None:
        batch = min(batch, max(1, (n_rows - int(p["window_size"])) // int(p["stride"]) + 1))
    activations = ACTIVATION_VALUES * 4 * batch * int(p["window_size"]) * hidden * depth
    return parameters * BYTES_PER_PARAMETER + activations, parameters


def available_bytes() -> int | None:
    """Memory this process may still take (Linux: MemAvailable), or None when unknown."""
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def check_memory(
    detector: Any, n_features: int, available: int | None = None, n_rows: int | None = None
) -> None:
    """Refuse a CPU fit whose estimate (:func:`estimated_bytes`) exceeds the available memory."""
    device = str(detector.get_params().get("device") or "auto")
    if device.startswith("cuda") or device == "mps":
        return
    if device == "auto":
        import torch

        if torch.cuda.is_available():
            return
    available = available_bytes() if available is None else available
    needed, parameters = estimated_bytes(detector, n_features, n_rows)
    if available is None or needed <= available:
        return
    raise MemoryError(
        f"out of memory before training: this model needs at least {_size(needed)} ({parameters:,} "
        "parameters with their gradients and optimiser state, and one batch's activations), "
        f"{_size(available)} are available: reduce --hidden-size (or --layers, --batch-size, "
        "--window-size)"
    )


def is_out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` is a failed allocation (torch's CPU allocator, CUDA, or Python's)."""
    if isinstance(exc, MemoryError):
        return True
    text = str(exc)
    return isinstance(exc, RuntimeError) and (
        "can't allocate memory" in text or "out of memory" in text.lower()
    )


def out_of_memory_message(exc: BaseException) -> str:
    """One line for a failed allocation: ours names the estimate, torch's says what to reduce."""
    if str(exc).startswith("out of memory"):
        return str(exc)
    return (
        "out of memory: reduce --hidden-size (or --layers, --batch-size, --window-size), or "
        "--epoch-windows for a smaller epoch"
    )


def _size(n: int) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n / 1e3:.1f} kB"


__all__ = [
    "check_layers",
    "check_memory",
    "check_series_settings",
    "estimated_bytes",
    "is_out_of_memory",
    "out_of_memory_message",
]
