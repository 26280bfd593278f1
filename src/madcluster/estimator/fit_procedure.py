"""One fit (or refit) of :class:`~madcluster.estimator.detector.MADCluster`, start to finish: the
training rows checked and scaled (:class:`~madcluster.estimator.inputs.InputSpec`), the network
trained (:mod:`madcluster.estimator.network_fit`; warm-started from the model's weights for a
refit, with an optional checkpoint), then the model finished on the estimator
(``_fit_training_scores``, where ``madcluster fit`` defers Ctrl-C). What the fit learned is
written onto the estimator: its training record and ``model_``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from torch import nn

from madcluster.data.validation import check_series
from madcluster.estimator.inputs import InputSpec
from madcluster.estimator.network_fit import (
    build_network,
    resolve_roughness,
    train_detector_network,
)
from madcluster.exceptions import ParameterError
from madcluster.extreme_value import check_enough_scores


def fit_estimator(
    detector: Any,
    X: Any,
    validation_data: Any,
    pool_radius: bool,
    checkpoint: str | os.PathLike | None,
    resume: bool,
    warm: nn.Module | None = None,
    epochs: int | None = None,
) -> Any:
    """Fit ``detector`` (a MADCluster) on ``X`` as
    :meth:`~madcluster.estimator.detector.MADCluster.fit` describes; ``warm`` (a refit): the
    trained network to start from, for ``epochs`` epochs."""
    data = check_series(X, min_length=detector.window_size, name="X")
    if detector.threshold == "pot":
        check_enough_scores(len(data), detector.contamination)
    detector.n_features_in_ = data.shape[1]
    detector._record_feature_names(X)
    if pool_radius and validation_data is None:
        raise ParameterError("pool_radius=True needs validation_data")
    params = detector.get_params(deep=False)
    if warm is not None:  # a refit: this many epochs, no pretraining (the weights are trained)
        params.update(epochs=epochs, pretrain_epochs=0)
    names = getattr(detector, "feature_names_in_", None)
    inputs = InputSpec.fit(
        data, detector.scaling, resolve_roughness(params), names, detector.window_size
    )
    scaled = inputs.model_input(data)
    extra_val = None
    if validation_data is not None:
        extra_val = inputs.model_input(
            check_series(
                detector._align_feature_names(validation_data),
                min_length=detector.window_size,
                n_features=detector.n_features_in_,
                name="validation_data",
            )
        )

    identity = training_identity(detector.get_params(deep=False)) if checkpoint is not None else {}

    def build() -> nn.Module:
        net = build_network(params, len(inputs.scaler_mean))
        if warm is not None:
            net.load_state_dict(warm.state_dict())
        return net

    trained = train_detector_network(
        params, build, identity, scaled, extra_val, pool_radius, checkpoint, resume
    )
    detector.device_, detector.history_, detector.center_path_ = (
        trained.device,
        trained.history,
        trained.center_path,
    )
    detector._fit_training_scores(trained.net, params, inputs, data, scaled)
    if checkpoint is not None:
        Path(checkpoint).unlink(missing_ok=True)  # consumed: the fit it holds is complete
    return detector


def training_identity(params: dict[str, Any]) -> dict[str, str]:
    """The parameters a resumed fit must share with the interrupted one (not ``epochs``, nor
    what only threads, progress or the threshold change)."""
    free = ("epochs", "verbose", "n_jobs", "device", "threshold", "contamination")
    return {k: repr(v) for k, v in params.items() if k not in free}
