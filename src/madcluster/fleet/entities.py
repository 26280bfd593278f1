"""A fleet's entities: one series file per entity, named by the file name without its ending,
and what a fleet run gives back per entity (:class:`FleetResult`).

Why a module of its own: the fleet's entry points (:mod:`madcluster.fleet.execution`) and its
workers (:mod:`madcluster.fleet.workers`) both name files by entity.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from madcluster.data.table import SUPPORTED_SUFFIXES
from madcluster.exceptions import ParameterError

MODEL_SUFFIX = ".mcz"
SCORES_SUFFIX = ".scores.csv"
PLOT_SUFFIX = ".scores.png"


@dataclass
class FleetResult:
    """Per entity, what was written (``outputs``) or why not (``failures``: entity -> error)."""

    outputs: dict[str, Path] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    details: dict[str, dict[str, Any]] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    executor: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.failures


def entity_files(folder: str | os.PathLike) -> dict[str, Path]:
    """``{entity: file}`` for every readable series file in ``folder`` (sorted by entity)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{str(folder)!r} is not a folder of entity files")
    found: dict[str, Path] = {}
    for path in sorted(folder.iterdir()):
        entity = entity_name(path)
        if entity is None or not path.is_file() or path.name.endswith(SCORES_SUFFIX):
            continue
        if entity in found:
            raise ParameterError(
                f"two files for entity {entity!r}: {found[entity].name}, {path.name}"
            )
        found[entity] = path
    if not found:
        raise FileNotFoundError(
            f"no series files in {str(folder)!r} (endings: {', '.join(SUPPORTED_SUFFIXES)})"
        )
    return found


def entity_name(path: str | os.PathLike) -> str | None:
    """The file name without its series ending (``m-1.csv.gz`` -> ``m-1``); None if not a series."""
    name = Path(path).name
    for suffix in sorted(SUPPORTED_SUFFIXES, key=len, reverse=True):
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return None
