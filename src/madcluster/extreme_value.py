"""Peaks over threshold (POT): a threshold from the tail of the training scores, without labels.

Siffer et al., "Anomaly Detection in Streams with Extreme Value Theory" (KDD 2017), the rule
OmniAnomaly uses: by the Pickands-Balkema-de Haan theorem the excesses ``Y = X - t`` of scores over
a high initial threshold ``t`` follow a generalized Pareto distribution (GPD) with shape gamma and
scale sigma. With ``n`` scores, ``N_t`` of them above ``t``, the score exceeded with probability
``q`` (the risk level) is (Siffer Eq. 1)::

    z_q = t + sigma / gamma * ((q * n / N_t) ** -gamma - 1)      (gamma != 0)
    z_q = t - sigma * log(q * n / N_t)                           (gamma == 0)

The GPD is fitted by maximum likelihood (``scipy.stats.genpareto`` with location 0). Unlike the
empirical ``1 - q`` quantile, ``z_q`` is defined below ``q = 1 / n`` and is steadier for small ``q``
because it uses every peak, not the one or two order statistics at the quantile.

Only numpy, scipy and the package's exceptions: both the detector and the evaluation protocols use
it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from madcluster.exceptions import ThresholdError

# Siffer et al. start from the 98 % quantile; fewer than this many peaks cannot fit two parameters.
DEFAULT_INITIAL_LEVEL = 0.98
MIN_PEAKS = 10


@dataclass(frozen=True)
class TailFit:
    """A fitted GPD tail: initial threshold ``t``, shape ``gamma``, scale ``sigma``, counts."""

    initial_threshold: float
    shape: float
    scale: float
    n_scores: int
    n_peaks: int

    def quantile(self, risk: float) -> float:
        """The score exceeded with probability ``risk`` under this tail (Siffer Eq. 1)."""
        peak_fraction = self.n_peaks / self.n_scores
        if not 0.0 < risk < peak_fraction:
            raise ThresholdError(
                f"POT risk level must be in (0, {peak_fraction:.4g}) (the fraction of scores above "
                f"the initial threshold), got {risk}; lower the risk or the initial level"
            )
        ratio = risk / peak_fraction
        if abs(self.shape) < 1e-9:
            return float(self.initial_threshold - self.scale * np.log(ratio))
        return float(self.initial_threshold + self.scale / self.shape * (ratio**-self.shape - 1.0))


def initial_level_for(risk: float) -> float:
    """The initial quantile for a risk level: 0.98 (Siffer et al.), or lower so that at least
    twice ``risk`` of the scores are peaks (``risk`` must lie inside the fitted tail)."""
    return min(DEFAULT_INITIAL_LEVEL, 1.0 - 2.0 * risk)


def check_enough_scores(n_scores: int, risk: float) -> None:
    """Refuse, before any training, a series too short to give POT ``MIN_PEAKS`` peaks."""
    needed = int(np.ceil(MIN_PEAKS / (1.0 - initial_level_for(risk))))
    if n_scores < needed:
        raise ThresholdError(
            f"threshold='pot' needs at least {needed} training rows (at least {MIN_PEAKS} scores "
            f"above the initial {initial_level_for(risk):g} quantile), got {n_scores}: use the "
            "quantile threshold"
        )


def fit_tail(scores: np.ndarray, initial_level: float = DEFAULT_INITIAL_LEVEL) -> TailFit:
    """Fit a GPD to the excesses of ``scores`` over their ``initial_level`` quantile."""
    from scipy.stats import genpareto

    values = np.asarray(scores, dtype=np.float64).ravel()
    if values.size == 0 or not np.isfinite(values).all():
        raise ThresholdError("POT needs a non-empty array of finite scores")
    if not 0.0 < initial_level < 1.0:
        raise ThresholdError(f"POT initial level must be in (0, 1), got {initial_level}")
    t = float(np.quantile(values, initial_level))
    excesses = values[values > t] - t
    if excesses.size < MIN_PEAKS:
        raise ThresholdError(
            f"POT needs at least {MIN_PEAKS} scores above the initial {initial_level:g} quantile, "
            f"got {excesses.size} of {values.size}: train on a longer series or use the quantile "
            "threshold"
        )
    if np.ptp(excesses) <= 1e-12 * max(1.0, abs(t)):
        raise ThresholdError(
            "POT found no spread in the scores above the initial threshold (ties): use the "
            "quantile threshold"
        )
    shape, _, scale = genpareto.fit(excesses, floc=0.0)
    if not (np.isfinite(shape) and np.isfinite(scale) and scale > 0):
        raise ThresholdError(f"POT's generalized Pareto fit failed (shape {shape}, scale {scale})")
    return TailFit(t, float(shape), float(scale), int(values.size), int(excesses.size))


def pot_threshold(scores: np.ndarray, risk: float, initial_level: float | None = None) -> float:
    """The POT threshold of ``scores`` at risk level ``risk`` (expected fraction of normal scores
    above it); ``initial_level`` defaults to :func:`initial_level_for` ``(risk)``."""
    level = initial_level_for(risk) if initial_level is None else initial_level
    return fit_tail(scores, level).quantile(risk)
