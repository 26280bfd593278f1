"""From a trained network to one score per time step: pure functions, in the order they run.

:func:`point_outputs` runs the network over scoring windows and maps each per-step output back to
the time steps (one loop for the score terms and for the features h); :func:`score_statistics`,
:func:`head_score` and :func:`combine_scores` turn the named terms into the anomaly score (paper
Eq. 7, optionally with each term standardised on the training scores).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import torch

from madcluster.data.windows import (
    gather_windows,
    window_starts,
    windows_to_points,
    windows_to_points_with_history,
)
from madcluster.exceptions import DataError

Stats = tuple[float, float]


def default_score_stride(window_size: int, causal: bool) -> int:
    """Causal embedders score each point from the window where it has the most history (windows
    every L // 10 steps); others average non-overlapping windows."""
    return max(1, window_size // 10) if causal else window_size


@torch.no_grad()
def point_outputs(
    read: Callable[[torch.Tensor], Mapping[str, torch.Tensor]],
    series: torch.Tensor,
    window_size: int,
    stride: int,
    chunk: int,
    causal: bool,
) -> dict[str, np.ndarray]:
    """``read(windows)`` over the windows of ``series`` every ``stride`` steps (``chunk`` at a
    time), each named output ``[N, L]`` or ``[N, L, f]`` mapped to the ``T`` time steps."""
    starts = window_starts(len(series), window_size, stride)
    parts: dict[str, list[np.ndarray]] = {}
    for i in range(0, len(starts), chunk):
        x = gather_windows(series, starts[i : i + chunk], window_size)
        for name, values in read(x).items():
            parts.setdefault(name, []).append(values.float().cpu().numpy())
    return {name: to_points(np.concatenate(chunks), starts, len(series), causal) for name, chunks in parts.items()}


def to_points(values: np.ndarray, starts: np.ndarray, length: int, causal: bool) -> np.ndarray:
    """Per-window values ``[N, L]`` or ``[N, L, f]`` as per-step values ``[T]`` or ``[T, f]``:
    from the window with the most history (causal) or averaged over the covering windows."""
    if causal:
        return windows_to_points_with_history(values, starts, length)
    if values.ndim == 3:
        return np.stack([windows_to_points(values[..., j], starts, length) for j in range(values.shape[-1])], axis=1)
    return windows_to_points(values, starts, length)


def mean_std(values: np.ndarray) -> Stats:
    """Mean and standard deviation (1 for a constant term, so standardising never divides by 0)."""
    std = float(values.std())
    return float(values.mean()), std if std > 1e-12 else 1.0


def standardize(values: np.ndarray, stats: Stats) -> np.ndarray:
    mean, std = stats
    return (values - mean) / std


def head_terms(terms: Mapping[str, np.ndarray]) -> list[str]:
    """The head's term names (everything but the base model's own ``base`` score)."""
    return [name for name in terms if name != "base"]


def head_score(terms: Mapping[str, np.ndarray], stats: Mapping[str, Stats], scaling: str) -> np.ndarray:
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


def combine_scores(terms: Mapping[str, np.ndarray], stats: Mapping[str, Stats], scaling: str, base_combination: str) -> np.ndarray:
    """The anomaly score: the head's score, the base model's alone, or both (``raw`` sum or the
    sum of the two standardised)."""
    base = terms.get("base")
    if len(terms) == (base is not None):  # no head terms: the base model alone
        if base is None:
            raise DataError("the model produced no score terms")
        scores = base
    else:
        own = head_score(terms, stats, scaling)
        if base is None:
            scores = own
        elif base_combination == "raw":
            scores = own + base
        else:
            scores = standardize(own, stats["own"]) + standardize(base, stats["base"])
    if not np.all(np.isfinite(scores)):
        raise DataError("the model produced non-finite scores: the input may be far outside the training range")
    return np.asarray(scores, dtype=np.float64)
