"""Model files as older madcluster versions wrote them, for the tests of the upgrade chain."""

from __future__ import annotations

import inspect
from typing import Any


def as_format_3(config: dict[str, Any]) -> dict[str, Any]:
    """A format 4 model file's ``config.json`` as format 3 would have held the same network, in
    place: a D-RNN's size written out (format 3 files that left it to the default had 64 units,
    so a file of today's default 32 must say 32)."""
    params = config["params"]
    if params.get("embedder") == "drnn":
        from madcluster.embedders.drnn import DilatedRNN

        embedder_params = dict(params.get("embedder_params") or {})
        default = inspect.signature(DilatedRNN).parameters["hidden_size"].default
        params["embedder_params"] = {"hidden_size": default, **embedder_params}
    config["format_version"] = 3
    return config


def as_format_2(config: dict[str, Any]) -> dict[str, Any]:
    """A format 4 model file's ``config.json`` as format 2 wrote it, in place (through
    :func:`as_format_3`): the parts' statistics in the head's ``score_stats_`` under format 2's
    keys (``before_input_terms``, ``input_term/<name>``, ``/at_once``), the weights and widths as
    ``part_weights_`` and ``part_smoothing_``."""
    as_format_3(config)
    fitted = config["fitted"]
    record = fitted.pop("combination")

    def key(name: str) -> str:
        return "before_input_terms" if name == "own" else f"input_term/{name}"

    stats = fitted["score_stats_"]
    stats.update({key(n): v for n, v in record["stats"].items()})
    stats.update({key(n) + "/at_once": v for n, v in record["at_once_stats"].items()})
    fitted["part_weights_"], fitted["part_smoothing_"] = record["weights"], record["smoothing"]
    config["format_version"] = 2
    return config
