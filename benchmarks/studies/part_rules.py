"""Combination rules compared by ``benchmarks/studies/part_combination.py``: how to add the default score's parts.

Each rule maps ``{part: (test scores, training reference, held-out tail, head reference)}`` to named
combined scores. ``z sum`` is the default's rule (each part standardised on its training scores,
summed); the others weigh parts differently, all from training data alone:

* ``surprise``: each part's score s as ``-log P(training score > s)`` (the empirical distribution
  below the training 0.9 quantile, an exponential tail fitted to the excesses beyond it), summed
  (Fisher's method) or maximised: a part whose large values are common on normal data gives little
  evidence for them;
* ``held-out``: each z divided by how much louder the part is on held-out normal rows (the part
  fitted on the head of the training rows, scored on its tail) than in sample;
* ``net x w``, ``GRID``: fixed weights per part;
* ``SMOOTHING``: fixed weights, with the point-wise parts (own, ar) read through centred means
  of a fraction of the window (``part_combination.py --smoothing``; the default's rule since
  ``part_smoothing``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

TAIL_Q = 0.9  # the exponential tail starts at this training quantile


@dataclass(frozen=True)
class Surprise:
    """``-log P(training score > s)``, fitted on training scores: the sorted reference below the
    tail threshold, an exponential beyond it."""

    reference: np.ndarray  # sorted training scores at or below ``threshold`` (subsampled)
    n: int  # how many training scores the reference stands for
    threshold: float
    scale: float  # mean training excess over ``threshold``
    tail: float  # P(training score > threshold)

    def __call__(self, scores: np.ndarray) -> np.ndarray:
        s = np.asarray(scores, dtype=np.float64)
        # within the body: P(> s) from the reference, interpolated (no ties between its points)
        grid = np.linspace(0.0, 1.0, len(self.reference)) if len(self.reference) > 1 else np.zeros(1)
        below = np.interp(s, self.reference, grid, left=0.0, right=1.0)
        body = -np.log(np.clip(1.0 - below * (1.0 - self.tail), self.tail, 1.0))
        # beyond the threshold: the exponential tail, in log space (no overflow, no ties)
        beyond = -np.log(self.tail) + np.maximum(s - self.threshold, 0.0) / self.scale
        return np.where(s > self.threshold, beyond, body)

    def arrays(self) -> dict[str, np.ndarray]:
        return {"reference": self.reference, "tail": np.asarray([self.n, self.threshold, self.scale, self.tail])}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> Surprise:
        n, threshold, scale, tail = (float(v) for v in arrays["tail"])
        return cls(arrays["reference"], int(n), threshold, scale, tail)


def fit_surprise(train_scores: np.ndarray, tail_q: float = TAIL_Q, keep: int = 2048) -> Surprise:
    """The surprise of training scores ``train_scores`` (finite values; at least one)."""
    s = np.sort(np.asarray(train_scores, dtype=np.float64)[np.isfinite(train_scores)])
    threshold = float(np.quantile(s, tail_q))
    excess = s[s > threshold] - threshold
    spread = float(np.std(s)) or 1.0
    scale = float(excess.mean()) if len(excess) else spread
    scale = max(scale, 1e-6 * spread, 1e-12)
    tail = max(len(excess) / len(s), 1.0 / (len(s) + 1))
    body = s[s <= threshold]
    if len(body) > keep:  # quantiles of the body are all scoring needs
        body = np.quantile(body, np.linspace(0.0, 1.0, keep))
    return Surprise(np.ascontiguousarray(body), len(s), threshold, scale, tail)


Parts = dict[str, tuple[np.ndarray, ...]]  # name -> (scores, training reference, held-out tail, head reference)


def _z(scores: np.ndarray, reference: np.ndarray) -> np.ndarray:
    std = reference.std()
    return (scores - reference.mean()) / (std if std > 1e-12 else 1.0)


def _each(parts: Parts, f: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> dict[str, np.ndarray]:
    return {name: f(p[0], p[1]) for name, p in parts.items()}


def _heldout_scaled(q: float, cap: bool) -> Callable[[Parts], dict[str, np.ndarray]]:
    """z of each part divided by how much louder it is on held-out normal rows than in sample
    (its ``q`` quantile of held-out z over that of in-sample z); ``cap``: never up-weighted."""
    def combine(parts: Parts) -> dict[str, np.ndarray]:
        values = {}
        for name, (scores, ref, held, head_ref) in parts.items():
            z_held = _z(held, head_ref)
            z_in = _z(head_ref, head_ref)
            ratio = max(np.quantile(z_held, q), 1e-6) / max(np.quantile(z_in, q), 1e-6)
            ratio = max(ratio, 1.0) if cap else ratio
            values[name] = _z(scores, ref) / ratio
        out = {}
        for subset in _subsets(list(values)):
            out["+".join(subset)] = sum(values[n] for n in subset)
        return out

    return combine


def _surprise(scores: np.ndarray, reference: np.ndarray) -> np.ndarray:
    return fit_surprise(reference)(scores)


def _subsets(names: list[str]) -> list[tuple[str, ...]]:
    from itertools import combinations

    return [c for r in range(1, len(names) + 1) for c in combinations(names, r)]


def _rule(transform: Callable[[np.ndarray, np.ndarray], np.ndarray], reduce: str) -> Callable[[Parts], dict[str, np.ndarray]]:
    def combine(parts: Parts) -> dict[str, np.ndarray]:
        values = _each(parts, transform)
        out = {}
        for subset in _subsets(list(values)):
            stack = np.stack([values[n] for n in subset])
            out["+".join(subset)] = stack.sum(axis=0) if reduce == "sum" else stack.max(axis=0)
        return out

    return combine


def _net_weighted(weight: float) -> Callable[[Parts], dict[str, np.ndarray]]:
    def combine(parts: Parts) -> dict[str, np.ndarray]:
        values = _each(parts, _z)
        rest = [n for n in values if n != "net"]
        out = {}
        for subset in _subsets(rest):
            base = sum(values[n] for n in subset)
            out["+".join(subset)] = base + weight * values["net"]
        return out

    return combine


def _weighted(net: float, kmeans: float, ar: float) -> Callable[[Parts], dict[str, np.ndarray]]:
    def combine(parts: Parts) -> dict[str, np.ndarray]:
        v = _each(parts, _z)
        return {"weighted": net * v["net"] + kmeans * v["kmeans"] + ar * v["ar"]}

    return combine


GRID = {f"w net {n} kmeans {k} ar {a}": _weighted(n, k, a)
        for n in (0.0, 0.15, 0.25, 0.35, 0.5, 0.75, 1.0) for k in (1.0, 1.5, 2.0, 3.0) for a in (0.5, 1.0)}

def _smoothed(own_fraction: float, ar_fraction: float, own: float, kmeans: float, ar: float) -> Callable[..., dict[str, np.ndarray]]:
    """The weighted z-sum with own and ar read through centred means of ``fraction * window``
    steps (:func:`madcluster.score.smoothing.centred_means`; 0: none), each standardised on its
    smoothed training scores, as the fitted model does."""
    from madcluster.score.smoothing import centred_means

    def combine(parts: Parts, window: int = 100) -> dict[str, np.ndarray]:
        widths = {"net": max(1, int(own_fraction * window)), "ar": max(1, int(ar_fraction * window)), "kmeans": 1}
        v = {n: _z(centred_means(p[0], widths[n]), centred_means(p[1], widths[n])) for n, p in parts.items()}
        return {"weighted": own * v["net"] + kmeans * v["kmeans"] + ar * v["ar"]}

    return combine


SMOOTHING = {
    f"own mean {fn} L, ar mean {fa} L, w {w}": _smoothed(fn, fa, *w)
    for w in ((0.5, 1.5, 1.0), (0.0, 1.5, 1.0), (1.0, 1.0, 1.0))
    for fn in (0.0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0) for fa in (0.0, 0.05, 0.1, 0.15, 0.2, 0.3)
}
SMOOTHING.update({f"own alone, mean {fn} L": _smoothed(fn, 0.0, 1.0, 0.0, 0.0) for fn in (0.0, 0.2, 0.5, 1.0)})
SMOOTHING.update({f"ar alone, mean {fa} L": _smoothed(0.0, fa, 0.0, 0.0, 1.0) for fa in (0.0, 0.05, 0.1, 0.2)})

RULES: dict[str, Callable[[Parts], dict[str, np.ndarray]]] = {
    "held-out q.99": _heldout_scaled(0.99, False),
    "held-out q.99 capped": _heldout_scaled(0.99, True),
    "held-out q.9 capped": _heldout_scaled(0.9, True),
    "z sum, net x0.25": _net_weighted(0.25),
    "z sum, net x0.5": _net_weighted(0.5),
    "z sum": _rule(_z, "sum"),
    "surprise sum": _rule(_surprise, "sum"),
    "surprise max": _rule(_surprise, "max"),
    "z max": _rule(_z, "max"),
}
