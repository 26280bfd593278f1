"""The detector contract shared by MADCluster and the baselines (PyOD's ``BaseDetector`` idea).

``__init__`` only stores parameters (so ``get_params``/``set_params``/``sklearn.clone`` work);
``fit`` learns state ending in ``_`` and calls :meth:`BaseDetector._set_training_scores`, the one
place that turns training scores into ``threshold_`` and ``labels_`` (the ``train-quantile``
protocol). Subclasses implement ``fit`` and ``decision_function``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator

from madcluster.exceptions import NotFittedError


class BaseDetector(BaseEstimator, ABC):
    """Unsupervised detector: higher ``decision_function`` means more anomalous.

    Fitted attributes: ``decision_scores_`` (one score per training row), ``threshold_`` (the
    ``1 - contamination`` quantile of those scores), ``labels_`` (``decision_scores_ > threshold_``),
    ``n_features_in_``.
    """

    contamination: float

    @abstractmethod
    def fit(self, X: Any, y: Any = None) -> BaseDetector:
        """Learn from (mostly normal) training data ``X`` of shape (T, D); ``y`` is ignored."""

    @abstractmethod
    def decision_function(self, X: Any) -> np.ndarray:
        """One finite anomaly score per row of ``X``, shape (T,)."""

    def predict(self, X: Any) -> np.ndarray:
        """0/1 label per row: 1 where the score is strictly above ``threshold_``."""
        self._check_fitted()
        return (self.decision_function(X) > self.threshold_).astype(np.int64)

    def fit_predict(self, X: Any, y: Any = None) -> np.ndarray:
        return self.fit(X, y).labels_

    def _set_training_scores(self, scores: np.ndarray) -> None:
        """Store training scores and derive ``threshold_`` / ``labels_`` (train-quantile protocol)."""
        if not 0.0 <= self.contamination < 0.5:
            raise ValueError(f"contamination must be in [0, 0.5), got {self.contamination}")
        self.decision_scores_ = np.asarray(scores, dtype=np.float64)
        self.threshold_ = float(np.quantile(self.decision_scores_, 1.0 - self.contamination))
        self.labels_ = (self.decision_scores_ > self.threshold_).astype(np.int64)

    def _check_fitted(self) -> None:
        if not hasattr(self, "threshold_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet: call fit(X) first")
