"""Model files: one zip archive with ``config.json`` and ``arrays.npz``; a fitted MADCluster to and
from one (:func:`save_detector`, :func:`load_detector`).

Nothing is ever unpickled: JSON for configuration and fitted scalars (including the training
column names, ``feature_names_in_``), ``np.load(allow_pickle=False)`` for tensors. Files are
written atomically and get the usual file mode (``0o666`` less the umask), like any other output.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from madcluster.atomic import atomic_path
from madcluster.exceptions import ModelFileError
from madcluster.score.input_terms import (
    OWN_SCORE,
    check_input_terms,
    terms_from_arrays,
    terms_to_arrays,
)

if TYPE_CHECKING:
    from torch import nn

    from madcluster.estimator.contracts import FittedDetector

Detector = TypeVar("Detector")  # the estimator class that loads, and the instance it returns

FORMAT = "madcluster-model"
FORMAT_VERSION = 1
CUSTOM_EMBEDDER = "<custom module>"


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


def save_detector(detector: FittedDetector, path: str | os.PathLike) -> None:
    """Write a fitted detector: its parameters and fitted scalars as JSON, its weights, scaler,
    training scores and center path as arrays."""
    params = detector.get_params()
    if not isinstance(params["embedder"], str):
        params["embedder"] = CUSTOM_EMBEDDER
    names = getattr(detector, "feature_names_in_", None)
    config = {
        "params": params,
        "fitted": {
            "n_features_in_": detector.n_features_in_,
            "feature_names_in_": None if names is None else [str(n) for n in names],
            "threshold_": detector.threshold_,
            "score_stats_": detector.score_stats_,
            "history_": detector.history_,
            "n_hidden": detector.net_.embedder.out_features,
            "constant_columns_": [int(j) for j in getattr(detector, "constant_columns_", [])],
        },
    }
    arrays = {f"state/{k}": v.detach().cpu().numpy() for k, v in detector.net_.state_dict().items()}
    arrays.update(scaler_mean=detector.scaler_mean_, scaler_scale=detector.scaler_scale_, decision_scores=detector.decision_scores_)
    if getattr(detector, "center_path_", None) is not None:
        arrays["center_path"] = detector.center_path_
    if getattr(detector, "warmup_quantiles_", None) is not None:
        arrays["warmup_quantiles"] = detector.warmup_quantiles_
    if getattr(detector, "attribution_baseline_", None) is not None:
        arrays["attribution_baseline"] = detector.attribution_baseline_
    arrays.update(terms_to_arrays(getattr(detector, "input_terms_", None) or []))
    write_model_file(path, config, arrays)


def _upgrade_window_term(params: dict[str, Any], fitted: dict[str, Any], arrays: dict[str, Any]) -> None:
    """Files from before input terms had ``window_term`` (None or "kmeans"): the same model as
    ``input_terms=("kmeans",)`` under the new names."""
    if "window_term" not in params:
        return
    if params.pop("window_term") is None:
        params["input_terms"] = None
        return
    params["input_terms"] = ("kmeans",)
    for key in [k for k in arrays if k.startswith("window_term/")]:
        arrays["input_terms/kmeans/" + key[len("window_term/"):]] = arrays.pop(key)
    stats = fitted["score_stats_"]
    stats[OWN_SCORE] = stats.pop("before_window_term")
    stats["input_term/kmeans"] = stats.pop("window_term")


def load_detector(cls: type[Detector], path: str | os.PathLike, embedder: nn.Module | None, device: str) -> Detector:
    """Rebuild the detector :func:`save_detector` wrote (``embedder``: the custom module, if any)."""
    import torch

    config, arrays = read_model_file(path)
    try:
        params = dict(config["params"])
        fitted = config["fitted"]
        if params["embedder"] == CUSTOM_EMBEDDER:
            if embedder is None:
                raise ModelFileError(f"{os.fspath(path)!r} was trained with a custom embedder module: pass the same architecture as MADCluster.load(path, embedder=MyModule(...))")
            params["embedder"] = embedder
        params["device"] = device
        params.setdefault("roughness_window", 0)  # files written before the option existed
        _upgrade_window_term(params, fitted, arrays)
        params.setdefault("input_terms", None)  # files written before input terms: FittedDetector's score alone
        if isinstance(params["input_terms"], list):  # JSON has no tuples
            params["input_terms"] = tuple(params["input_terms"])
        model = cls(**params)
        model.n_features_in_ = int(fitted["n_features_in_"])
        if fitted.get("feature_names_in_") is not None:  # absent in older model files
            model.feature_names_in_ = np.asarray(fitted["feature_names_in_"], dtype=object)
        model.scaler_mean_ = arrays["scaler_mean"]
        model.scaler_scale_ = arrays["scaler_scale"]
        # held at their training value when scoring; files written before this was recorded: none
        model.constant_columns_ = np.asarray(fitted.get("constant_columns_", []), dtype=np.int64)
        model.score_stats_ = {k: tuple(v) for k, v in fitted["score_stats_"].items()}
        model.history_ = fitted["history_"]
        model.center_path_ = arrays.get("center_path")  # absent in older model files
        # absent in files written before the warm-up calibration: those score uncalibrated
        model.warmup_quantiles_ = arrays.get("warmup_quantiles")
        # absent in files written before it: those explain with the raw occlusion drop
        model.attribution_baseline_ = arrays.get("attribution_baseline")
        model.input_terms_ = terms_from_arrays(check_input_terms(params["input_terms"]), arrays)
        state = {k[len("state/"):]: torch.from_numpy(v) for k, v in arrays.items() if k.startswith("state/")}
        model.restore_network(int(fitted["n_hidden"]), state)
        model.decision_scores_ = arrays["decision_scores"].astype(np.float64)
        model.threshold_ = float(fitted["threshold_"])
        model.labels_ = (model.decision_scores_ > model.threshold_).astype(np.int64)
    except ModelFileError:
        raise
    except (KeyError, TypeError, ValueError, RuntimeError) as exc:
        raise ModelFileError(f"{os.fspath(path)!r} does not match this madcluster version or its embedder: {exc}") from None
    return model
