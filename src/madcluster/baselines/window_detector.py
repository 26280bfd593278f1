"""What both window baselines share (:mod:`madcluster.baselines`: the recipe and how they
relate to TSB-AD's): their parameters, a scaler fitted on the training series, windows cut and
flattened, window scores computed in chunks of ``_CHUNK_VALUES`` values and averaged back to time
points (:func:`window_scores_to_points`).

Why a module of its own: a window model is two hooks (``_fit_windows``, ``_score_windows``)
on this; :mod:`~madcluster.baselines.pca` and :mod:`~madcluster.baselines.kmeans` are those.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from sklearn.preprocessing import StandardScaler

from madcluster.base import BaseDetector
from madcluster.data.validation import check_series
from madcluster.data.windows import window_starts
from madcluster.defaults import DEFAULT_WINDOW_SIZE, SHARED_PARAMS, Param, positive_int
from madcluster.exceptions import ParameterError

_CHUNK_VALUES = 1 << 23  # windows x values per scoring chunk (32 MB of float32)


#: What both window detectors take: name -> default and allowed values.
WINDOW_PARAMS: dict[str, Param] = {
    "window_size": positive_int(DEFAULT_WINDOW_SIZE),
    "stride": positive_int(None, or_none="window_size // 10"),
    "contamination": SHARED_PARAMS["contamination"],
    "max_train_windows": positive_int(10_000),
    "random_state": SHARED_PARAMS["random_state"],
}


class WindowDetector(BaseDetector):
    """Shared machinery: scaling, windowing, chunked window scoring, window -> point scores."""

    window_size: int
    stride: int | None
    max_train_windows: int

    def fit(self, X: Any, y: Any = None) -> WindowDetector:
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
