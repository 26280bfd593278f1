"""Simple window baselines: PCA reconstruction error and distance to the nearest KMeans centroid.

Both detectors follow the same recipe, so they are compared with MADCluster on equal terms:

1. a ``StandardScaler`` is fitted on the training series (per feature; scalers never see test data);
2. the scaled series is cut into windows of ``window_size`` steps every ``stride`` steps (the last
   window is aligned to the series end, :func:`madcluster.data.windows.window_starts`), each
   flattened to one vector of ``window_size * n_features`` values;
3. the model is fitted on the training windows (evenly subsampled to at most
   ``max_train_windows``, so large series stay fast and deterministic);
4. every window gets a score: the Euclidean distance of its vector to the PCA subspace
   (reconstruction error) / to the nearest centroid;
5. **window scores go back to time points by averaging**: the score of point t is the mean score of
   all scored windows that contain t (the package-wide convention of
   :func:`~madcluster.data.windows.windows_to_points`, and TSB-AD/TimeEval's reverse windowing for
   KMeansAD). This is O(T) with two ``bincount`` passes, never an (N, L) matrix, and gives exactly
   one score per time point.

Scoring runs in chunks of windows (a few tens of MB at a time), so memory stays flat on SMD-sized
series (450k x 38). The default ``stride=None`` means ``max(1, window_size // 10)``: each point
averages about 10 windows, and the cost is about a tenth of ``stride=1`` (every window, TSB-AD's
setting), which stays available. The same stride is used for training windows and scoring.

**Relation to TSB-AD's published baselines** (Liu & Paparrizos, NeurIPS 2024):

* ``KMeansDetector`` mirrors TSB-AD's ``KMeansAD`` (from TimeEval): flattened sliding windows,
  distance to the assigned centroid, mean over covering windows. Differences: TSB-AD fits on the
  series it scores (transductive, no train/test split) with its defaults ``k=20, window_size=20``,
  does not standardise, and min-max scales the final scores; here the model is fitted on the
  training series only, inputs are standardised with training statistics, scores are left raw
  (monotone transforms do not change AUC/VUS metrics) and ``MiniBatchKMeans`` replaces ``KMeans``
  when more than 10,000 training windows are used.
* ``PCADetector`` differs more: TSB-AD's multivariate ``PCA`` (from PyOD) scores single time points
  (no windows) by the sum of distances to the eigenvectors weighted by inverse explained variance.
  Here PCA is fitted on windows, keeps ``n_components`` (a variance fraction or a count), and scores
  the reconstruction error (as a distance: the root of the squared error), so it sees temporal
  context like the other detectors.
* Both default to the estimator's window size (the paper's L), not TSB-AD's 20.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
import scipy.linalg
from numpy.lib.stride_tricks import sliding_window_view
from sklearn.cluster import KMeans, MiniBatchKMeans
from sklearn.preprocessing import StandardScaler

from madcluster.base import BaseDetector
from madcluster.data.validation import check_series
from madcluster.data.windows import window_starts
from madcluster.defaults import DEFAULT_WINDOW_SIZE, SHARED_PARAMS, Param, defaults, positive_int
from madcluster.exceptions import DataError, ParameterError

_CHUNK_VALUES = 1 << 23  # windows x values per scoring chunk (32 MB of float32)
_MINIBATCH_ABOVE = 10_000  # KMeans -> MiniBatchKMeans above this many training windows


def _is_n_components(nc: Any) -> bool:
    """An int >= 1 (components kept) or a float in (0, 1) (variance fraction kept)."""
    if isinstance(nc, bool) or not isinstance(nc, (Integral, Real)):
        return False
    return nc >= 1 if isinstance(nc, Integral) else 0.0 < nc < 1.0


#: What both window detectors take: name -> default and allowed values.
WINDOW_PARAMS: dict[str, Param] = {
    "window_size": positive_int(DEFAULT_WINDOW_SIZE),
    "stride": positive_int(None, or_none="window_size // 10"),
    "contamination": SHARED_PARAMS["contamination"],
    "max_train_windows": positive_int(10_000),
    "random_state": SHARED_PARAMS["random_state"],
}
PCA_PARAMS: dict[str, Param] = {
    **WINDOW_PARAMS,
    "n_components": Param(0.95, _is_n_components, "an int >= 1 or a variance fraction in (0, 1)"),
}
KMEANS_PARAMS: dict[str, Param] = {**WINDOW_PARAMS, "n_centroids": positive_int(20)}
_PCA, _KMEANS = defaults(PCA_PARAMS), defaults(KMEANS_PARAMS)


class _WindowDetector(BaseDetector):
    """Shared machinery: scaling, windowing, chunked window scoring, window -> point scores."""

    window_size: int
    stride: int | None
    max_train_windows: int

    def fit(self, X: Any, y: Any = None) -> _WindowDetector:
        """Fit the scaler and the window model on (mostly normal) training data ``X`` (T, D)."""
        self._validate_params()
        data = check_series(X, min_length=self.window_size, name="X")
        self.n_features_in_ = data.shape[1]
        self._record_feature_names(X)
        self.scaler_ = StandardScaler().fit(data)
        scaled = self._scale(data)
        self.stride_ = self._stride()
        starts = window_starts(len(scaled), self.window_size, self.stride_)
        if len(starts) > self.max_train_windows:  # evenly spaced, deterministic subsample
            starts = starts[
                np.unique(
                    np.linspace(0, len(starts) - 1, self.max_train_windows).round().astype(np.int64)
                )
            ]
        self.n_train_windows_ = len(starts)
        self._fit_windows(self._gather(scaled, starts))
        self._set_training_scores(self._score_series(scaled))
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        """One finite score per time point of ``X`` (T, D); higher = more anomalous."""
        self._check_fitted()
        X = self._align_feature_names(X)
        data = check_series(
            X, min_length=self.window_size, n_features=self.n_features_in_, name="X"
        )
        return self._score_series(self._scale(data))

    # -- hooks ---------------------------------------------------------------------------------
    def _fit_windows(self, windows: np.ndarray) -> None:
        raise NotImplementedError

    def _score_windows(self, windows: np.ndarray, sq_norms: np.ndarray) -> np.ndarray:
        """Scores of flattened windows (n, L*D) given their squared norms (n,) in float64."""
        raise NotImplementedError

    # -- helpers -------------------------------------------------------------------------------
    def _stride(self) -> int:
        return max(1, self.window_size // 10) if self.stride is None else int(self.stride)

    def _validate_params(self) -> None:
        super()._validate_params()
        if self._stride() > self.window_size:
            raise ParameterError(
                f"stride ({self.stride}) must be <= window_size ({self.window_size}) so every time "
                "point is covered by a window"
            )

    def _scale(self, data: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(self.scaler_.transform(data), dtype=np.float32)

    def _gather(self, scaled: np.ndarray, starts: np.ndarray) -> np.ndarray:
        """Windows starting at ``starts`` as flattened rows (n, L * D), time-major: each row is the
        contiguous block ``scaled[s:s + L].ravel()``, so the copy is a run of memcpy-like blocks."""
        view = sliding_window_view(scaled, self.window_size, axis=0).transpose(
            0, 2, 1
        )  # (T-L+1, L, D)
        return view[starts].reshape(len(starts), -1)

    def _score_series(self, scaled: np.ndarray) -> np.ndarray:
        n_steps, window = len(scaled), self.window_size
        starts = window_starts(n_steps, window, self.stride_)
        # squared norm of every window from a running sum of squared rows: O(T), float64
        cumulative = np.concatenate(
            [[0.0], np.cumsum(np.einsum("ij,ij->i", scaled, scaled, dtype=np.float64))]
        )
        sq_norms = cumulative[starts + window] - cumulative[starts]
        per_chunk = max(1, _CHUNK_VALUES // (window * scaled.shape[1]))
        window_scores = np.empty(len(starts), dtype=np.float64)
        for lo in range(0, len(starts), per_chunk):
            hi = min(lo + per_chunk, len(starts))
            window_scores[lo:hi] = self._score_windows(
                self._gather(scaled, starts[lo:hi]), sq_norms[lo:hi]
            )
        return window_scores_to_points(window_scores, starts, window, n_steps)


def window_scores_to_points(
    window_scores: np.ndarray, starts: np.ndarray, window_size: int, n_timesteps: int
) -> np.ndarray:
    """Mean score of the windows covering each time point, for one scalar score per window.

    Same result as ``windows_to_points(np.repeat(scores[:, None], L, 1), starts, T)`` but O(N + T)
    memory and time (difference arrays + cumulative sums) instead of materialising (N, L).
    """
    scores = np.asarray(window_scores, dtype=np.float64)
    ends = starts + window_size
    totals = np.cumsum(
        np.bincount(starts, weights=scores, minlength=n_timesteps + 1)
        - np.bincount(ends, weights=scores, minlength=n_timesteps + 1)
    )[:n_timesteps]
    counts = np.cumsum(
        np.bincount(starts, minlength=n_timesteps + 1)
        - np.bincount(ends, minlength=n_timesteps + 1)
    )[:n_timesteps]
    if np.any(counts == 0):
        raise ParameterError("windows do not cover every time point")
    return totals / counts


class PCADetector(_WindowDetector):
    """Window PCA: the distance of each flattened window to the principal subspace of training
    windows.

    Parameters
    ----------
    window_size : steps per window (L).
    n_components : float in (0, 1) keeps the fewest components explaining more than that fraction of
        the training windows' variance (scikit-learn's rule); an int keeps that many (capped at the
        window vector length).
    stride : step between windows, 1 to ``window_size``; ``None`` = ``max(1, window_size // 10)``
        (each point then averages about 10 windows; ``stride=1`` scores every window).
    contamination : training-score fraction above ``threshold_`` (train-quantile protocol).
    max_train_windows : at most this many training windows (evenly spaced) fit the PCA.
    random_state : unused (the eigendecomposition is exact and deterministic); kept so both
        baselines take the same arguments.

    The principal axes come from an exact eigendecomposition of the training windows' covariance
    (float32 Gram matrix, float64 LAPACK eigensolver), which is much faster than an SVD for
    L*D-dimensional windows. Fitted attributes: ``scaler_``, ``mean_``, ``components_``
    (k, L*D), ``explained_variance_``, ``explained_variance_ratio_``, ``n_components_``,
    ``n_train_windows_``, ``stride_``, ``n_features_in_``, ``decision_scores_``, ``threshold_``,
    ``labels_``. See the module docstring for the scoring recipe and the differences from TSB-AD.
    """

    _parameters = PCA_PARAMS

    def __init__(
        self,
        window_size: int = _PCA["window_size"],
        n_components: float = _PCA["n_components"],
        stride: int | None = _PCA["stride"],
        contamination: float = _PCA["contamination"],
        max_train_windows: int = _PCA["max_train_windows"],
        random_state: int | None = _PCA["random_state"],
    ) -> None:
        self.window_size = window_size
        self.n_components = n_components
        self.stride = stride
        self.contamination = contamination
        self.max_train_windows = max_train_windows
        self.random_state = random_state

    def _fit_windows(self, windows: np.ndarray) -> None:
        n, dim = windows.shape
        nc = self.n_components  # checked by _validate_params (PCA_PARAMS)
        if n < 2:
            raise DataError(
                "PCA needs at least 2 training windows: use a longer series or a smaller "
                "window_size"
            )

        mean = windows.mean(axis=0, dtype=np.float64)
        centred = windows - mean.astype(np.float32)
        # Gram matrix in float32 (the costly product), eigendecomposition in float64: float32 LAPACK
        # can be 10x slower here (near-zero eigenvalues from constant features hit denormals)
        cov = ((centred.T @ centred) / np.float32(n - 1)).astype(np.float64)
        del centred
        total = float(np.trace(cov))
        if isinstance(nc, Integral):
            k = int(min(nc, dim))
            values, vectors = scipy.linalg.eigh(
                cov, driver="evr", subset_by_index=[dim - k, dim - 1]
            )
        else:
            values, vectors = np.linalg.eigh(cov)  # all of them: the count depends on the spectrum
            ratio = np.cumsum(values[::-1].clip(min=0)) / max(total, np.finfo(np.float64).tiny)
            k = int(min(np.searchsorted(ratio, nc, side="right") + 1, dim))
            values, vectors = values[dim - k :], vectors[:, dim - k :]
        order = np.argsort(values)[::-1]
        self.mean_ = mean.astype(np.float32)
        self.components_ = np.ascontiguousarray(vectors[:, order].T, dtype=np.float32)  # (k, dim)
        self.explained_variance_ = values[order].clip(min=0).astype(np.float64)
        self.explained_variance_ratio_ = self.explained_variance_ / max(
            total, np.finfo(np.float64).tiny
        )
        self.n_components_ = k
        # one matmul per chunk gives both the projections and x . mean
        self._basis_and_mean = np.ascontiguousarray(
            np.column_stack([self.components_.T, self.mean_]), dtype=np.float32
        )
        self._mean_proj = self.mean_.astype(np.float64) @ self.components_.T.astype(np.float64)
        self._mean_sq = float(self.mean_.astype(np.float64) @ self.mean_.astype(np.float64))

    def cost(self, window_size: int | None = None) -> dict[str, Any]:
        """Parameters and MACs per window: the (L*D) window times k components and the mean."""
        self._check_fitted()
        dim = (window_size or self.window_size) * self.n_features_in_
        k = int(self.n_components_)
        return {
            "n_params": int(k * dim + dim),
            "macs_per_window": int(dim * (k + 1)),
            "macs_method": "analytic: window vector (L*D) times the k components and the mean",
        }

    def _score_windows(self, windows: np.ndarray, sq_norms: np.ndarray) -> np.ndarray:
        out = windows @ self._basis_and_mean
        proj = out[:, :-1].astype(np.float64) - self._mean_proj  # projections of x - mean
        centred_sq = sq_norms - 2.0 * out[:, -1] + self._mean_sq  # ||x - mean||^2
        # ||(x - mean) - P(x - mean)||^2 = ||x - mean||^2 - ||P(x - mean)||^2 (orthonormal basis)
        sq = centred_sq - np.einsum("ij,ij->i", proj, proj)
        return np.sqrt(np.maximum(sq, 0.0))


class KMeansDetector(_WindowDetector):
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
