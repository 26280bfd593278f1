"""Per-series evidence for each part of the score, from the training rows alone, and the weights
it gives the parts (:func:`read_evidence`, :class:`Evidence`).

Why: which part sees a series' anomalies changes from series to series (a process whose network
part alone is near perfect while the discord part sits at chance; a series where window KMeans
alone beats every mix). A count of continuous columns cannot tell them apart; how each part
behaves on rows it has not seen, with anomalies of known kinds injected, can.

How, at fit time (``part_weights="evidence"``):

1. the parts are fitted on the training rows as always; the end of the training rows (the rows
   the network validates on and never trains on) is held out for the evidence;
2. copies of the held-out rows get anomalies of every kind injected (:mod:`injection`); each copy
   is scored as a fresh series, the network's own score included;
3. each part's contribution to the score (its positive z-score over its series scale, as the
   default rule reads it) is measured against the injected labels: its average precision
   (``precision``: a part that fires on normal held-out rows ranks them above the events and
   loses it) and, per kind, the share of events it finds (its peak inside the event above its
   99th percentile on the copies' clean rows);
4. each part keeps its weight by column kind times its precision's excess over chance relative to
   the best part's (:func:`weights_from`): a part that finds nothing injected drops out.

Measured with each development family left out in turn (``benchmarks/results/parts/evidence.md``)
this rule was the best of the evidence rules tried, and still below the weights by column kind on
TSB-AD's SMAP series, whose held-out rows are unlike the rest; so it is an option, not the
default. Fitting the parts before the holdout instead (out-of-sample for every part) measured
worse there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from madcluster.metrics.pointwise import auc_pr
from madcluster.score.combination import Combination
from madcluster.score.injection import KINDS, MIN_ROWS, Injected, inject

#: Held-out rows read at most (the last ones): enough events of every kind, a bounded cost.
MAX_HOLDOUT = 4000
#: Injected rows scored in all (copies of the held-out rows, each a fresh series).
INJECTED_ROWS = 8000
FOUND_QUANTILE = 0.99  # a part finds an event when its peak there is above this of its clean rows


@dataclass(frozen=True)
class Evidence:
    """What the held-out rows showed of each part: ``precision`` (average precision on the
    injected copies), ``found`` (part -> kind -> share of injected events found), ``weights``
    (what the score uses), ``rows`` (held-out rows read) and ``chance`` (the labelled share)."""

    precision: dict[str, float]
    found: dict[str, dict[str, float]]
    weights: dict[str, float]
    rows: int
    chance: float
    rule: str = "columns-times-evidence"
    extra: dict[str, Any] = field(default_factory=dict)

    def to_record(self) -> dict[str, Any]:
        """JSON for a model file."""
        return {
            "precision": self.precision,
            "found": self.found,
            "weights": self.weights,
            "rows": self.rows,
            "chance": self.chance,
            "rule": self.rule,
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Evidence:
        return cls(
            {k: float(v) for k, v in record["precision"].items()},
            {k: {a: float(b) for a, b in v.items()} for k, v in record["found"].items()},
            {k: float(v) for k, v in record["weights"].items()},
            int(record["rows"]),
            float(record["chance"]),
            str(record.get("rule", "columns-times-evidence")),
        )

    def lines(self) -> list[str]:
        """One line per part for the fit's printout: its weight, precision and what it finds."""
        out = []
        for name, weight in self.weights.items():
            found = self.found.get(name, {})
            best = sorted(found, key=lambda k: -found[k])[:2]
            worst = sorted(found, key=lambda k: found[k])[:1]
            finds = ", ".join(f"{found[k]:.0%} of {k}" for k in best + worst)
            out.append(
                f"{name}: weight {weight:.2f}, precision {self.precision.get(name, 0.0):.2f} "
                f"(chance {self.chance:.2f}); finds {finds}"
            )
        return out


def holdout_start(length: int, n_validation: int, window: int) -> int | None:
    """Where the held-out rows of a training series of ``length`` start (the network's
    validation rows, at most :data:`MAX_HOLDOUT` of them), or None when there are too few rows
    to fit the probe and hold events."""
    if n_validation < max(MIN_ROWS, 2 * window) or length - n_validation < 2 * window:
        return None
    return length - min(n_validation, MAX_HOLDOUT)


def injected_copies(
    holdout: np.ndarray, scale: np.ndarray, window: int, seed: int, kinds: tuple[str, ...] = KINDS
) -> list[Injected]:
    """Copies of the ``holdout`` rows with events of ``kinds`` injected (:func:`inject`), about
    :data:`INJECTED_ROWS` rows in all, the first ``window`` rows of each left clean."""
    copies = max(2, min(8, -(-INJECTED_ROWS // len(holdout))))
    floor = np.where(scale > 1e-12, scale, 1.0)
    skip = min(window, len(holdout) // 4)
    return [inject(holdout, floor, seed + i, skip=skip, kinds=kinds) for i in range(copies)]


def contributions(
    combination: Combination, rows: np.ndarray, own: np.ndarray
) -> dict[str, np.ndarray]:
    """Each part's contribution to the score of ``rows`` (its final reading, standardised, the
    rule's per-part transform, weighted, over its series scale): the score is their total."""
    return combination.final_contributions(combination.readings(rows, own))


#: How far the evidence is trusted, by the best part's precision excess over chance on the
#: copies: not at all up to :data:`TRUST_FROM` (no part finds the injected anomalies well, so
#: the copies say little about which part sees this series: TSB-AD's SMAP series, where they
#: took .08 VUS-PR off the prior), fully from :data:`TRUST_FULL`, linearly between
#: (``benchmarks/results/parts/evidence.md``, table 4).
TRUST_FROM, TRUST_FULL = 0.6, 0.8


def weights_from(
    precision: Mapping[str, float], chance: float, prior: Mapping[str, float] | None = None
) -> dict[str, float]:
    """Weights from each part's average precision on the injected copies: its ``prior`` weight
    (1 where missing) times ``1 - trust + trust * e / top``, with ``e`` its precision's excess
    over ``chance``, ``top`` the best part's and ``trust`` how far ``top`` is from
    :data:`TRUST_FROM` towards :data:`TRUST_FULL` (trusted fully, a part no better than chance
    weighs 0; the prior alone when no part is better)."""
    prior = prior or {}
    excess = {n: max(0.0, (p - chance) / (1.0 - chance)) for n, p in precision.items()}
    top = max(excess.values(), default=0.0)
    if top <= 0.0:
        return {n: float(prior.get(n, 1.0)) for n in precision}
    trust = min(1.0, max(0.0, (top - TRUST_FROM) / (TRUST_FULL - TRUST_FROM)))
    return {
        n: float(prior.get(n, 1.0)) * (1.0 - trust + trust * e / top) for n, e in excess.items()
    }


def read_evidence(
    parts: Mapping[str, list[np.ndarray]],
    copies: list[Injected],
    prior: Mapping[str, float] | None = None,
) -> Evidence:
    """The evidence of the parts' contributions ``parts`` (name -> one array per copy) on the
    injected ``copies``, and the weights it gives the ``prior`` ones (:func:`weights_from`)."""
    labels = np.concatenate([c.labels for c in copies])
    chance = float(labels.mean()) if len(labels) else 0.0
    precision, found = {}, {}
    for name, values in parts.items():
        pooled = np.concatenate(values)
        precision[name] = auc_pr(pooled, labels) if 0 < labels.sum() < len(labels) else chance
        found[name] = _found_by_kind(values, copies)
    weights = weights_from(precision, chance, prior)
    return Evidence(precision, found, weights, len(copies[0].rows), chance)


def _found_by_kind(values: list[np.ndarray], copies: list[Injected]) -> dict[str, float]:
    """Per kind, the share of injected events whose peak is above the part's
    :data:`FOUND_QUANTILE` on the copies' rows outside every event and its neighbourhood."""
    clean = []
    for v, c in zip(values, copies, strict=True):
        near = np.convolve(c.labels.astype(float), np.ones(61), mode="same") > 0
        clean.append(v[~near])
    pooled = np.concatenate(clean)
    level = float(np.quantile(pooled, FOUND_QUANTILE)) if len(pooled) else 0.0
    hits: dict[str, list[bool]] = {k: [] for k in KINDS}
    for v, c in zip(values, copies, strict=True):
        for kind, start, end in zip(c.kinds, c.starts, c.ends, strict=True):
            hits.setdefault(kind, []).append(bool(v[start:end].max() > level))
    return {k: float(np.mean(h)) for k, h in hits.items() if h}


__all__ = [
    "Evidence",
    "contributions",
    "holdout_start",
    "injected_copies",
    "read_evidence",
    "weights_from",
]
