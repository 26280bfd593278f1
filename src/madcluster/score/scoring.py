"""From a trained network to one score per time step: pure functions, in the order they run.

:func:`point_outputs` runs the network over scoring windows and maps each per-step output back to
the time steps (one loop for the score terms and for the features h); :func:`score_statistics`,
:func:`head_score` and :func:`combine_scores` turn the named terms into the anomaly score (paper
Eq. 7, optionally with each term standardised on the training scores).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import torch

from madcluster.data.windows import (
    causal_window_of,
    gather_windows,
    pad_for_windows,
    window_starts,
    windows_to_points,
    windows_to_points_with_history,
)
from madcluster.exceptions import DataError
from madcluster.score.combination import Stats, mean_std

# Scoring batches are padded to at least this many windows: CPU kernels take another path for 1-3
# rows, whose float32 results differ by ~1e-7, which score standardisation can blow up to ~1e-4.
# With the padding a window scores bit for bit the same alone (a stream) or in a batch.
MIN_SCORING_BATCH = 4
# Windows scored at a time on a CPU, at most: float64 windows in batches of 128 scored 20,000 x 6
# rows in 1.75 s against 2.2 s at 512 (the 4 x batch_size accelerators get), and 12,000 x 38 rows
# in 1.13 s against 1.40 s, to the same bits; float32 is flat from 64 up.
CPU_SCORING_BATCH = 128


def default_score_stride(window_size: int, causal: bool) -> int:
    """Causal embedders score each point from the window where it has the most history (windows
    every L // 10 steps); others average non-overlapping windows."""
    return max(1, window_size // 10) if causal else window_size


@torch.no_grad()
def point_outputs(
    read: Callable[[torch.Tensor, int], Mapping[str, torch.Tensor]],
    series: torch.Tensor,
    window_size: int,
    stride: int,
    chunk: int,
    causal: bool,
) -> dict[str, np.ndarray]:
    """``read(windows, 0)`` over the windows of ``series`` every ``stride`` steps (``chunk`` at a
    time), each named output ``[N, L]`` or ``[N, L, f]`` mapped to the ``T`` time steps."""
    starts = window_starts(len(series), window_size, stride)
    parts: dict[str, list[np.ndarray]] = {}
    for i in range(0, len(starts), chunk):
        x = gather_windows(series, starts[i : i + chunk], window_size)
        for name, values in read(x, 0).items():
            parts.setdefault(name, []).append(values.double().cpu().numpy())
    return {
        name: to_points(np.concatenate(chunks), starts, len(series), causal)
        for name, chunks in parts.items()
    }


@torch.no_grad()
def causal_point_outputs(
    read: Callable[[torch.Tensor, int], Mapping[str, torch.Tensor]],
    series: torch.Tensor,
    window_size: int,
    stride: int,
    chunk: int,
    first_step: int = 0,
    score_from: int = 0,
) -> dict[str, np.ndarray]:
    """Causal models: each step's outputs from its window on the fixed grid
    (:func:`~madcluster.data.windows.causal_window_of`), for steps ``score_from..`` of a buffer
    ``series`` whose first row is step ``first_step``. The same steps give the same values whether
    the series is scored whole or streamed: the window of a step depends on the step alone,
    windows past the end are padded (a causal model never sees it) and batches are never smaller
    than :data:`MIN_SCORING_BATCH`.

    ``read(windows, first_position)`` returns the outputs of positions ``first_position..`` of
    each window ``[B, L - first_position, ...]``: past the series' first window a step sits in
    the last ``stride`` positions of its window, so the head reads a tenth of each window."""
    steps = np.arange(score_from, first_step + len(series))
    windows = causal_window_of(steps, window_size, stride)
    starts = np.unique(windows)
    local = starts - first_step
    series = pad_for_windows(series, local, window_size)
    rows, positions = np.searchsorted(starts, windows), steps - windows
    # the steps each chunk of windows scores (rows ascend with the steps; every window scores one)
    bounds = np.searchsorted(rows, [*range(0, len(local), chunk), len(local)])
    out: dict[str, np.ndarray] = {}
    for k, i in enumerate(range(0, len(local), chunk)):
        x = gather_windows(series, local[i : i + chunk], window_size)
        n_windows = len(x)
        if n_windows < MIN_SCORING_BATCH:
            x = torch.cat([x, x[-1:].expand(MIN_SCORING_BATCH - n_windows, *x.shape[1:])])
        scored = slice(bounds[k], bounds[k + 1])
        first_position = int(positions[scored].min())
        for name, values in read(x, first_position).items():
            values = values[:n_windows].double().cpu().numpy()
            if name not in out:
                out[name] = np.empty((len(steps), *values.shape[2:]), dtype=np.float64)
            out[name][scored] = values[rows[scored] - i, positions[scored] - first_position]
    return out


def to_points(values: np.ndarray, starts: np.ndarray, length: int, causal: bool) -> np.ndarray:
    """Per-window values ``[N, L]`` or ``[N, L, f]`` as per-step values ``[T]`` or ``[T, f]``:
    from the window with the most history (causal) or averaged over the covering windows."""
    if causal:
        return windows_to_points_with_history(values, starts, length)
    if values.ndim == 3:
        return np.stack(
            [windows_to_points(values[..., j], starts, length) for j in range(values.shape[-1])],
            axis=1,
        )
    return windows_to_points(values, starts, length)


def standardize(values: np.ndarray, stats: Stats) -> np.ndarray:
    mean, std = stats
    return (values - mean) / std


def head_terms(terms: Mapping[str, np.ndarray]) -> list[str]:
    """The head's term names (everything but the base model's own ``base`` score)."""
    return [name for name in terms if name != "base"]


def head_score(
    terms: Mapping[str, np.ndarray], stats: Mapping[str, Stats], scaling: str
) -> np.ndarray:
    """MADCluster's own score: Eq. 7's sum (``raw``) or the sum of standardised terms."""
    names = head_terms(terms)
    if scaling == "standardized":
        return sum(standardize(terms[n], stats[n]) for n in names)
    return sum(terms[n] for n in names)


def score_statistics(terms: Mapping[str, np.ndarray], scaling: str) -> dict[str, Stats]:
    """Training statistics of every term and, with head terms, of the head's own score."""
    stats = {name: mean_std(values) for name, values in terms.items()}
    if head_terms(terms):
        stats["own"] = mean_std(head_score(terms, stats, scaling))
    return stats


def combine(
    terms: Mapping[str, Any],
    stats: Mapping[str, Stats],
    scaling: str,
    base_combination: str,
    head_weight: float = 1.0,
) -> Any:
    """The anomaly score: the head's score, the base model's alone, or both (``raw`` sum or the
    sum of the two standardised, the head's weighted by ``head_weight``; 1 everywhere but images).
    Numpy arrays or torch tensors alike: the ONNX graph of :mod:`madcluster.estimator.export` holds
    this very arithmetic."""
    base = terms.get("base")
    if len(terms) == (base is not None):  # no head terms: the base model alone
        if base is None:
            raise DataError("the model produced no score terms")
        return base
    own = head_score(terms, stats, scaling)
    if base is None:
        return own
    if base_combination != "raw":
        own = standardize(own, stats["own"])
        base = standardize(base, stats["base"])
    return (own if head_weight == 1.0 else head_weight * own) + base


def combine_scores(
    terms: Mapping[str, np.ndarray],
    stats: Mapping[str, Stats],
    scaling: str,
    base_combination: str,
    head_weight: float = 1.0,
) -> np.ndarray:
    """:func:`combine` checked: finite, float64."""
    scores = combine(terms, stats, scaling, base_combination, head_weight)
    if not np.all(np.isfinite(scores)):
        raise DataError(
            "the model produced non-finite scores: the input may be far outside the training range"
        )
    return np.asarray(scores, dtype=np.float64)
