"""Names shared by the benchmark modules and the report: metric keys, schema tags, fixed notes.

Kept free of heavy imports so that :mod:`madcluster.benchmark.report` can read result files
without importing the runner (no import cycle between them).
"""

from __future__ import annotations

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
ANOMALY_RATIO_NOTE = (
    "test-ratio and combined thresholds use anomaly_ratio = the fraction of anomalous points in "
    "the test labels (as the paper does); this is information from the test labels, though not an "
    "oracle threshold"
)
RESULT_SCHEMA = "madcluster-benchmark/1"  # one row (aggregate over seeds / entities)
TASK_SCHEMA = "madcluster-task/1"  # one fit + score + metrics

__all__ = [
    "ANOMALY_RATIO_NOTE",
    "BASELINES",
    "BASELINE_MODE",
    "DETECTORS",
    "MODE_ROW_NAMES",
    "RESULT_SCHEMA",
    "TASK_SCHEMA",
]
