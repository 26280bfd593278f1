"""The one file layout of model files and stream state files: a zip archive with a JSON header
(``format``, ``format_version`` and the rest of the metadata) and named arrays in an ``.npz``
member, written atomically, read with no pickle.

Each kind of file names its members (model files: ``config.json`` + ``arrays.npz``; stream state:
``stream.json`` + ``buffer.npz``, as they always were) and the error it raises.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from dataclasses import dataclass
from typing import Any

import numpy as np

from madcluster.atomic import atomic_path
from madcluster.exceptions import MADClusterError


@dataclass(frozen=True)
class ArchiveKind:
    """One kind of archive: its ``format`` tag, current version, member names and error type."""

    format: str
    version: int
    header: str
    arrays: str
    error: type[MADClusterError]
    what: str  # how messages name the file: "madcluster model file"


def write_archive(
    path: str | os.PathLike,
    kind: ArchiveKind,
    header: dict[str, Any],
    arrays: dict[str, np.ndarray],
) -> None:
    """Write ``header`` (JSON-serialisable, tagged with the kind's format and version) and the
    named ``arrays`` to ``path`` atomically."""
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    payload = {"format": kind.format, "format_version": kind.version, **header}
    with (
        atomic_path(path) as tmp,
        zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf,
    ):
        zf.writestr(kind.header, json.dumps(payload, indent=2))
        zf.writestr(kind.arrays, buffer.getvalue())


def read_archive(
    path: str | os.PathLike, kind: ArchiveKind
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The header and arrays of an archive of ``kind``; the kind's error, naming the file, for a
    file that is corrupt, of another kind or written by a newer madcluster."""
    name = os.fspath(path)
    try:
        with zipfile.ZipFile(path) as zf:
            header = json.loads(zf.read(kind.header).decode("utf-8"))
            with np.load(io.BytesIO(zf.read(kind.arrays)), allow_pickle=False) as npz:
                arrays = {k: npz[k] for k in npz.files}
    except (
        zipfile.BadZipFile,
        KeyError,
        json.JSONDecodeError,
        UnicodeDecodeError,
        ValueError,
        OSError,
        EOFError,
    ) as exc:
        raise kind.error(
            f"{name!r} is not a readable {kind.what} (corrupt or truncated?): {exc}"
        ) from None
    if not isinstance(header, dict) or header.get("format") != kind.format:
        raise kind.error(f"{name!r} is not a {kind.what}")
    version = header.get("format_version", 0)
    if not isinstance(version, int) or version > kind.version:
        raise kind.error(
            f"{name!r} was written by a newer madcluster (format {version}); upgrade madcluster"
        )
    return header, arrays
