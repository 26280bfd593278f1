"""Fleets: one model per entity (server, machine, channel), one file per entity, fitted in parallel.

::

    from madcluster.fleet import fit_fleet, score_fleet
    fit_fleet("servers/", "models/", params={"window_size": 50, "epochs": 5}, executor="ray")
    score_fleet("models/", "servers-today/", "scores/")

``servers/`` holds one CSV / Parquet / ``.npy`` file per entity; the entity is the file name
without its ending. ``fit_fleet`` writes ``models/<entity>.mcz``; ``score_fleet`` writes
``scores/<entity>.scores.csv`` and ``.scores.png``, as ``madcluster score`` does for one file
(timestamp column, ``top_channels``, labels and metrics with ``label_column``).

Each entity is one job of an executor (:mod:`madcluster.parallel.executors`): in this process,
or on Ray with one CPU and one torch thread per model. Workers read their input file themselves
(on a cluster: shared storage) and send the fitted model or the scores back, and this process
writes every output file atomically, so outputs need no shared storage. A file that cannot be read
or a fit that fails is reported for its entity, and the other entities finish.
"""

from madcluster.fleet.entities import FleetResult, entity_files, entity_name
from madcluster.fleet.execution import fit_fleet, score_fleet

__all__ = [
    "FleetResult",
    "entity_files",
    "entity_name",
    "fit_fleet",
    "score_fleet",
]
