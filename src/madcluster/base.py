"""The detector contract shared by MADCluster and the baselines (PyOD's ``BaseDetector`` idea).

``__init__`` only stores parameters (so ``get_params``/``set_params``/``sklearn.clone`` work);
``fit`` learns state ending in ``_`` and calls :meth:`BaseDetector._set_training_scores`, the one
place that turns training scores into ``threshold_`` and ``labels_`` (the ``train-quantile``
protocol). Subclasses implement ``fit`` and ``decision_function``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator

from madcluster.data.validation import align_columns, feature_names
from madcluster.defaults import SHARED_PARAMS, Param, check_params, check_threshold_params
from madcluster.exceptions import NotFittedError, ParameterError
from madcluster.extreme_value import pot_threshold

PROBA_METHODS = ("linear", "unify")


def threshold_from_scores(scores: np.ndarray, method: str, contamination: float) -> float:
    """The threshold on training ``scores``: their ``1 - contamination`` quantile (``quantile``,
    the ``train-quantile`` protocol) or, with ``pot``, the score a generalized Pareto tail fitted to
    them exceeds with probability ``contamination`` (``train-pot``,
    :mod:`madcluster.extreme_value`)."""
    values = np.asarray(scores, dtype=np.float64)
    if method == "pot":
        return pot_threshold(values, contamination)
    return float(np.quantile(values, 1.0 - contamination))


class BaseDetector(BaseEstimator, ABC):
    """Unsupervised detector: higher ``decision_function`` means more anomalous.

    Fitted attributes: ``decision_scores_`` (one score per training row), ``threshold_`` (the
    ``1 - contamination`` quantile of those scores), ``labels_`` (scores above ``threshold_``),
    ``n_features_in_``, and ``feature_names_in_`` when ``X`` was a DataFrame with string column
    names (as in scikit-learn; named input at scoring time is then matched by name).
    """

    contamination: float
    #: The constructor's parameters, name -> :class:`~madcluster.defaults.Param` (default and
    #: allowed values); the subclass's signature takes its defaults from it.
    _parameters: ClassVar[Mapping[str, Param]] = SHARED_PARAMS

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

    def predict_proba(
        self, X: Any, method: str = "linear", return_confidence: bool = False
    ) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """Outlier probability per row, shape (T, 2): column 0 normal, column 1 anomalous (PyOD).

        Scores are turned into [0, 1] against the *training* scores ``decision_scores_``:
        ``"linear"`` min-max scales them (clipped to [0, 1]); ``"unify"`` is Kriegel et al.'s
        unified score, ``erf((s - mean) / (std * sqrt(2)))`` clipped to [0, 1]. With
        ``return_confidence=True`` also returns :meth:`predict_confidence`'s values.
        """
        self._check_fitted()
        if method not in PROBA_METHODS:
            raise ParameterError(
                f"unknown method {method!r}: choose one of {', '.join(PROBA_METHODS)}"
            )
        scores = np.asarray(self.decision_function(X), dtype=np.float64)
        train = np.asarray(self.decision_scores_, dtype=np.float64)
        if method == "linear":
            low, span = train.min(), np.ptp(train)
            outlier = (scores - low) / (span if span > 0 else 1.0)
        else:
            from scipy.special import erf

            sigma = train.std()
            outlier = erf((scores - train.mean()) / ((sigma if sigma > 0 else 1.0) * np.sqrt(2)))
        outlier = np.clip(outlier, 0.0, 1.0)
        probs = np.column_stack([1.0 - outlier, outlier])
        if return_confidence:
            return probs, self._confidence(scores)
        return probs

    def predict_confidence(self, X: Any) -> np.ndarray:
        """How stable each 0/1 prediction is under a perturbed training set, in [0, 1] (PyOD).

        Perini et al.'s ExCeeD, as PyOD computes it: a Bayesian estimate of each row's outlier
        probability from its rank among the training scores, then the binomial probability that
        the row keeps its predicted label.
        """
        self._check_fitted()
        return self._confidence(np.asarray(self.decision_function(X), dtype=np.float64))

    def _confidence(self, scores: np.ndarray) -> np.ndarray:
        from scipy.stats import binom

        train = np.sort(np.asarray(self.decision_scores_, dtype=np.float64))
        n = len(train)
        n_below = np.searchsorted(train, scores, side="right")  # training scores <= each score
        posterior = (1.0 + n_below) / (2.0 + n)
        confidence = 1.0 - binom.cdf(n - int(n * self.contamination), n, posterior)
        predicted = scores > self.threshold_
        return np.where(predicted, confidence, 1.0 - confidence)

    def _record_feature_names(self, X: Any) -> None:
        """Remember ``X``'s column names (DataFrame with string names), as scikit-learn does."""
        names = feature_names(X)
        if names is not None:
            self.feature_names_in_ = names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_

    def _align_feature_names(self, X: Any) -> Any:
        """Named input in the training column order, or ``DataError`` naming the columns."""
        return align_columns(X, getattr(self, "feature_names_in_", None), name="X")

    def _validate_params(self) -> None:
        """Every parameter checked against the class's table, once, at the start of ``fit``: a bad
        value must not cost reading the data or a fit."""
        params = self.get_params(deep=False)
        check_params(params, self._parameters)
        check_threshold_params(params)

    def _set_training_scores(self, scores: np.ndarray) -> None:
        """Store training scores; derive ``threshold_`` / ``labels_``: the ``1 - contamination``
        quantile of the training scores (``train-quantile``), or with ``threshold="pot"`` the score
        a generalized Pareto tail fitted to them exceeds with probability ``contamination``
        (``train-pot``, :mod:`madcluster.extreme_value`)."""
        method = getattr(self, "threshold", "quantile")  # checked by _validate_params
        self.decision_scores_ = np.asarray(scores, dtype=np.float64)
        self.threshold_ = threshold_from_scores(self.decision_scores_, method, self.contamination)
        self.labels_ = (self.decision_scores_ > self.threshold_).astype(np.int64)

    def _check_fitted(self) -> None:
        if not hasattr(self, "threshold_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet: call fit(X) first")
