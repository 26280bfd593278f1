"""An input-space window term added to MADCluster's score (``MADCluster(window_term="kmeans")``).

Why: on TSB-AD's MSL / SMAP / SMD series the D-RNN's head misses what a plain window detector sees
(SMAP: head .17-.19 mean VUS-PR, window KMeans .40), and the sum of the two standardised scores was
the only configuration that passed every goal (``benchmarks/results/tsbad/README.md``). This puts
that sum inside the estimator, so it saves, loads and thresholds like any other MADCluster:

* at fit, :class:`~madcluster.baselines.KMeansDetector` (its defaults: k = 20, windows of the
  detector's L every L // 10 steps, its own per-feature standardisation) is fitted on the training
  series; its scaler and centroids are kept as plain arrays (model files hold no pickle);
* a step's term is the mean, over the windows covering it, of the window's distance to its nearest
  centroid (:func:`window_kmeans_scores`, the same arithmetic as the baseline);
* the score is ``z(MADCluster's own score) + z(term)``, each standardised with its training mean and
  standard deviation (:func:`add_window_term`), the rule of ``base_score_combination="standardized"``.

The term averages windows that start after a step, so it is not causal: a model with it does not
stream, export to ONNX or enter :meth:`~madcluster.MADCluster.explain`'s occlusion.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from madcluster.exceptions import ParameterError

if TYPE_CHECKING:
    from madcluster.scoring import Stats

# The heavy modules (torch via scoring / windows, scikit-learn via baselines) are imported where
# used, so the CLI can read WINDOW_TERMS without starting them.

WINDOW_TERMS = ("kmeans",)
# score_stats_ keys of the two summands
OWN_SCORE, WINDOW_SCORE = "before_window_term", "window_term"
_CHUNK_VALUES = 1 << 23  # windows x values scored at a time (32 MB of float32)


def check_window_term(value: object) -> None:
    if value is not None and value not in WINDOW_TERMS:
        raise ParameterError(f"unknown window_term {value!r}; choose None (off) or one of {', '.join(WINDOW_TERMS)}")


@dataclass(frozen=True)
class WindowKMeans:
    """A fitted window-KMeans term: the input scaler, the centroids ``(k, L * D)`` and the windows."""

    scaler_mean: np.ndarray
    scaler_scale: np.ndarray
    centroids: np.ndarray
    window_size: int
    stride: int

    def arrays(self) -> dict[str, np.ndarray]:
        """The term as named arrays for a model file (window size and stride included)."""
        shape = np.asarray([self.window_size, self.stride], dtype=np.int64)
        return {"window_term/scaler_mean": self.scaler_mean, "window_term/scaler_scale": self.scaler_scale,
                "window_term/centroids": self.centroids, "window_term/shape": shape}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> WindowKMeans:
        window_size, stride = (int(v) for v in arrays["window_term/shape"])
        return cls(arrays["window_term/scaler_mean"], arrays["window_term/scaler_scale"],
                   arrays["window_term/centroids"], window_size, stride)


def fit_window_kmeans(rows: np.ndarray, window_size: int, random_state: int | None) -> WindowKMeans:
    """Fit the baseline on training ``rows`` ``(T, D)`` and keep what scoring needs."""
    from madcluster.baselines import KMeansDetector

    baseline = KMeansDetector(window_size=window_size, random_state=random_state).fit(rows)
    scaler = baseline.scaler_
    return WindowKMeans(
        scaler_mean=np.asarray(scaler.mean_, dtype=np.float64),
        scaler_scale=np.asarray(scaler.scale_, dtype=np.float64),
        centroids=np.ascontiguousarray(baseline.cluster_centers_, dtype=np.float32),
        window_size=window_size,
        stride=int(baseline.stride_),
    )


def window_kmeans_scores(term: WindowKMeans, rows: np.ndarray) -> np.ndarray:
    """Per-step term ``(T,)``: each window's distance to its nearest centroid, averaged over the
    windows covering the step (windows every ``stride`` steps, the last one at the series end)."""
    from madcluster.baselines import window_scores_to_points
    from madcluster.data.windows import window_starts

    scaled = np.ascontiguousarray((rows - term.scaler_mean) / term.scaler_scale, dtype=np.float32)
    n_steps, window = len(scaled), term.window_size
    starts = window_starts(n_steps, window, term.stride)
    centers_t = np.ascontiguousarray(term.centroids.T)
    center_sq = np.einsum("ij,ij->i", term.centroids, term.centroids, dtype=np.float64)
    row_sq = np.concatenate([[0.0], np.cumsum(np.einsum("ij,ij->i", scaled, scaled, dtype=np.float64))])
    windows = np.lib.stride_tricks.sliding_window_view(scaled, window, axis=0).transpose(0, 2, 1)
    per_chunk = max(1, _CHUNK_VALUES // (window * scaled.shape[1]))
    distances = np.empty(len(starts), dtype=np.float64)
    for lo in range(0, len(starts), per_chunk):
        chunk = starts[lo : lo + per_chunk]
        flat = windows[chunk].reshape(len(chunk), -1)
        # ||x - c||^2 = ||x||^2 - 2 x.c + ||c||^2, minimised over the centroids
        sq = (row_sq[chunk + window] - row_sq[chunk]) + (center_sq[None, :] - 2.0 * (flat @ centers_t)).min(axis=1)
        distances[lo : lo + len(chunk)] = np.sqrt(np.maximum(sq, 0.0))
    return window_scores_to_points(distances, starts, window, n_steps)


def add_window_term(own: np.ndarray, term: np.ndarray, stats: dict[str, Stats]) -> np.ndarray:
    """``z(own) + z(term)`` with the training statistics in ``stats``."""
    from madcluster.scoring import standardize

    return standardize(own, stats[OWN_SCORE]) + standardize(term, stats[WINDOW_SCORE])


def window_term_stats(own: np.ndarray, term: np.ndarray) -> dict[str, Stats]:
    """Training mean and standard deviation of the two summands (entries of ``score_stats_``)."""
    from madcluster.scoring import mean_std

    return {OWN_SCORE: mean_std(own), WINDOW_SCORE: mean_std(term)}
