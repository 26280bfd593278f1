"""Model files: one zip archive with ``config.json`` and ``arrays.npz``
(:mod:`madcluster.estimator.archive`); a :class:`~madcluster.estimator.fitted.FittedModel` and the
parameters that built it to and from one (:func:`save_model`, :func:`load_model`). Format 3;
older files are upgraded on reading, one step at a time (:data:`UPGRADES`: format 1 to 2, 2 to
3), so the loader reads one layout. Format 3 keeps the score's combination as one record
(:func:`~madcluster.score.schema.combination_record`: its parts, statistics by part name,
weights, smoothing and rule) and the parts' arrays under ``input_terms/<name>/``, as the ONNX
file's metadata does; the head's statistics alone stay in ``score_stats_``. The inputs are the
record the ONNX metadata writes too (:meth:`~madcluster.estimator.inputs.InputSpec.to_record`),
under the names format 4 gave its keys (:data:`INPUT_KEYS`; what it left to the parameters, the
scaling, the fewest rows and the roughness window, read from them).

Nothing is ever unpickled: JSON for configuration and fitted scalars (including the training
column names, ``feature_names_in_``), ``np.load(allow_pickle=False)`` for tensors. Files are
written atomically and get the usual file mode (``0o666`` less the umask), like any other output.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from madcluster.data.validation import check_device
from madcluster.estimator.archive import ArchiveKind, read_archive, write_archive
from madcluster.estimator.attribution import AttributionBaseline
from madcluster.estimator.fitted import FittedModel, TrainingRecord, assemble
from madcluster.estimator.inputs import InputSpec
from madcluster.estimator.network import build_network, resolve_roughness
from madcluster.exceptions import ModelFileError, ParameterError
from madcluster.incidents.calibration import IncidentCalibration
from madcluster.score.input_terms import check_input_terms
from madcluster.score.schema import (
    combination_arrays,
    combination_from,
    combination_record,
    format2_record,
)

if TYPE_CHECKING:
    from torch import nn


FORMAT = "madcluster-model"
#: 2: every parameter and fitted key is written (format 1 files may lack the ones added after them;
#: :func:`upgrade_format_1` fills those in with what they meant). 3: the combination as one record
#: (:func:`upgrade_format_2`). 4: the D-RNN's default became 32 units (:func:`upgrade_format_3`).
FORMAT_VERSION = 4
MODEL_FILE = ArchiveKind(
    FORMAT, FORMAT_VERSION, "config.json", "arrays.npz", ModelFileError, "madcluster model file"
)
CUSTOM_EMBEDDER = "<custom module>"
#: the inputs record's keys (InputSpec.to_record) -> where a model file keeps them: in
#: ``fitted`` (names ending in ``_``) or as arrays (the scaler); the record's other keys are the
#: parameters' (``scaling``, ``min_rows`` = ``window_size``, ``roughness_window``)
INPUT_KEYS = {
    "n_features": "n_features_in_",
    "feature_names": "feature_names_in_",
    "constant_columns": "constant_columns_",
    "scaler_mean": "scaler_mean",
    "scaler_scale": "scaler_scale",
}


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
    for version, upgrade in UPGRADES.items():
        if config.get("format_version", 0) <= version:
            try:
                upgrade(config, arrays)
            except (KeyError, TypeError, AttributeError, ValueError) as exc:
                raise ModelFileError(
                    f"{os.fspath(path)!r}: a format {version} model file without {exc}"
                ) from None
            except ParameterError as exc:
                raise ModelFileError(f"{os.fspath(path)!r}: {exc}") from None
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
    # before part weights: equal
    params.setdefault("part_weights", {"own": 1.0, "kmeans": 1.0, "ar": 1.0})
    fitted.setdefault("feature_names_in_", None)  # before column names were recorded
    fitted.setdefault("constant_columns_", [])  # before constant columns were held: none
    fitted.setdefault("part_weights_", {})  # before part weights: every part 1


def upgrade_format_2(config: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
    """A format 2 file as format 3, in place: the parts' statistics split out of ``score_stats_``
    (their format 2 keys, :func:`~madcluster.score.schema.split_stats`) into one combination
    record with the part weights and smoothing (files from before smoothing: none)."""
    config["format_version"] = 3
    if config.get("kind") == "image":
        return
    params, fitted = config["params"], config["fitted"]
    params.setdefault("part_smoothing", {"own": 1, "ar": 1})  # before part smoothing: none
    head, record = format2_record(
        check_input_terms(params["input_terms"]),
        fitted["score_stats_"],
        fitted.pop("part_weights_"),
        fitted.pop("part_smoothing_", {}),
        arrays,
    )
    fitted["score_stats_"], fitted["combination"] = head, record


def upgrade_format_3(config: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
    """A format 3 file as format 4, in place: a D-RNN file that left its size to the default was
    trained with 64 units (the default before the 32 of today), so its
    ``embedder_params`` say so and the network is built to the size its weights have."""
    config["format_version"] = 4
    if config.get("kind") == "image":
        return
    params = config["params"]
    if params.get("embedder") == "drnn":
        embedder_params = dict(params.get("embedder_params") or {})
        embedder_params.setdefault("hidden_size", 64)
        params["embedder_params"] = embedder_params


#: format version -> the function that upgrades a file of that version to the next
UPGRADES = {1: upgrade_format_1, 2: upgrade_format_2, 3: upgrade_format_3}


@dataclass(frozen=True)
class ModelFile:
    """What a model file holds: the estimator's parameters, its fitted model and the training
    record the estimator keeps beside it (training scores, per-epoch history, the center's path;
    the device: the one it was loaded on)."""

    params: dict[str, Any]
    fitted: FittedModel
    record: TrainingRecord


def save_model(
    path: str | os.PathLike,
    params: dict[str, Any],
    fitted: FittedModel,
    *,
    decision_scores: np.ndarray,
    history: dict[str, Any],
    center_path: np.ndarray | None,
) -> None:
    """Write a fitted model and the parameters that built it: parameters and fitted scalars as
    JSON, the weights, scaler, training scores, warm-up table, attribution baseline, input terms
    and center path as arrays."""
    params = dict(params)
    if not isinstance(params["embedder"], str):
        params["embedder"] = CUSTOM_EMBEDDER
    calibration = fitted.incident_calibration
    inputs = {INPUT_KEYS[k]: v for k, v in fitted.inputs.to_record().items() if k in INPUT_KEYS}
    config = {
        "params": params,
        "fitted": {
            **{k: v for k, v in inputs.items() if not isinstance(v, np.ndarray)},
            "threshold_": fitted.threshold,
            "score_stats_": fitted.head.stats,
            "combination": combination_record(fitted.combination),
            "history_": history,
            "n_hidden": fitted.net.embedder.out_features,
            "incident_calibration": None if calibration is None else calibration.record(),
        },
    }
    arrays = {f"state/{k}": v.detach().cpu().numpy() for k, v in fitted.net.state_dict().items()}
    arrays.update({k: v for k, v in inputs.items() if isinstance(v, np.ndarray)})
    arrays["decision_scores"] = decision_scores
    optional = {
        "center_path": center_path,
        "warmup_quantiles": fitted.warmup.quantiles,
        "attribution_baseline": fitted.attribution.values(fitted),
    }
    arrays.update({name: value for name, value in optional.items() if value is not None})
    arrays.update(combination_arrays(fitted.combination))
    write_model_file(path, config, arrays)


def _upgrade_window_term(
    params: dict[str, Any], fitted: dict[str, Any], arrays: dict[str, Any]
) -> None:
    """Files from before input terms had ``window_term`` (None or "kmeans"): the same model as
    ``input_terms=("kmeans",)`` under the new names."""
    if params.pop("window_term") is None:
        params["input_terms"] = None
        return
    params["input_terms"] = ("kmeans",)
    for key in [k for k in arrays if k.startswith("window_term/")]:
        arrays["input_terms/kmeans/" + key[len("window_term/") :]] = arrays.pop(key)
    stats = fitted["score_stats_"]
    stats["before_input_terms"] = stats.pop("before_window_term")
    stats["input_term/kmeans"] = stats.pop("window_term")


def load_model(path: str | os.PathLike, embedder: nn.Module | None, device: str) -> ModelFile:
    """Read what :func:`save_model` wrote (``embedder``: the custom module, if any), the network
    rebuilt on ``device``."""
    import torch

    config, arrays = read_model_file(path)
    try:
        params = dict(config["params"])
        record = config["fitted"]
        if params["embedder"] == CUSTOM_EMBEDDER:
            if embedder is None:
                raise ModelFileError(
                    f"{os.fspath(path)!r} was trained with a custom embedder module: pass the same "
                    "architecture as MADCluster.load(path, embedder=MyModule(...))"
                )
            params["embedder"] = embedder
        params["device"] = device
        if isinstance(params["input_terms"], list):  # JSON has no tuples
            params["input_terms"] = tuple(params["input_terms"])
        kept = {**record, **arrays}
        inputs = InputSpec.from_record(
            {
                **{k: kept[name] for k, name in INPUT_KEYS.items()},
                "roughness_window": resolve_roughness(params),
                "min_rows": params["window_size"],
                "scaling": params["scaling"],
            }
        )
        net = build_network(params, len(inputs.scaler_mean), int(record["n_hidden"]))
        net.load_state_dict(
            {
                k[len("state/") :]: torch.from_numpy(v)
                for k, v in arrays.items()
                if k.startswith("state/")
            },
            strict=True,
        )
        head = {k: (float(v[0]), float(v[1])) for k, v in record["score_stats_"].items()}
        on = check_device(device)
        net = net.to(on).eval()
        fitted = assemble(
            net,
            params,
            inputs,
            head_stats=head,
            combination=combination_from(record["combination"], arrays),
            warmup_quantiles=arrays.get("warmup_quantiles"),
            # None: a file from before it
            attribution=AttributionBaseline(arrays.get("attribution_baseline")),
            threshold=float(record["threshold_"]),
        )
        # None: too few rows, no stream, older files; no in_sample: held out, then the only kind
        if record.get("incident_calibration") is not None:
            calibration = IncidentCalibration.from_record(record["incident_calibration"])
            fitted = replace(fitted, incident_calibration=calibration)
        training = TrainingRecord(
            arrays["decision_scores"].astype(np.float64),
            record["history_"],
            arrays.get("center_path"),
            str(on),
        )
        return ModelFile(params, fitted, training)
    except ModelFileError:
        raise
    except (KeyError, TypeError, ValueError, RuntimeError) as exc:
        raise ModelFileError(
            f"{os.fspath(path)!r} does not match this madcluster version or its embedder: {exc}"
        ) from None
