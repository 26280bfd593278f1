"""Named configurations of :class:`~madcluster.estimator.detector.MADCluster`
(``MADCluster.from_preset``).

``default`` is the constructor's defaults (what was measured to detect, see
docs/method.md); ``paper`` is the paper's formulation exactly (docs/method.md):
the embedder's paper settings pinned (for the D-RNN: no auxiliary loss), Eq. 7's raw sum,
non-overlapping scoring windows, early stopping on the total loss. ``streaming`` is the default
without the input terms (:mod:`madcluster.score.input_terms`): every score final at once (the
default streams too, its scores final L rows later, :mod:`madcluster.score.combination`), at the
cost of the terms' detection. ``fast`` (batches of 32, 480 windows an epoch) is what the default
trains a D-RNN with since those became its ``training_batch``; for other embedders it is that
budget in place of their batches of 128.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from madcluster.defaults import DEFAULT_BATCH_SIZE, DEFAULT_WINDOW_SIZE
from madcluster.exceptions import ParameterError

PRESETS: dict[str, dict[str, Any]] = {
    "default": {},
    "paper": {
        "score_scaling": "raw",
        "roughness_window": 0,
        "center_warmup": 0,
        "early_stopping": "loss",
        "epoch_windows": None,  # every window in every epoch, as the paper's training
        "batch_size": DEFAULT_BATCH_SIZE,  # the batch its results were measured with
        "input_terms": None,  # MADCluster's score alone (Eq. 7), no input-space terms
    },
    "streaming": {"input_terms": None},  # causal: step t's score reads steps <= t only
    # the D-RNN's batches of 32 (480 windows an epoch) were this preset until they became the
    # default's (DilatedRNN.training_batch); kept so that commands naming it still run
    "fast": {"batch_size": 32, "epoch_windows": 480},
}
# presets that pin the embedder's ``paper_params`` and score each point from one whole window
_PAPER_LIKE = ("paper",)


def preset_params(
    preset: str, params: Mapping[str, Any], paper_embedder_params: Mapping[str, Any]
) -> dict[str, Any]:
    """Constructor arguments of ``preset`` with ``params`` over them.

    ``paper_embedder_params`` are the chosen embedder's paper settings (its class's
    ``paper_params``); the preset pins them under any ``embedder_params`` given.
    """
    if preset not in PRESETS:
        raise ParameterError(f"unknown preset {preset!r}; choose one of {', '.join(PRESETS)}")
    params = dict(params)
    values = dict(PRESETS[preset])
    if preset in _PAPER_LIKE:
        if paper_embedder_params:
            values["embedder_params"] = {
                **paper_embedder_params,
                **(params.pop("embedder_params", None) or {}),
            }
        if "score_stride" not in params:
            values["score_stride"] = params.get("window_size", DEFAULT_WINDOW_SIZE)
    values.update(params)
    return values
