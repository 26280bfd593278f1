"""Anomaly-detection metrics as pure numpy functions, checked against the published implementations.

``evaluate(scores, labels, threshold=...)`` returns every metric the paper reports; the individual
functions are exported for finer use. See each module for the definition and the paper it follows:

* :mod:`~madcluster.metrics.pointwise` — precision / recall / F1, ROC-AUC, AUC-PR (average
  precision) and, as an explicitly named extra, point-adjusted F1;
* :mod:`~madcluster.metrics.affiliation` — affiliation precision / recall (Huet et al., KDD 2022);
* :mod:`~madcluster.metrics.range_vus` — Range-AUC-ROC/PR and VUS-ROC/PR (Paparrizos et al.,
  VLDB 2022), as ``vus`` 0.0.6 / TSB-AD.
"""

from madcluster.metrics._evaluate import METRIC_KEYS, evaluate
from madcluster.metrics.affiliation import (
    affiliation_precision,
    affiliation_precision_recall,
    affiliation_recall,
)
from madcluster.metrics.pointwise import (
    auc_pr,
    auc_roc,
    f1,
    point_adjusted_f1,
    precision,
    precision_recall_f1,
    recall,
)
from madcluster.metrics.range_vus import (
    range_auc,
    range_auc_pr,
    range_auc_roc,
    vus,
    vus_pr,
    vus_roc,
)

__all__ = [
    "METRIC_KEYS",
    "affiliation_precision",
    "affiliation_precision_recall",
    "affiliation_recall",
    "auc_pr",
    "auc_roc",
    "evaluate",
    "f1",
    "point_adjusted_f1",
    "precision",
    "precision_recall_f1",
    "range_auc",
    "range_auc_pr",
    "range_auc_roc",
    "recall",
    "vus",
    "vus_pr",
    "vus_roc",
]
