"""What the studies share, in one module: a study imports this (and ``benchlib``), never another
study. The development bundle and its series, the network part's dumps, the parts' readings and
z-scores, the default's weights per series, the at-once readings, the agreement caps, the first
round's candidate parts, rules and injected anomalies, and the first score terms' dumps.

A study in ``benchmarks/studies/<topic>/`` puts both folders on the path first::

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: benchlib
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/studies/: lib
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: benchlib

import argparse
import pickle
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from madcluster.score.autoregressive import AutoRegressive
from madcluster.score.parts import FitContext
from madcluster.score.window_kmeans import FEW_LEVELS, WindowKMeans, column_levels, window_distances

# --- first written in network_parts.py


def read_bundle(path: str | Path) -> dict[str, dict[str, np.ndarray]]:
    """{name: {train, test, labels, family}} from a bundle written by ``dev_bundle.py``."""
    out: dict[str, dict[str, np.ndarray]] = {}
    with np.load(path) as bundle:
        for key in bundle.files:
            name, field = key.rsplit("/", 1)
            out.setdefault(name, {})[field] = bundle[key]
    return out


def open_series(
    bundle: str, prefixes: list[str] | None, cache: str | None
) -> tuple[dict, Path | None]:
    """The bundle's series (those whose names start with one of ``prefixes``, or all) and the
    cache folder (made if missing; None without one): what every study opens first."""
    series = read_bundle(bundle)
    if prefixes:
        series = {k: v for k, v in series.items() if any(k.startswith(p) for p in prefixes)}
    folder = Path(cache) if cache else None
    if folder:
        folder.mkdir(parents=True, exist_ok=True)
    return series, folder


def study_arguments(doc: str, **folders: str) -> argparse.Namespace:
    """The command line of a study over the bundle: ``--bundle`` and one required option per
    keyword (``--name``, its help), the description from ``doc``'s first line."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--bundle", required=True)
    for name, help_text in folders.items():
        parser.add_argument(f"--{name.replace('_', '-')}", required=True, help=help_text)
    return parser.parse_args()


def family_table(rows: dict[str, dict[str, float]], families: dict[str, str], first: str) -> str:
    """Markdown: per row key (``first`` heads its column), the mean over each family's series and
    over the 46 TSB-AD ones."""
    import numpy as np

    fams = sorted(set(families.values()))
    lines = [
        f"| {first} | " + " | ".join(fams) + " | 46 TSB-AD |",
        "|---|" + "---|" * (len(fams) + 1),
    ]
    for key in next(iter(rows.values())):
        cells = [np.mean([rows[s][key] for s in rows if families[s] == f]) for f in fams]
        dev = np.mean([rows[s][key] for s in rows if families[s].startswith("tsbad")])
        lines.append(f"| {key} | " + " | ".join(f"{c:.3f}" for c in cells) + f" | {dev:.3f} |")
    return "\n".join(lines)


# --- first written in part_study.py

WINDOW = 100


SMOOTH = {"own": WINDOW // 2, "ar": WINDOW // 10}


def zscore(x: np.ndarray, ref: np.ndarray) -> np.ndarray:
    std = ref.std()
    return (x - ref.mean()) / (std if std > 1e-12 else 1.0)


def alert_spread(
    scores: np.ndarray, labels: np.ndarray, reach: int = WINDOW
) -> tuple[float, float]:
    """(precision, smear) of the top-k rows, k = the labelled anomalous rows: smear is the share of
    flagged rows that are not anomalous but lie within ``reach`` rows of an anomaly (alerts spread
    before its start or after its end)."""
    labels = np.asarray(labels).astype(bool)
    k = int(labels.sum())
    if k == 0:
        return float("nan"), float("nan")
    flagged = np.zeros(len(scores), dtype=bool)
    flagged[np.argsort(-scores, kind="stable")[:k]] = True
    near = np.convolve(labels.astype(float), np.ones(2 * reach + 1), mode="same") > 0
    return float((flagged & labels).sum() / k), float((flagged & ~labels & near).sum() / k)


# --- first written in part_weights.py

PARTS = ("own", "kmeans", "ar", "discord")


def discord_reading(name: str, arrays: dict, cache: Path) -> tuple[np.ndarray, np.ndarray]:
    """The discord part as the default fits and reads it (the library's ``Discord``: the least
    distant of the subsequences a step reads, as many near the ends as in the middle): (test
    values, training reference values), cached beside the other parts."""

    from madcluster.score.discord import Discord
    from madcluster.score.parts import FitContext

    path = cache / f"{name}.discord_balanced.pkl"
    if path.exists():
        return pickle.loads(path.read_bytes())
    train = default_rows(arrays["train"], arrays["train"]).astype(np.float32)
    test = default_rows(arrays["train"], arrays["test"])
    part = Discord.fit(train, FitContext(100, 0))
    reading = (part.values(test), part.reference_values(train))
    path.write_bytes(pickle.dumps(reading))
    return reading


def adaptive(share: float, mode: str) -> dict[str, float]:
    """The default's weights for a series ``share`` of whose columns are continuous."""
    from madcluster.score.input_terms import CONTINUOUS_PART_WEIGHTS, DISCRETE_PART_WEIGHTS

    s = (1.0 if share >= 0.5 else 0.0) if mode == "cut" else share
    return {
        p: DISCRETE_PART_WEIGHTS[p] + s * (CONTINUOUS_PART_WEIGHTS[p] - DISCRETE_PART_WEIGHTS[p])
        for p in PARTS
    }


# --- first written in which_model.py


def series_weights(train: np.ndarray) -> dict[str, float]:
    """The default's weights for a series: from the share of its continuous training columns."""
    from madcluster.score.input_terms import continuous_share, default_part_weights

    return default_part_weights(continuous_share(np.asarray(train, dtype=np.float64)))


# --- first written in part_injection.py
#
# Synthetic anomalies injected into held-out training rows, to judge score parts without labels.
#
# Why: which part of the score is informative differs per series, and a fit sees no labels. Following
# unsupervised model selection for time series (Goswami et al., ICLR 2023), the fit holds out the
# tail of its training rows, injects anomalies of many kinds into copies of it and asks which part
# (or combination) separates injected from clean steps. Point-wise kinds alone (spikes, level shifts)
# favour point-wise parts, so most kinds here are shapes and contexts within a window: a segment
# copied from another phase of the series, time-reversed or resampled, one channel desynchronised
# from the others, a flattened or amplified oscillation, a drift, a noise burst.
#
# Everything is relative to each column's own scale on the clean rows, and columns with few distinct
# values (binary commands) are left alone, so an injection looks like something the series could do.

KINDS = (
    "spike",
    "level",
    "stuck",
    "noise",
    "amplitude",
    "drift",
    "copy",
    "reverse",
    "speed",
    "desync",
)


def injection_columns(rows: np.ndarray) -> np.ndarray:
    """Columns an injection may change: more than ``FEW_LEVELS`` distinct values."""
    levels = np.asarray([len(np.unique(rows[:, j])) for j in range(rows.shape[1])])
    return np.flatnonzero(levels > FEW_LEVELS)


def _segment_length(kind: str, window: int, rng: np.random.Generator) -> int:
    if kind == "spike":
        return int(rng.integers(1, 3))
    return int(rng.integers(max(2, window // 10), max(3, window // 2) + 1))


def _apply(
    kind: str,
    seg: np.ndarray,
    source: np.ndarray,
    scale: np.ndarray,
    rng: np.random.Generator,
    start: int,
    length: int,
) -> np.ndarray:
    """The injected values of ``seg`` ``(m, c)``; ``source`` = the clean rows (for copies)."""
    m = len(seg)
    sign = rng.choice([-1.0, 1.0], size=seg.shape[1])
    if kind == "spike":
        return seg + sign * rng.uniform(3.0, 6.0) * scale
    if kind == "level":
        return seg + sign * rng.uniform(1.0, 3.0) * scale
    if kind == "stuck":
        return np.repeat(seg[:1], m, axis=0)
    if kind == "noise":
        return seg + rng.normal(0.0, rng.uniform(0.5, 1.5), size=seg.shape) * scale
    if kind == "amplitude":
        centre = seg.mean(axis=0)
        return centre + (seg - centre) * rng.choice([0.0, rng.uniform(2.0, 3.0)])
    if kind == "drift":
        return seg + np.linspace(0.0, 1.0, m)[:, None] * sign * rng.uniform(2.0, 4.0) * scale
    if kind == "reverse":
        return seg[::-1]
    if kind == "speed":
        factor = rng.choice([0.5, 2.0, 3.0])
        positions = np.clip(np.arange(m) * factor, 0, len(source) - start - 1).astype(int)
        return source[start + positions]
    # copy / desync: the same columns at another time of the clean rows (another phase)
    offset = int(rng.integers(length // 4 + 1, max(length // 4 + 2, len(source) - m)))
    other = (start + offset) % max(1, len(source) - m)
    return source[other : other + m]


def inject(
    rows: np.ndarray,
    start: int,
    window: int,
    count: int,
    rng: np.random.Generator,
    kinds: tuple[str, ...] = KINDS,
) -> tuple[np.ndarray, np.ndarray]:
    """A copy of ``rows`` with ``count`` anomalies in steps ``start..`` and its step labels.

    Each anomaly is one kind of ``kinds`` on a random span (a window's tenth to half for shapes)
    and random columns (one, or up to a third of the injectable ones; ``desync`` always one);
    columns are scaled by their clean standard deviation.
    """
    rows = np.asarray(rows, dtype=np.float64)
    out, labels = rows.copy(), np.zeros(len(rows), dtype=bool)
    columns = injection_columns(rows[:start])
    if len(columns) == 0 or len(rows) - start < 2:
        return out, labels
    scale = rows[:start].std(axis=0)
    scale = np.where(scale > 1e-8, scale, 1.0)
    for _ in range(count):
        kind = kinds[int(rng.integers(len(kinds)))]
        length = min(_segment_length(kind, window, rng), len(rows) - start)
        at = int(rng.integers(start, len(rows) - length + 1))
        many = (
            1
            if kind == "desync" or rng.random() < 0.5
            else int(rng.integers(1, max(2, len(columns) // 3 + 1)))
        )
        chosen = rng.choice(columns, size=min(many, len(columns)), replace=False)
        seg = out[at : at + length, chosen]
        out[at : at + length, chosen] = _apply(
            kind, seg, rows[:, chosen], scale[chosen], rng, at, length
        )
        labels[at : at + length] = True
    return out, labels


# --- first written in part_candidates.py
#
# Input-space parts that read steps <= t only: window KMeans on trailing windows and a
# nearest-neighbour discord, beside the ridge next-step predictor of :mod:`madcluster.input_terms`.
#
# Why causal: a part that averages windows starting after step t (the centred window KMeans) cannot
# stream or export. Scoring the window that ends at t reads steps t-L+1..t only; the first L-1 steps
# see the first row repeated before the series (a steady start, as the ridge predictor's lags do).
#
# The discord part (the matrix profile's idea, against the training windows): the distance of the
# window ending at t to its nearest training window, each window's per-column mean removed, so it
# scores shapes the training data never showed, at any level. On training rows the windows within a
# window's length of the scored one are excluded (no trivial self-match), so its training
# statistics describe unseen normal windows.

MAX_NEIGHBOURS = 1024  # training windows a discord compares against (a regular subsample)


_CHUNK = 1 << 22


def trailing_padded(rows: np.ndarray, window: int) -> np.ndarray:
    """``rows`` with ``window - 1`` copies of the first row before them: row t's trailing window
    is ``padded[t : t + window]``."""
    rows = np.asarray(rows)
    return np.vstack([np.repeat(rows[:1], window - 1, axis=0), rows])


@dataclass(frozen=True)
class TrailingKMeans:
    """Window KMeans scoring the window that ends at each step (causal)."""

    term: WindowKMeans
    name = "kmeans_causal"

    def scores(self, rows: np.ndarray) -> np.ndarray:
        read = (
            np.asarray(rows)
            if self.term.columns is None
            else np.asarray(rows)[:, self.term.columns]
        )
        padded = trailing_padded(read, self.term.window_size)
        return window_distances(self.term, padded, np.arange(len(read)))

    def reference_scores(self, rows: np.ndarray) -> np.ndarray:
        return self.scores(rows)


@dataclass(frozen=True)
class Discord:
    """Distance of each trailing window (per-column mean removed) to its nearest training window."""

    mean: np.ndarray
    scale: np.ndarray
    columns: np.ndarray
    neighbours: np.ndarray  # (N, L * C) float32, each window's column means removed
    starts: np.ndarray  # where each neighbour starts in the training rows
    window_size: int
    name = "discord"

    def _windows(self, rows: np.ndarray) -> np.ndarray:
        z = ((np.asarray(rows, dtype=np.float64)[:, self.columns] - self.mean) / self.scale).astype(
            np.float32
        )
        padded = trailing_padded(z, self.window_size)
        return np.lib.stride_tricks.sliding_window_view(padded, self.window_size, axis=0).transpose(
            0, 2, 1
        )

    def scores(self, rows: np.ndarray, exclude_own: bool = False) -> np.ndarray:
        windows = self._windows(rows)
        n = len(windows)
        out = np.empty(n)
        nb = self.neighbours
        nb_sq = np.einsum("ij,ij->i", nb, nb, dtype=np.float64)
        per = max(1, _CHUNK // max(1, nb.shape[1]))
        for lo in range(0, n, per):
            w = windows[lo : lo + per]
            w = (w - w.mean(axis=1, keepdims=True)).reshape(len(w), -1)
            sq = (
                np.einsum("ij,ij->i", w, w, dtype=np.float64)[:, None]
                + nb_sq[None, :]
                - 2.0 * (w @ nb.T)
            )
            if exclude_own:  # a training step's own neighbourhood is no evidence of normality
                ends = np.arange(lo, lo + len(w))[:, None]
                sq[
                    np.abs(self.starts[None, :] + self.window_size - 1 - ends) < self.window_size
                ] = np.inf
            best = sq.min(axis=1)
            out[lo : lo + len(w)] = np.sqrt(np.maximum(np.where(np.isfinite(best), best, 0.0), 0.0))
        return out

    def reference_scores(self, rows: np.ndarray) -> np.ndarray:
        return self.scores(rows, exclude_own=True)


def fit_discord(rows: np.ndarray, window: int) -> Discord:
    data = np.asarray(rows, dtype=np.float64)
    levels = column_levels(data)
    columns = np.flatnonzero(levels > FEW_LEVELS)
    if len(columns) == 0:
        columns = np.arange(data.shape[1])
    mean, scale = data[:, columns].mean(axis=0), data[:, columns].std(axis=0)
    scale = np.where(scale > 1e-8, scale, 1.0)
    z = ((data[:, columns] - mean) / scale).astype(np.float32)
    n_windows = len(z) - window + 1
    step = max(1, int(np.ceil(n_windows / MAX_NEIGHBOURS)))
    starts = np.arange(0, max(1, n_windows), step)
    windows = np.lib.stride_tricks.sliding_window_view(z, window, axis=0).transpose(0, 2, 1)[starts]
    windows = windows - windows.mean(axis=1, keepdims=True)
    return Discord(
        mean, scale, columns, np.ascontiguousarray(windows.reshape(len(starts), -1)), starts, window
    )


@dataclass(frozen=True)
class _Plain:
    term: WindowKMeans | AutoRegressive

    def scores(self, rows: np.ndarray) -> np.ndarray:
        return self.term.values(rows)

    def reference_scores(self, rows: np.ndarray) -> np.ndarray:
        return self.term.values(rows)


def fit_parts(names: tuple[str, ...], rows: np.ndarray, window: int, seed: int | None) -> dict:
    """The named parts fitted on ``rows``: each has ``scores(rows)`` and ``reference_scores(train)``."""
    out: dict = {}
    kmeans = None
    for name in names:
        if name in ("kmeans", "kmeans_causal"):
            kmeans = kmeans or WindowKMeans.fit(rows, FitContext(window, seed))
            out[name] = _Plain(kmeans) if name == "kmeans" else TrailingKMeans(kmeans)
        elif name == "ar":
            out[name] = _Plain(AutoRegressive.fit(rows))
        elif name == "discord":
            out[name] = fit_discord(rows, window)
        else:
            raise ValueError(f"unknown part {name!r}")
    return out


# --- first written in part_scores.py


def tail_start(n_train: int, window: int, validation_size: float = 0.2) -> int:
    from madcluster.training.loop import validation_rows

    n_val = validation_rows(n_train, validation_size, window)
    return n_train - max(n_val, min(n_train // 5, window))


def injected_variants(
    train: np.ndarray, window: int, variants: int, seed: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The ``variants`` injected copies of ``train`` (same seeds in the dump and the reader)."""

    start = tail_start(len(train), window)
    count = max(1, (len(train) - start) // 150)
    return [
        inject(train, start, window, count, np.random.default_rng([seed, v]))
        for v in range(variants)
    ]


def default_rows(train: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``rows`` as the default's input terms read them: columns constant in ``train`` as their
    steps (:mod:`madcluster.data.constant_columns`), float64."""
    import logging

    from madcluster.data.constant_columns import bound_constant_columns, constant_columns

    train = np.asarray(train, dtype=np.float32)
    logger = logging.getLogger("madcluster.data.constant_columns")
    level, logger.level = logger.level, logging.ERROR
    try:
        out = bound_constant_columns(
            np.asarray(rows, dtype=np.float32), constant_columns(train), train.mean(axis=0), None
        )
    finally:
        logger.setLevel(level)
    return out.astype(np.float64)


# --- first written in part_rules.py
#
# Combination rules compared by ``benchmarks/studies/archive/first_parts/part_combination.py``: how to add the default score's parts.
#
# Each rule maps ``{part: (test scores, training reference, held-out tail, head reference)}`` to named
# combined scores. ``z sum`` is the default's rule (each part standardised on its training scores,
# summed); the others weigh parts differently, all from training data alone:
#
# * ``surprise``: each part's score s as ``-log P(training score > s)`` (the empirical distribution
#   below the training 0.9 quantile, an exponential tail fitted to the excesses beyond it), summed
#   (Fisher's method) or maximised: a part whose large values are common on normal data gives little
#   evidence for them;
# * ``held-out``: each z divided by how much louder the part is on held-out normal rows (the part
#   fitted on the head of the training rows, scored on its tail) than in sample;
# * ``net x w``, ``GRID``: fixed weights per part;
# * ``SMOOTHING``: fixed weights, with the point-wise parts (own, ar) read through centred means
#   of a fraction of the window (``part_combination.py --smoothing``; the default's rule since
#   ``part_smoothing``).

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
        grid = (
            np.linspace(0.0, 1.0, len(self.reference)) if len(self.reference) > 1 else np.zeros(1)
        )
        below = np.interp(s, self.reference, grid, left=0.0, right=1.0)
        body = -np.log(np.clip(1.0 - below * (1.0 - self.tail), self.tail, 1.0))
        # beyond the threshold: the exponential tail, in log space (no overflow, no ties)
        beyond = -np.log(self.tail) + np.maximum(s - self.threshold, 0.0) / self.scale
        return np.where(s > self.threshold, beyond, body)

    def arrays(self) -> dict[str, np.ndarray]:
        return {
            "reference": self.reference,
            "tail": np.asarray([self.n, self.threshold, self.scale, self.tail]),
        }

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


Parts = dict[
    str, tuple[np.ndarray, ...]
]  # name -> (scores, training reference, held-out tail, head reference)


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


def _rule(
    transform: Callable[[np.ndarray, np.ndarray], np.ndarray], reduce: str
) -> Callable[[Parts], dict[str, np.ndarray]]:
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


GRID = {
    f"w net {n} kmeans {k} ar {a}": _weighted(n, k, a)
    for n in (0.0, 0.15, 0.25, 0.35, 0.5, 0.75, 1.0)
    for k in (1.0, 1.5, 2.0, 3.0)
    for a in (0.5, 1.0)
}


def _smoothed(
    own_fraction: float, ar_fraction: float, own: float, kmeans: float, ar: float
) -> Callable[..., dict[str, np.ndarray]]:
    """The weighted z-sum with own and ar read through centred means of ``fraction * window``
    steps (:func:`madcluster.score.smoothing.centred_means`; 0: none), each standardised on its
    smoothed training scores, as the fitted model does."""
    from madcluster.score.smoothing import centred_means

    def combine(parts: Parts, window: int = 100) -> dict[str, np.ndarray]:
        widths = {
            "net": max(1, int(own_fraction * window)),
            "ar": max(1, int(ar_fraction * window)),
            "kmeans": 1,
        }
        v = {
            n: _z(centred_means(p[0], widths[n]), centred_means(p[1], widths[n]))
            for n, p in parts.items()
        }
        return {"weighted": own * v["net"] + kmeans * v["kmeans"] + ar * v["ar"]}

    return combine


SMOOTHING = {
    f"own mean {fn} L, ar mean {fa} L, w {w}": _smoothed(fn, fa, *w)
    for w in ((0.5, 1.5, 1.0), (0.0, 1.5, 1.0), (1.0, 1.0, 1.0))
    for fn in (0.0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0)
    for fa in (0.0, 0.05, 0.1, 0.15, 0.2, 0.3)
}


SMOOTHING.update(
    {f"own alone, mean {fn} L": _smoothed(fn, 0.0, 1.0, 0.0, 0.0) for fn in (0.0, 0.2, 0.5, 1.0)}
)


SMOOTHING.update(
    {f"ar alone, mean {fa} L": _smoothed(0.0, fa, 0.0, 0.0, 1.0) for fa in (0.0, 0.05, 0.1, 0.2)}
)


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


# --- first written in part_combination.py


def series_parts(series, dump: dict, seed: int, names: tuple[str, ...], window: int = 100) -> dict:
    """Per part: (test scores, training reference scores)."""

    train_rows = np.asarray(series.train, dtype=np.float64)
    test_rows = default_rows(series.train, series.test)

    start = tail_start(len(train_rows), window)
    net_train = dump["net_train"].astype(np.float64)
    parts = {
        "net": (
            dump["net_test"].astype(np.float64),
            net_train,
            net_train[start:],
            net_train[:start],
        )
    }
    head = fit_parts(names, train_rows[:start], window, seed)
    for name, part in fit_parts(names, train_rows, window, seed).items():
        # held out: the part fitted on the head, on the tail it never saw (and on its own head)
        held = (
            head[name].scores(train_rows[start:]),
            head[name].reference_scores(train_rows[:start]),
        )
        parts[name] = (part.scores(test_rows), part.reference_scores(train_rows), *held)
    return parts


# --- first written in agreement_cap.py

CAPS = (3.0, 10.0)


def combined(excess: np.ndarray, caps: list[float]) -> dict[str, np.ndarray]:
    """The default's sum of the weighted positive excesses ``(parts, T)``, and the capped sums."""
    total = excess.sum(axis=0)
    out = {"default": total}
    for k in CAPS:
        capped = [np.minimum(excess[i], k * caps[i] + total - excess[i]) for i in range(len(caps))]
        out[f"agreement cap {k:g}x"] = np.sum(capped, axis=0)
    return out


def scores(z: dict, z_train: dict, weights: dict, labels: np.ndarray, first: np.ndarray) -> dict:
    from madcluster.metrics.tsbad import tsbad_vus

    excess = np.stack([weights[p] * np.maximum(z[p], 0.0) for p in PARTS])
    caps = [
        max(weights[p] * float(np.quantile(np.maximum(z_train[p], 0.0), 0.999)), 1e-6)
        for p in PARTS
    ]
    return {k: tsbad_vus(v, labels, first)[1] for k, v in combined(excess, caps).items()}


#: (z, z_train, weights, labels, first) -> VUS-PR by rule name: what a study scores each series with
RuleScores = Callable[[dict, dict, dict, np.ndarray, np.ndarray], dict]


def cap_tables(rule_scores: RuleScores | None = None, doc: str | None = None) -> None:
    """The table of ``rule_scores`` (default: the agreement caps) per family and on the proxy."""

    args = study_arguments(
        doc, cache="part_study.py's cache folder", shifted="shifted_parts.py's dumps"
    )
    bundle, cache = read_bundle(args.bundle), Path(args.cache)
    rows, family = family_rows(bundle, cache, rule_scores or scores)
    shifted = shifted_rows(Path(args.shifted), bundle, cache, rule_scores or scores)
    fams = sorted(set(family.values()))
    print("| rule | " + " | ".join(fams) + " | 46 TSB-AD | shifted proxy: as is | shifted |")
    print("|---|" + "---|" * (len(fams) + 3))
    for rule in next(iter(rows.values())):
        cells = [np.mean([rows[s][rule] for s in rows if family[s] == f]) for f in fams]
        dev = np.mean([rows[s][rule] for s in rows if family[s].startswith("tsbad")])
        proxy = [np.mean(shifted[(kind, rule)]) for kind in ("test", "shifted")]
        print(f"| {rule} | " + " | ".join(f"{c:.3f}" for c in [*cells, dev, *proxy]) + " |")


def cap_series_weights(arrays: dict) -> dict[str, float]:
    """The default's weights for a series (from the share of its continuous training columns)."""
    from madcluster.score.input_terms import continuous_share, default_part_weights

    return default_part_weights(continuous_share(np.asarray(arrays["train"], dtype=float)))


def family_rows(bundle: dict, cache: Path, rule_scores: RuleScores = scores) -> tuple[dict, dict]:
    """Each rule's VUS-PR per development series, and each series' family."""

    rows, family = {}, {}
    for name, arrays in sorted(bundle.items()):
        parts = pickle.loads((cache / f"{name}.pkl").read_bytes())
        parts["discord"] = pickle.loads((cache / f"{name}.discord_balanced.pkl").read_bytes())
        z = {p: zscore(*parts[p]) for p in PARTS}
        z_train = {p: zscore(parts[p][1], parts[p][1]) for p in PARTS}
        first = np.asarray(arrays["test"])[:, 0]
        rows[name] = rule_scores(z, z_train, cap_series_weights(arrays), arrays["labels"], first)
        family[name] = str(arrays["family"])
    return rows, family


def shifted_rows(
    folder: Path, bundle: dict, cache: Path, rule_scores: RuleScores = scores
) -> dict[tuple[str, str], list[float]]:
    """Each rule's VUS-PR on the dumps' test rows as they are and with their new normal."""

    out: dict[tuple[str, str], list[float]] = {}
    for dump in sorted(folder.glob("*.npz")):
        name = next(n for n in bundle if n.startswith(dump.stem[:8]))
        arrays, data = bundle[name], np.load(dump)
        weights = cap_series_weights(arrays)
        parts = pickle.loads((cache / f"{name}.pkl").read_bytes())
        z_train = {p: zscore(parts[p][1], parts[p][1]) for p in PARTS if p != "discord"}
        z_train["discord"] = data["test/discord"][:1000]  # a stand-in (module docstring)
        for kind in ("test", "shifted"):
            z = {p: data[f"{kind}/{p}"] for p in PARTS}
            found = rule_scores(z, z_train, weights, data["labels"], data["first"])
            for rule, value in found.items():
                out.setdefault((kind, rule), []).append(value)
    return out


# --- first written in at_once_study.py

WEIGHTS = {"own": 0.5, "kmeans": 1.5, "ar": 1.0, "discord": 1.0}


def at_once_score(
    readings: dict, own_width: int, ar_width: int, discord: bool = True
) -> np.ndarray:
    from madcluster.score.smoothing import trailing_means

    total = np.zeros(len(readings["own"][0]))
    for name, weight in WEIGHTS.items():
        if name == "discord" and not discord:
            continue
        test, train = readings[name]
        width = {"own": own_width, "ar": ar_width}.get(name, 1)
        if width > 1:
            test, train = trailing_means(test, width), trailing_means(train, width)
        std = train.std() if train.std() > 1e-12 else 1.0
        total += np.maximum(weight * (test - train.mean()) / std, 0.0)
    return total


# --- first written in at_once_scales.py

OWN_WIDTH, AR_WIDTH = 25, 5  # the default's at-once trailing means (the centred ones cut at t)


def at_once_z(readings: dict, weights: dict[str, float]) -> dict[str, np.ndarray]:
    """Each causal part's weighted z-score at once, with its training statistics."""
    from madcluster.score.smoothing import trailing_means

    out = {}
    for name, weight in weights.items():
        if weight == 0.0 or name not in readings or name in ("discord", "final"):
            continue  # the discord part has no causal reading in the default
        test, train = readings[name]
        width = {"own": OWN_WIDTH, "ar": AR_WIDTH}.get(name, 1)
        if width > 1:
            test, train = trailing_means(test, width), trailing_means(train, width)
        std = train.std() if train.std() > 1e-12 else 1.0
        out[name] = weight * (test - train.mean()) / std
    return out


def record_reading(
    row: dict, server_roc: dict, variant: str, score: np.ndarray, arrays: dict
) -> None:
    """``score``'s VUS-PR into ``row[variant]`` and, on the server family (the issue's at-once bar:
    a ROC-AUC near the final score's), its ROC-AUC into ``server_roc[variant]``."""
    from sklearn.metrics import roc_auc_score

    from madcluster.metrics.tsbad import tsbad_vus

    labels, first = np.asarray(arrays["labels"]), np.asarray(arrays["test"])[:, 0]
    row[variant] = tsbad_vus(score, labels, first)[1]
    if str(arrays["family"]) == "server":
        server_roc.setdefault(variant, []).append(roc_auc_score(labels, score))


def print_server_roc(server_roc: dict) -> None:
    """The mean ROC-AUC of each variant on the server family."""
    print("\nROC-AUC on the server family, at once:")
    for variant, values in server_roc.items():
        print(f"- {variant}: {np.mean(values):.3f}")


# --- first written in score_terms.py


def input_terms(train: np.ndarray, rows: np.ndarray) -> dict[str, np.ndarray]:
    """Cheap point-wise input-space terms, for ``rows`` and for ``train`` (same fit)."""
    mean, std = train.mean(axis=0), train.std(axis=0)
    std = np.where(std > 1e-8, std, 1.0)
    out: dict[str, np.ndarray] = {}
    z_train, z_rows = (train - mean) / std, (rows - mean) / std
    out["maxz"] = np.abs(z_rows).max(axis=1)
    out["train/maxz"] = np.abs(z_train).max(axis=1)
    cov = np.cov(z_train, rowvar=False) if z_train.shape[1] > 1 else np.ones((1, 1))
    values, vectors = np.linalg.eigh(np.atleast_2d(cov))
    order = np.argsort(values)[::-1]
    values, vectors = values[order], vectors[:, order]
    share = np.cumsum(values) / max(values.sum(), 1e-12)
    k = int(np.searchsorted(share, 0.9) + 1)
    basis = vectors[:, :k]

    def residual(z: np.ndarray) -> np.ndarray:
        return ((z - (z @ basis) @ basis.T) ** 2).sum(axis=1)

    out["pca"], out["train/pca"] = residual(z_rows), residual(z_train)
    out["ar"], out["train/ar"] = autoregressive_errors(z_train, z_rows)
    return out


def lagged(z: np.ndarray, lags: int) -> np.ndarray:
    """Rows ``[z_{t-1}, ..., z_{t-lags}, 1]`` for every t (the first rows see zero-padded history)."""
    padded = np.vstack([np.zeros((lags, z.shape[1])), z])
    cols = [padded[lags - k : lags - k + len(z)] for k in range(1, lags + 1)]
    return np.hstack([*cols, np.ones((len(z), 1))])


def autoregressive_errors(
    z_train: np.ndarray, z_rows: np.ndarray, lags: int = 5, ridge: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """Per-step squared error of a ridge next-step predictor on standardised rows (input space)."""
    a = lagged(z_train, lags)
    coef = np.linalg.solve(a.T @ a + ridge * np.eye(a.shape[1]), a.T @ z_train)

    def error(z: np.ndarray) -> np.ndarray:
        return ((lagged(z, lags) @ coef - z) ** 2).mean(axis=1)

    return error(z_rows), error(z_train)


# ------------------------------------------------------------ the evidence study's series
def bundle_series(path: str, families: list[str] | None) -> Iterator[tuple[str, dict[str, np.ndarray]]]:
    """(name, {train, test, labels, family}) of a bundle from ``dev_bundle.py``."""
    with np.load(path) as bundle:
        grouped: dict[str, dict[str, np.ndarray]] = {}
        for key in bundle.files:
            name, field = key.rsplit("/", 1)
            grouped.setdefault(name, {})[field] = bundle[key]
    for name, arrays in grouped.items():
        if families is None or str(arrays["family"]) in families:
            yield name, arrays


def generated_series(families: list[str] | None) -> Iterator[tuple[str, dict[str, np.ndarray]]]:
    """Every generated family's series (``madcluster.data.families``), made on the spot."""
    from madcluster.data import families as fam

    names = getattr(fam, "ALL_FAMILIES", fam.FAMILIES)
    for family in names:
        if families is not None and family not in families:
            continue
        for name in fam.family_names(family):
            s = fam.make_family(family, int(name.rsplit("-", 1)[1]))
            yield name, {"train": s.train, "test": s.test, "labels": s.labels,
                         "family": np.asarray(family)}


# --- first written in incidents/at_once_parts.py

SEEDS_AT_ONCE = range(4)  # the series of each family the at-once studies read (as incidents.py)


def roc_auc(labels: np.ndarray, scores: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(labels, scores))


def part_terms(model, X: np.ndarray, prefix: str = "") -> dict[str, np.ndarray]:
    """Each part's term of ``X``'s score, final (``final/<part>``) and at once (``once/<part>``),
    their readings (``read_final/``, ``read_once/``) and their rule totals (``final``,
    ``at_once``), checked equal to ``decision_function`` and to the stream's at-once scores."""
    from madcluster.estimator.incident_scoring import at_once_scores
    from madcluster.score.combination import RULES

    c = model.combination
    rows = model.inputs.check_rows(X)
    own = model.own_scores(model.inputs.model_input(rows))
    final_read, once_read = c.readings(rows, own), c.at_once_readings(rows, own)
    final = c.final_contributions(final_read)
    once = {p.name: c.contribution(p, once_read[p.name], at_once=True) for p in c.parts}
    out = {"final": RULES[c.rule].total(list(final.values())),
           "at_once": RULES[c.rule].total(list(once.values()))}
    np.testing.assert_allclose(out["final"], model.decision_function(rows), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(out["at_once"], at_once_scores(model, rows), rtol=1e-9, atol=1e-9)
    for name in c.names:  # a part read at once only has no final term: 0
        out.update({f"final/{name}": final.get(name, np.zeros(len(rows))), f"once/{name}": once[name],
                    f"read_final/{name}": final_read.get(name, np.zeros(len(rows))),
                    f"read_once/{name}": once_read[name]})
    return {f"{prefix}{k}": v for k, v in out.items()}


def before_causal_discord(model):
    """``model`` as the code before the discord part's causal reading scores it: the discord
    part adds nothing at once (what the at-once studies compare with)."""
    from dataclasses import replace

    from madcluster.score.legacy import DiscordWithoutAtOnce, recast

    c = model.combination
    parts = tuple(recast(p, DiscordWithoutAtOnce) if p.name == "discord" else p for p in c.parts)
    return replace(model, combination=replace(c, parts=parts))


def cached_default(family: str, seed: int, n_test: int, cache: Path) -> tuple[Any, Any]:
    """One development series and the default detector (``random_state=0``) fitted on its
    training rows, kept in ``cache`` as ``{family}-{seed}-{n_test}.mcz`` (fitted once, then
    loaded)."""
    from madcluster import MADCluster
    from madcluster.data.families import make_family

    series = make_family(family, seed, n_test=n_test)
    path = Path(cache) / f"{family}-{seed}-{n_test}.mcz"
    if path.exists():
        return series, MADCluster.load(path)
    detector = MADCluster(random_state=0).fit(series.train)
    path.parent.mkdir(parents=True, exist_ok=True)
    detector.save(path)
    return series, detector


def segmented_join(part: Any, segment: int) -> Any:
    """A join of the discord ``part``'s shortest length (at most ``SHORT_LENGTH`` rows) averaged
    over segments of ``segment`` rows (at least 4 values per column): the candidate at-once
    reading of ``incidents/at_once_join.py`` and ``at_once_join_paging.py``."""
    from madcluster.score.discord import SHORT_LENGTH, Join

    short = min(SHORT_LENGTH, *part.lengths)
    p = max(1, min(segment, short // 4))
    return Join(
        part.columns, part.mean, part.scale, p * (short // p), p, part.training, part.training_first
    )


def at_once_readings(family: str, seed: int, cache: Path, n_test: int = 5000) -> dict[str, np.ndarray]:
    """One series' :func:`part_terms` (the discord part adding nothing at once,
    :func:`before_causal_discord`) on its test rows and (``val/``) on its validation rows (the
    last of them, at most 2,000, read as a stream started two windows before them), the parts'
    statistics and weights, its labels and threshold; fitted once (the detector kept beside it as
    ``.mcz``) and cached."""
    name = f"{family}-{seed}-{n_test}"
    path = cache / f"{name}.npz"
    if path.exists():
        with np.load(path) as cached:
            return dict(cached)
    from benchlib import write_npz

    from madcluster import MADCluster
    from madcluster.data.families import make_family
    from madcluster.training.loop import validation_rows

    series = make_family(family, seed, n_test=n_test)
    detector = MADCluster(random_state=0).fit(series.train)
    cache.mkdir(parents=True, exist_ok=True)
    detector.save(cache / f"{name}.mcz")
    model = before_causal_discord(detector.model_)
    c = model.combination
    window = model.grid.window_size
    n_val = min(validation_rows(len(series.train), detector.validation_size, window), 2000)
    tail = series.train[-(n_val + 2 * window):]
    arrays = {"labels": series.labels, "threshold": np.asarray(detector.threshold_),
              "parts": np.asarray(c.names), **part_terms(model, series.test)}
    arrays.update({k: v[-n_val:] for k, v in part_terms(model, tail, "val/").items()})
    for p in c.parts:
        arrays[f"stats/{p.name}"] = np.asarray(c.stats[p.name])
        arrays[f"at_once_stats/{p.name}"] = np.asarray(c.at_once_stats.get(p.name, c.stats[p.name]))
        arrays[f"weight/{p.name}"] = np.asarray(c.weights.get(p.name, 1.0))
    write_npz(path, arrays)
    print(f"{name}: fitted and read", flush=True)
    return arrays
