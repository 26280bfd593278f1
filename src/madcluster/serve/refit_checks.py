"""What a served refit must pass before it is swapped in: rows fit to train on, then a model that
does not alarm on everything.

Why: 400 rows constant in every column (a stuck sensor, a test payload) were refitted and swapped
in silently; the threshold fell from 7.66 to 1.01, the next rows scored up to 4.4e13 and every one
was flagged, on every stream of the model. Two checks, each skipped by ``"force": true``:

- :func:`row_problems`, when the refit is asked for (HTTP 400): a column constant in the rows that
  varied in training, every column constant, fewer distinct rows than a window (NaN, infinite and
  too large values, and the columns, are checked for every request by
  :func:`~madcluster.serve.rows.rows_array`, and cannot be forced);
- :func:`model_problems`, on the refitted model before the swap (the refit's state ``rejected``
  with the reasons): its flag rate on the rows it was fitted on, and on the streams' recent rows
  against the served model's, its threshold against the served one's, and its score scale (the
  99th percentile of its scores over its threshold). The numbers are measured in the refit's
  child process (:func:`measure`) and shown in the refit's state (``checks``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from madcluster.estimator.detector import MADCluster

#: a refitted model flagging more of the rows it was fitted on ("all normal") is refused
MAX_OWN_FLAG_RATE = 0.2
#: ... or more of the streams' recent rows, and this much more than the served model flags
MAX_RECENT_FLAG_RATE = 0.5
RECENT_MARGIN = 0.1
#: ... or a threshold this many times above or below the served model's
THRESHOLD_RATIO = 5.0
#: ... or a 99th percentile score this many times its threshold
SCORE_SCALE = 100.0
#: the recent rows measured: the tails of at most this many streams, at most this many rows
RECENT_STREAMS = 16
RECENT_ROWS = 20_000


def row_problems(detector: MADCluster, rows: np.ndarray) -> list[str]:
    """What makes ``rows`` (checked, in the model's column order) unfit for a refit, in words."""
    names = getattr(detector, "feature_names_in_", None)
    named = [str(n) for n in names] if names is not None else [str(j) for j in range(rows.shape[1])]
    problems = []
    flat = np.flatnonzero(np.ptp(rows, axis=0) == 0)
    if len(flat) == rows.shape[1]:
        problems.append(
            f"every column is constant in the {len(rows)} rows (a stuck sensor or a test payload?)"
        )
    else:
        trained_flat = set(np.asarray(detector.model_.inputs.constant_columns).tolist())
        moved = [int(j) for j in flat if int(j) not in trained_flat]
        if moved:
            listed = ", ".join(f"{named[j]!r} (= {rows[0, j]:g})" for j in moved[:5])
            problems.append(
                f"column(s) {listed} constant in the {len(rows)} rows but varied in training (a "
                "stuck sensor?)"
            )
    distinct = len(np.unique(rows, axis=0))
    if distinct < detector.window_size:
        problems.append(
            f"only {distinct} distinct rows among {len(rows)}, fewer than one window "
            f"({detector.window_size})"
        )
    return problems


def measure(
    served: MADCluster, refitted: MADCluster, rows: np.ndarray, recent: Sequence[np.ndarray]
) -> dict[str, float | int | None]:
    """The numbers :func:`model_problems` judges: flag rates, thresholds and the score scale of
    ``refitted`` (fitted on ``rows``) and ``served``, on ``rows`` and the streams' ``recent`` rows
    (each at least a window long; pooled)."""
    own = refitted.decision_function(rows)
    new_recent, old_recent = [], []
    for part in recent:
        new_recent.append(refitted.decision_function(part) > refitted.threshold_)
        old_recent.append(served.decision_function(part) > served.threshold_)
    scale_on = own
    if recent:
        scale_on = np.concatenate([own, *(refitted.decision_function(p) for p in recent)])
    return {
        "own_flag_rate": float(np.mean(own > refitted.threshold_)),
        "recent_rows": int(sum(len(p) for p in recent)),
        "recent_flag_rate": float(np.mean(np.concatenate(new_recent))) if recent else None,
        "served_recent_flag_rate": float(np.mean(np.concatenate(old_recent))) if recent else None,
        "threshold": float(refitted.threshold_),
        "served_threshold": float(served.threshold_),
        "score_p99_over_threshold": float(np.quantile(scale_on, 0.99) / refitted.threshold_),
    }


def model_problems(checks: dict[str, float | int | None]) -> list[str]:
    """Why a refitted model measured as ``checks`` (:func:`measure`) must not be swapped in."""
    problems = []
    own = checks.get("own_flag_rate")
    if own is not None and own > MAX_OWN_FLAG_RATE:
        problems.append(
            f"it flags {own:.0%} of the rows it was fitted on (at most {MAX_OWN_FLAG_RATE:.0%}: "
            "they are meant to be normal)"
        )
    new, old = checks.get("recent_flag_rate"), checks.get("served_recent_flag_rate")
    if new is not None and old is not None and new > max(MAX_RECENT_FLAG_RATE, old + RECENT_MARGIN):
        problems.append(
            f"it flags {new:.0%} of the streams' {checks.get('recent_rows')} recent rows, the "
            f"served model {old:.0%}"
        )
    threshold, served = checks.get("threshold"), checks.get("served_threshold")
    if threshold is not None and served is not None and served > 0:
        ratio = threshold / served
        if not 1 / THRESHOLD_RATIO <= ratio <= THRESHOLD_RATIO:
            problems.append(
                f"its threshold {threshold:.4g} is {ratio:.3g} times the served model's "
                f"{served:.4g} (within {THRESHOLD_RATIO:g} times either way)"
            )
    scale = checks.get("score_p99_over_threshold")
    if scale is not None and not scale <= SCORE_SCALE:  # NaN too
        problems.append(
            f"its 99th percentile score is {scale:.3g} times its threshold (at most "
            f"{SCORE_SCALE:g})"
        )
    return problems


__all__ = [
    "MAX_OWN_FLAG_RATE",
    "MAX_RECENT_FLAG_RATE",
    "RECENT_MARGIN",
    "RECENT_ROWS",
    "RECENT_STREAMS",
    "SCORE_SCALE",
    "THRESHOLD_RATIO",
    "measure",
    "model_problems",
    "row_problems",
]
