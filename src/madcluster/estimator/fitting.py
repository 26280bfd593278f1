"""After the network is trained: :func:`fit_model` fits everything scoring needs, in order, and
returns the finished, frozen :class:`~madcluster.estimator.fitted.FittedModel`, threshold included.

1. the head terms' training statistics, on steady rows only (warm-up rows are calibrated, not
   counted);
2. the warm-up table (causal models): the own score per window position on training windows each
   scored as the start of a fresh series (:mod:`madcluster.estimator.warmup`);
3. the score's parts and their combination (:mod:`madcluster.score.combination`), on the
   training rows and the own training scores;
4. the threshold, from the training scores (:func:`~madcluster.base.threshold_from_scores`).

The attribution baseline is measured on first use
(:class:`~madcluster.estimator.attribution.AttributionBaseline`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import torch

from madcluster.base import threshold_from_scores
from madcluster.estimator.attribution import AttributionBaseline
from madcluster.estimator.fitted import FittedModel, HeadScore, ScoringGrid, scoring_copy
from madcluster.estimator.inputs import InputSpec
from madcluster.estimator.warmup import WARMUP_WINDOWS, Warmup, fit_quantile_table, sample_starts
from madcluster.score.combination import Combination
from madcluster.score.input_terms import (
    check_input_terms,
    check_part_rule,
    check_part_weights,
    continuous_share,
)
from madcluster.score.parts import FitContext
from madcluster.score.scoring import score_statistics
from madcluster.score.smoothing import resolve_part_smoothing
from madcluster.training.network import MADClusterNet


def fit_model(
    net: MADClusterNet,
    params: Mapping[str, Any],
    inputs: InputSpec,
    data: np.ndarray,
    scaled: np.ndarray,
) -> tuple[FittedModel, np.ndarray]:
    """The fitted model of trained ``net`` (the estimator's ``params``; ``inputs``: the training
    columns and scaling; ``data``: the checked training rows, ``scaled``: their model input) and
    its training scores (what the threshold is taken from)."""
    embedder = params["embedder"]
    grid = ScoringGrid.for_network(net, params)
    model = FittedModel(
        net=net,
        scoring_net=scoring_copy(net),
        name=embedder if isinstance(embedder, str) else type(embedder).__name__,
        grid=grid,
        inputs=inputs,
        head=HeadScore({}, params["score_scaling"], params["base_score_combination"]),
        combination=Combination.own_alone(),
        warmup=Warmup(grid.window_size, grid.score_stride, grid.causal),
        attribution=AttributionBaseline(rows=scaled),
        threshold=float("nan"),
    )
    terms = model.outputs(scaled, model.scoring_net.score)
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
    widths = resolve_part_smoothing(params["part_smoothing"], grid.window_size)
    combination = Combination.fit(
        check_input_terms(params["input_terms"]),
        data,
        scores,
        FitContext(grid.window_size, params["random_state"]),
        check_part_weights(params["part_weights"], continuous_share(data)),
        widths,
        rule=check_part_rule(params["part_rule"]),
        scale_rows=params["series_scale_rows"],
    )
    scores = combination.reference_score(data, scores)  # no part matched to itself
    threshold = threshold_from_scores(scores, params["threshold"], params["contamination"])
    return replace(model, combination=combination, threshold=threshold), scores


def _fit_warmup(model: FittedModel, data: np.ndarray) -> np.ndarray:
    """Quantiles of the own score per window position, on training windows each scored as the
    start of a fresh series (model input built from the window alone)."""
    window = model.grid.window_size
    starts = sample_starts(len(data), window, WARMUP_WINDOWS)
    fresh = np.stack([model.inputs.model_input(data[s : s + window]) for s in starts])
    net = model.scoring_net
    windows = torch.from_numpy(fresh).to(next(net.parameters()).device, model.scoring_dtype)
    step = model.grid.batch_on(windows.device)
    with torch.no_grad():
        chunks = [net.score(windows[i : i + step]) for i in range(0, len(windows), step)]
    terms = {
        name: torch.cat([c[name] for c in chunks]).double().cpu().numpy() for name in chunks[0]
    }
    return fit_quantile_table(model.head.combine(terms), model.warmup.reference_from)


__all__ = ["fit_model"]
