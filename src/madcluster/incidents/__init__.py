"""Incidents: what an on-call engineer is paged with, made from a stream's at-once scores.

A pure room (numpy only, nothing from the estimator): the policy and its state machine
(:mod:`~madcluster.incidents.policy`), the false-alarm budget calibrated on normal rows
(:mod:`~madcluster.incidents.calibration`) and the table every output writes
(:mod:`~madcluster.incidents.table`). The estimator feeds it scores: ``MADCluster.incidents`` and
``StreamScorer.update``.
"""

from madcluster.incidents.calibration import IncidentCalibration
from madcluster.incidents.policy import Incident, IncidentPolicy, IncidentTracker, track

__all__ = ["Incident", "IncidentCalibration", "IncidentPolicy", "IncidentTracker", "track"]
