"""Affiliation precision and recall (Huet, Navarro & Rossi, "Local Evaluation of Time Series Anomaly
Detection Algorithms", KDD 2022).

Why: point-wise precision/recall ignore *how far* a prediction is from the true event, and point
adjustment rewards a single lucky hit. Affiliation metrics split the time axis into one *zone of
affiliation* per ground-truth event (the points closer to that event than to any other) and, inside
each zone, turn distances into probabilities by comparing them with the distance of a point drawn
uniformly in the zone:

* individual precision of event ``j``: mean over predicted time ``x`` in zone ``j`` of
  ``P(dist(U, J_j) > dist(x, J_j))``, ``U`` uniform on the zone (undefined when nothing is
  predicted in the zone);
* individual recall of event ``j``: mean over ``y`` in ``J_j`` of
  ``P(dist(U, y) > dist(y, predictions))`` (0 when nothing is predicted in the zone);
* precision = mean of the defined individual precisions, recall = mean of all individual recalls.

Conventions are those of the authors' reference code (``affiliation`` package of
``ahstat/affiliation-metrics-py``, vendored unchanged by the ``vus`` package and TSB-AD): a
positive point ``i`` is the interval ``[i, i + 1)``, events are maximal runs of positive points and
the series range is ``[0, n)``. The closed-form integrals (their ``_integral_interval.py``) are
evaluated here for all event pieces at once with numpy instead of nested Python loops, which makes
the metric O(n) instead of O(#events x #predicted events).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from madcluster.metrics._segments import runs
from madcluster.metrics._validation import check_binary, check_same_length, require_anomaly

__all__ = ["affiliation_precision", "affiliation_precision_recall", "affiliation_recall"]


def _clip(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Empty intervals become zero-width ones, whose contributions below are exactly 0."""
    return lo, np.maximum(lo, hi)


def _precision_outside(
    a: np.ndarray, b: np.ndarray, j0: np.ndarray, j1: np.ndarray, e0: np.ndarray, e1: np.ndarray
) -> np.ndarray:
    """Integral over ``x in [a, b]`` (outside ``J = [j0, j1]``, inside zone ``E = [e0, e1]``) of the
    survival function ``1 - F(dist(x, J))`` of the distance of a uniform point of ``E`` to ``J``.

    Closed form of the reference ``integral_mini_interval_Pprecision_CDFmethod``.
    """
    d_min = np.maximum(a - j1, j0 - b)
    d_max = np.maximum(b - j1, j0 - a)
    m = np.minimum(j0 - e0, e1 - j1)
    big_a = np.minimum(d_max, m) ** 2 - np.minimum(d_min, m) ** 2
    big_b = np.maximum(d_max, m) - np.maximum(d_min, m)
    min_piece = (1 / 2) * big_a + m * big_b
    linear_piece = (1 / 2) * (d_max**2 - d_min**2)
    remaining_piece = (j1 - j0) * (b - a)
    return (b - a) - (1 / (e1 - e0)) * (min_piece + linear_piece + remaining_piece)


def _recall_outside(
    ta: np.ndarray, tb: np.ndarray, p: np.ndarray, e0: np.ndarray, e1: np.ndarray, pivot_right: bool
) -> np.ndarray:
    """Integral over ``t in [ta, tb]`` (a piece of a ground-truth event lying on one side of a
    predicted interval whose nearest border is ``p``) of ``1 - (min(d, m) + d) / |E|`` with
    ``d = |p - t|`` and ``m = min(t - e0, e1 - t)``; 0 when ``p`` is not strictly inside ``E``.

    Closed form of the reference ``integral_mini_interval_Precall_CDFmethod``: ``[ta, tb]`` is cut
    at the zone centre and at the midpoints between ``p`` and the zone borders, where ``min(d, m)``
    changes expression. ``pivot_right`` is True when the prediction lies right of ``[ta, tb]``.
    """
    e_mean = (e0 + e1) / 2
    iemin_mean = (e0 + p) / 2
    iemax_mean = (e1 + p) / 2
    bb0, bb1 = _clip(ta, np.minimum(np.minimum(tb, e_mean), iemin_mean))
    ba0, ba1 = _clip(np.maximum(ta, iemin_mean), np.minimum(tb, e_mean))
    ab0, ab1 = _clip(np.maximum(ta, e_mean), np.minimum(tb, iemax_mean))
    aa0, aa1 = _clip(np.maximum(np.maximum(ta, e_mean), iemax_mean), tb)
    if pivot_right:
        part1 = (p - e0) * (bb1 - bb0)
        part2 = 2 * p * (ba1 - ba0) - (ba1**2 - ba0**2)
        part3 = 2 * p * (ab1 - ab0) - (ab1**2 - ab0**2)
        part4 = (e1 + p) * (aa1 - aa0) - (aa1**2 - aa0**2)
    else:
        part1 = (bb1**2 - bb0**2) - (e0 + p) * (bb1 - bb0)
        part2 = (ba1**2 - ba0**2) - 2 * p * (ba1 - ba0)
        part3 = (ab1**2 - ab0**2) - 2 * p * (ab1 - ab0)
        part4 = (e1 - p) * (aa1 - aa0)
    out = (tb - ta) - (1 / (e1 - e0)) * (part1 + part2 + part3 + part4)
    inside = (p > e0) & (p < e1)
    return np.where(inside, out, 0.0)


def _individual(pred: np.ndarray, lab: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Individual precision (NaN where undefined) and recall probabilities, one per true event."""
    n = lab.size
    gs, ge = runs(lab)
    n_events = gs.size
    gs_f, ge_f = gs.astype(np.float64), ge.astype(np.float64)
    # Zones of affiliation: cut halfway between consecutive true events; outer borders = [0, n).
    cuts = (ge_f[:-1] + gs_f[1:]) / 2
    z_lo = np.concatenate([[0.0], cuts])
    z_hi = np.concatenate([cuts, [float(n)]])
    bounds = np.concatenate([z_lo, [float(n)]])

    ps, pe = runs(pred)
    prec_num = np.zeros(n_events)
    prec_len = np.zeros(n_events)
    rec_num = np.zeros(n_events)
    if ps.size:
        # Cut every predicted event [ps, pe) into its pieces inside each zone it crosses.
        ps_f, pe_f = ps.astype(np.float64), pe.astype(np.float64)
        z_first = np.searchsorted(bounds, ps_f, side="right") - 1
        z_last = np.searchsorted(bounds, pe_f, side="left") - 1
        counts = z_last - z_first + 1
        ev = np.repeat(np.arange(ps.size), counts)
        offsets = np.cumsum(counts) - counts
        zone = z_first[ev] + (np.arange(ev.size) - offsets[ev])
        lo = np.maximum(ps_f[ev], z_lo[zone])
        hi = np.minimum(pe_f[ev], z_hi[zone])
        keep = hi > lo
        zone, lo, hi = zone[keep], lo[keep], hi[keep]

        j0, j1, e0, e1 = gs_f[zone], ge_f[zone], z_lo[zone], z_hi[zone]

        # Precision: pieces inside J count fully, the parts before/after J by the closed form.
        inside = np.maximum(np.minimum(hi, j1) - np.maximum(lo, j0), 0.0)
        b0, b1 = _clip(lo, np.minimum(hi, j0))
        a0, a1 = _clip(np.maximum(lo, j1), hi)
        contrib = (
            _precision_outside(b0, b1, j0, j1, e0, e1)
            + inside
            + _precision_outside(a0, a1, j0, j1, e0, e1)
        )
        prec_num = np.bincount(zone, weights=contrib, minlength=n_events)
        prec_len = np.bincount(zone, weights=hi - lo, minlength=n_events)

        # Recall: inside each zone, the pieces partition the zone into their own zones of
        # affiliation; the part of J in a piece's zone is measured against that piece.
        first = np.ones(zone.size, dtype=bool)
        first[1:] = zone[1:] != zone[:-1]
        last = np.ones(zone.size, dtype=bool)
        last[:-1] = first[1:]
        r0 = e0.copy()
        r0[~first] = ((hi[:-1] + lo[1:]) / 2)[~first[1:]]
        r1 = e1.copy()
        r1[~last] = ((hi[:-1] + lo[1:]) / 2)[~last[:-1]]
        t0 = np.maximum(j0, r0)
        t1 = np.minimum(j1, r1)
        has_j = t1 > t0
        t0, t1 = _clip(t0, t1)
        mid = np.maximum(np.minimum(t1, hi) - np.maximum(t0, lo), 0.0)
        bt0, bt1 = _clip(t0, np.minimum(t1, lo))
        at0, at1 = _clip(np.maximum(t0, hi), t1)
        rcontrib = (
            _recall_outside(bt0, bt1, lo, e0, e1, pivot_right=True)
            + mid
            + _recall_outside(at0, at1, hi, e0, e1, pivot_right=False)
        )
        rcontrib = np.where(has_j, rcontrib, 0.0)
        rec_num = np.bincount(zone, weights=rcontrib, minlength=n_events)

    ind_prec = np.where(prec_len > 0, prec_num / np.where(prec_len > 0, prec_len, 1.0), np.nan)
    ind_rec = rec_num / (ge_f - gs_f)
    return ind_prec, ind_rec


def affiliation_precision_recall(predictions: ArrayLike, labels: ArrayLike) -> tuple[float, float]:
    """Affiliation precision and recall of binary point ``predictions`` (Huet et al., KDD 2022).

    Returns ``(precision, recall)``, both in [0, 1]. Precision is the mean of the individual
    precisions of the true events that have a prediction in their zone of affiliation; it is
    **NaN when nothing at all is predicted** (undefined, as in the reference code). Recall is the
    mean over all true events and is 0 when nothing is predicted.

    Raises:
        DataError: inputs not 1-D 0/1 of equal length, or ``labels`` has no anomaly (there is no
            zone of affiliation; the reference code raises too).
    """
    pred = check_binary(predictions, "predictions")
    lab = check_binary(labels, "labels")
    check_same_length(pred, lab, "predictions", "labels")
    require_anomaly(lab, "affiliation precision/recall")
    ind_prec, ind_rec = _individual(pred, lab)
    defined = ~np.isnan(ind_prec)
    prec = float(np.mean(ind_prec[defined])) if defined.any() else math.nan
    return prec, float(np.mean(ind_rec))


def affiliation_precision(predictions: ArrayLike, labels: ArrayLike) -> float:
    """Affiliation precision; NaN when nothing is predicted. See
    :func:`affiliation_precision_recall`."""
    return affiliation_precision_recall(predictions, labels)[0]


def affiliation_recall(predictions: ArrayLike, labels: ArrayLike) -> float:
    """Affiliation recall. See :func:`affiliation_precision_recall`."""
    return affiliation_precision_recall(predictions, labels)[1]
