"""The incident policy: at-once scores in, incidents out, one row at a time.

A person is paged by incidents, not by rows: a flag per row above a threshold pages again and again
for one anomaly, and pages for every lone normal row that crosses it. The policy, as a state
machine (:class:`IncidentTracker`, row in -> opened / closed incidents out):

* **opens** when ``k`` of the last ``n`` at-once scores are above ``open_level`` (one hot row
  never pages), or at once on one score above ``spike_level`` (a spike one row long, which ``k``
  rows would never see). The incident starts at the first of those hot rows and is *raised* on
  the row that made ``k`` (or the spike);
* never opens on a stream's first ``settle_rows`` rows: its at-once score has no history there
  and runs high on normal rows, where no calibration measured it;
* **closes** with hysteresis: after ``close_rows`` rows in a row below ``close_level`` (lower than
  ``open_level``, so a score hovering around the threshold neither closes nor reopens it); its
  ``end`` is the last row at or above ``close_level``. Two bursts fewer than ``close_rows`` rows
  apart are therefore one incident: that is how close incidents merge;
* keeps its **peak** (the step of its highest at-once score, and that score);
* is **confirmed** once the final scores arrive (a stream's come ``L`` rows later): True as soon
  as a final score in ``[start, end]`` is above ``confirm_level``, False once every final score
  through ``end`` arrived and none was, None until then.

:func:`track` is the batch reading, exactly the tracker fed row by row (tested). The levels are
absolute; :meth:`IncidentPolicy.at` builds one from an open level and the default shape
(``docs/incidents.md``: how the defaults were chosen, ``benchmarks/incidents.py``).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

import numpy as np

from madcluster.exceptions import ParameterError
from madcluster.incidents.incident import Incident, IncidentChanges, incident_record

#: The default shape, chosen on the development families (benchmarks/results/incidents.md).
DEFAULT_K = 3
DEFAULT_N = 5
DEFAULT_CLOSE_ROWS = 20
DEFAULT_CLOSE_FRACTION = 0.8
DEFAULT_SPIKE_FACTOR: float | None = 3.0  # a spike opens at this multiple of the open level
#: Incidents a tracker keeps (open ones and the latest closed ones); older ones are forgotten.
KEPT_INCIDENTS = 1000


@dataclass(frozen=True)
class IncidentPolicy:
    """When an incident opens, closes and is confirmed; see the module docstring."""

    open_level: float
    close_level: float
    k: int = DEFAULT_K
    n: int = DEFAULT_N
    close_rows: int = DEFAULT_CLOSE_ROWS
    confirm_level: float | None = None  # None: open_level
    settle_rows: int = 0  # a stream's first rows, which never open
    spike_level: float | None = None  # one score above it opens (None: k of n only)

    def __post_init__(self) -> None:
        for name in ("open_level", "close_level"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ParameterError(f"{name} must be a finite number, got {value!r}")
        for name, least in (("k", 1), ("n", 1), ("close_rows", 1), ("settle_rows", 0)):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < least:
                raise ParameterError(f"{name} must be an integer >= {least}, got {value!r}")
        spike = self.spike_level
        if spike is not None and not (
            isinstance(spike, (int, float)) and math.isfinite(spike) and spike >= self.open_level
        ):
            raise ParameterError(
                f"spike_level must be None or a number >= open_level ({self.open_level}), "
                f"got {spike!r}"
            )
        if self.k > self.n:
            raise ParameterError(f"k ({self.k}) must be at most n ({self.n}): k of the last n")
        if self.close_level > self.open_level:
            raise ParameterError(
                f"close_level ({self.close_level}) must be at most open_level ({self.open_level})"
            )

    @classmethod
    def at(
        cls,
        open_level: float,
        *,
        k: int = DEFAULT_K,
        n: int = DEFAULT_N,
        close_rows: int = DEFAULT_CLOSE_ROWS,
        close_fraction: float = DEFAULT_CLOSE_FRACTION,
        confirm_level: float | None = None,
        settle_rows: int = 0,
        spike_factor: float | None = DEFAULT_SPIKE_FACTOR,
    ) -> IncidentPolicy:
        """The policy opening at ``open_level``, closing below ``close_fraction`` of it (the
        default rule's scores are >= 0; a level <= 0 closes at itself), and on one score above
        ``spike_factor`` times it (None: never; at least 1; a level <= 0 spikes at itself)."""
        if not 0.0 <= close_fraction <= 1.0:
            raise ParameterError(f"close_fraction must be in [0, 1], got {close_fraction!r}")
        if spike_factor is not None and not (
            isinstance(spike_factor, (int, float))
            and not isinstance(spike_factor, bool)
            and 1.0 <= spike_factor < math.inf
        ):
            raise ParameterError(f"spike_factor must be None or >= 1, got {spike_factor!r}")
        level = float(open_level)
        close = close_fraction * level if level > 0 else level
        spike = None if spike_factor is None else spike_factor * level if level > 0 else level
        return cls(level, close, k, n, close_rows, confirm_level, settle_rows, spike)

    @property
    def confirming(self) -> float:
        """The level a final score must pass to confirm an incident."""
        return self.open_level if self.confirm_level is None else float(self.confirm_level)


@dataclass
class _Ring:
    """The last ``n`` rows: step, score, above the open level."""

    n: int
    rows: deque = field(default_factory=deque)

    def push(self, step: int, score: float, hot: bool) -> None:
        self.rows.append((step, score, hot))
        if len(self.rows) > self.n:
            self.rows.popleft()

    def hot_count(self) -> int:
        return sum(hot for _, _, hot in self.rows)


class IncidentTracker:
    """The policy's state machine (see the module docstring): :meth:`update` takes at-once scores,
    :meth:`finals` final ones; both return :class:`IncidentChanges`. Keeps the open incident and
    the latest ``keep`` incidents (None: all)."""

    def __init__(self, policy: IncidentPolicy, keep: int | None = KEPT_INCIDENTS) -> None:
        self.policy = policy
        self.keep = keep
        self.step = 0  # the next at-once step
        self.final_through = 0  # the next final step
        self._ring = _Ring(policy.n)
        self._open: Incident | None = None
        self._last_active = -1  # the open incident's last row at or above close_level
        self._quiet = 0  # rows in a row below close_level
        self._incidents: deque[Incident] = deque(maxlen=keep)
        self._recent_final_hot: deque[int] = deque()  # hot final steps a new incident may cover
        self._pending_hot: list[int] = []  # hot final steps after the open incident's last row
        self._decided: list[Incident] = []  # incidents whose confirmed became known
        self._next_id = 0

    @property
    def incidents(self) -> list[Incident]:
        """The incidents kept, oldest first (the open one last)."""
        return list(self._incidents)

    @property
    def open_incident(self) -> Incident | None:
        return self._open

    def update(self, scores: Iterable[float]) -> IncidentChanges:
        """Feed the at-once scores of the next rows, in order."""
        opened: list[Incident] = []
        closed: list[Incident] = []
        for score in np.asarray(scores, dtype=np.float64).reshape(-1).tolist():
            event = self._push(score)
            if event is not None:
                (opened if event.open else closed).append(event)
        return IncidentChanges(tuple(opened), tuple(closed), self._drain())

    def _drain(self) -> tuple[Incident, ...]:
        decided = {i.id: i for i in self._decided}  # the latest of each
        self._decided = []
        return tuple(decided.values())

    def _push(self, score: float) -> Incident | None:
        policy, step = self.policy, self.step
        self.step += 1
        if not math.isfinite(score):
            raise ParameterError(f"the at-once score of step {step} is {score}, not a number")
        settled = step >= policy.settle_rows
        self._ring.push(step, score, settled and score > policy.open_level)
        while self._recent_final_hot and self._recent_final_hot[0] < step - policy.n:
            self._recent_final_hot.popleft()
        if self._open is not None:
            return self._continue(step, score)
        spike = settled and policy.spike_level is not None and score > policy.spike_level
        if self._ring.hot_count() < policy.k and not spike:
            return None
        rows = list(self._ring.rows)
        first = next(i for i, (_, _, hot) in enumerate(rows) if hot)
        peak = max(rows[first:], key=lambda r: r[1])  # the first of equal scores
        start = rows[first][0]
        hot_final = any(start <= s <= step for s in self._recent_final_hot)
        incident = Incident(
            self._next_id, start, step, peak[0], peak[1], confirmed=True if hot_final else None
        )
        self._next_id += 1
        self._open, self._last_active, self._quiet = incident, step, 0
        self._incidents.append(incident)
        if hot_final:
            self._decided.append(incident)
        return incident

    def _continue(self, step: int, score: float) -> Incident | None:
        """An open incident takes the row: a new peak, or a row towards its close."""
        incident = self._open
        assert incident is not None
        if score > incident.peak_score:
            incident = self._replace(incident, peak=step, peak_score=score)
        if score >= self.policy.close_level:
            self._last_active, self._quiet = step, 0
            if incident.confirmed is None and any(s <= step for s in self._pending_hot):
                incident = self._decide(incident, True)
            self._open = incident
            return None
        self._quiet += 1
        if self._quiet < self.policy.close_rows:
            self._open = incident
            return None
        incident = self._replace(incident, end=self._last_active)
        if incident.confirmed is None and self.final_through > self._last_active:
            incident = self._decide(incident, False)  # every final through its end, none above
        self._open, self._pending_hot = None, []
        self._ring = _Ring(self.policy.n)  # a new incident starts after this one ended
        return incident

    def finals(self, steps: np.ndarray, scores: np.ndarray) -> IncidentChanges:
        """Feed final scores of ``steps`` (consecutive, from the first not final yet, at most up
        to the last at-once step fed); returns the incidents whose ``confirmed`` became known."""
        steps = np.asarray(steps, dtype=np.int64).reshape(-1)
        scores = np.asarray(scores, dtype=np.float64).reshape(-1)
        if len(steps) != len(scores):
            raise ParameterError(f"{len(steps)} final steps but {len(scores)} final scores")
        if not len(steps):
            return IncidentChanges()
        expected = np.arange(self.final_through, self.final_through + len(steps))
        if not np.array_equal(steps, expected) or steps[-1] >= self.step:
            raise ParameterError(
                f"final scores must come in order from step {self.final_through} and for steps "
                f"already fed (up to {self.step - 1}); got steps {steps[0]}..{steps[-1]}"
            )
        self.final_through = int(steps[-1]) + 1
        hot = steps[scores > self.policy.confirming]
        self._recent_final_hot.extend(int(s) for s in hot if s >= self.step - 1 - self.policy.n)
        for incident in [i for i in self._incidents if i.confirmed is None]:
            last = self._last_active if incident.end is None else incident.end
            if np.any((hot >= incident.start) & (hot <= last)):
                self._decide(incident, True)
            elif incident.end is None:  # hot after its last row so far: counts if it goes on
                self._pending_hot.extend(int(s) for s in hot if s > last)
            elif self.final_through > incident.end:
                self._decide(incident, False)
        return IncidentChanges(confirmed=self._drain())

    def _decide(self, incident: Incident, confirmed: bool) -> Incident:
        decided = self._replace(incident, confirmed=confirmed)
        self._decided.append(decided)
        return decided

    def describe(self, incident_id: int, channels: str) -> Incident | None:
        """Set an incident's ``channels`` (the estimator names them once it is raised)."""
        for incident in self._incidents:
            if incident.id == incident_id:
                return self._replace(incident, channels=channels)
        return None

    def _replace(self, incident: Incident, **changes: object) -> Incident:
        """``incident`` with ``changes``, in the kept list and as the open one."""
        new = replace(incident, **changes)  # type: ignore[arg-type]
        for i, kept in enumerate(self._incidents):
            if kept.id == incident.id:
                self._incidents[i] = new
        if self._open is not None and self._open.id == incident.id:
            self._open = new
        return new

    # ------------------------------------------------------------------ state
    def state(self) -> dict:
        """The tracker as JSON-ready values (a stream's state file keeps it across restarts)."""
        return {
            "step": self.step,
            "final_through": self.final_through,
            "ring": [list(r) for r in self._ring.rows],
            "open": None if self._open is None else self._open.id,
            "last_active": self._last_active,
            "quiet": self._quiet,
            "incidents": [incident_record(i) for i in self._incidents],
            "recent_final_hot": list(self._recent_final_hot),
            "pending_hot": list(self._pending_hot),
            "next_id": self._next_id,
        }

    @classmethod
    def from_state(
        cls, policy: IncidentPolicy, state: dict, keep: int | None = KEPT_INCIDENTS
    ) -> IncidentTracker:
        """The tracker :meth:`state` described, under ``policy``."""
        tracker = cls(policy, keep)
        try:
            tracker.step, tracker.final_through = int(state["step"]), int(state["final_through"])
            for step, score, hot in state["ring"]:
                tracker._ring.push(int(step), float(score), bool(hot))
            tracker._incidents.extend(Incident(**record) for record in state["incidents"])
            tracker._last_active, tracker._quiet = int(state["last_active"]), int(state["quiet"])
            tracker._recent_final_hot.extend(int(s) for s in state["recent_final_hot"])
            tracker._pending_hot = [int(s) for s in state["pending_hot"]]
            tracker._next_id = int(state["next_id"])
            open_id = state["open"]
        except (KeyError, TypeError, ValueError) as exc:
            raise ParameterError(f"not an incident tracker's state: {exc!r}") from None
        if open_id is not None:
            tracker._open = next((i for i in tracker._incidents if i.id == open_id), None)
        return tracker


def track(
    scores: np.ndarray, policy: IncidentPolicy, final_scores: np.ndarray | None = None
) -> list[Incident]:
    """The incidents of a whole series: the tracker fed ``scores`` (at once) row by row, then the
    ``final_scores`` of every row (None: no confirmation)."""
    tracker = IncidentTracker(policy, keep=None)
    tracker.update(scores)
    if final_scores is not None:
        final_scores = np.asarray(final_scores, dtype=np.float64).reshape(-1)
        tracker.finals(np.arange(len(final_scores)), final_scores)
    return tracker.incidents


__all__ = [
    "DEFAULT_CLOSE_FRACTION",
    "DEFAULT_CLOSE_ROWS",
    "DEFAULT_K",
    "DEFAULT_N",
    "DEFAULT_SPIKE_FACTOR",
    "KEPT_INCIDENTS",
    "Incident",
    "IncidentChanges",
    "IncidentPolicy",
    "IncidentTracker",
    "incident_record",
    "track",
]
