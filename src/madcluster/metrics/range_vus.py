"""Range-AUC and VUS (Volume Under the Surface), Paparrizos et al., "Volume Under the Surface: a New
Accuracy Evaluation Measure for Time-Series Anomaly Detection", PVLDB 15(11), 2022.

Why: a detector that fires a few points before or after a labelled anomaly is useful, but point-wise
ROC/PR curves count those points as plain false positives. Range-AUC replaces the binary labels by
*extended* labels that decay as ``sqrt(1 - d / window)`` over ``window // 2`` points on each side of
every anomalous segment, and multiplies the recall by the fraction of (extended) segments that are
hit ("existence"). VUS averages Range-AUC over all buffer sizes ``0, 1, ..., window`` so that the
result no longer depends on one arbitrary window.

The definitions reproduce, to floating-point round-off, the published code that every paper in
this line reports with:

* ``range_auc`` = ``vus`` 0.0.6 (PyPI) ``metricor().RangeAUC(labels, score, window)`` — the
  function called by TSB-AD-era and DCdetector-derived evaluation scripts for ``R_AUC_ROC`` /
  ``R_AUC_PR``;
* ``vus`` = ``metricor().RangeAUC_volume_opt(labels, score, windowSize, thre=250)`` of the same
  package, byte-identical to TSB-AD's ``basic_metricor.RangeAUC_volume_opt`` used by its
  ``get_metrics`` for ``VUS-ROC`` / ``VUS-PR``.

(TSB-AD 1.5 also ships a ``RangeAUC`` that differs from ``vus`` 0.0.6 — right extension shifted by
one point, another ``P_new``, step-wise PR — but its ``get_metrics`` does not call it; the
Range-AUC numbers in the literature come from the ``vus`` version reproduced here.)

Quirks of that code that are reproduced on purpose (changing any of them changes the numbers):

1. Thresholds: the scores are sorted in decreasing order and the threshold ``k`` is the value at
   position ``int(linspace(0, n - 1, 250)[k])``; a point is predicted when ``score >= threshold``
   (so tied points enter together and the lowest threshold predicts every point).
2. Extended label: each segment ``[s, e]`` adds ``sqrt(1 - (x - e) / window)`` for
   ``x in (e, e + window // 2]`` and ``sqrt(1 - (s - x) / window)`` for
   ``x in [s - window // 2, s)``, clipped to the series; overlapping contributions are *summed* and
   the result clipped at 1.
3. Range-AUC: ``P_new = (P + sum(extended label)) / 2`` is fixed; existence is counted over the
   maximal runs of non-zero extended label (touching extensions merge); ROC and PR areas are both
   trapezoidal, from an added ``(0, 0)`` (precision 1) to an added ``(1, 1)`` ROC point.
4. VUS: for each buffer ``w`` the label inside ``[s - w//2, e + w//2]`` is the extended label times
   the prediction, but 1 on the original anomalies, so ``P_new = (P + sum of that label) / 2``
   changes with the threshold; existence is counted over ``new_sequence`` segments, which merge two
   neighbouring extensions only when they overlap (``e_i + w//2 >= s_j - w//2``), not when they
   merely touch; the PR area uses the right-hand precision of each step (no trapezoid).
5. ``recall = min(TP / P_new, 1)``, ``TPR = recall * existence``,
   ``FPR = (N_pred - TP) / (n - P_new)``, ``precision = TP / N_pred`` where
   ``TP = sum(extended label * prediction)``.

Instead of re-scanning the whole series for each of the 250 thresholds (and each of the 101 buffer
sizes), the scores are sorted once; true positives at all thresholds come from a cumulative sum of
the extended label in score order, and existence from the maximum score of each segment. Only the
points within ``window // 2`` of an anomaly carry a non-zero extended label, so the per-buffer work
is proportional to that neighbourhood, not to the series length.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from madcluster.exceptions import DataError
from madcluster.metrics._segments import runs
from madcluster.metrics._validation import (
    check_binary,
    check_same_length,
    check_scores,
    check_window,
    require_anomaly,
    require_normal,
)

__all__ = ["range_auc", "range_auc_pr", "range_auc_roc", "vus", "vus_pr", "vus_roc"]

_FAR = np.iinfo(np.int64).max // 4  # "no segment on that side"


@dataclass(frozen=True)
class _Prepared:
    """Everything that does not depend on the buffer size, computed once per (scores, labels)."""

    n: int
    n_anomalies: int
    starts: np.ndarray  # first point of each anomalous segment
    ends: np.ndarray  # last point (inclusive) of each anomalous segment
    support: np.ndarray  # sorted indices of points within max_half of an anomaly
    support_scores: np.ndarray  # scores at ``support`` (+ a trailing -inf sentinel)
    # Distances from each support point to the nearest and to the second-nearest segment that
    # extends towards it (0 and 0 on anomalous points), clipped at ``max_half + 1`` ("too far").
    # Kept in decreasing-score order so that the extended label comes out in score order and needs
    # no gather before its cumulative sum.
    nearest: np.ndarray
    second: np.ndarray
    thresholds: np.ndarray  # the reference thresholds, decreasing
    n_pred: np.ndarray  # points with score >= threshold, per threshold
    n_pred_support: np.ndarray  # same, among support points
    tp_anomalous: np.ndarray  # anomalous points with score >= threshold


def _count_at_least(sorted_asc: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    return sorted_asc.size - np.searchsorted(sorted_asc, thresholds, side="left")


def _prepare(scores: np.ndarray, labels: np.ndarray, max_half: int, n_thresholds: int) -> _Prepared:
    n = scores.size
    starts, stops = runs(labels)
    ends = stops - 1

    marks = np.zeros(n + 1, dtype=np.int64)
    np.add.at(marks, np.maximum(starts - max_half, 0), 1)
    np.add.at(marks, np.minimum(ends + max_half, n - 1) + 1, -1)
    support = np.flatnonzero(np.cumsum(marks[:-1]) > 0)

    # Contributions come from segment ends on the left and segment starts on the right; the two
    # nearest on each side are enough (see ``_extended_label``).
    k = np.searchsorted(ends, support, side="left")  # segments ending strictly before x
    j = np.searchsorted(starts, support, side="right")  # first segment starting after x
    padded_ends = np.concatenate([[-_FAR, -_FAR], ends])
    padded_starts = np.concatenate([starts, [_FAR, _FAR]])
    dl1, dl2 = support - padded_ends[k + 1], support - padded_ends[k]
    dr1, dr2 = padded_starts[j] - support, padded_starts[j + 1] - support
    anomalous = labels[support]
    nearest = np.where(anomalous, 0, np.minimum(dl1, dr1))
    second = np.where(anomalous, 0, np.minimum(np.maximum(dl1, dr1), np.minimum(dl2, dr2)))
    too_far = max_half + 1

    s_scores = scores[support]
    order = np.argsort(-s_scores, kind="stable")

    asc = np.sort(scores)
    idx = np.linspace(0, n - 1, n_thresholds).astype(int)
    thresholds = asc[::-1][idx]
    return _Prepared(
        n=n,
        n_anomalies=int(np.count_nonzero(labels)),
        starts=starts,
        ends=ends,
        support=support,
        support_scores=np.concatenate([s_scores, [-np.inf]]),
        nearest=np.minimum(nearest, too_far)[order].astype(np.intp),
        second=np.minimum(second, too_far)[order].astype(np.intp),
        thresholds=thresholds,
        n_pred=_count_at_least(asc, thresholds),
        n_pred_support=_count_at_least(np.sort(s_scores), thresholds),
        tp_anomalous=_count_at_least(np.sort(scores[labels]), thresholds),
    )


def _extended_label(prep: _Prepared, window: int) -> np.ndarray:
    """The reference's extended label at the support points (in score order), for ``window``.

    Every non-zero contribution is at least ``sqrt(1 - (window // 2) / window) >= sqrt(1/2)``, so a
    point reached by two or more segments sums past 1 and is clipped to exactly 1; a point reached
    by one segment gets that segment's value, bit-for-bit as the reference computes it. So the label
    depends only on the nearest and second-nearest reaching segment.
    """
    half = window // 2
    # value[d] = what one segment at distance d contributes; value[0] is for anomalous points and
    # value[half + 1] for points out of reach. Same float operations as the reference.
    value = np.zeros(half + 2)
    value[0] = 1.0
    value[1 : half + 1] = np.sqrt(1 - np.arange(1, half + 1) / window)
    ext = value[np.minimum(prep.nearest, half + 1)]
    np.putmask(ext, prep.second <= half, 1.0)
    return ext


def _segments(prep: _Prepared, half: int, merge_touching: bool) -> tuple[np.ndarray, np.ndarray]:
    """Extended segments ``[lo, hi]`` (inclusive) after merging neighbours.

    ``merge_touching=True`` gives the maximal runs of non-zero extended label (``RangeAUC``);
    ``False`` gives ``new_sequence`` (``RangeAUC_volume_opt``), which keeps touching extensions
    apart.
    """
    lo = np.maximum(prep.starts - half, 0)
    hi = np.minimum(prep.ends + half, prep.n - 1)
    gap = 1 if merge_touching else 0
    new = np.concatenate([[True], lo[1:] > hi[:-1] + gap])
    last = np.concatenate([new[1:], [True]])
    return lo[new], hi[last]


def _segment_hits(prep: _Prepared, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Number of segments containing a point with score >= threshold, per threshold."""
    a = np.searchsorted(prep.support, lo)
    b = np.searchsorted(prep.support, hi) + 1
    bounds = np.empty(2 * a.size, dtype=np.int64)
    bounds[0::2] = a
    bounds[1::2] = b
    seg_max = np.maximum.reduceat(prep.support_scores, bounds)[0::2]
    return _count_at_least(np.sort(seg_max), prep.thresholds)


def _true_positives(prep: _Prepared, ext: np.ndarray) -> np.ndarray:
    """``sum(extended label * (score >= threshold))`` per threshold (``ext`` in score order)."""
    csum = np.concatenate([[0.0], np.cumsum(ext)])
    return csum[prep.n_pred_support]


def _range_auc(prep: _Prepared, window: int) -> tuple[float, float]:
    ext = _extended_label(prep, window)
    p_new = (prep.n_anomalies + float(np.sum(ext))) / 2
    lo, hi = _segments(prep, window // 2, merge_touching=True)
    existence = _segment_hits(prep, lo, hi) / lo.size
    tp = _true_positives(prep, ext)
    # no division by 0: p_new > 0 (an anomaly), n - p_new > 0 (a normal point's extended label
    # is below 1), n_pred >= 1 (each threshold is a score)
    tpr = np.minimum(tp / p_new, 1) * existence
    fpr = (prep.n_pred - tp) / (prep.n - p_new)
    prec = tp / prep.n_pred
    tpr_full = np.concatenate([[0.0], tpr, [1.0]])
    fpr_full = np.concatenate([[0.0], fpr, [1.0]])
    prec_full = np.concatenate([[1.0], prec])
    roc = np.dot(np.diff(fpr_full), (tpr_full[1:] + tpr_full[:-1]) / 2)
    pr = np.dot(tpr_full[1:-1] - tpr_full[:-2], (prec_full[1:] + prec_full[:-1]) / 2)
    return float(roc), float(pr)


def _vus(prep: _Prepared, max_window: int) -> tuple[float, float]:
    aucs = np.zeros(max_window + 1)
    aps = np.zeros(max_window + 1)
    hits_cache: dict[int, tuple[np.ndarray, int]] = {}
    for w in range(max_window + 1):
        half = w // 2
        if half not in hits_cache:
            lo, hi = _segments(prep, half, merge_touching=False)
            hits_cache[half] = (_segment_hits(prep, lo, hi), lo.size)
        hits, n_segments = hits_cache[half]
        ext = _extended_label(prep, w)
        tp = _true_positives(prep, ext)
        # Label sum inside the extended segments: 1 on the anomalies, ext * pred elsewhere.
        n_labels = prep.n_anomalies + (tp - prep.tp_anomalous)
        p_new = (prep.n_anomalies + n_labels) / 2
        tpr = np.minimum(tp / p_new, 1) * (hits / n_segments)  # no division by 0: _range_auc
        fpr = (prep.n_pred - tp) / (prep.n - p_new)
        prec = tp / prep.n_pred
        tpr_full = np.concatenate([[0.0], tpr, [1.0]])
        fpr_full = np.concatenate([[0.0], fpr, [1.0]])
        aucs[w] = np.dot(np.diff(fpr_full), (tpr_full[1:] + tpr_full[:-1]) / 2)
        aps[w] = np.dot(tpr_full[1:-1] - tpr_full[:-2], prec)
    return float(np.mean(aucs)), float(np.mean(aps))


def _checked(
    scores: ArrayLike, labels: ArrayLike, window: int, what: str
) -> tuple[np.ndarray, np.ndarray, int]:
    s = check_scores(scores)
    lab = check_binary(labels, "labels")
    check_same_length(s, lab, "scores", "labels")
    require_anomaly(lab, what)
    require_normal(lab, what)
    return s, lab, check_window(window)


def _check_thresholds(n_thresholds: int) -> int:
    if (
        isinstance(n_thresholds, bool)
        or not isinstance(n_thresholds, (int, np.integer))
        or n_thresholds < 1
    ):
        raise DataError(f"n_thresholds must be a positive integer, got {n_thresholds!r}")
    return int(n_thresholds)


def range_auc(
    scores: ArrayLike, labels: ArrayLike, *, window: int = 100, n_thresholds: int = 250
) -> tuple[float, float]:
    """Range-AUC-ROC and Range-AUC-PR of ``scores`` with buffer ``window`` (Paparrizos et al. 2022).

    Equals ``vus`` 0.0.6 ``metricor().RangeAUC(labels, score, window=window)`` (see the module
    docstring for the exact definition and the quirks reproduced). Pass binary predictions as
    ``scores`` to get the variant computed on thresholded output.

    Returns:
        ``(range_auc_roc, range_auc_pr)``.

    Raises:
        DataError: bad inputs, or ``labels`` has no anomaly or no normal point.
    """
    s, lab, window = _checked(scores, labels, window, "Range-AUC")
    prep = _prepare(s, lab, window // 2, _check_thresholds(n_thresholds))
    return _range_auc(prep, window)


def vus(
    scores: ArrayLike, labels: ArrayLike, *, window: int = 100, n_thresholds: int = 250
) -> tuple[float, float]:
    """VUS-ROC and VUS-PR: Range-AUC-ROC / -PR averaged over buffers ``0, 1, ..., window``.

    Equals ``RangeAUC_volume_opt(labels, score, windowSize=window, thre=n_thresholds)`` of ``vus``
    0.0.6 / TSB-AD (see the module docstring). TSB-AD's ``get_metrics`` uses ``window`` = its
    sliding window (default 100); DCdetector-derived scripts pass ``2 * slidingWindow``.

    Returns:
        ``(vus_roc, vus_pr)``.

    Raises:
        DataError: bad inputs, or ``labels`` has no anomaly or no normal point.
    """
    s, lab, window = _checked(scores, labels, window, "VUS")
    prep = _prepare(s, lab, window // 2, _check_thresholds(n_thresholds))
    return _vus(prep, window)


def range_auc_roc(scores: ArrayLike, labels: ArrayLike, *, window: int = 100) -> float:
    """Range-AUC-ROC; see :func:`range_auc`."""
    return range_auc(scores, labels, window=window)[0]


def range_auc_pr(scores: ArrayLike, labels: ArrayLike, *, window: int = 100) -> float:
    """Range-AUC-PR; see :func:`range_auc`."""
    return range_auc(scores, labels, window=window)[1]


def vus_roc(scores: ArrayLike, labels: ArrayLike, *, window: int = 100) -> float:
    """VUS-ROC; see :func:`vus`."""
    return vus(scores, labels, window=window)[0]


def vus_pr(scores: ArrayLike, labels: ArrayLike, *, window: int = 100) -> float:
    """VUS-PR; see :func:`vus`."""
    return vus(scores, labels, window=window)[1]


def range_and_vus(
    scores: np.ndarray, labels: np.ndarray, *, window: int = 100, n_thresholds: int = 250
) -> tuple[float, float, float, float]:
    """All four on already-validated arrays, sharing the sort (used by ``evaluate``)."""
    prep = _prepare(scores, labels, window // 2, n_thresholds)
    r_roc, r_pr = _range_auc(prep, window)
    v_roc, v_pr = _vus(prep, window)
    return r_roc, r_pr, v_roc, v_pr
