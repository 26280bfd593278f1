"""The image tables and anomaly-map figures of ``madcluster benchmark --images`` in the report.

An image results folder is one with ``tables.md`` beside a ``runs.jsonl`` of image runs (rows with
``image_auroc``); the report finds it in RESULTS_DIR or a folder directly below it (any depth with
``--recursive``), shows its tables (the paper's columns marked as the paper's) and embeds
``figures/*.png`` (image, ground truth, each configuration's anomaly map).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from madcluster.reporting.tables import Cell, ReportContent, Table

FIGURE_CAPTION = (
    "{name}: rows are test images (one per defect type); columns the image, its ground-truth "
    "mask and each configuration's anomaly map (the runs of the first seed)."
)


@dataclass
class ImageFigure:
    key: str  # the figure's key in the report's figure dict
    caption: str
    path: Path


def _anchor(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-").lower() or "root"


def is_image_results(folder: Path) -> bool:
    runs = folder / "runs.jsonl"
    if not (folder / "tables.md").is_file() or not runs.is_file():
        return False
    with open(runs) as fh:
        first = next((line for line in fh if line.strip()), "")
    try:
        return "image_auroc" in json.loads(first)
    except json.JSONDecodeError:
        return False


def image_result_folders(root: Path, *, recursive: bool = False) -> list[Path]:
    below = root.rglob("*") if recursive else root.iterdir()
    return [p for p in [root, *sorted(p for p in below if p.is_dir())] if is_image_results(p)]


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def image_tables(folder: Path, root: Path) -> tuple[list[Table], list[ImageFigure]]:
    """The ``### `` tables of ``folder/tables.md`` and its figures; the note carries the command."""
    lines = (folder / "tables.md").read_text().splitlines()
    heading = next((ln[3:].strip() for ln in lines if ln.startswith("## ")), "Image tables")
    command = next((ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("Command:")), "")
    budget = next((ln for ln in lines if " epochs, " in ln and "px" in ln), "")
    where = os.path.relpath(folder, root) if folder != root else "."
    note = f"From `{where}/tables.md` ({heading}). Command: {command} {budget}".strip()
    tables: list[Table] = []
    title, block = "", []
    for line in [*lines, ""]:
        if line.startswith("### "):
            title, block = line[4:].strip(), []
        elif line.strip().startswith("|"):
            if not re.fullmatch(r"\|?(\s*:?-{2,}:?\s*\|)+\s*", line.strip()):
                block.append(_cells(line))
        elif block and title:
            columns = block[0]
            flags = ["paper" if c.startswith("paper") else None for c in columns]
            rows = [[Cell(text, flag=flag) for text, flag in zip(row, flags)] for row in block[1:]]
            tables.append(
                Table(
                    title=f"{title} — {heading}",
                    columns=columns,
                    rows=rows,
                    note=note,
                    anchor=f"image-{_anchor(where)}-{_anchor(title)}",
                )
            )
            title, block = "", []
    figures = [
        ImageFigure(
            key=f"#image-figure-{_anchor(where)}-{p.stem}",
            caption=FIGURE_CAPTION.format(name=p.stem),
            path=p,
        )
        for p in sorted((folder / "figures").glob("*.png"))
    ]
    return tables, figures


def add_image_results(
    content: ReportContent, root: Path, *, recursive: bool = False
) -> dict[str, bytes]:
    """Append every image results folder's tables to ``content`` (its figures after its last table);
    returns the figures' PNG bytes by key."""
    pngs: dict[str, bytes] = {}
    for folder in image_result_folders(root, recursive=recursive):
        tables, figures = image_tables(folder, root)
        if not tables:
            continue
        content.tables += tables
        content.table_figures[tables[-1].anchor] = [(f.key, f.caption) for f in figures]
        pngs |= {f.key: f.path.read_bytes() for f in figures}
    return pngs
