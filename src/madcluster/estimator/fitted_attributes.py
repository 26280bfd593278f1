"""The estimator's scikit-learn style fitted attributes (``threshold_``, ``net_``,
``scaler_mean_``, ...), each a read of the frozen fitted model ``model_``
(:class:`~madcluster.estimator.fitted.FittedModel`).

Why a class of its own: what scoring needs lives in the fitted model, written once; these names
only read it (none can be set), so the estimator keeps nothing twice.
"""

from __future__ import annotations


class FittedAttributes:
    """Read-only fitted attributes of :class:`~madcluster.estimator.detector.MADCluster`."""

    threshold_ = property(lambda self: self.model_.threshold)
    net_ = property(lambda self: self.model_.net)
    score_stats_ = property(lambda self: self.model_.head.stats)  # the head's terms
    input_terms_ = property(lambda self: self.model_.combination.terms)
    part_weights_ = property(lambda self: self.model_.combination.weights)  # {} without input terms
    # {} without input terms
    part_smoothing_ = property(lambda self: self.model_.combination.smoothing)
    scaler_mean_ = property(lambda self: self.model_.inputs.scaler_mean)
    scaler_scale_ = property(lambda self: self.model_.inputs.scaler_scale)
    roughness_window_ = property(lambda self: self.model_.inputs.roughness_window)
    constant_columns_ = property(lambda self: self.model_.inputs.constant_columns)
    warmup_quantiles_ = property(lambda self: self.model_.warmup.quantiles)
    # measured on first use
    attribution_baseline_ = property(lambda self: self.model_.attribution.values(self.model_))
