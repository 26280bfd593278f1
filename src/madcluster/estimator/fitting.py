"""One fit (or refit) of :class:`~madcluster.estimator.detector.MADCluster`, start to finish:
:func:`fit` returns the finished, frozen :class:`~madcluster.estimator.fitted.FittedModel`
(threshold included) and what the training recorded
(:class:`~madcluster.estimator.fitted.TrainingRecord`); it writes nothing onto the estimator.

1. The training rows checked and scaled (:class:`~madcluster.estimator.inputs.InputSpec`).
2. The network trained (:func:`train`): seeds, the training / validation split (the END of the
   training series, never test data), the optional checkpoint, the loop of
   :func:`madcluster.training.loop.train_network`; a refit starts from the model's weights.
3. The model finished (:func:`fit_model`), in the caller's ``finishing`` context (``madcluster
   fit`` defers Ctrl-C and SIGTERM there: the training is done, the model seconds away):

   a. the head terms' training statistics, on steady rows only (warm-up rows are calibrated, not
      counted);
   b. the warm-up table (causal models): the own score per window position on training windows
      each scored as the start of a fresh series (:mod:`madcluster.estimator.warmup`);
   c. the score's parts and their combination (:mod:`madcluster.score.combination`), on the
      training rows and the own training scores;
   d. the threshold, from the training scores (:func:`~madcluster.base.threshold_from_scores`).

The attribution baseline is measured on first use
(:class:`~madcluster.estimator.attribution.AttributionBaseline`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from madcluster.base import threshold_from_scores
from madcluster.data.validation import align_columns, check_device, check_series, feature_names
from madcluster.defaults import AUTO, DEFAULT_BATCH_SIZE
from madcluster.estimator.attribution import AttributionBaseline
from madcluster.estimator.fitted import (
    FittedModel,
    TrainingRecord,
    assemble,
    scoring_dtype,
    step_outputs,
)
from madcluster.estimator.incident_scoring import calibrate_incidents, expectation
from madcluster.estimator.inputs import InputSpec
from madcluster.estimator.network import build_network, resolve_roughness, resolve_training_batch
from madcluster.estimator.part_evidence import evidence_lines, fit_combination
from madcluster.estimator.warmup import WARMUP_WINDOWS, fit_quantile_table, sample_starts
from madcluster.exceptions import ParameterError
from madcluster.extreme_value import check_enough_scores
from madcluster.method.heads import head_centers
from madcluster.score.combination import Combination
from madcluster.score.scoring import score_statistics
from madcluster.training.checkpoint import Checkpointing, data_digest
from madcluster.training.loop import TrainSettings, train_network, validation_rows
from madcluster.training.network import MADClusterNet


def fit(
    params: Mapping[str, Any],
    X: Any,
    validation_data: Any = None,
    pool_radius: bool = False,
    checkpoint: str | os.PathLike | None = None,
    resume: bool = False,
    finishing: AbstractContextManager[Any] | None = None,
    *,
    warm: MADClusterNet | None = None,
    epochs: int | None = None,
) -> tuple[FittedModel, TrainingRecord]:
    """Fit on ``X`` with the estimator's ``params`` as
    :meth:`~madcluster.estimator.detector.MADCluster.fit` describes; ``warm`` (a refit): the
    trained network to start from, for ``epochs`` epochs; ``finishing``: the context the model is
    finished in, after the last epoch."""
    window = params["window_size"]
    data = check_series(X, min_length=window, name="X")
    if params["threshold"] == "pot":
        check_enough_scores(len(data), params["contamination"])
    names = feature_names(X)
    if pool_radius and validation_data is None:
        raise ParameterError("pool_radius=True needs validation_data")
    identity = training_identity(params) if checkpoint is not None else {}
    params = dict(params)
    if warm is not None:  # a refit: this many epochs, no pretraining (the weights are trained)
        params.update(epochs=epochs, pretrain_epochs=0)
    inputs = InputSpec.fit(data, params["scaling"], resolve_roughness(params), names, window)
    scaled = inputs.model_input(data)
    extra_val = None
    if validation_data is not None:
        extra_val = inputs.model_input(
            check_series(
                align_columns(validation_data, names, name="X"),
                min_length=window,
                n_features=data.shape[1],
                name="validation_data",
            )
        )

    def build() -> MADClusterNet:
        net = build_network(params, len(inputs.scaler_mean))
        if warm is not None:
            net.load_state_dict(warm.state_dict())
        return net

    net, history, center_path, device = train(
        params, build, identity, scaled, extra_val, pool_radius, checkpoint, resume
    )
    with finishing if finishing is not None else nullcontext():
        model, scores, floor = fit_model(net, params, inputs, data, scaled)
        held_out = extra_val is None  # else the network trained on every row of X
        calibration = calibrate_incidents(model, data, params["validation_size"], held_out)
        if calibration is not None and floor is not None:
            calibration = replace(calibration, floor=floor)
        model = replace(model, incident_calibration=calibration)
    if params["verbose"]:  # the fit's one line on how its score is made
        print(f"score = {model.combination.describe()}", flush=True)
        for line in evidence_lines(model.combination):
            print(f"  {line}", flush=True)
        print(expectation(model), flush=True)
    if checkpoint is not None:
        Path(checkpoint).unlink(missing_ok=True)  # consumed: the fit it holds is complete
    record = TrainingRecord(np.asarray(scores, dtype=np.float64), history, center_path, device)
    return model, record


def training_identity(params: Mapping[str, Any]) -> dict[str, str]:
    """The parameters a resumed fit must share with the interrupted one (not ``epochs``, nor
    what only threads, progress or the threshold change)."""
    free = ("epochs", "verbose", "n_jobs", "device", "threshold", "contamination")
    return {k: repr(v) for k, v in params.items() if k not in free}


def train(
    params: Mapping[str, Any],
    build: Callable[[], MADClusterNet],
    identity: dict[str, str],
    scaled: np.ndarray,
    extra_val: np.ndarray | None,
    pool_radius: bool,
    checkpoint: str | os.PathLike | None,
    resume: bool,
) -> tuple[MADClusterNet, dict[str, Any], np.ndarray | None, str]:
    """Build (``build``) and train a network on the model input ``scaled`` with the estimator's
    ``params``; ``identity``: the parameters a resumed fit must share with the interrupted one.
    The trained network, the per-epoch history, the center's path (row 0 its initial value; None
    for base-only) and the device."""
    n_val = (
        0
        if extra_val is not None
        else validation_rows(len(scaled), params["validation_size"], params["window_size"])
    )
    device = check_device(params["device"])  # one-line DeviceError for e.g. cuda on CPU-only torch
    seed = params["random_state"]
    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
        if seed is not None:
            torch.manual_seed(seed)
        generator = torch.Generator().manual_seed(
            seed if seed is not None else int(torch.seed() % 2**63)
        )
        net = build().to(device)
        series = torch.from_numpy(scaled).to(device)
        train_part = series[: len(series) - n_val]
        val_part = series[len(series) - n_val :] if n_val else None
        if extra_val is not None:
            val_part = torch.from_numpy(extra_val).to(device)
        batch_size, epoch_windows = resolve_training_batch(params)
        settings = TrainSettings(
            **{k: params[k] for k in TrainSettings.from_estimator},
            batch_size=batch_size,
            epoch_windows=epoch_windows,
            # a batch the user chose may be what fits the device's memory: theirs for every pass
            eval_batch_size=(
                max(batch_size, DEFAULT_BATCH_SIZE) if params["batch_size"] == AUTO else None
            ),
            progress=bool(params["verbose"]),
        )
        path: list[np.ndarray] = []
        checkpointing = None
        if checkpoint is not None:
            digests = {
                "train": data_digest(scaled),
                "validation": None if extra_val is None else data_digest(extra_val),
            }
            checkpointing = Checkpointing(Path(checkpoint), {**identity, **digests}, resume, path)
        history = train_network(
            net,
            train_part,
            val_part,
            settings,
            generator,
            observe_epoch=lambda epoch, net: path.extend(head_centers(net.head)),
            radius_extra=val_part if pool_radius else None,
            checkpointing=checkpointing,
        )
    return net, history, np.stack(path) if path else None, str(device)


def fit_model(
    net: MADClusterNet,
    params: Mapping[str, Any],
    inputs: InputSpec,
    data: np.ndarray,
    scaled: np.ndarray,
) -> tuple[FittedModel, np.ndarray, float | None]:
    """The fitted model of trained ``net`` (the estimator's ``params``; ``inputs``: the training
    columns and scaling; ``data``: the checked training rows, ``scaled``: their model input), its
    training scores (what the threshold is taken from) and its incidents' floor where it is not
    the threshold (:func:`~madcluster.estimator.incident_scoring.incident_floor`)."""
    model = assemble(
        net,
        params,
        inputs,
        head_stats={},
        combination=Combination.own_alone(),
        warmup_quantiles=None,
        attribution=AttributionBaseline(rows=scaled),
        threshold=float("nan"),
    )
    grid = model.grid
    terms = step_outputs(model, scaled, model.scoring_net.score)
    positions = model.warmup.positions(np.arange(len(scaled)))
    steady = positions >= model.warmup.reference_from
    model = replace(
        model,
        head=replace(
            model.head,
            stats=score_statistics(
                {n: v[steady] for n, v in terms.items()}, params["score_scaling"]
            ),
        ),
    )
    if grid.causal:
        model = replace(model, warmup=replace(model.warmup, quantiles=_fit_warmup(model, data)))
    scores = model.warmup.calibrate(model.head.combine(terms), positions)
    combination = fit_combination(model, params, data, scores)
    own, scores = scores, combination.reference_score(data, scores)  # no part matched to itself
    threshold = threshold_from_scores(scores, params["threshold"], params["contamination"])
    floor = None
    paired = replace(  # the final score on the at-once score's scale (incident_floor)
        combination, weights=combination.paired_weights(), rule=combination.at_once_rule
    )
    if (paired.weights, paired.rule) != (combination.weights, combination.rule):
        floor = threshold_from_scores(
            paired.reference_score(data, own), params["threshold"], params["contamination"]
        )
        floor = None if floor == threshold else floor  # the rules agree on these rows
    return replace(model, combination=combination, threshold=threshold), scores, floor


def _fit_warmup(model: FittedModel, data: np.ndarray) -> np.ndarray:
    """Quantiles of the own score per window position, on training windows each scored as the
    start of a fresh series (model input built from the window alone)."""
    window = model.grid.window_size
    starts = sample_starts(len(data), window, WARMUP_WINDOWS)
    fresh = np.stack([model.inputs.model_input(data[s : s + window]) for s in starts])
    net = model.scoring_net
    windows = torch.from_numpy(fresh).to(next(net.parameters()).device, scoring_dtype(model))
    step = model.grid.batch_on(windows.device)
    with torch.no_grad():
        chunks = [net.score(windows[i : i + step]) for i in range(0, len(windows), step)]
    terms = {
        name: torch.cat([c[name] for c in chunks]).double().cpu().numpy() for name in chunks[0]
    }
    return fit_quantile_table(model.head.combine(terms), model.warmup.reference_from)


__all__ = ["fit", "fit_model", "train", "training_identity"]
