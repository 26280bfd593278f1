"""The score's parameters: which parts a model adds to its own score (``input_terms``) and their
weights (``part_weights``), checked against the registry of parts
(:data:`~madcluster.score.parts.PART_KINDS`).

Why the default adds parts: MADCluster's head scores features of a bounded network (a GRU
saturates), so it misses what grows in the input itself; two cheap parts fitted on the training
rows, window KMeans (:mod:`madcluster.score.window_kmeans`) and the ridge next-step error
(:mod:`madcluster.score.autoregressive`), close most of that gap without touching the network;
a discord part (:mod:`madcluster.score.discord`) sees shapes that none of them sees.
How the parts combine: :mod:`madcluster.score.combination`.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from madcluster.exceptions import ParameterError
from madcluster.score.parts import OWN, term_names

INPUT_TERMS = term_names()  # the registered kinds when the CLI reads them
#: The discord part joined the default in issue 34: chosen on every development family, not on
#: one set's mean (``benchmarks/results/parts/families.md``).
DEFAULT_INPUT_TERMS = ("kmeans", "ar", "discord")
#: Chosen on the development set (docs/ and the parts study): own 0.5, kmeans 1.5, ar 1, discord
#: 0.5 (of 0.5 / 1 / 1.5, the best worst family); a part not named here weighs 1.
DEFAULT_PART_WEIGHTS: dict[str, float] = {OWN: 0.5, "kmeans": 1.5, "ar": 1.0, "discord": 0.5}


def check_part_weights(value: object) -> dict[str, float]:
    """``value`` (None: :data:`DEFAULT_PART_WEIGHTS`; a mapping of some parts' names to weights
    >= 0, the others keeping their default) as a full weight table, or a ``ParameterError``."""
    if value is None:
        return dict(DEFAULT_PART_WEIGHTS)
    known = (OWN, *term_names())
    if not isinstance(value, dict):
        raise ParameterError(
            f"part_weights must be None or a dict of weights by part ({', '.join(known)}), got "
            f"{value!r}"
        )
    unknown = [k for k in value if k not in known]
    if unknown:
        raise ParameterError(
            f"part_weights: unknown part(s) {unknown}; the parts are {', '.join(known)}"
        )
    bad = {
        k: v
        for k, v in value.items()
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v) or v < 0
    }
    if bad:
        raise ParameterError(f"part_weights must be finite numbers >= 0, got {bad}")
    weights = {**DEFAULT_PART_WEIGHTS, **{k: float(v) for k, v in value.items()}}
    if not any(weights.values()):
        raise ParameterError("part_weights: every weight is 0, the score would be 0 everywhere")
    return weights


def check_part_rule(value: object) -> str:
    """``value`` (None: the default rule) as the name of a combination rule, or a
    ``ParameterError``."""
    from madcluster.score.combination import DEFAULT_RULE, RULES

    if value is None:
        return DEFAULT_RULE
    if not isinstance(value, str) or value not in RULES:
        raise ParameterError(
            f"part_rule must be one of {', '.join(RULES)} (or None: {DEFAULT_RULE}), got {value!r}"
        )
    return value


def check_input_terms(value: object) -> tuple[str, ...]:
    """``value`` (None, a name or names) as a tuple of registered part names, or a
    ``ParameterError``."""
    if value is None:
        return ()
    known = term_names()
    names = (value,) if isinstance(value, str) else value
    if not isinstance(names, Iterable) or not all(isinstance(n, str) for n in names):
        raise ParameterError(
            f"input_terms must be None or names among {', '.join(known)}, got {value!r}"
        )
    names = tuple(names)
    unknown = [n for n in names if n not in known]
    if unknown or len(set(names)) != len(names):
        raise ParameterError(
            f"input_terms {value!r}: choose distinct names among {', '.join(known)} (or None: off)"
        )
    return names


__all__ = [
    "DEFAULT_INPUT_TERMS",
    "DEFAULT_PART_WEIGHTS",
    "INPUT_TERMS",
    "check_input_terms",
    "check_part_rule",
    "check_part_weights",
]
