"""The model files a server serves: one ``.mcz`` file (named after its stem) or a fleet folder of
them (one model per entity, named after the entity)."""

from __future__ import annotations

from pathlib import Path

from madcluster.estimator.detector import MADCluster
from madcluster.exceptions import ModelFileError

MODEL_SUFFIX = ".mcz"


def model_files(path: str | Path) -> dict[str, Path]:
    """``{name: file}`` of one model file or a fleet folder of ``.mcz`` files."""
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.name.endswith(MODEL_SUFFIX))
        if not files:
            raise ModelFileError(
                f"{str(path)!r} holds no {MODEL_SUFFIX} model files: serve one model file, or a "
                "folder of them (`madcluster fit FOLDER -o MODELS/` writes one per entity file)"
            )
    else:
        files = [path]
    return {
        p.name[: -len(MODEL_SUFFIX)] if p.name.endswith(MODEL_SUFFIX) else p.stem: p for p in files
    }


def load_models(path: str | Path) -> dict[str, MADCluster]:
    """``{name: detector}`` from one model file or a fleet folder of ``.mcz`` files."""
    return {name: MADCluster.load(file) for name, file in model_files(path).items()}


__all__ = ["MODEL_SUFFIX", "load_models", "model_files"]
