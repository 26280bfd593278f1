"""The fit's evidence step: each part of the score sat on held-out training rows with anomalies
injected, read with the trained network (:func:`measure_part_evidence`); the method is
:mod:`madcluster.score.evidence`'s.
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
from madcluster.score.input_terms import (
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


def probe_readings(
    model: FittedModel,
    data: np.ndarray,
    scores: np.ndarray,
    names: tuple[str, ...],
    context: FitContext,
    smoothing: dict[str, int],
    rule: str,
    scale_rows: int,
    n_validation: int,
) -> tuple[dict[str, list[np.ndarray]], list] | None:
    """Each part's contribution (weight 1) on every injected copy of the held-out rows, and the
    copies; None when the training rows are too few to hold rows out (module docstring of
    :mod:`madcluster.score.evidence`). ``scores``: the own training scores of ``data``."""
    window = model.grid.window_size
    start = holdout_start(len(data), n_validation, window)
    if start is None:
        return None
    probe = Combination.fit(
        names, data[:start], scores[:start], context, {}, smoothing, rule, scale_rows
    )
    scale = data[:start].astype(np.float64).std(axis=0)
    seed = 0 if context.random_state is None else int(context.random_state)
    copies = injected_copies(data[start:], scale, window, seed)
    parts: dict[str, list[np.ndarray]] = {name: [] for name in probe.names}
    for copy in copies:
        rows = copy.rows.astype(np.float32)
        own = model.own_scores(model.inputs.model_input(rows))
        for name, values in contributions(probe, rows, own).items():
            parts[name].append(values)
    return parts, copies


def measure_part_evidence(
    model: FittedModel,
    data: np.ndarray,
    scores: np.ndarray,
    names: tuple[str, ...],
    context: FitContext,
    smoothing: dict[str, int],
    rule: str,
    scale_rows: int,
    n_validation: int,
) -> Evidence | None:
    """The parts' :class:`~madcluster.score.evidence.Evidence` on this series (None: too few rows;
    the caller then keeps the weights by column kind)."""
    read = probe_readings(
        model, data, scores, names, context, smoothing, rule, scale_rows, n_validation
    )
    return None if read is None else read_evidence(*read)


def fit_combination(
    model: FittedModel, params: Mapping[str, Any], data: np.ndarray, scores: np.ndarray
) -> Combination:
    """The score's parts fitted on the training rows ``data`` (own training scores ``scores``),
    weighted as ``params["part_weights"]`` says: ``"evidence"`` by this series' evidence
    (:func:`measure_part_evidence`; by column kind where the rows are too few to hold any out),
    ``"columns"`` by column kind, None as
    :data:`~madcluster.score.input_terms.DEFAULT_WEIGHT_RULE` says, a mapping as given. The
    evidence is kept in the combination."""
    window = model.grid.window_size
    names = check_input_terms(params["input_terms"])
    widths = resolve_part_smoothing(params["part_smoothing"], window)
    rule = check_part_rule(params["part_rule"])
    context = FitContext(window, params["random_state"])
    chosen = params["part_weights"]
    weights = check_part_weights(chosen, continuous_share(data))
    evidence = None
    if names and weighs_by_evidence(chosen):
        n_validation = validation_rows(len(data), params["validation_size"] or 0.2, window)
        evidence = measure_part_evidence(
            model,
            data,
            scores,
            names,
            context,
            widths,
            rule,
            params["series_scale_rows"],
            n_validation,
        )
        if evidence is not None:
            weights = dict(evidence.weights)
    combination = Combination.fit(
        names,
        data,
        scores,
        context,
        weights,
        widths,
        rule=rule,
        scale_rows=params["series_scale_rows"],
    )
    if evidence is not None:
        combination = replace(combination, evidence=evidence.to_record())
    return combination


def evidence_lines(combination: Combination) -> list[str]:
    """What the fit's evidence says of each part, a line each (none where it measured none)."""
    if not combination.evidence:
        return []
    evidence = Evidence.from_record(combination.evidence)
    head = f"weights from {evidence.rows} held-out training rows with anomalies injected:"
    return [head, *evidence.lines()]


__all__ = ["evidence_lines", "fit_combination", "measure_part_evidence", "probe_readings"]
