"""The evaluation decomposition's file format (``decomposition.json``), defined once: the script
that measures it (``benchmarks/decomposition.py``) writes rows with :func:`decomposition_row` and
:func:`write_decomposition`, and ``madcluster report`` reads them with :func:`read_decomposition`.

One row per (dataset, model, config, metric): ``values`` maps each step of
:data:`DECOMPOSITION_STEPS` (honest, then the released code's steps a..e added cumulatively) to the
metric, ``paper`` is the paper's number (or None), ``command`` and ``commit`` say what produced it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from madcluster.atomic import atomic_write_text

# (step, column label, flag): (c) picks its threshold on the test labels, (e) trains on test data
DECOMPOSITION_STEPS: tuple[tuple[str, str, str | None], ...] = (
    ("honest", "honest", None),
    ("a", "+ (a) per entity, MinMax", None),
    ("b", "+ (b) window labels", None),
    ("c", "+ (c) best-F1 threshold", "oracle"),
    ("d", "+ (d) range metrics on 0/1", None),
    ("e", "+ (e) test set as validation", "leak"),
)
ROW_FIELDS = ("dataset", "model", "config", "metric", "values", "paper", "command", "commit")


def decomposition_row(
    *,
    dataset: str,
    model: str,
    config: str,
    metric: str,
    values: Mapping[str, float | None],
    paper: float | None,
    command: str,
    commit: str,
) -> dict[str, Any]:
    """One row of the file; ``values`` must name exactly the steps of
    :data:`DECOMPOSITION_STEPS`."""
    steps = [step for step, _, _ in DECOMPOSITION_STEPS]
    if sorted(values) != sorted(steps):
        raise ValueError(f"decomposition values must name the steps {steps}, got {sorted(values)}")
    return {
        "dataset": dataset,
        "model": model,
        "config": config,
        "metric": metric,
        "values": {step: values[step] for step in steps},
        "paper": paper,
        "command": command,
        "commit": commit,
    }


def write_decomposition(path: str | Path, rows: Sequence[Mapping[str, Any]]) -> None:
    """Write the rows (atomically)."""
    atomic_write_text(path, json.dumps({"rows": list(rows)}, indent=1) + "\n")


def read_decomposition(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a decomposition file; none if it is absent."""
    path = Path(path)
    if not path.exists():
        return []
    data = json.loads(path.read_text())
    return data.get("rows", []) if isinstance(data, dict) else []


__all__ = [
    "DECOMPOSITION_STEPS",
    "ROW_FIELDS",
    "decomposition_row",
    "read_decomposition",
    "write_decomposition",
]
