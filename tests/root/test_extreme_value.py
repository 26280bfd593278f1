"""POT thresholds against known generalized-Pareto quantiles (madcluster.extreme_value)."""

import numpy as np
import pytest
from scipy.stats import genpareto, norm

from madcluster.exceptions import MADClusterError, ThresholdError
from madcluster.extreme_value import fit_tail, initial_level_for, pot_threshold


@pytest.mark.parametrize("shape", [-0.2, 0.0, 0.25])
@pytest.mark.parametrize("seed", [0, 1])
def test_recovers_known_gpd_quantile(shape, seed):
    # scores drawn from a GPD: the excesses over any level are again a GPD with the same shape,
    # so the POT threshold must land on the true (1 - q) quantile
    x = genpareto.rvs(shape, scale=2.0, loc=1.0, size=50_000, random_state=np.random.default_rng(seed))
    for risk in (1e-2, 1e-3):
        true = genpareto.ppf(1 - risk, shape, loc=1.0, scale=2.0)
        assert pot_threshold(x, risk) == pytest.approx(true, rel=0.06)
    tail = fit_tail(x, 0.98)
    assert tail.shape == pytest.approx(shape, abs=0.12)
    # the excess scale over t is sigma + gamma * (t - loc) (threshold stability of the GPD)
    assert tail.scale == pytest.approx(2.0 + shape * (tail.initial_threshold - 1.0), rel=0.15)
    assert tail.n_peaks == pytest.approx(0.02 * len(x), abs=2)


def test_extrapolates_below_one_over_n():
    # 20,000 exponential scores: the empirical quantile cannot see q = 1e-5 (< 1 / n), POT can
    x = np.random.default_rng(0).exponential(size=20_000)
    z = pot_threshold(x, 1e-5)
    assert z > np.quantile(x, 1 - 1e-4)
    assert z == pytest.approx(-np.log(1e-5), rel=0.15)


def test_light_tail_is_conservative_and_close():
    x = np.random.default_rng(4).normal(size=100_000)
    assert pot_threshold(x, 1e-3) == pytest.approx(norm.ppf(1 - 1e-3), rel=0.05)


def test_initial_level_leaves_room_for_the_risk():
    assert initial_level_for(1e-3) == 0.98
    assert initial_level_for(0.05) == pytest.approx(0.9)
    x = np.random.default_rng(5).exponential(size=5000)
    assert pot_threshold(x, 0.05) == pytest.approx(-np.log(0.05), rel=0.1)


def test_clear_errors():
    with pytest.raises(ThresholdError, match="at least 10 scores above"):
        pot_threshold(np.arange(100.0), 1e-3)
    assert issubclass(ThresholdError, MADClusterError)
    with pytest.raises(ThresholdError, match="no spread"):
        pot_threshold(np.r_[np.zeros(1000), np.ones(30), np.full(20, 2.0)], 1e-3)
    with pytest.raises(ThresholdError, match="risk level must be in"):
        fit_tail(np.random.default_rng(0).normal(size=1000), 0.98).quantile(0.05)
    with pytest.raises(ThresholdError, match="finite"):
        pot_threshold(np.array([1.0, np.nan]), 1e-3)
