"""Model files: one zip archive with ``config.json`` and ``arrays.npz``.

Nothing is ever unpickled: JSON for configuration and fitted scalars (including the training
column names, ``feature_names_in_``), ``np.load(allow_pickle=False)`` for tensors. Files are
written atomically and get the usual file mode (``0o666`` less the umask), like any other output.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from typing import Any

import numpy as np

from madcluster.atomic import atomic_path
from madcluster.exceptions import ModelFileError

FORMAT = "madcluster-model"
FORMAT_VERSION = 1


def write_model_file(
    path: str | os.PathLike, config: dict[str, Any], arrays: dict[str, np.ndarray]
) -> None:
    """Write ``config`` (JSON-serialisable) and named ``arrays`` to ``path`` atomically."""
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    payload = {"format": FORMAT, "format_version": FORMAT_VERSION, **config}
    with (
        atomic_path(path) as tmp,
        zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf,
    ):
        zf.writestr("config.json", json.dumps(payload, indent=2))
        zf.writestr("arrays.npz", buffer.getvalue())


def read_model_file(path: str | os.PathLike) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Read a model file, raising ``ModelFileError`` with a clear message for any problem."""
    if not os.path.exists(path):
        raise ModelFileError(
            f"model file {os.fspath(path)!r} does not exist: train one with `madcluster fit` "
            "or MADCluster.fit(...).save(path)"
        )
    if os.path.isdir(path):
        raise ModelFileError(
            f"model file {os.fspath(path)!r} is a directory: give the .mcz file written by "
            "`madcluster fit` or MADCluster.save"
        )
    try:
        with zipfile.ZipFile(path) as zf:
            config = json.loads(zf.read("config.json").decode("utf-8"))
            with np.load(io.BytesIO(zf.read("arrays.npz")), allow_pickle=False) as npz:
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
        raise ModelFileError(
            f"{os.fspath(path)!r} is not a valid madcluster model file "
            f"(corrupt or truncated?): {exc}"
        ) from None
    if config.get("format") != FORMAT:
        raise ModelFileError(f"{os.fspath(path)!r} is not a madcluster model file")
    if config.get("format_version", 0) > FORMAT_VERSION:
        raise ModelFileError(
            f"{os.fspath(path)!r} was written by a newer madcluster "
            f"(format {config['format_version']}); upgrade madcluster"
        )
    return config, arrays
