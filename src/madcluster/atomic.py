"""Atomic file writes: a crash or Ctrl-C never leaves a half-written model or result file."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on success it is renamed onto ``path`` in one step."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def atomic_write_bytes(path: str | os.PathLike, writer: Callable[[BinaryIO], None]) -> None:
    """Call ``writer(fh)`` on a temporary file and move it onto ``path`` atomically."""
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        writer(fh)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    atomic_write_bytes(path, lambda fh: fh.write(text.encode("utf-8")))
