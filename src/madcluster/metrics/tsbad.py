"""TSB-AD's evaluation (Liu & Paparrizos, NeurIPS 2024): its window rule and its VUS.

TSB-AD 1.5 scores a series with ``get_metrics(score, labels, slidingWindow)``, whose ``VUS-PR`` /
``VUS-ROC`` are ``RangeAUC_volume_opt(labels, score, windowSize=slidingWindow, thre=250)`` (the
function :func:`madcluster.metrics.range_vus.vus` reproduces), and its runners set
``slidingWindow = find_length_rank(data[:, 0], rank=1)``: the lag of the highest local maximum of
the first channel's autocorrelation, which this module computes without statsmodels.
``tests/metrics/make_tsbad_fixture.py`` records the package's outputs; the tests compare to them.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from madcluster.exceptions import DataError
from madcluster.metrics.range_vus import vus

__all__ = ["DEFAULT_PERIOD", "find_length_rank", "tsbad_vus"]

DEFAULT_PERIOD = 125  # TSB-AD's answer when no usable autocorrelation peak exists
_MAX_LAG = 400
_SKIP = 3  # lags 0-2 are never a period
_MAX_POINTS = 20_000


def _autocorrelation(x: np.ndarray, n_lags: int) -> np.ndarray:
    """Biased sample autocorrelation at lags ``0..n_lags`` via the FFT (statsmodels
    ``acf(fft=True)``)."""
    n = x.size
    centred = x - x.mean()
    size = 1 << int(2 * n - 1).bit_length()  # zero-pad past 2n - 1: no circular wrap-around
    spectrum = np.fft.rfft(centred, n=size)
    acov = np.fft.irfft(spectrum * np.conj(spectrum), n=size)[: n_lags + 1] / n
    with np.errstate(divide="ignore", invalid="ignore"):
        return acov / acov[0]


def find_length_rank(series: ArrayLike, rank: int = 1) -> int:
    """TSB-AD's sliding window: the period of ``series`` (1-D, e.g. ``data[:, 0]``) from its ACF.

    The first 20,000 points' autocorrelation at lags 3..400; its strict local maxima ranked by
    height; the ``rank``-th one's lag (rank 1 = the highest). 125 when there is none or it is
    below lag 3 + 3 or above 300 + 3; ``rank=0`` gives 1. (TSB-AD's ranks 2 and 3 are not
    implemented: its runners never use them.)
    """
    x = np.asarray(series, dtype=np.float64).squeeze()
    if x.ndim != 1:
        raise DataError(f"find_length_rank needs one channel (a 1-D series), got shape {x.shape}")
    if rank not in (0, 1):
        raise DataError(
            f"rank must be 1 (the highest peak, what TSB-AD's runners use) or 0, got {rank!r}"
        )
    if rank == 0:
        return 1
    x = x[:_MAX_POINTS]
    if x.size <= _SKIP + 2:
        return DEFAULT_PERIOD
    acf = _autocorrelation(x, min(_MAX_LAG, x.size - 1))[_SKIP:]
    inner = acf[1:-1]
    peaks = np.flatnonzero((inner > acf[:-2]) & (inner > acf[2:])) + 1
    if peaks.size == 0:
        return DEFAULT_PERIOD
    lag = int(peaks[np.argsort(acf[peaks])[::-1][0]])
    if lag < 3 or lag > 300:
        return DEFAULT_PERIOD
    return lag + _SKIP


def tsbad_vus(scores: ArrayLike, labels: ArrayLike, series: ArrayLike) -> tuple[float, float]:
    """``(VUS-ROC, VUS-PR)`` as TSB-AD reports them for a detector's ``scores`` on ``series``.

    ``series`` is the scored data (T, D) or its first channel; the window is
    ``find_length_rank(series[:, 0], rank=1)``.
    """
    data = np.asarray(series, dtype=np.float64)
    first = data[:, 0] if data.ndim == 2 else data
    return vus(scores, labels, window=find_length_rank(first, rank=1))
