"""Names shared by the benchmark modules and the report: metric keys, schema tags, fixed notes.

Kept free of heavy imports so that :mod:`madcluster.evaluation.report` can read result files
without importing the runner (no import cycle between them).
"""

from __future__ import annotations

from madcluster.metrics._evaluate import METRIC_KEYS

BASELINES = ("pca", "kmeans")
DETECTORS = ("madcluster", *BASELINES)  # what --detector chooses; --embedder is MADCluster's
BASELINE_MODE = "baseline"  # the "mode" of a PCA / KMeans row (file names, tables)
# how each mode's row is named in every table and figure (the paper's names for its ablations)
MODE_ROW_NAMES = {
    "base-only": "alone",
    "full": "+ MADCluster",
    "distance-only": "distance-only (DeepSVDD row)",
    "cluster-only": "cluster-only (Clustering row)",
    BASELINE_MODE: "baseline",
}
# metrics that depend on the threshold (computed per protocol) and those that do not (computed once)
THRESHOLD_METRICS = ("f1", "precision", "recall", "aff_precision", "aff_recall")
CONTINUOUS_METRICS = tuple(k for k in METRIC_KEYS if k not in THRESHOLD_METRICS)
METRICS = THRESHOLD_METRICS + CONTINUOUS_METRICS
ANOMALY_RATIO_NOTE = (
    "test-ratio and combined thresholds use anomaly_ratio = the fraction of anomalous points in the "
    "test labels (as the paper does); this is information from the test labels, though not an oracle "
    "threshold"
)
RESULT_SCHEMA = "madcluster-benchmark/1"  # one row (aggregate over seeds / entities)
TASK_SCHEMA = "madcluster-task/1"  # one fit + score + metrics

__all__ = [
    "ANOMALY_RATIO_NOTE",
    "BASELINES",
    "BASELINE_MODE",
    "CONTINUOUS_METRICS",
    "DETECTORS",
    "METRICS",
    "MODE_ROW_NAMES",
    "RESULT_SCHEMA",
    "TASK_SCHEMA",
    "THRESHOLD_METRICS",
]
