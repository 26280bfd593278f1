"""One incident as a value (its first hot row, the row that raised it, its peak, its end, the
channels behind it, whether the final scores confirmed it), what one update of a tracker
changed, and an incident as JSON-ready values.

Why a module of its own: the table, the estimator, the stream state and the service's answers
read incidents without the policy's state machine (:mod:`madcluster.incidents.policy`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Incident:
    """One incident: ``start`` (its first hot row), ``raised`` (the row that opened it), ``peak`` /
    ``peak_score`` (its highest at-once score), ``end`` (None while open), ``channels`` (the
    channels behind it, most first, ``;``-joined; filled by the estimator), ``confirmed``."""

    id: int
    start: int
    raised: int
    peak: int
    peak_score: float
    end: int | None = None
    channels: str = ""
    confirmed: bool | None = None

    @property
    def open(self) -> bool:
        return self.end is None

    def shifted(self, offset: int) -> Incident:
        """The incident with its steps moved by ``offset`` (a served stream's numbering)."""
        if not offset:
            return self
        end = None if self.end is None else self.end + offset
        moved = (self.start + offset, self.raised + offset, self.peak + offset)
        return replace(self, start=moved[0], raised=moved[1], peak=moved[2], end=end)


@dataclass(frozen=True)
class IncidentChanges:
    """What one update did: incidents opened, closed and decided (``confirmed`` became known)."""

    opened: tuple[Incident, ...] = ()
    closed: tuple[Incident, ...] = ()
    confirmed: tuple[Incident, ...] = ()


def incident_record(incident: Incident) -> dict:
    """An incident as JSON-ready values."""
    return {
        "id": incident.id,
        "start": incident.start,
        "raised": incident.raised,
        "peak": incident.peak,
        "peak_score": incident.peak_score,
        "end": incident.end,
        "channels": incident.channels,
        "confirmed": incident.confirmed,
    }
