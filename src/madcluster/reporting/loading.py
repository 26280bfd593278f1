"""Finding the benchmark result JSONs a report is built from."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from madcluster.benchmark.report import load_results


def _result_folders(root: Path) -> list[Path]:
    """Every folder below ``root`` that may hold results (per-task ``tasks`` folders excluded)."""
    return sorted(
        p for p in root.rglob("*") if p.is_dir() and "tasks" not in p.relative_to(root).parts
    )


def load_folder_results(
    folder: str | os.PathLike, *, recursive: bool = False
) -> list[dict[str, Any]]:
    """Benchmark result JSONs of ``folder`` (and, if ``recursive``, of every folder below it)."""
    root = Path(folder)
    if not root.is_dir():
        raise FileNotFoundError(f"results folder {os.fspath(folder)!r} does not exist")
    folders = [root] + (_result_folders(root) if recursive else [])
    results = []
    for sub in folders:
        for r in load_results(sub):
            r = dict(r)
            r["_folder"] = os.path.relpath(sub, root) if sub != root else ""
            results.append(r)
    return results


def results_below(folder: str | os.PathLike) -> int:
    """How many result JSONs the folders below ``folder`` hold (what ``--recursive`` would add)."""
    return sum(len(load_results(sub)) for sub in _result_folders(Path(folder)))
