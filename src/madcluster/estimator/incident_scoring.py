"""Incidents of a fitted model (:mod:`madcluster.incidents`): its at-once scores fed to the
policy, the channels behind each incident, its confirmation by the final scores.

:func:`series_incidents` (``MADCluster.incidents``) is exactly what a stream fed the series row by
row raises (:class:`StreamIncidents`, which ``StreamScorer.update`` drives), tested: the at-once
scores are the stream's (:meth:`~madcluster.score.combination.Combination.at_once_score`), the
channels of an incident are read when it is raised from the last ``L`` rows up to that row (what a
stream holds then), and the final scores confirm it once they come.
"""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

import numpy as np

from madcluster.estimator.attribution import (
    channel_groups,
    input_deviation,
    occlusion_contributions,
    standardised_contributions,
    top_channels,
)
from madcluster.estimator.fitted import FittedModel
from madcluster.exceptions import ParameterError
from madcluster.incidents.calibration import DEFAULT_FALSE_INCIDENTS, IncidentCalibration
from madcluster.incidents.policy import (
    KEPT_INCIDENTS,
    Incident,
    IncidentChanges,
    IncidentPolicy,
    IncidentTracker,
)
from madcluster.incidents.table import incident_frame
from madcluster.training.loop import validation_rows


def at_once_scores(model: FittedModel, X: Any) -> np.ndarray:
    """The score a stream answers each row of ``X`` with first (every part read from rows <= t):
    a stream's ``result.scores`` fed ``X`` from its first row."""
    rows = model.inputs.check_rows(X)
    own = model.own_scores(model.inputs.model_input(rows))
    return model.combination.at_once_score(rows, own)


def default_incident_policy(
    model: FittedModel, false_incidents: float | None = None
) -> IncidentPolicy:
    """The policy of ``model`` (the default shape, confirmed by final scores above
    ``threshold_``), opening at the higher of its floor (:func:`incident_floor`) and the level
    its fit calibrated for :data:`DEFAULT_FALSE_INCIDENTS` false incidents per 10,000 normal rows
    (the floor alone without a calibration, or where its rows raised too few incidents to fit the
    tail); with ``false_incidents``, at the level calibrated for that many (an in-sample
    calibration's level is optimistic: more are raised on new normal rows)."""
    calibration = model.incident_calibration
    if false_incidents is not None and calibration is None:
        raise ParameterError(
            "false_incidents needs the fit's incident calibration (a streaming model fitted on at "
            f"least {MIN_CALIBRATION_ROWS} rows after its first two windows; model files from "
            "before it lack it)"
        )
    level = incident_floor(model)
    if false_incidents is not None and calibration is not None:
        level = calibration.level_for(false_incidents)
    elif calibration is not None:
        try:
            level = max(level, calibration.level_for(DEFAULT_FALSE_INCIDENTS))
        except ParameterError:  # too few incidents on its rows to say
            pass
    if calibration is None:
        return IncidentPolicy.at(
            level, confirm_level=model.threshold, settle_rows=settle_rows(model)
        )
    return calibration.policy(level, confirm_level=model.threshold)  # the shape it measured


def incident_floor(model: FittedModel) -> float:
    """The lowest level ``model``'s incidents open at: ``threshold_``, or where the fit's at-once
    weights do not pair with its weights (the default's discord part: 2.5 in the final score of
    continuous columns, 2 at once, paired with 1) or its at-once rule is not its rule (the
    default's on few-valued columns) the threshold of its training scores with the weights they
    pair with (:meth:`~madcluster.score.combination.Combination.paired_weights`) and the at-once
    rule, kept in its calibration: the floor then stays on the at-once score's scale when the
    final score moves alone. ``threshold_`` without a calibration (fewer than
    :data:`MIN_CALIBRATION_ROWS` rows to measure it on: on few-valued columns the default's
    ``threshold_`` is on the final score's scale, lower than the at-once score's), and for
    files from before it."""
    calibration = model.incident_calibration
    if calibration is None or calibration.floor is None:
        return model.threshold
    return calibration.floor


#: Windows at a stream's start on which no incident opens: the at-once parts read up to a window
#: of rows before each, so the first rows' at-once scores run high on normal rows, and the
#: calibration (validation rows answered from two windows in) never measured them.
SETTLE_WINDOWS = 1


def settle_rows(model: FittedModel) -> int:
    """The rows at a stream's start on which the model's default policy opens nothing."""
    return SETTLE_WINDOWS * model.grid.window_size


#: Rows a calibration needs at least (fewer: none; ``false_incidents`` is refused).
MIN_CALIBRATION_ROWS = 200
#: Rows it reads at most, the last ones: its cost in a fit is their at-once scoring (2.3 s of a
#: 30 s fit on 20,000 x 6 rows, 4,000 validation rows, before this cap).
MAX_CALIBRATION_ROWS = 2000


def calibrate_incidents(
    model: FittedModel, data: np.ndarray, validation_size: float, held_out: bool = True
) -> IncidentCalibration | None:
    """The false-alarm budget of fitted ``model`` (:mod:`madcluster.incidents.calibration`),
    from the at-once scores of the end of its training rows ``data``, as a stream started two
    windows before them answers them: measured on the validation rows (the network never trains
    on them; ``held_out`` false: the fit took another validation set and trained on every row),
    and where they raise fewer than :data:`TRUSTED_INCIDENTS` incidents (or are fewer than
    :data:`MIN_CALIBRATION_ROWS`) also *in sample* on the last training rows (at most
    :data:`MAX_CALIBRATION_ROWS`): :func:`kept_calibration` picks. None for a model that does not
    stream, or with too few rows either way."""
    if not model.grid.causal:
        return None
    window, settle = model.grid.window_size, settle_rows(model)
    n_val = validation_rows(len(data), validation_size, window) if held_out else 0
    held = None
    if n_val >= MIN_CALIBRATION_ROWS:
        held = IncidentCalibration.measure(
            validation_at_once(model, data, n_val), settle_rows=settle
        )
        # trusted, or the in-sample rows would be these very rows
        if len(held.strengths) >= TRUSTED_INCIDENTS or n_val >= MAX_CALIBRATION_ROWS:
            return held
    n_rows = len(data) - 2 * window  # each read from two windows in, as the validation rows
    if n_rows < MIN_CALIBRATION_ROWS:
        return held
    inside = IncidentCalibration.measure(
        validation_at_once(model, data, n_rows), settle_rows=settle, in_sample=True
    )
    return kept_calibration(held, inside)


#: Incidents on the validation rows from which their calibration is kept as it is. Fewer (a few
#: hundred validation rows raise two or three) fit the tail poorly: on 24 small models
#: (``benchmarks/results/incidents_small_models.md``) such levels raised 318 false incidents on
#: 240,000 new normal rows, the higher of them and the in-sample level 139. Always taking the
#: higher (120 there) raised the level of models with enough validation rows too and paged the
#: held-out server series later (``benchmarks/results/incidents_policy.md``, section 8).
TRUSTED_INCIDENTS = 4


def kept_calibration(
    held: IncidentCalibration | None, inside: IncidentCalibration
) -> IncidentCalibration:
    """The held-out calibration where its rows raised :data:`TRUSTED_INCIDENTS` incidents or
    more; else of it and the in-sample one, the one whose level for
    :data:`DEFAULT_FALSE_INCIDENTS` is higher (one that fits no tail loses; neither: the held-out
    one, whose model then opens at ``threshold_``)."""
    if held is None:
        return inside
    if len(held.strengths) >= TRUSTED_INCIDENTS:
        return held
    return held if _default_level(held) >= _default_level(inside) else inside


def _default_level(calibration: IncidentCalibration) -> float:
    """Its level for :data:`DEFAULT_FALSE_INCIDENTS` (-inf where its incidents fit no tail)."""
    return calibration.level_for(DEFAULT_FALSE_INCIDENTS) if calibration.fits_tail else -math.inf


def validation_at_once(model: FittedModel, data: np.ndarray, n_val: int) -> np.ndarray:
    """The at-once scores of the last ``n_val`` (at most :data:`MAX_CALIBRATION_ROWS`) of the
    training rows ``data`` (the validation rows, or in sample any of them), as a stream started
    two windows before them answers them, each part that reads ahead read as it describes unseen
    normal rows (:meth:`~madcluster.score.parts.Part.reference_at_once`: the discord part's
    subsequences are the training rows' own, so matched to themselves they would read 0 and the
    level set from them would sit far too low)."""
    n_val = min(n_val, MAX_CALIBRATION_ROWS)
    tail = data[-(n_val + 2 * model.grid.window_size) :]
    c = model.combination
    ahead = {
        p.name: p.reference_at_once(data)[-len(tail) :]
        for p in c.parts
        if p.reads_ahead and not p.point_wise  # a smoothed point-wise part reads its own rows
    }
    own = model.own_scores(model.inputs.model_input(tail))
    return c.at_once_score(model.inputs.check_rows(tail), own, ahead)[-n_val:]


def expectation(model: FittedModel) -> str:
    """The fit's line on incidents: how many false ones to expect at their floor, and on which
    rows that was measured (in sample: optimistic)."""
    calibration = model.incident_calibration
    if calibration is None:
        why = (
            f"fewer than {MIN_CALIBRATION_ROWS} training rows after the first two windows to "
            "measure it on"
            if model.grid.causal
            else "a model that does not stream has no at-once scores"
        )
        return f"incidents: no false-alarm estimate ({why})"
    try:
        per_rows = calibration.expected(incident_floor(model))
    except ParameterError as exc:
        return f"incidents: no false-alarm estimate ({exc})"
    if calibration.in_sample:
        where = (
            f"measured in sample, on the last {calibration.rows} training rows, most of which "
            "the network trained on, as the validation rows raised too few incidents or were "
            "too few: optimistic, expect more; false_incidents=N opens them where N are "
            "expected on those rows"
        )
    else:
        where = (
            f"measured on the {calibration.rows} validation rows the network did not train on; "
            "false_incidents=N opens them where N are expected"
        )
    return (
        f"incidents: expect about {per_rows:.2g} false incidents per 10,000 normal rows at the "
        f"lowest level they open at ({where})"
    )


def raised_channels(model: FittedModel, rows: np.ndarray, names: list[str]) -> str:
    """The channels behind the last of ``rows`` (raw, checked rows: at most the last ``L`` up to
    the row that raised an incident), most first, as ``explain`` ranks them."""
    inputs = model.inputs.model_input(rows)
    groups = channel_groups(model.inputs.n_features, inputs.shape[1])
    last = len(inputs) - 1  # only the last row's drops are read: score that step alone

    def score(scaled: np.ndarray) -> np.ndarray:
        return model.own_scores(scaled, score_from=last)

    occlusion = occlusion_contributions(score, inputs, groups)[-1:]
    baseline = model.attribution.values(model)
    if baseline is not None:
        deviation = input_deviation(inputs[-1:], groups)
        occlusion = standardised_contributions(occlusion, deviation, baseline)
    return top_channels(occlusion, names)[0]


def channel_names(model: FittedModel) -> list[str]:
    """The training columns' names (their numbers for an unnamed array)."""
    names = model.inputs.feature_names
    if names is None:
        return [str(j) for j in range(model.inputs.n_features)]
    return [str(n) for n in names]


class StreamIncidents:
    """A stream's incidents: the tracker, and the last ``L`` rows it names channels from."""

    def __init__(
        self, model: FittedModel, policy: IncidentPolicy, keep: int | None = KEPT_INCIDENTS
    ) -> None:
        self.model = model
        self.tracker = IncidentTracker(policy, keep)
        self._recent = np.empty((0, model.inputs.n_features), dtype=np.float32)
        self._names = channel_names(model)

    def update(
        self,
        rows: np.ndarray,
        scores: np.ndarray,
        final_steps: np.ndarray,
        final_scores: np.ndarray,
    ) -> IncidentChanges:
        """Feed new ``rows`` (checked, as the scorer took them) with their at-once ``scores``,
        then the final scores that came with them."""
        first = self.tracker.step
        history = np.concatenate([self._recent, rows])
        offset = first - len(self._recent)  # the stream step of history's first row
        changes = self.tracker.update(scores)
        opened = []
        for incident in changes.opened:
            end = incident.raised - offset + 1
            span = history[max(0, end - self.model.grid.window_size) : end]
            named = self.tracker.describe(
                incident.id, raised_channels(self.model, span, self._names)
            )
            opened.append(named if named is not None else incident)
        self._recent = history[-self.model.grid.window_size :].copy()  # not the whole chunk
        confirmed = self.tracker.finals(final_steps, final_scores).confirmed
        closed = tuple(self._latest(i) for i in changes.closed)
        return IncidentChanges(tuple(opened), closed, changes.confirmed + confirmed)

    @property
    def recent(self) -> np.ndarray:
        """The last ``L`` rows (what an incident raised next names its channels from)."""
        return self._recent

    def state(self) -> dict:
        """The policy and the tracker as JSON-ready values (with :attr:`recent`, a stream's state
        file keeps the incidents across restarts)."""
        return {"policy": asdict(self.tracker.policy), "tracker": self.tracker.state()}

    def restore(
        self, state: dict | None, recent: np.ndarray | None, step: int, final_from: int
    ) -> None:
        """Go on from a :meth:`state` (None: none kept; start at ``step``, finals expected from
        ``final_from``), refused unless it is at ``step``."""
        if state is None:
            tracker = IncidentTracker(self.tracker.policy, self.tracker.keep)
            tracker.step, tracker.final_through = step, final_from
        else:
            policy = IncidentPolicy(**state["policy"])
            tracker = IncidentTracker.from_state(policy, state["tracker"], self.tracker.keep)
        if tracker.step != step:
            raise ParameterError(f"incidents at step {tracker.step}, the stream at {step}")
        if recent is not None:
            recent = np.asarray(recent, dtype=np.float32)
            if recent.ndim != 2 or recent.shape[1] != self.model.inputs.n_features:
                raise ParameterError(f"incident rows of shape {recent.shape}")
            self._recent = recent
        self.tracker = tracker

    def _latest(self, incident: Incident) -> Incident:
        return next((i for i in self.tracker.incidents if i.id == incident.id), incident)

    @property
    def incidents(self) -> list[Incident]:
        return self.tracker.incidents


def series_incidents(model: FittedModel, X: Any, policy: IncidentPolicy) -> list[Incident]:
    """The incidents a stream fed ``X`` row by row raises, with every final score in (the
    stream's last rows confirmed as its ``pending`` scores would)."""
    rows = model.inputs.check_rows(X)
    stream = StreamIncidents(model, policy, keep=None)
    none = np.empty(0)
    stream.update(rows, at_once_scores(model, rows), none.astype(np.int64), none)
    final = model.decision_function(rows)
    stream.tracker.finals(np.arange(len(final)), final)
    return stream.incidents


def incident_table(model: FittedModel, X: Any, false_incidents: float | None = None) -> Any:
    """``MADCluster.incidents``: :func:`series_incidents` under the model's default policy, as a
    DataFrame (:func:`~madcluster.incidents.table.incident_frame`)."""
    policy = default_incident_policy(model, false_incidents)
    return incident_frame(series_incidents(model, X, policy))


__all__ = [
    "StreamIncidents",
    "at_once_scores",
    "calibrate_incidents",
    "default_incident_policy",
    "expectation",
    "incident_floor",
    "incident_table",
    "raised_channels",
    "series_incidents",
    "validation_at_once",
]
