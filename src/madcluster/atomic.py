"""Atomic file writes: a crash or Ctrl-C never leaves a half-written model or result file.

Written files get the mode a plain ``open(path, "w")`` would give them (``0o666`` less the umask,
or the mode of the file they replace), not the private ``0o600`` of the temporary file.
:func:`check_output_path` lets a command refuse a bad output path before it spends time training.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from madcluster.exceptions import OutputPathError


def _umask() -> int:
    """The process umask, read without changing it where the OS allows (Linux)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)  # portable fallback: read by setting, then restore at once
    os.umask(mask)
    return mask


def _final_mode(target: Path) -> int:
    """Keep the mode of a file being replaced; a new file gets 0o666 less the umask."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        return 0o666 & ~_umask()


def _describe(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def check_output_path(
    path: str | os.PathLike,
    *,
    what: str = "output file",
    not_same_as: Iterable[str | os.PathLike] = (),
) -> Path:
    """Return ``path`` as a ``Path`` if a file can be written there, else raise ``OutputPathError``.

    Checked before any work starts, so a typo in ``-o`` costs a second, not a training run: the
    path must not be a directory, its nearest existing parent must be a writable directory, and
    it must not be one of ``not_same_as`` (the inputs).
    """
    text = os.fspath(path)
    target = Path(text)
    if not text or text.endswith(("/", os.sep)) or target.is_dir():
        raise OutputPathError(
            f"{what} {text!r} is a directory: give a file name, e.g. {str(target / 'NAME')!r}"
        )
    for other in not_same_as:
        try:
            if target.exists() and os.path.samefile(target, other):
                raise OutputPathError(
                    f"{what} {text!r} is also an input file: it would be overwritten"
                )
        except OSError:
            continue
    parent = target.parent
    while not parent.exists():
        if parent == parent.parent:
            break
        parent = parent.parent
    if parent.exists() and not parent.is_dir():
        raise OutputPathError(
            f"cannot write {what} {text!r}: {str(parent)!r} is a file, not a folder"
        )
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputPathError(
            f"cannot write {what} {text!r}: folder {str(parent)!r} is not writable"
        )
    try:  # access() says yes to root even on read-only mounts: create and remove a probe file
        fd, probe = tempfile.mkstemp(prefix=".madcluster-probe.", dir=parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        missing = target.parent if target.parent != parent else None
        where = (
            f"folder {str(missing)!r} does not exist and cannot be created in {str(parent)!r}"
            if missing is not None
            else f"folder {str(parent)!r} does not accept files"
        )
        raise OutputPathError(f"cannot write {what} {text!r}: {where} ({_describe(exc)})") from None
    return target


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on success it is renamed onto ``path`` in one step.

    Problems with the destination raise ``OutputPathError`` naming ``path`` (never the temporary
    file); errors raised by the caller's writing code pass through unchanged.
    """
    target = check_output_path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        os.close(fd)
    except OSError as exc:
        raise OutputPathError(f"cannot write {str(target)!r}: {_describe(exc)}") from None
    try:
        yield Path(tmp)
        try:
            with open(tmp, "rb+") as fh:
                os.fsync(fh.fileno())
            os.chmod(tmp, _final_mode(target))
            os.replace(tmp, target)
        except OSError as exc:
            raise OutputPathError(f"cannot write {str(target)!r}: {_describe(exc)}") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def atomic_write_bytes(path: str | os.PathLike, writer: Callable[[BinaryIO], None]) -> None:
    """Call ``writer(fh)`` on a temporary file and move it onto ``path`` atomically."""
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        writer(fh)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    atomic_write_bytes(path, lambda fh: fh.write(text.encode("utf-8")))
