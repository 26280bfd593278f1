"""Parameter errors are MADClusterError (and still ValueError), as the README promises."""

import numpy as np
import pytest

from madcluster import MADCluster, MADClusterError
from madcluster.exceptions import ParameterError


@pytest.mark.parametrize(
    "params",
    [{"epochs": -1}, {"embedder": "nope"}, {"contamination": 2}, {"window_size": 0}, {"rho": 5}],
)
def test_bad_parameters_raise_parameter_error_before_training(params):
    x = np.random.default_rng(0).normal(size=(60, 2))
    with pytest.raises(ParameterError) as info:
        MADCluster(**{"window_size": 10, "epochs": 1, **params}).fit(x)
    assert isinstance(info.value, MADClusterError) and isinstance(info.value, ValueError)


def test_predict_proba_unknown_method(small_params):
    x = np.random.default_rng(0).normal(size=(80, 2))
    model = MADCluster(**small_params).fit(x)
    with pytest.raises(ParameterError, match="bogus"):
        model.predict_proba(x, method="bogus")
