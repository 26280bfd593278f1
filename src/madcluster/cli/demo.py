"""The command demo: train and evaluate on the embedded demo series, writing plots, the model and
its metrics. Returns the exit status."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from madcluster.atomic import atomic_write_text, check_output_path
from madcluster.cli.console import print_metrics, say
from madcluster.cli.options import detector_from_args
from madcluster.cli.runtime_options import apply_runtime
from madcluster.exceptions import OutputPathError

DEMO_FILES = ("demo_scores.png", "demo_training.png", "demo_model.mcz", "demo_metrics.json")


def cmd_demo(args: argparse.Namespace) -> int:
    from madcluster.data.synthetic import make_demo_data
    from madcluster.viz import plot_history, plot_scores

    out = Path(args.output_dir)
    if out.exists() and not out.is_dir():
        raise OutputPathError(f"--output-dir {args.output_dir!r} is a file, not a folder")
    for name in DEMO_FILES:
        check_output_path(out / name, what="demo output")
    apply_runtime(args)
    t0 = time.perf_counter()
    data = make_demo_data()
    say(
        f"demo data: train {data.train.shape}, test {data.test.shape}, "
        f"{data.labels.mean():.1%} anomalous ({len(data.segments)} injected anomalies: "
        "spikes, level shifts, frequency changes, broken correlations)"
    )
    detector = detector_from_args(args)
    detector.fit(data.train)
    scores = detector.decision_function(data.test)
    contributions = detector.explain(data.test, rows=scores > detector.threshold_)
    h = detector.history_
    say(f"trained {len(h['epoch'])} epochs in {sum(h['seconds']):.1f} s: {_trend(h)}")
    metrics = print_metrics(scores, data.labels, detector.threshold_)
    metrics["auc_roc_by_kind"] = _auc_by_kind(scores, data)
    say(
        "ROC-AUC by anomaly kind: "
        + ", ".join(f"{k} {v:.3f}" for k, v in metrics["auc_roc_by_kind"].items())
    )
    plot_scores(
        scores,
        detector.threshold_,
        data.labels,
        X=data.test,
        contributions=contributions,
        title="MADCluster on the demo series",
        path=out / "demo_scores.png",
    )
    plot_history(h, path=out / "demo_training.png")
    detector.save(out / "demo_model.mcz")
    atomic_write_text(
        out / "demo_metrics.json",
        json.dumps({**metrics, "seconds": time.perf_counter() - t0}, indent=2),
    )
    say(
        f"ROC-AUC {metrics['auc_roc']:.4f}  VUS-ROC {metrics['vus_roc']:.4f}  "
        f"VUS-PR {metrics['vus_pr']:.4f}"
    )
    say(
        f"plots: {out / 'demo_scores.png'}, {out / 'demo_training.png'}; "
        f"model: {out / 'demo_model.mcz'}; metrics: {out / 'demo_metrics.json'}"
    )
    say(f"total time {time.perf_counter() - t0:.1f} s")
    return 0


def _auc_by_kind(scores: np.ndarray, data) -> dict[str, float]:
    """ROC-AUC of each anomaly kind against the normal points only."""
    from madcluster.metrics import auc_roc

    result = {}
    for kind in sorted({seg.kind for seg in data.segments}):
        positive = np.zeros(len(scores), dtype=bool)
        for seg in data.segments:
            if seg.kind == kind:
                positive[seg.start : seg.end] = True
        keep = positive | (data.labels == 0)
        result[kind] = float(auc_roc(scores[keep], positive[keep].astype(np.uint8)))
    return result


def _trend(history: dict) -> str:
    """nu, R and the training loss from the first epoch to the last, for those the head records
    (base-only has no nu or R; k > 1 has no nu)."""
    names = (("nu", "nu"), ("radius", "R"), ("train_loss", "loss"))
    return ", ".join(
        f"{label} {history[key][0]:.4f} -> {history[key][-1]:.4f}"
        for key, label in names
        if history.get(key)
    )


__all__ = ["DEMO_FILES", "cmd_demo"]
