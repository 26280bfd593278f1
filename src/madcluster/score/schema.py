"""The combination's fitted state as a file writes it: one record (JSON: the parts, their
statistics by name, weights, smoothing and rule) and the parts' arrays under
``input_terms/<name>/``, the same in model files (format 3) and the ONNX file's metadata
(version 2); a stream state keeps each part's stream state under ``terms/<name>/``.

Format 2 model files (and ONNX metadata version 1) kept the parts' statistics in the head's
``score_stats_`` table under their own keys (``before_input_terms`` for the own score,
``input_term/<name>`` for a term, ``/at_once`` added for a causal reading); :func:`split_stats`
reads them into the one key convention, a part's name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from madcluster.score.combination import FILE_RULE, Combination, Stats
from madcluster.score.parts import OWN, part_class, parts_from_arrays, parts_to_arrays

_OWN_KEY = "before_input_terms"  # format 2's key of the own part
_TERM_PREFIX = "input_term/"  # format 2's key prefix of a term
_AT_ONCE = "/at_once"  # format 2's key suffix of a causal reading


def _stats(value: Any) -> Stats:
    """A part's statistics as written: mean and deviation, and a rule's further values."""
    values = tuple(float(v) for v in value)
    if len(values) < 2:
        raise ValueError(f"a part's statistics are at least a mean and a deviation, got {value!r}")
    return values


def split_stats(
    table: Mapping[str, Any],
) -> tuple[dict[str, Stats], dict[str, Stats], dict[str, Stats]]:
    """A format 2 ``score_stats_`` table as (the head's statistics, the parts' final ones, the
    parts' causal ones), each keyed by name."""
    head: dict[str, Stats] = {}
    final: dict[str, Stats] = {}
    at_once: dict[str, Stats] = {}
    for key, value in table.items():
        base, causal = (key[: -len(_AT_ONCE)], True) if key.endswith(_AT_ONCE) else (key, False)
        if base == _OWN_KEY:
            name = OWN
        elif base.startswith(_TERM_PREFIX):
            name = base[len(_TERM_PREFIX) :]
        else:
            head[key] = _stats(value)
            continue
        (at_once if causal else final)[name] = _stats(value)
    return head, final, at_once


def combination_record(combination: Combination) -> dict[str, Any]:
    """The combination's fitted scalars as JSON (its parts' arrays: :func:`combination_arrays`)."""
    return {
        "parts": combination.names,
        "stats": {n: list(s) for n, s in combination.stats.items()},
        "at_once_stats": {n: list(s) for n, s in combination.at_once_stats.items()},
        "weights": dict(combination.weights),
        "smoothing": dict(combination.smoothing),
        "rule": combination.rule,
        "scale_rows": combination.scale_rows,
        **({"evidence": combination.evidence} if combination.evidence else {}),
        **(
            {"at_once_widths": dict(combination.at_once_widths)}
            if combination.at_once_widths
            else {}
        ),
        **(
            {"at_once_weights": dict(combination.at_once_weights)}
            if combination.at_once_weights
            else {}
        ),
    }


def combination_arrays(combination: Combination) -> dict[str, np.ndarray]:
    """The parts' fitted arrays, each under ``input_terms/<name>/``."""
    return parts_to_arrays(combination.terms)


def combination_from(record: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> Combination:
    """The combination :func:`combination_record` and :func:`combination_arrays` wrote."""
    names = tuple(record["parts"])
    if len(names) <= 1:
        return Combination.own_alone()
    terms = parts_from_arrays(tuple(n for n in names if n != OWN), dict(arrays))
    return Combination(
        (part_class(OWN)(), *terms),
        {n: _stats(s) for n, s in record["stats"].items()},
        {n: _stats(s) for n, s in record.get("at_once_stats", {}).items()},
        {n: float(w) for n, w in record.get("weights", {}).items()},
        {n: int(w) for n, w in record.get("smoothing", {}).items()},
        str(record.get("rule", FILE_RULE)),
        int(record.get("scale_rows", 0)),  # files from before series scales: none
        dict(record.get("evidence", {})),  # files from before per-series evidence: none
        # files from before: the centred block cut at t
        {n: int(w) for n, w in record.get("at_once_widths", {}).items()},
        # files from before: each part's weight times its share in AT_ONCE_SHARES
        {n: float(w) for n, w in record.get("at_once_weights", {}).items()},
    )


def format2_record(
    term_names: tuple[str, ...],
    score_stats: Mapping[str, Any],
    weights: Mapping[str, Any],
    smoothing: Mapping[str, Any],
    arrays: Mapping[str, np.ndarray],
) -> tuple[dict[str, Stats], dict[str, Any]]:
    """A format 2 model's head statistics and its combination record (the terms it fitted:
    those of ``term_names`` with arrays; none: the own score alone)."""
    head, final, at_once = split_stats(score_stats)
    fitted = [n for n in term_names if any(k.startswith(f"input_terms/{n}/") for k in arrays)]
    record = {
        "parts": [OWN, *fitted],
        "stats": final,
        "at_once_stats": at_once,
        "weights": dict(weights),
        "smoothing": dict(smoothing),
    }
    return head, record


__all__ = [
    "combination_arrays",
    "combination_from",
    "combination_record",
    "format2_record",
    "split_stats",
]
