"""Threshold protocols: how continuous anomaly scores become 0/1 predictions.

Every protocol is a pure function returning one float threshold; predictions are always
``score > threshold`` (strict), the same rule as :meth:`madcluster.base.BaseDetector.predict`.
Results must name the protocol they used, and ``best-f1`` is an **oracle** (it reads the test
labels), so it is flagged ``oracle=True`` everywhere.

Ratios are fractions in ``[0, 0.5)``, not percentages: ``anomaly_ratio=0.01`` is the paper's
alpha = 1 %. (Anomaly Transformer's ``--anormly_ratio 1`` means 1 %, i.e. ``0.01`` here; values of
0.5 or more are refused so that a percentage passed by mistake fails loudly.)

Quantiles use numpy's default (linear interpolation), as ``BaseDetector`` and Anomaly Transformer
(``np.percentile``) do.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from madcluster.exceptions import ThresholdError
from madcluster.extreme_value import pot_threshold


@dataclass(frozen=True)
class ThresholdResult:
    """A threshold and whether the protocol that produced it looked at test labels."""

    value: float
    oracle: bool


@dataclass(frozen=True)
class ThresholdProtocol:
    """A named protocol: ``func(train_scores, test_scores, labels, *, contamination,
    anomaly_ratio)``."""

    name: str
    oracle: bool
    description: str
    func: Callable[..., float]


# ----------------------------------------------------------------------------------------------
# the protocols as plain functions


def train_quantile_threshold(train_scores: Any, contamination: float) -> float:
    """The ``1 - contamination`` quantile of the training scores (the detector API default)."""
    scores = _scores(train_scores, "train_scores")
    _check_ratio(contamination, "contamination")
    return float(np.quantile(scores, 1.0 - contamination))


def train_pot_threshold(train_scores: Any, contamination: float) -> float:
    """Peaks over threshold on the training scores at risk level ``contamination``
    (:mod:`madcluster.extreme_value`, Siffer et al. 2017 as in OmniAnomaly): the same target as
    ``train-quantile``, read from a generalized Pareto tail fitted to the top scores."""
    scores = _scores(train_scores, "train_scores")
    _check_ratio(contamination, "contamination")
    return pot_threshold(scores, contamination)


def test_ratio_threshold(test_scores: Any, anomaly_ratio: float) -> float:
    """The ``100 - alpha`` percentile of the **test** scores, alpha = expected anomaly ratio in %.

    The paper's text. It uses the distribution of the test scores (transductive) but not the test
    labels, so it is not an oracle; it flags about ``anomaly_ratio`` of the test points.
    """
    scores = _scores(test_scores, "test_scores")
    _check_ratio(anomaly_ratio, "anomaly_ratio")
    return float(np.percentile(scores, 100.0 * (1.0 - anomaly_ratio)))


# pytest would collect a module-level function named test_*; this one is not a test
test_ratio_threshold.__test__ = False  # type: ignore[attr-defined]


def combined_threshold(train_scores: Any, test_scores: Any, anomaly_ratio: float) -> float:
    """Anomaly Transformer's rule: the ``100 - alpha`` percentile of train and test scores
    pooled."""
    pooled = np.concatenate(
        [_scores(train_scores, "train_scores"), _scores(test_scores, "test_scores")]
    )
    _check_ratio(anomaly_ratio, "anomaly_ratio")
    return float(np.percentile(pooled, 100.0 * (1.0 - anomaly_ratio)))


def best_f1_threshold(
    test_scores: Any, labels: Any, *, return_f1: bool = False
) -> float | tuple[float, float]:
    """ORACLE: the threshold whose predictions ``score > t`` have the highest point F1 on
    ``labels``.

    Exact over every distinct way of cutting the sorted scores (predicting the top 1, 2, ...
    distinct score values as anomalous, or everything), in O(n log n): one sort, one cumulative sum.
    Each candidate threshold is the next lower distinct score (so ``score > t`` keeps the intended
    points); flagging every point uses the float just below the minimum. Ties in F1 go to the
    highest threshold (fewest flagged points). With no anomalous label, F1 is 0 everywhere and the
    maximum score is returned (nothing flagged). ``return_f1=True`` also returns that best F1.
    """
    scores = _scores(test_scores, "test_scores")
    y = np.asarray(labels)
    if y.shape != scores.shape:
        raise ValueError(f"labels must have the shape of test_scores {scores.shape}, got {y.shape}")
    y = y.astype(bool)
    n_pos = int(y.sum())
    if n_pos == 0:
        return (float(scores.max()), 0.0) if return_f1 else float(scores.max())

    order = np.argsort(-scores, kind="stable")
    s, ys = scores[order], y[order]
    tp = np.cumsum(ys)
    # last index of each group of equal scores (descending): flag everything up to and including it
    ends = np.flatnonzero(np.r_[s[1:] != s[:-1], True])
    tp_at, flagged = tp[ends], ends + 1
    f1 = 2.0 * tp_at / (flagged + n_pos)
    best = int(np.argmax(f1))  # first maximum = highest threshold
    if best + 1 < len(ends):
        value = float(s[ends[best] + 1])  # next lower distinct score
    else:
        # flag every point: the next float below the minimum *in the scores' own precision*, so that
        # numpy's comparison of e.g. float32 scores with this Python float (cast to float32) still
        # holds
        raw = np.asarray(test_scores)
        dtype = raw.dtype if np.issubdtype(raw.dtype, np.floating) else np.dtype(np.float64)
        value = float(np.nextafter(dtype.type(s[-1]), dtype.type(-np.inf)))
    return (value, float(f1[best])) if return_f1 else value


# ----------------------------------------------------------------------------------------------
# the registry


def _reading(func: Callable[..., float], *inputs: str) -> Callable[..., float]:
    """``func`` as a protocol: called with the protocol arguments named in ``inputs``, in order."""

    def protocol(
        train_scores: Any,
        test_scores: Any,
        labels: Any,
        *,
        contamination: float,
        anomaly_ratio: float,
    ) -> float:
        given = {
            "train_scores": train_scores,
            "test_scores": test_scores,
            "contamination": contamination,
            "anomaly_ratio": anomaly_ratio,
        }
        return func(*(given[name] for name in inputs))

    return protocol


def _p_best_f1(
    train_scores: Any, test_scores: Any, labels: Any, *, contamination: float, anomaly_ratio: float
) -> float:
    if labels is None:
        raise ValueError("the best-f1 protocol needs the test labels")
    return best_f1_threshold(test_scores, labels)  # type: ignore[return-value]


PROTOCOLS: dict[str, ThresholdProtocol] = {
    p.name: p
    for p in (
        ThresholdProtocol(
            "train-quantile",
            False,
            "the (1 - contamination) quantile of the training scores (detector API default)",
            _reading(train_quantile_threshold, "train_scores", "contamination"),
        ),
        ThresholdProtocol(
            "train-pot",
            False,
            "peaks over threshold (POT, OmniAnomaly): a generalized Pareto tail fitted to the top "
            "2 % of training scores, threshold at risk level q = contamination",
            _reading(train_pot_threshold, "train_scores", "contamination"),
        ),
        ThresholdProtocol(
            "test-ratio",
            False,
            "the (100 - alpha) percentile of the test scores, alpha = anomaly ratio (paper text; "
            "uses test scores, not labels)",
            _reading(test_ratio_threshold, "test_scores", "anomaly_ratio"),
        ),
        ThresholdProtocol(
            "combined",
            False,
            "the (100 - alpha) percentile of train and test scores pooled (Anomaly Transformer)",
            _reading(combined_threshold, "train_scores", "test_scores", "anomaly_ratio"),
        ),
        ThresholdProtocol(
            "best-f1",
            True,
            "ORACLE: the threshold maximising point F1 on the test labels (what the released code "
            "reports)",
            _p_best_f1,
        ),
    )
}


def get_protocol(name: str) -> ThresholdProtocol:
    """The protocol with this name (case-insensitive, ``_`` accepted for ``-``)."""
    key = name.strip().lower().replace("_", "-")
    if key not in PROTOCOLS:
        raise ValueError(f"unknown threshold protocol {name!r}; known: {', '.join(PROTOCOLS)}")
    return PROTOCOLS[key]


def compute_thresholds(
    train_scores: Any,
    test_scores: Any,
    labels: Any,
    *,
    contamination: float,
    anomaly_ratio: float,
    protocols: list[str] | tuple[str, ...] | None = None,
) -> dict[str, ThresholdResult]:
    """Every protocol's threshold (or those named in ``protocols``), keyed by protocol name.

    With ``labels=None`` the oracle protocols are left out, and so is a protocol that the training
    scores cannot support (``ThresholdError``, e.g. ``train-pot`` with ties in the top scores);
    named explicitly in ``protocols``, both raise instead.
    """
    chosen = (
        [get_protocol(n) for n in protocols]
        if protocols is not None
        else [p for p in PROTOCOLS.values() if labels is not None or not p.oracle]
    )
    out = {}
    for p in chosen:
        try:
            value = p.func(
                train_scores,
                test_scores,
                labels,
                contamination=contamination,
                anomaly_ratio=anomaly_ratio,
            )
        except ThresholdError:
            if protocols is not None:
                raise
            continue  # e.g. POT on too few or tied training scores: no row rather than a wrong one
        out[p.name] = ThresholdResult(float(value), p.oracle)
    return out


# ----------------------------------------------------------------------------------------------
def _scores(scores: Any, name: str) -> np.ndarray:
    arr = np.asarray(scores, dtype=np.float64)
    if arr.ndim != 1:
        arr = arr.reshape(-1) if arr.ndim == 2 and 1 in arr.shape else arr
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(
            f"{name} must be a non-empty 1-D array of scores, got shape {np.shape(scores)}"
        )
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains {int((~np.isfinite(arr)).sum())} NaN/inf value(s)")
    return arr


def _check_ratio(value: float, name: str) -> None:
    if not 0.0 <= float(value) < 0.5:
        hint = (
            f" (a fraction: for {value} % pass {float(value) / 100:g})"
            if 0.5 <= float(value) < 50
            else ""
        )
        raise ValueError(f"{name} must be a fraction in [0, 0.5), got {value}{hint}")
