"""The fit's evidence step: each part of the score read on copies of the held-out training rows
with anomalies injected, the network's own score from the trained network
(:func:`fit_combination`); the method is :mod:`madcluster.score.evidence`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from madcluster.score.combination import Combination
from madcluster.score.evidence import (
    Evidence,
    contributions,
    holdout_start,
    injected_copies,
    read_evidence,
)
from madcluster.score.injection import Injected
from madcluster.score.input_terms import (
    at_once_weights,
    check_input_terms,
    check_part_rule,
    check_part_weights,
    continuous_share,
    weighs_by_evidence,
)
from madcluster.score.parts import FitContext
from madcluster.score.smoothing import resolve_part_smoothing
from madcluster.training.loop import validation_rows

if TYPE_CHECKING:
    from madcluster.estimator.fitted import FittedModel


def copy_readings(
    model: FittedModel,
    combination: Combination,
    data: np.ndarray,
    n_validation: int,
    seed: int,
) -> tuple[dict[str, list[np.ndarray]], list[Injected]] | None:
    """Each part's contribution (``combination``'s weights, 1 for evidence) on every injected
    copy of the held-out rows of ``data``, and the copies; None when too few rows are held out
    (the module docstring of :mod:`madcluster.score.evidence`)."""
    window = model.grid.window_size
    start = holdout_start(len(data), n_validation, window)
    if start is None:
        return None
    scale = data[:start].astype(np.float64).std(axis=0)  # injected sizes, as the study's
    copies = injected_copies(data[start:], scale, window, seed)
    parts: dict[str, list[np.ndarray]] = {p.name: [] for p in combination.final_parts}
    for copy in copies:
        rows = copy.rows.astype(np.float32)
        own = model.own_scores(model.inputs.model_input(rows))
        for name, values in contributions(combination, rows, own).items():
            parts[name].append(values)
    return parts, copies


def fit_combination(
    model: FittedModel, params: Mapping[str, Any], data: np.ndarray, scores: np.ndarray
) -> Combination:
    """The score's parts fitted on the training rows ``data`` (own training scores ``scores``),
    weighted as ``params["part_weights"]`` says: ``"evidence"`` by the weights by column kind
    corrected by this series' evidence (:func:`~madcluster.score.evidence.read_evidence`; by
    column kind alone where too few rows can be held out), ``"columns"`` by column kind, None as
    :data:`~madcluster.score.input_terms.DEFAULT_WEIGHT_RULE` says, a mapping as given. The
    evidence is kept in the combination."""
    window = model.grid.window_size
    names = check_input_terms(params["input_terms"])
    chosen = params["part_weights"]
    columns = check_part_weights(chosen, continuous_share(data))
    evidence = names and weighs_by_evidence(chosen)
    combination = Combination.fit(
        names,
        data,
        scores,
        FitContext(window, params["random_state"]),
        {} if evidence else columns,
        resolve_part_smoothing(params["part_smoothing"], window),
        rule=check_part_rule(params["part_rule"]),
        scale_rows=params["series_scale_rows"],
        at_once_weights=at_once_weights(chosen, continuous_share(data)),
    )
    if not evidence:
        return combination
    n_validation = validation_rows(len(data), params["validation_size"] or 0.2, window)
    seed = 0 if params["random_state"] is None else int(params["random_state"])
    read = copy_readings(model, combination, data, n_validation, seed)
    if read is None:
        return replace(combination, weights=columns)
    found = read_evidence(*read, prior=columns)
    return replace(combination, weights=dict(found.weights), evidence=found.to_record())


def evidence_lines(combination: Combination) -> list[str]:
    """What the fit's evidence says of each part, a line each (none where it measured none)."""
    if not combination.evidence:
        return []
    evidence = Evidence.from_record(combination.evidence)
    head = f"weights from {evidence.rows} held-out training rows with anomalies injected:"
    return [head, *evidence.lines()]


__all__ = ["copy_readings", "evidence_lines", "fit_combination"]
