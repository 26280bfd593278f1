"""Time ``madcluster.metrics.evaluate`` against the published metric code, same input, same process.

Input: a synthetic series of SMD's test size (708,420 points, ~4.2 % anomalous in log-normal
segments; ``tests/metrics/metric_cases.smd_like``). Predictions are ``scores > 96th percentile``.

The reference is what ``evaluate`` replaces: scikit-learn precision/recall/F1, ROC-AUC and average
precision; the affiliation code of Huet et al. (as vendored in ``vus`` 0.0.6); ``vus`` 0.0.6
``metricor().RangeAUC`` (window 100) and ``RangeAUC_volume_opt`` (window 100, 250 thresholds).
It is installed with ``pip install --no-deps --target`` into a private folder (see
``tests/metrics/make_reference.py``). Its cost is linear in the series length, so by default it
runs on the first ``--reference-n`` points and the full-size time is *extrapolated* (and labelled
so); ``--reference-full`` runs it on all points (about 3-4 minutes on 2 cores).

    .venv/bin/python benchmarks/studies/speed/bench_metrics.py                   # reference on 1/10, extrapolated
    .venv/bin/python benchmarks/studies/speed/bench_metrics.py --reference-full  # reference on the full series
"""

from __future__ import annotations

import argparse
import contextlib
import io
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "metrics"))

from make_reference import load_references
from metric_cases import smd_like

from madcluster.metrics import evaluate
from madcluster.metrics.affiliation import affiliation_precision_recall
from madcluster.metrics.pointwise import precision_recall_f1, roc_and_pr
from madcluster.metrics.range_vus import range_auc, vus


def _timed(fn: Callable[[], Any], repeat: int = 1) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def ours_parts(scores: np.ndarray, labels: np.ndarray, thr: float) -> dict[str, Callable[[], Any]]:
    pred = scores > thr
    return {
        "precision/recall/F1": lambda: precision_recall_f1(pred, labels),
        "affiliation P/R": lambda: affiliation_precision_recall(pred, labels),
        "Range-AUC ROC/PR": lambda: range_auc(scores, labels, window=100),
        "VUS ROC/PR": lambda: vus(scores, labels, window=100),
        "AUC-ROC + AUC-PR": lambda: roc_and_pr(scores, labels.astype(bool)),
    }


def reference_parts(
    refs: dict[str, Any], scores: np.ndarray, labels: np.ndarray, thr: float
) -> dict[str, Callable[[], Any]]:
    from sklearn.metrics import (
        average_precision_score,
        precision_recall_fscore_support,
        roc_auc_score,
    )

    pred = (scores > thr).astype(int)
    n = labels.size

    def affiliation() -> Any:
        conv = refs["convert_vector_to_events"]
        out = refs["pr_from_events"](conv(pred), conv(labels), (0, n))
        return out["Affiliation_Precision"], out["Affiliation_Recall"]

    def range_ref() -> Any:
        with contextlib.redirect_stdout(io.StringIO()):
            return refs["metricor"]().RangeAUC(
                labels=labels, score=scores, window=100, plot_ROC=True
            )[:2]

    def vus_ref() -> Any:
        out = refs["metricor"]().RangeAUC_volume_opt(
            labels_original=labels, score=scores, windowSize=100, thre=250
        )
        return out[4], out[5]

    return {
        "precision/recall/F1": lambda: precision_recall_fscore_support(
            labels, pred, zero_division=0
        ),
        "affiliation P/R": affiliation,
        "Range-AUC ROC/PR": range_ref,
        "VUS ROC/PR": vus_ref,
        "AUC-ROC + AUC-PR": lambda: (
            roc_auc_score(labels, scores),
            average_precision_score(labels, scores),
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=708_420, help="series length (SMD test size)")
    parser.add_argument("--reference-n", type=int, default=70_842, help="reference subset length")
    parser.add_argument("--reference-full", action="store_true", help="reference on all points")
    parser.add_argument("--no-reference", action="store_true", help="time ours only")
    parser.add_argument("--repeat", type=int, default=3, help="runs of ours (median)")
    parser.add_argument("--refs-dir", type=Path, default=None)
    args = parser.parse_args()

    scores, labels = smd_like(args.n)
    thr = float(np.quantile(scores, 0.96))
    print(
        f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"python {platform.python_version()}, numpy {np.__version__}"
    )
    print(f"# n = {args.n:,} points, {labels.mean():.2%} anomalous, threshold = q96")

    t_ours, out = _timed(lambda: evaluate(scores, labels, threshold=thr), args.repeat)
    print(f"\nours: evaluate() on {args.n:,} points: {t_ours:.2f} s (median of {args.repeat})")
    print("  " + ", ".join(f"{k}={v:.4f}" for k, v in out.items()))
    if args.no_reference:
        return

    refs = load_references(args.refs_dir)
    ref_n = args.n if args.reference_full else min(args.reference_n, args.n)
    s_sub, l_sub = scores[:ref_n], labels[:ref_n]
    scale = args.n / ref_n
    label = "measured" if ref_n == args.n else f"extrapolated x{scale:.1f} from {ref_n:,} points"

    ours = ours_parts(s_sub, l_sub, thr)
    ref = reference_parts(refs, s_sub, l_sub, thr)
    print(f"\nper metric on the same {ref_n:,} points (seconds):")
    print("| metric | ours | reference | ratio | max abs diff |")
    print("|---|---:|---:|---:|---:|")
    total_ours = total_ref = 0.0
    for name in ours:
        t_o, v_o = _timed(ours[name], args.repeat)
        t_r, v_r = _timed(ref[name])
        v_o = np.ravel(np.asarray(v_o, dtype=float))
        v_r = np.ravel(np.asarray(v_r, dtype=float))
        if name == "precision/recall/F1":  # sklearn gives both classes; keep the anomaly class
            v_r = np.asarray([v_r[1], v_r[3], v_r[5]])
        diff = float(np.nanmax(np.abs(v_o - v_r)))
        total_ours += t_o
        total_ref += t_r
        print(f"| {name} | {t_o:.3f} | {t_r:.3f} | {t_r / t_o:,.0f}x | {diff:.1e} |")
    print(f"| **all** | {total_ours:.3f} | {total_ref:.3f} | {total_ref / total_ours:,.0f}x | |")

    full_ref = total_ref * scale
    print(
        f"\nfull size ({args.n:,} points): ours {t_ours:.2f} s (measured, evaluate), "
        f"reference {full_ref:.1f} s ({label}) -> {full_ref / t_ours:,.0f}x faster"
    )
    if not math.isfinite(full_ref):
        sys.exit(1)


if __name__ == "__main__":
    main()
