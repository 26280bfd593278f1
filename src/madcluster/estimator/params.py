"""MADCluster's parameters: each one's default and allowed values, written once.

The estimator's signature takes its defaults from :data:`MADCLUSTER_PARAMS`, ``fit`` checks the
values against it once (before any data is read or model built), the command line shows and
checks its flags with it, and :class:`~madcluster.images.detector.ImageMADCluster` takes the
parameters it shares from it. The objective's options (``mode``, ``rho``, ...) take their
defaults from :class:`~madcluster.method.config.MethodConfig`, which checks them.
Nothing here imports torch: the command line reads this table to print its help.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from madcluster.data.scaling import SCALINGS
from madcluster.defaults import (
    AUTO,
    DEFAULT_EPOCHS,
    DEFAULT_WINDOW_SIZE,
    SHARED_PARAMS,
    Param,
    check_params,
    check_threshold_params,
    fraction,
    is_int,
    is_number,
    positive_int,
    positive_int_or_auto,
)
from madcluster.exceptions import ParameterError
from madcluster.method.config import MethodConfig
from madcluster.score.combination import SERIES_SCALE_ROWS
from madcluster.score.input_terms import (
    DEFAULT_INPUT_TERMS,
    check_input_terms,
    check_part_rule,
    check_part_weights,
)
from madcluster.score.smoothing import check_part_smoothing
from madcluster.threads import DEFAULT_N_JOBS, check_n_jobs

SCORE_COMBINATIONS = ("standardized", "raw")
PRECISION_NAMES = ("float32", "bfloat16")  # the training loop maps each to its torch dtype

_METHOD = {f.name: f.default for f in fields(MethodConfig)}


def _method(name: str) -> Param:
    """An objective option: MethodConfig's default, checked by MethodConfig."""
    return Param(_METHOD[name])


#: name -> Param, in the estimator's signature order.
MADCLUSTER_PARAMS: dict[str, Param] = {
    "embedder": Param(
        "drnn"
    ),  # a registered name or an nn.Module; the registry names the known ones
    "embedder_params": Param(None),
    "window_size": positive_int(DEFAULT_WINDOW_SIZE),
    "stride": positive_int(1),
    "score_stride": positive_int(None, or_none="the embedder's default"),
    "epochs": positive_int(DEFAULT_EPOCHS),
    "batch_size": positive_int_or_auto(AUTO),
    "lr": Param(1e-3, lambda v: is_number(v) and v > 0, "> 0"),
    "weight_decay": Param(1e-5, lambda v: is_number(v) and v >= 0, ">= 0"),
    "validation_size": fraction(0.2),
    "patience": positive_int(3),
    **{
        name: _method(name)
        for name in (
            "mode",
            "rho",
            "tau",
            "center_init",
            "nu_param",
            "distance_loss",
            "cluster_target",
            "cluster_kl",
            "loss_combination",
            "score_type",
            "score_scaling",
            "center_warmup",
        )
    },
    "early_stopping": Param("loss"),  # checked by the training loop, which defines the criteria
    "pretrain_epochs": Param(0, lambda v: is_int(v) and v >= 0, "an integer in [0, epochs)"),
    "n_clusters": _method("n_clusters"),
    "base_score_combination": Param("standardized", SCORE_COMBINATIONS),
    "contamination": SHARED_PARAMS["contamination"],
    "random_state": SHARED_PARAMS["random_state"],
    "device": Param("auto"),  # checked when fit opens it (check_device names what this torch has)
    "verbose": Param(False),
    "scaling": Param("standard", SCALINGS),
    "precision": Param("float32", PRECISION_NAMES),
    "roughness_window": Param(
        None, lambda v: v is None or (is_int(v) and v >= 0), "an integer >= 0 (0: off) or None"
    ),
    "epoch_windows": positive_int_or_auto(AUTO, or_none="every window"),
    "threshold": SHARED_PARAMS["threshold"],
    "n_jobs": Param(DEFAULT_N_JOBS, validate=check_n_jobs),
    "input_terms": Param(DEFAULT_INPUT_TERMS, validate=check_input_terms),
    "part_weights": Param(None, validate=check_part_weights),  # None: default_part_weights
    "part_smoothing": Param(
        None, validate=check_part_smoothing
    ),  # None: DEFAULT_FRACTIONS of the window
    "part_rule": Param(None, validate=check_part_rule),  # None: combination.DEFAULT_RULE
    "series_scale_rows": Param(
        SERIES_SCALE_ROWS, lambda v: is_int(v) and v >= 0, "an integer >= 0 (0: off)"
    ),
}


def check_madcluster_params(params: Mapping[str, Any]) -> None:
    """Check MADCluster's parameters against the table, then the rules between them."""
    check_params(params, MADCLUSTER_PARAMS)
    if params["pretrain_epochs"] >= params["epochs"]:
        raise ParameterError(
            f"pretrain_epochs must be an integer in [0, epochs), got {params['pretrain_epochs']!r}"
        )
    check_threshold_params(params)
