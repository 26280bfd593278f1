"""Window PCA (:class:`PCADetector`): the distance of each flattened window to the principal
subspace of the training windows (the recipe: :mod:`madcluster.baselines`)."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
import scipy.linalg

from madcluster.baselines.window_detector import WINDOW_PARAMS, WindowDetector
from madcluster.defaults import Param, defaults
from madcluster.exceptions import DataError


def _is_n_components(nc: Any) -> bool:
    """An int >= 1 (components kept) or a float in (0, 1) (variance fraction kept)."""
    if isinstance(nc, bool) or not isinstance(nc, (Integral, Real)):
        return False
    return nc >= 1 if isinstance(nc, Integral) else 0.0 < nc < 1.0


PCA_PARAMS: dict[str, Param] = {
    **WINDOW_PARAMS,
    "n_components": Param(0.95, _is_n_components, "an int >= 1 or a variance fraction in (0, 1)"),
}
_PCA = defaults(PCA_PARAMS)


class PCADetector(WindowDetector):
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
    ``labels_``. See :mod:`madcluster.baselines` for the scoring recipe and the differences from TSB-AD.
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
