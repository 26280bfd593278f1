"""Jobs and their outcomes: the unit every executor runs, and one progress bar over them."""

from __future__ import annotations

import importlib
import os
import socket
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Job:
    """One unit of work: ``fn(payload, data[data_key])``; ``key`` names it in progress and
    errors."""

    key: str
    payload: Any
    data_key: str | None = None
    size: float = 0.0  # relative cost: parallel executors start the largest jobs first


def import_modules(modules: list[str]) -> list[str]:
    """Import ``modules`` in this process (a worker's warm-up); returns those that failed."""
    failed = []
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a failed warm-up only costs the time it would have saved
            failed.append(name)
    return failed


@dataclass
class Outcome:
    """How a job ended: ``value`` when ``ok``, else ``error`` (one line) and ``traceback``."""

    ok: bool
    value: Any = None
    error: str = ""
    traceback: str = ""
    host: str = ""
    pid: int = 0


JobFn = Callable[[Any, Any], Any]
OnDone = Callable[[Job, Outcome], None]


def guarded_call(fn: JobFn, payload: Any, data: Any) -> Outcome:
    """``fn(payload, data)`` with any ``Exception`` turned into a failed :class:`Outcome`."""
    where = {"host": socket.gethostname(), "pid": os.getpid()}
    try:
        return Outcome(ok=True, value=fn(payload, data), **where)
    except Exception as exc:  # noqa: BLE001 - every task failure is recorded, none stops the grid
        return Outcome(
            ok=False,
            error=f"{type(exc).__name__}: {exc}",
            traceback=traceback.format_exc(),
            **where,
        )


class Progress:
    """One bar over jobs, with done / failed / running counts (silent when ``enabled`` is False)."""

    def __init__(self, total: int, *, desc: str = "tasks", enabled: bool = True, done: int = 0):
        from madcluster.training.progress import task_bar

        self.done, self.failed, self.running = done, 0, 0
        self.resumed = done
        # lines in a log
        self._bar = task_bar(total=total, initial=done, desc=desc, unit="task", enabled=enabled)
        self._show()

    def start(self, running: int) -> None:
        self.running = running
        self._show()

    def finish(self, ok: bool, running: int) -> None:
        if ok:
            self.done += 1
        else:
            self.failed += 1
        self.running = running
        self._show(refresh=False)
        self._bar.update()

    def _show(self, *, refresh: bool = True) -> None:
        counts = {"done": self.done, "failed": self.failed, "running": self.running}
        if self.resumed:
            counts["resumed"] = self.resumed
        self._bar.set_postfix(counts, refresh=refresh)

    def close(self) -> None:
        self._bar.close()


__all__ = ["Job", "JobFn", "OnDone", "Outcome", "Progress", "guarded_call"]
