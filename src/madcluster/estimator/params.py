"""Checks of the estimator's parameters beyond the objective's (:class:`MethodConfig` checks those),
run at ``fit`` so that a bad value fails before any data is read or model built.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from madcluster.data.scaling import SCALINGS
from madcluster.data.validation import check_positive_int
from madcluster.exceptions import ParameterError
from madcluster.score.input_terms import check_input_terms
from madcluster.threads import check_n_jobs
from madcluster.training.loop import PRECISIONS

SCORE_COMBINATIONS = ("standardized", "raw")


def check_params(params: Mapping[str, Any]) -> None:
    """Raise ``ValueError`` naming the first parameter of ``MADCluster`` out of its range."""
    for name in ("window_size", "stride", "epochs", "batch_size", "patience"):
        check_positive_int(name, params[name])
    score_stride, pretrain = params["score_stride"], params["pretrain_epochs"]
    if score_stride is not None and (not isinstance(score_stride, (int, np.integer)) or score_stride < 1):
        raise ParameterError(f"score_stride must be a positive integer or None, got {score_stride!r}")
    if not isinstance(pretrain, (int, np.integer)) or not 0 <= pretrain < params["epochs"]:
        raise ParameterError(f"pretrain_epochs must be an integer in [0, epochs), got {pretrain!r}")
    if not 0.0 <= params["validation_size"] < 1.0:
        raise ParameterError(f"validation_size must be in [0, 1), got {params['validation_size']}")
    if params["lr"] <= 0 or params["weight_decay"] < 0:
        raise ParameterError("lr must be > 0 and weight_decay >= 0")
    for name, allowed in (("base_score_combination", SCORE_COMBINATIONS), ("scaling", SCALINGS), ("precision", PRECISIONS)):
        if params[name] not in allowed:
            raise ParameterError(f"unknown {name} {params[name]!r}; choose one of {', '.join(allowed)}")
    if not 0.0 <= params["contamination"] < 0.5:
        raise ParameterError(f"contamination must be in [0, 0.5), got {params['contamination']!r}")
    windows = params["epoch_windows"]
    if windows is not None and (isinstance(windows, bool) or not isinstance(windows, (int, np.integer)) or windows < 1):
        raise ParameterError(f"epoch_windows must be a positive integer or None (every window), got {windows!r}")
    check_n_jobs(params["n_jobs"])
    check_input_terms(params.get("input_terms"))
    window = params["roughness_window"]
    if window is not None and (not isinstance(window, (int, np.integer)) or window < 0):
        raise ParameterError(f"roughness_window must be an integer >= 0 (0: off) or None, got {window!r}")
