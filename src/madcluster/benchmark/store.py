"""Task results on disk: one JSON file per task, written atomically the moment it finishes.

Layout: ``<task_dir>/<row>-<fingerprint>/seed<k>[_<entity>].json``. A file is only ever renamed
into place complete (``madcluster.atomic``), so a grid killed at any instant leaves finished tasks
readable and nothing half-written; a rerun reads them back and skips those tasks. Failed tasks are
written too (``"status": "failed"`` with the error) and are run again on the next start.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from madcluster.atomic import atomic_write_text
from madcluster.benchmark.schema import TASK_SCHEMA

if TYPE_CHECKING:
    from madcluster.benchmark.grid import Task

OK, FAILED = "ok", "failed"


def json_safe(value: Any) -> Any:
    """JSON-safe copy: NaN / inf become null (strict JSON), numpy scalars become Python numbers."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


class TaskStore:
    """Finished and failed task records, in a folder (``root``) or only in memory (``None``)."""

    def __init__(self, root: str | os.PathLike | None) -> None:
        self.root = Path(root) if root is not None else None
        self._memory: dict[tuple[str, str], dict[str, Any]] = {}

    def path(self, task: Task) -> Path | None:
        if self.root is None:
            return None
        return self.root / task.folder / f"{task.key}.json"

    def get(self, task: Task) -> dict[str, Any] | None:
        """The stored record of ``task`` (finished or failed), or ``None``."""
        record = self._memory.get((task.folder, task.key))
        if record is not None:
            return record
        path = self.path(task)
        if path is None or not path.is_file():
            return None
        try:
            record = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            return None  # unreadable: treat as not done; it is rerun and overwritten
        if not isinstance(record, dict) or record.get("schema") != TASK_SCHEMA:
            return None
        if record.get("fingerprint") != task.fingerprint or record.get("key") != task.key:
            return None
        self._memory[(task.folder, task.key)] = record
        return record

    def done(self, task: Task) -> dict[str, Any] | None:
        """The record of ``task`` if it finished successfully (what resume skips)."""
        record = self.get(task)
        return record if record is not None and record.get("status") == OK else None

    def put(self, task: Task, record: dict[str, Any]) -> None:
        """Keep ``record`` and, with a folder, write it atomically."""
        record = json_safe(record)
        self._memory[(task.folder, task.key)] = record
        path = self.path(task)
        if path is not None:
            atomic_write_text(path, json.dumps(record, indent=1, allow_nan=False) + "\n")

    def forget(self, task: Task) -> None:
        """Drop ``task``'s record (recompute it), from memory and disk."""
        self._memory.pop((task.folder, task.key), None)
        path = self.path(task)
        if path is not None and path.is_file():
            path.unlink()


def failure_record(task: Task, error: str, traceback_text: str = "") -> dict[str, Any]:
    """What is stored for a task that raised or whose worker was lost."""
    return {
        "schema": TASK_SCHEMA,
        "status": FAILED,
        "row": task.row,
        "key": task.key,
        "fingerprint": task.fingerprint,
        "seed": task.seed,
        "entity": task.entity,
        "name": task.part_name,
        "error": error,
        "traceback": traceback_text,
    }


__all__ = ["FAILED", "OK", "TaskStore", "failure_record", "json_safe"]
