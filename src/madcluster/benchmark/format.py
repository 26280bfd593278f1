"""How every results table writes its columns and numbers: the package's report, ``results.md``
and the benchmark scripts' tables all take their metric names, number formats and Markdown from
here, so a column is named and a number printed the same way everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

# the paper's names for the metrics
METRIC_LABELS: dict[str, str] = {
    "f1": "F1",
    "precision": "P",
    "recall": "R",
    "aff_precision": "Aff-P",
    "aff_recall": "Aff-R",
    "range_auc_roc": "R_A_R",
    "range_auc_pr": "R_A_P",
    "vus_roc": "V_ROC",
    "vus_pr": "V_PR",
    "auc_roc": "AUC-ROC",
    "auc_pr": "AUC-PR",
}
# the paper's Table 1, in its order
TABLE1_METRICS = (
    "f1",
    "aff_precision",
    "aff_recall",
    "range_auc_roc",
    "range_auc_pr",
    "vus_roc",
    "vus_pr",
)


def metric_columns(metrics: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """``(key, label)`` per metric, in the order given."""
    return tuple((m, METRIC_LABELS[m]) for m in metrics)


def mean_std(stat: dict[str, Any] | None, *, std: bool = True, n: int | None = None) -> str:
    """``0.523 ± 0.012`` (the std over ``n`` runs, by default its ``values``; left out for one
    run or ``std=False``), ``-`` for a missing value."""
    if not stat or stat.get("mean") is None:
        return "-"
    runs = len(stat.get("values", [])) if n is None else n
    if std and runs > 1 and stat.get("std") is not None:
        return f"{stat['mean']:.3f} ± {stat['std']:.3f}"
    return f"{stat['mean']:.3f}"


def si(n: float | None) -> str:
    """``1.23G`` / ``4.56M`` / ``7.89K`` (parameters, MACs), ``-`` for a missing value."""
    if n is None:
        return "-"
    for unit, scale in (("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.2f}{unit}"
    return f"{n:g}"


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A Markdown table: the header, its separator and one line per row."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


__all__ = ["METRIC_LABELS", "TABLE1_METRICS", "markdown_table", "mean_std", "metric_columns", "si"]
