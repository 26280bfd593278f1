"""The compute tables of the report: parameters, MACs and times from the result files, and a
compute table file (``compute_table.md`` / ``.json``) as it is."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from madcluster.benchmark.format import si
from madcluster.benchmark.schema import MODE_ROW_NAMES
from madcluster.reporting.tables import (
    Cell,
    ReportContent,
    Table,
    model_key,
    model_label,
    slug,
    source_of,
)


def results_cost_table(content: ReportContent) -> Table | None:
    """Parameters, MACs and time per result, read from the result files themselves."""
    rows = []
    for r in content.results:
        c = r.get("cost") or {}
        if not c:
            continue
        src = content.sources[source_of(r).key]
        seconds = c.get("train_seconds") or {}
        score = c.get("score_seconds") or {}
        rows.append(
            [
                Cell(r["dataset"]),
                Cell(model_label(model_key(r), r.get("_folder", ""))),
                Cell(MODE_ROW_NAMES.get(r["mode"], r["mode"])),
                Cell(f"{c.get('n_params', 0):,}", tooltip=src.tooltip),
                Cell(si(c.get("macs_per_window")), tooltip=c.get("macs_method") or src.tooltip),
                Cell(
                    "-" if seconds.get("mean") is None else f"{seconds['mean']:.1f}",
                    tooltip=src.tooltip,
                ),
                Cell(
                    "-" if score.get("mean") is None else f"{score['mean']:.2f}",
                    tooltip=src.tooltip,
                ),
                Cell(f"[{src.key}]", tooltip=src.tooltip, link=slug(src.key)),
            ]
        )
    if not rows:
        return None
    return Table(
        title="Compute, from the result files",
        anchor="compute-results",
        columns=[
            "dataset",
            "model",
            "row",
            "params",
            "MACs / window",
            "train s / seed",
            "score s / seed",
            "source",
        ],
        rows=rows,
        note="Params and MACs of one window of L steps; seconds per seed on the machine that ran "
        "it.",
    )


def compute_table_file(path: Path) -> Table | None:
    """A compute table from ``compute_table.md`` (its first Markdown table and its ``Command:``
    line) or ``compute_table.json`` (``{"rows": [{column: value}], "command": ...}`` or a list)."""
    if not path.exists():
        return None
    if path.suffix == ".json":
        data = json.loads(path.read_text())
        records = data.get("rows", []) if isinstance(data, dict) else data
        command = data.get("command", "") if isinstance(data, dict) else ""
        if not records:
            return None
        columns = list(dict.fromkeys(k for rec in records for k in rec))
        rows = [[Cell(_plain(rec.get(c, ""))) for c in columns] for rec in records]
    else:
        lines = path.read_text().splitlines()
        block = _first_markdown_table(lines)
        if not block:
            return None
        columns, rows = block[0], [[Cell(_strip_md(v)) for v in row] for row in block[1:]]
        command = next(
            (ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("Command:")), ""
        )
    note = f"From `{path.name}`." + (f" Command: {command}" if command else "")
    return Table(
        title=f"Compute table ({path.name})",
        columns=columns,
        rows=rows,
        note=note,
        anchor="compute-file",
    )


def _plain(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _strip_md(text: str) -> str:
    return text.strip().replace("`", "").replace("**", "")


def _first_markdown_table(lines: list[str]) -> list[list[str]]:
    """Header and body rows of the first pipe table in ``lines`` (the separator row dropped)."""
    block: list[list[str]] = []
    for line in lines:
        if line.strip().startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c):
                continue
            block.append(cells)
        elif block:
            break
    width = len(block[0]) if block else 0
    return [row + [""] * (width - len(row)) for row in block]
