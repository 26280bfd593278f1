"""The paper's Table 1, so the report can put each measured row beside the number it reproduces.

Values as printed in the paper (F1, Aff-P, Aff-R, R_A_R, R_A_P, V_ROC, V_PR), per dataset and base
model: (the model alone, the model + MADCluster). The paper's protocol for them is the released
code's (best-F1 on the test labels among others; see docs/evaluation.md), which is why they
are shown apart from the measured numbers and never mixed into them.
"""

from __future__ import annotations

from madcluster.benchmark.format import TABLE1_METRICS

#: The order of each row's values: the paper's Table 1 columns.
PAPER_METRICS = TABLE1_METRICS

_Row = tuple[float, float, float, float, float, float, float]

PAPER_TABLE1: dict[str, dict[str, tuple[_Row, _Row]]] = {
    "MSL": {
        "deepsvdd": (
            (0.37, 0.63, 0.99, 0.63, 0.57, 0.63, 0.28),
            (0.52, 0.74, 0.99, 0.71, 0.65, 0.72, 0.42),
        ),
        "usad": (
            (0.53, 0.71, 0.97, 0.69, 0.66, 0.71, 0.43),
            (0.53, 0.72, 0.97, 0.71, 0.67, 0.72, 0.43),
        ),
        "beatgan": (
            (0.49, 0.71, 0.99, 0.68, 0.63, 0.70, 0.39),
            (0.50, 0.71, 0.99, 0.69, 0.63, 0.71, 0.40),
        ),
        "omnianomaly": (
            (0.42, 0.64, 1.0, 0.63, 0.60, 0.64, 0.31),
            (0.45, 0.64, 1.0, 0.66, 0.60, 0.67, 0.34),
        ),
        "thoc": (
            (0.50, 0.75, 0.96, 0.70, 0.64, 0.71, 0.41),
            (0.55, 0.81, 0.99, 0.70, 0.68, 0.72, 0.46),
        ),
        "anomaly_transformer": (
            (0.50, 0.70, 0.99, 0.69, 0.64, 0.70, 0.40),
            (0.51, 0.71, 0.99, 0.69, 0.64, 0.71, 0.40),
        ),
        "dcdetector": (
            (0.28, 0.51, 0.86, 0.54, 0.49, 0.52, 0.19),
            (0.41, 0.64, 0.99, 0.64, 0.63, 0.64, 0.32),
        ),
    },
    "SMAP": {
        "deepsvdd": (
            (0.40, 0.70, 0.99, 0.67, 0.57, 0.67, 0.33),
            (0.49, 0.71, 0.96, 0.69, 0.61, 0.71, 0.38),
        ),
        "usad": (
            (0.44, 0.68, 0.98, 0.69, 0.61, 0.69, 0.35),
            (0.45, 0.67, 1.0, 0.69, 0.61, 0.71, 0.36),
        ),
        "beatgan": (
            (0.47, 0.70, 1.0, 0.69, 0.62, 0.71, 0.38),
            (0.48, 0.70, 1.0, 0.70, 0.62, 0.72, 0.38),
        ),
        "omnianomaly": (
            (0.37, 0.64, 1.0, 0.64, 0.56, 0.65, 0.30),
            (0.43, 0.64, 1.0, 0.69, 0.58, 0.71, 0.34),
        ),
        "thoc": (
            (0.42, 0.66, 0.99, 0.67, 0.59, 0.68, 0.35),
            (0.44, 0.66, 1.0, 0.68, 0.57, 0.70, 0.33),
        ),
        "anomaly_transformer": (
            (0.44, 0.66, 1.0, 0.69, 0.60, 0.70, 0.35),
            (0.45, 0.67, 1.0, 0.69, 0.60, 0.71, 0.36),
        ),
        "dcdetector": (
            (0.21, 0.48, 0.81, 0.51, 0.39, 0.50, 0.13),
            (0.43, 0.67, 0.98, 0.67, 0.60, 0.69, 0.33),
        ),
    },
    "SMD": {
        "deepsvdd": (
            (0.19, 0.56, 0.61, 0.53, 0.46, 0.53, 0.12),
            (0.48, 0.83, 0.90, 0.63, 0.56, 0.64, 0.29),
        ),
        "usad": (
            (0.46, 0.80, 0.63, 0.63, 0.55, 0.62, 0.26),
            (0.45, 0.82, 0.61, 0.63, 0.57, 0.63, 0.26),
        ),
        "beatgan": (
            (0.50, 0.84, 0.62, 0.64, 0.56, 0.65, 0.31),
            (0.52, 0.85, 0.64, 0.65, 0.55, 0.66, 0.31),
        ),
        "omnianomaly": (
            (0.48, 0.78, 0.63, 0.63, 0.57, 0.64, 0.28),
            (0.49, 0.82, 0.68, 0.64, 0.56, 0.65, 0.29),
        ),
        "thoc": (
            (0.32, 0.70, 0.72, 0.61, 0.46, 0.61, 0.18),
            (0.35, 0.72, 0.71, 0.61, 0.52, 0.61, 0.20),
        ),
        "anomaly_transformer": (
            (0.51, 0.84, 0.65, 0.65, 0.59, 0.66, 0.31),
            (0.52, 0.84, 0.65, 0.65, 0.59, 0.66, 0.31),
        ),
        "dcdetector": (
            (0.17, 0.51, 0.98, 0.53, 0.31, 0.52, 0.12),
            (0.29, 0.64, 0.72, 0.58, 0.42, 0.58, 0.16),
        ),
    },
    "PSM": {
        "deepsvdd": (
            (0.66, 0.67, 0.56, 0.52, 0.63, 0.51, 0.36),
            (0.67, 0.68, 1.0, 0.58, 0.69, 0.58, 0.46),
        ),
        "usad": (
            (0.52, 0.56, 0.99, 0.57, 0.69, 0.56, 0.38),
            (0.52, 0.56, 0.99, 0.58, 0.69, 0.56, 0.38),
        ),
        "beatgan": (
            (0.66, 0.68, 0.70, 0.63, 0.67, 0.63, 0.49),
            (0.68, 0.74, 0.80, 0.67, 0.69, 0.66, 0.49),
        ),
        "omnianomaly": (
            (0.53, 0.55, 0.98, 0.54, 0.67, 0.53, 0.38),
            (0.53, 0.55, 0.98, 0.54, 0.67, 0.53, 0.38),
        ),
        "thoc": (
            (0.50, 0.55, 1.0, 0.52, 0.69, 0.51, 0.36),
            (0.50, 0.55, 1.0, 0.52, 0.69, 0.51, 0.36),
        ),
        "anomaly_transformer": (
            (0.53, 0.55, 0.98, 0.54, 0.67, 0.53, 0.38),
            (0.54, 0.56, 0.94, 0.55, 0.67, 0.54, 0.39),
        ),
        "dcdetector": (
            (0.50, 0.55, 1.0, 0.52, 0.69, 0.51, 0.36),
            (0.53, 0.57, 0.86, 0.55, 0.63, 0.54, 0.40),
        ),
    },
}


def paper_value(dataset: str, model: str, with_madcluster: bool, metric: str) -> float | None:
    """The paper's Table 1 entry, or None where the paper has no such row or metric."""
    pair = PAPER_TABLE1.get(dataset, {}).get(model)
    if pair is None or metric not in PAPER_METRICS:
        return None
    return pair[int(with_madcluster)][PAPER_METRICS.index(metric)]
