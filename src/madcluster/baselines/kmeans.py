"""Window KMeans (:class:`KMeansDetector`): the distance of each flattened window to its
nearest centroid, as TSB-AD's KMeansAD (the recipe: :mod:`madcluster.baselines`)."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.cluster import KMeans, MiniBatchKMeans

from madcluster.baselines.window_detector import WINDOW_PARAMS, WindowDetector
from madcluster.defaults import Param, defaults, positive_int
from madcluster.exceptions import DataError

_MINIBATCH_ABOVE = 10_000  # KMeans -> MiniBatchKMeans above this many training windows

KMEANS_PARAMS: dict[str, Param] = {**WINDOW_PARAMS, "n_centroids": positive_int(20)}
_KMEANS = defaults(KMEANS_PARAMS)


class KMeansDetector(WindowDetector):
    """Window KMeans: the distance of each flattened window to its nearest centroid (TSB-AD's
    KMeansAD).

    Parameters
    ----------
    window_size : steps per window (L).
    n_centroids : number of centroids k (TSB-AD's ``n_clusters``, default 20); named apart from
        MADCluster's ``n_clusters`` (its number of hypersphere centers).
    stride : step between windows, 1 to ``window_size``; ``None`` = ``max(1, window_size // 10)``
        (each point then averages about 10 windows; ``stride=1`` scores every window, as TSB-AD).
    contamination : training-score fraction above ``threshold_`` (train-quantile protocol).
    max_train_windows : at most this many training windows (evenly spaced) fit the clustering;
        ``MiniBatchKMeans`` is used above 10,000 windows, ``KMeans`` (k-means++) otherwise.
    random_state : seeds the clustering; an int makes ``fit`` deterministic.

    Fitted attributes: ``scaler_``, ``kmeans_``, ``cluster_centers_``, ``n_train_windows_``,
    ``stride_``, ``n_features_in_``, ``decision_scores_``, ``threshold_``, ``labels_``.
    """

    _parameters = KMEANS_PARAMS

    def __init__(
        self,
        window_size: int = _KMEANS["window_size"],
        n_centroids: int = _KMEANS["n_centroids"],
        stride: int | None = _KMEANS["stride"],
        contamination: float = _KMEANS["contamination"],
        max_train_windows: int = _KMEANS["max_train_windows"],
        random_state: int | None = _KMEANS["random_state"],
    ) -> None:
        self.window_size = window_size
        self.n_centroids = n_centroids
        self.stride = stride
        self.contamination = contamination
        self.max_train_windows = max_train_windows
        self.random_state = random_state

    def _fit_windows(self, windows: np.ndarray) -> None:
        k = self.n_centroids  # checked by _validate_params (KMEANS_PARAMS)
        if k > len(windows):
            raise DataError(
                f"n_centroids={k} is more than the {len(windows)} training windows: use fewer "
                "centroids, a smaller stride or a longer training series"
            )
        if len(windows) > _MINIBATCH_ABOVE:
            model = MiniBatchKMeans(
                n_clusters=k, random_state=self.random_state, batch_size=4096, n_init=3
            )
        else:
            model = KMeans(n_clusters=k, random_state=self.random_state, n_init="auto")
        self.kmeans_ = model.fit(windows)
        self.cluster_centers_ = np.ascontiguousarray(model.cluster_centers_, dtype=np.float32)
        self._centers_t = np.ascontiguousarray(self.cluster_centers_.T)
        self._center_sq = np.einsum(
            "ij,ij->i", self.cluster_centers_, self.cluster_centers_, dtype=np.float64
        )

    def cost(self, window_size: int | None = None) -> dict[str, Any]:
        """Parameters and MACs per window: the (L*D) window times the k centroids."""
        self._check_fitted()
        dim = (window_size or self.window_size) * self.n_features_in_
        k = int(self.cluster_centers_.shape[0])
        return {
            "n_params": int(k * dim),
            "macs_per_window": int(dim * k),
            "macs_method": "analytic: window vector (L*D) times the k centroids",
        }

    def _score_windows(self, windows: np.ndarray, sq_norms: np.ndarray) -> np.ndarray:
        # ||x - c||^2 = ||x||^2 - 2 x.c + ||c||^2, minimised over the centroids
        cross = windows @ self._centers_t  # (n, k)
        sq = sq_norms + (self._center_sq[None, :] - 2.0 * cross).min(axis=1)
        return np.sqrt(np.maximum(sq, 0.0))
