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
from madcluster.score.parts import OWN, part_class, term_names
from madcluster.score.window_kmeans import continuous_share

INPUT_TERMS = term_names()  # the registered kinds when the CLI reads them
#: The discord part is in the default because it held on every development family, not on
#: one set's mean (``benchmarks/results/parts/families.md``).
#: ``cross`` adds to the at-once score alone (what incidents page on; final scores leave it out):
#: with it the incident rule holds on every development family with every series' median delay
#: at most 10 rows (``benchmarks/results/incidents_policy.md``, section 6).
DEFAULT_INPUT_TERMS = ("kmeans", "ar", "discord", "cross")
#: The at-once-only part's weight at both ends, chosen with the incident policy's shape on the
#: development families (``benchmarks/results/incidents_policy.md``, section 6).
CROSS_WEIGHT = 1.5
#: The default weights of a series whose training columns all have few values (command and
#: status channels: MSL and SMAP hold one telemetry channel beside dozens of them) ...
DISCRETE_PART_WEIGHTS: dict[str, float] = {
    OWN: 0.5,
    "kmeans": 1.5,
    "ar": 1.0,
    "discord": 0.5,
    "cross": CROSS_WEIGHT,
}
#: ... and of one whose columns all have many (sensors, server metrics): every part alike but the
#: discord part, 2.5. Chosen with each of 15 development families (ten generated, TSB-AD's MSL,
#: SMAP and SMD, the demo, the suite) left out in turn: the plain average took the worst family's
#: shortfall against its best single part from -.193 (the former end: own .5, kmeans 1.5, ar 2,
#: discord 1.5) to -.114 (``benchmarks/results/parts/evidence.md``, table 4); the exact discord
#: part at 2.5 takes it to -.049 (table 12: chosen on 14 of 15 families left out, among 1 to 3),
#: the 46 TSB-AD series, mostly few-valued, unchanged. Between the two ends the weights follow
#: the share of columns with more than ``FEW_LEVELS`` training values, linearly. A part not
#: named here weighs 1.
CONTINUOUS_PART_WEIGHTS: dict[str, float] = {
    OWN: 1.0,
    "kmeans": 1.0,
    "ar": 1.0,
    "discord": 2.5,
    "cross": CROSS_WEIGHT,
}
#: The at-once weights of the parts read ahead, where not their weight times their share in
#: :data:`~madcluster.score.combination.AT_ONCE_SHARES`, at the two ends (between them linearly,
#: as the weights): the discord part's causal reading (its subsequence ending at the step) keeps
#: the at-once weight it had before its final weight rose to 2.5 (twice .5 and 1). At 2.5 x 2 the
#: at-once ROC-AUC of the server series fell .932 -> .899 (held-out server-7) while the final one
#: rose (table 12).
DISCRETE_AT_ONCE_WEIGHTS: dict[str, float] = {"discord": 1.0}
CONTINUOUS_AT_ONCE_WEIGHTS: dict[str, float] = {"discord": 2.0}
#: The two tables as help texts give them.
DEFAULT_WEIGHTS_TEXT = "from {} to {}".format(
    *(
        " ".join(f"{k}={v:g}" for k, v in w.items())
        for w in (DISCRETE_PART_WEIGHTS, CONTINUOUS_PART_WEIGHTS)
    )
)


def default_at_once_weights(share: float) -> dict[str, float]:
    """The at-once weights of a series ``share`` of whose columns are continuous, where the fit
    sets them (:data:`DISCRETE_AT_ONCE_WEIGHTS` at 0, :data:`CONTINUOUS_AT_ONCE_WEIGHTS` at 1)."""
    return _between(DISCRETE_AT_ONCE_WEIGHTS, CONTINUOUS_AT_ONCE_WEIGHTS, share)


def _between(low: dict[str, float], high: dict[str, float], share: float) -> dict[str, float]:
    """Each weight of the two ends' tables, linear in the share of continuous columns."""
    return {name: w + share * (high[name] - w) for name, w in low.items()}


def at_once_weights(value: object, share: float) -> dict[str, float]:
    """The at-once weights a fit with ``part_weights=value`` records: the tables'
    (:func:`default_at_once_weights`), but for a part whose weight the user gave (its at-once
    weight then follows it, times its share)."""
    given = value if isinstance(value, dict) else {}
    return {k: v for k, v in default_at_once_weights(share).items() if k not in given}


def default_part_weights(share: float) -> dict[str, float]:
    """The default weights of a series ``share`` of whose columns are continuous (module
    constants): :data:`DISCRETE_PART_WEIGHTS` at 0, :data:`CONTINUOUS_PART_WEIGHTS` at 1."""
    return _between(DISCRETE_PART_WEIGHTS, CONTINUOUS_PART_WEIGHTS, share)


#: The named ways a fit weighs the parts (``part_weights``): ``"columns"``, by the share of
#: continuous training columns (:func:`default_part_weights`); ``"evidence"``, by what each part
#: shows on held-out training rows with anomalies injected (:mod:`madcluster.score.evidence`; by
#: columns where the rows are too few to hold any out).
WEIGHT_RULES = ("columns", "evidence")
#: What ``part_weights=None`` means. Evidence did not beat the weights by columns with the
#: development families left out in turn (``benchmarks/results/parts/evidence.md``).
DEFAULT_WEIGHT_RULE = "columns"


def weighs_by_evidence(value: object) -> bool:
    """Whether a fit with ``part_weights=value`` weighs the parts by their evidence."""
    return value == "evidence" or (value is None and DEFAULT_WEIGHT_RULE == "evidence")


def check_part_weights(value: object, share: float = 0.0) -> dict[str, float]:
    """``value`` (None: :data:`DEFAULT_WEIGHT_RULE`; one of :data:`WEIGHT_RULES`, whose table is
    the weights by column kind of a series ``share`` of whose columns are continuous,
    :func:`default_part_weights`, which a fit replaces by its evidence for ``"evidence"``; a
    mapping of some parts' names to weights >= 0, the others keeping their default) as a full
    weight table, or a ``ParameterError``."""
    if value is None or (isinstance(value, str) and value in WEIGHT_RULES):
        return default_part_weights(share)
    known = (OWN, *term_names())
    if not isinstance(value, dict):
        raise ParameterError(
            f"part_weights must be None, 'columns', 'evidence' or a dict of weights by part "
            f"({', '.join(known)}), got "
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
    weights = {**default_part_weights(share), **{k: float(v) for k, v in value.items()}}
    if not any(w for name, w in weights.items() if not part_class(name).at_once_only):
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
    "CONTINUOUS_AT_ONCE_WEIGHTS",
    "CONTINUOUS_PART_WEIGHTS",
    "DEFAULT_INPUT_TERMS",
    "DEFAULT_WEIGHT_RULE",
    "DISCRETE_AT_ONCE_WEIGHTS",
    "DISCRETE_PART_WEIGHTS",
    "INPUT_TERMS",
    "WEIGHT_RULES",
    "at_once_weights",
    "check_input_terms",
    "check_part_rule",
    "check_part_weights",
    "continuous_share",
    "default_at_once_weights",
    "default_part_weights",
    "weighs_by_evidence",
]
