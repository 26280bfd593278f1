"""scikit-learn's estimator checks that apply to an unsupervised time-series detector."""

from __future__ import annotations

import pytest
from sklearn.utils import estimator_checks as checks

from madcluster import KMeansDetector, MADCluster, PCADetector

DETECTORS = [
    MADCluster(window_size=5, epochs=1, batch_size=8, random_state=0, validation_size=0.0,
               embedder_params={"hidden_size": 4, "n_layers": 1}),
    PCADetector(window_size=5),
    KMeansDetector(window_size=5, n_centroids=2),
]
CHECKS = [
    checks.check_parameters_default_constructible,
    checks.check_no_attributes_set_in_init,
    checks.check_get_params_invariance,
    checks.check_set_params,
    checks.check_dont_overwrite_parameters,
    checks.check_fit_idempotent,
    checks.check_fit_check_is_fitted,
]


@pytest.mark.parametrize("detector", DETECTORS, ids=lambda d: type(d).__name__)
@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_sklearn_estimator_check(detector, check):
    check(type(detector).__name__, detector)
