"""Where a result came from: command, git commit, library versions, machine, executor."""

from __future__ import annotations

import os
import platform
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np


def provenance(command: str, argv: list[str] | None, **extra: Any) -> dict[str, Any]:
    """The facts needed to rerun and trust a result; ``extra`` adds executor details."""
    import torch

    import madcluster

    record = {
        "command": command,
        "argv": list(argv) if argv is not None else None,
        "git": git_state(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "madcluster": getattr(madcluster, "__version__", None),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "numpy": np.__version__,
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
    }
    record.update(extra)
    return record


def git_state(cwd: str | os.PathLike | None = None) -> dict[str, Any]:
    """``git rev-parse HEAD`` and whether tracked files (or untracked ones under src/) differ."""
    where = Path(cwd) if cwd is not None else Path(__file__).resolve().parent

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", *args], cwd=where, capture_output=True, text=True, timeout=20, check=True
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return {"commit": None, "dirty": None, "dirty_files": []}
    status = git("status", "--porcelain", "--", ":/src") or ""
    tracked = git("status", "--porcelain", "--untracked-files=no") or ""
    files = sorted({line[3:] for line in (status + tracked).splitlines() if line.strip()})
    return {"commit": commit.strip(), "dirty": bool(files), "dirty_files": files}


__all__ = ["git_state", "provenance"]
