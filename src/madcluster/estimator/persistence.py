"""Model files: one zip archive with ``config.json`` and ``arrays.npz``
(:mod:`madcluster.estimator.archive`); a fitted MADCluster to and from one (:func:`save_detector`,
:func:`load_detector`). Format 2; format 1 files are upgraded on reading (:func:`upgrade_format_1`),
so the loader reads one layout.

Nothing is ever unpickled: JSON for configuration and fitted scalars (including the training
column names, ``feature_names_in_``), ``np.load(allow_pickle=False)`` for tensors. Files are
written atomically and get the usual file mode (``0o666`` less the umask), like any other output.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from madcluster.estimator.archive import ArchiveKind, read_archive, write_archive
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
#: 2: every parameter and fitted key is written (format 1 files may lack the ones added after them;
#: :func:`upgrade_format_1` fills those in with what they meant).
FORMAT_VERSION = 2
MODEL_FILE = ArchiveKind(FORMAT, FORMAT_VERSION, "config.json", "arrays.npz", ModelFileError, "madcluster model file")
CUSTOM_EMBEDDER = "<custom module>"
#: Fitted arrays a model may not have (None: not written): the center path of base-only models,
#: the warm-up table of non-causal ones, the attribution baseline.
OPTIONAL_ARRAYS = ("center_path", "warmup_quantiles", "attribution_baseline")


def write_model_file(
    path: str | os.PathLike, config: dict[str, Any], arrays: dict[str, np.ndarray]
) -> None:
    """Write ``config`` (JSON-serialisable) and named ``arrays`` to ``path`` atomically."""
    write_archive(path, MODEL_FILE, config, arrays)


def read_model_file(path: str | os.PathLike) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Read a model file (format 1 upgraded to 2), raising ``ModelFileError`` with a clear
    message for any problem."""
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
    config, arrays = read_archive(path, MODEL_FILE)
    if config.get("format_version", 0) < 2:
        try:
            upgrade_format_1(config, arrays)
        except (KeyError, TypeError, AttributeError) as exc:
            raise ModelFileError(f"{os.fspath(path)!r}: a format 1 model file without {exc}") from None
    return config, arrays


def upgrade_format_1(config: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
    """A format 1 file as format 2, in place: the keys added while format 1 was current take the
    value that their absence meant. Image model files (``kind: image``) had every key already."""
    config["format_version"] = 2
    if config.get("kind") == "image":
        return
    params, fitted = config["params"], config["fitted"]
    params.setdefault("roughness_window", 0)  # before the option: the scaled input alone
    if "window_term" in params:  # before input terms: window_term None or "kmeans"
        _upgrade_window_term(params, fitted, arrays)
    params.setdefault("input_terms", None)  # before input terms: MADCluster's score alone
    fitted.setdefault("feature_names_in_", None)  # before column names were recorded
    fitted.setdefault("constant_columns_", [])  # before constant columns were held: none


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
            "constant_columns_": [int(j) for j in detector.constant_columns_],
        },
    }
    arrays = {f"state/{k}": v.detach().cpu().numpy() for k, v in detector.net_.state_dict().items()}
    arrays.update(scaler_mean=detector.scaler_mean_, scaler_scale=detector.scaler_scale_, decision_scores=detector.decision_scores_)
    arrays.update({name: getattr(detector, name + "_") for name in OPTIONAL_ARRAYS if getattr(detector, name + "_") is not None})
    arrays.update(terms_to_arrays(detector.input_terms_))
    write_model_file(path, config, arrays)


def _upgrade_window_term(params: dict[str, Any], fitted: dict[str, Any], arrays: dict[str, Any]) -> None:
    """Files from before input terms had ``window_term`` (None or "kmeans"): the same model as
    ``input_terms=("kmeans",)`` under the new names."""
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
        if isinstance(params["input_terms"], list):  # JSON has no tuples
            params["input_terms"] = tuple(params["input_terms"])
        model = cls(**params)
        model.n_features_in_ = int(fitted["n_features_in_"])
        if fitted["feature_names_in_"] is not None:  # None: trained on an array, not named columns
            model.feature_names_in_ = np.asarray(fitted["feature_names_in_"], dtype=object)
        model.scaler_mean_ = arrays["scaler_mean"]
        model.scaler_scale_ = arrays["scaler_scale"]
        # held at their training value when scoring
        model.constant_columns_ = np.asarray(fitted["constant_columns_"], dtype=np.int64)
        model.score_stats_ = {k: tuple(v) for k, v in fitted["score_stats_"].items()}
        model.history_ = fitted["history_"]
        for name in OPTIONAL_ARRAYS:  # None where the model has none (written only when it has)
            setattr(model, name + "_", arrays.get(name))
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
