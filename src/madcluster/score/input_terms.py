"""Input-space terms added to MADCluster's score (``MADCluster(input_terms=("kmeans", "ar"))``, the default).

Why: MADCluster's head scores features of a bounded network (a GRU saturates), so it misses what
grows in the input itself, and on TSB-AD's MSL / SMAP / SMD series it ranked below plain window
detectors (head alone: .21 mean VUS-PR over the 46 series; ``benchmarks/results/tsbad/README.md``).
Two cheap terms fitted on the training rows close most of that gap without touching the network:

* ``kmeans``: window KMeans (:class:`~madcluster.baselines.KMeansDetector`'s defaults: k = 20,
  windows of the detector's L every L // 10 steps, per-feature standardisation); a step's term is
  the mean, over the windows covering it, of the window's distance to its nearest centroid. Columns
  with 2 or 3 distinct training values (binary command channels) are left out: standardised, a
  rarely toggling one turns each toggle into a jump of ten or more deviations, the term's false
  alarms on MSL and SMAP (46 TSB-AD series, offline: .394 -> .496 mean VUS-PR); constant columns
  stay (their steps are how a move reaches the model, :mod:`madcluster.data.constant_columns`);
* ``ar``: a ridge next-step predictor on the standardised rows (``AR_LAGS`` lags); a step's term is
  its squared prediction error, averaged over the columns (an input-space forecast error, the
  lead of forecasting detectors on TSB-AD, without the network's saturation). Only columns with
  more than ``FEW_LEVELS`` distinct training values are predicted: the next step of a binary
  command channel (most of MSL's and SMAP's columns) is a coin flip, whose errors were noise there.

The score is ``w_own z(MADCluster's own score) + sum of w_term z(term)``, each standardised with
its training mean and standard deviation (the rule of ``base_score_combination="standardized"``)
and weighted by ``part_weights`` (default :data:`DEFAULT_PART_WEIGHTS`: own 0.5, kmeans 1.5,
ar 1; chosen on the development set, ``benchmarks/results/parts/README.md``). The point-wise parts
(own, ar) are first read through centred means (``part_smoothing``, :mod:`madcluster.score.smoothing`).
Fitted terms are plain arrays (model files hold no pickle). The ``kmeans`` term averages windows
that start after a step, so a stream's score of it is final L rows later
(:mod:`madcluster.score.term_streams`); the terms do not enter
:meth:`~madcluster.MADCluster.explain`'s occlusion.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from madcluster.exceptions import ParameterError
from madcluster.score.smoothing import causal_width, centred_means, trailing_means

if TYPE_CHECKING:
    from madcluster.score.scoring import Stats

# The heavy modules (scikit-learn via baselines) are imported where used, so the CLI can read
# INPUT_TERMS without starting them.

INPUT_TERMS = ("kmeans", "ar")
DEFAULT_INPUT_TERMS = ("kmeans", "ar")
OWN_SCORE = "before_input_terms"  # score_stats_ key of MADCluster's own score; terms: "input_term/<name>"
AR_LAGS, AR_RIDGE = 5, 1.0  # chosen on the development set (benchmarks/results/tsbad/README.md)
FEW_LEVELS = 3  # columns with 2..FEW_LEVELS distinct training values: left out of both terms (ar: also constant ones)
AR_MAX_REGRESSORS = 1024  # wide data: fewer lags (at least 1), so the ridge solve stays about a second
_CHUNK_VALUES = 1 << 22  # windows x values scored at a time (32 MB of float64)
OWN = "own"  # the part_weights key of MADCluster's own score
AT_ONCE = "/at_once"  # score_stats_ key suffix of a part's causal reading (kmeans: trailing windows; smoothed: trailing mean)
# Chosen on the development set (benchmarks/results/parts/README.md): the 46 TSB-AD series .509 ->
# .564 mean VUS-PR, the synthetic suite .950 -> .943 ROC-AUC, the demo series .982 -> .985.
DEFAULT_PART_WEIGHTS: dict[str, float] = {OWN: 0.5, "kmeans": 1.5, "ar": 1.0}


def check_part_weights(value: object) -> dict[str, float]:
    """``value`` (None: :data:`DEFAULT_PART_WEIGHTS`; a mapping of some of ``own`` and the input
    terms' names to weights >= 0, the others keeping their default) as a full weight table, or a
    ``ParameterError``."""
    if value is None:
        return dict(DEFAULT_PART_WEIGHTS)
    known = (OWN, *INPUT_TERMS)
    if not isinstance(value, dict):
        raise ParameterError(f"part_weights must be None or a dict of weights by part ({', '.join(known)}), got {value!r}")
    unknown = [k for k in value if k not in known]
    if unknown:
        raise ParameterError(f"part_weights: unknown part(s) {unknown}; the parts are {', '.join(known)}")
    bad = {k: v for k, v in value.items() if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v) or v < 0}
    if bad:
        raise ParameterError(f"part_weights must be finite numbers >= 0, got {bad}")
    weights = {**DEFAULT_PART_WEIGHTS, **{k: float(v) for k, v in value.items()}}
    if not any(weights.values()):
        raise ParameterError("part_weights: every weight is 0, the score would be 0 everywhere")
    return weights


def describe_parts(weights: dict[str, float], terms: list[InputTerm], smoothing: dict[str, int] | None = None) -> str:
    """``0.5 z(own, mean of 50) + 1.5 z(kmeans) + 1 z(ar, mean of 10)``: the score's formula, for
    fit-time messages."""
    if not terms:
        return "MADCluster's own score alone (no input terms)"
    names = [OWN, *(t.name for t in terms)]
    width = smoothing or {}
    return " + ".join(f"{weights.get(n, 1.0):g} z({n}{f', mean of {width[n]}' if width.get(n, 1) > 1 else ''})" for n in names)


def check_input_terms(value: object) -> tuple[str, ...]:
    """``value`` (None, a name or names) as a tuple of known names, or a ``ParameterError``."""
    if value is None:
        return ()
    names = (value,) if isinstance(value, str) else value
    if not isinstance(names, Iterable) or not all(isinstance(n, str) for n in names):
        raise ParameterError(f"input_terms must be None or names among {', '.join(INPUT_TERMS)}, got {value!r}")
    names = tuple(names)
    unknown = [n for n in names if n not in INPUT_TERMS]
    if unknown or len(set(names)) != len(names):
        raise ParameterError(f"input_terms {value!r}: choose distinct names among {', '.join(INPUT_TERMS)} (or None: off)")
    return names


@dataclass(frozen=True)
class WindowKMeans:
    """A fitted window-KMeans term: the input scaler, the centroids ``(k, L * C)`` of the ``columns``
    it reads, and the windows."""

    scaler_mean: np.ndarray
    scaler_scale: np.ndarray
    centroids: np.ndarray
    window_size: int
    stride: int
    columns: np.ndarray | None = None  # None: every column (files from before the column choice)
    balanced_edges: bool = False  # False: files from before edges averaged as many windows as the middle

    name = "kmeans"

    def arrays(self) -> dict[str, np.ndarray]:
        shape = np.asarray([self.window_size, self.stride], dtype=np.int64)
        out = {"scaler_mean": self.scaler_mean, "scaler_scale": self.scaler_scale, "centroids": self.centroids, "shape": shape}
        if self.balanced_edges:
            out["balanced_edges"] = np.asarray(1, dtype=np.int64)
        return out if self.columns is None else {**out, "columns": np.asarray(self.columns, dtype=np.int64)}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> WindowKMeans:
        window_size, stride = (int(v) for v in arrays["shape"])
        return cls(arrays["scaler_mean"], arrays["scaler_scale"], arrays["centroids"], window_size, stride, arrays.get("columns"),
                   bool(arrays.get("balanced_edges", 0)))

    def scores(self, rows: np.ndarray) -> np.ndarray:
        """Per-step term ``(T,)``: window distances averaged over the windows covering each step
        (windows every ``stride`` steps, the last one at the series end); with ``balanced_edges``
        the first and last L - 1 steps average as many windows as the middle
        (:func:`balanced_window_means`)."""
        from madcluster.data.window_grid import window_starts

        read = rows if self.columns is None else np.asarray(rows)[:, self.columns]
        starts = window_starts(len(read), self.window_size, self.stride)
        distances = window_distances(self, read, starts)
        if self.balanced_edges:
            return balanced_window_means(distances, starts, self.window_size, len(read))
        from madcluster.baselines import window_scores_to_points  # files from before balanced ends

        return window_scores_to_points(distances, starts, self.window_size, len(read))

    def trailing_scores(self, rows: np.ndarray) -> np.ndarray:
        """Per step, the distance of the window *ending* there to its nearest centroid (before the
        first full window, the series' first row repeated before it): the term read from steps <= t
        only, which a stream gives at once (:mod:`madcluster.score.term_streams`)."""
        read = np.asarray(rows) if self.columns is None else np.asarray(rows)[:, self.columns]
        padded = np.vstack([np.repeat(read[:1], self.window_size - 1, axis=0), read])
        return window_distances(self, padded, np.arange(len(read)))


@dataclass(frozen=True)
class AutoRegressive:
    """A fitted ridge next-step predictor on standardised rows: ``coef`` maps lags (+ 1) of the
    ``columns`` it predicts to their next values."""

    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray  # (lags * C + 1, C) for the C predicted columns
    lags: int
    columns: np.ndarray  # indices of the predicted columns (none: the term is 0)
    # the training mean error, the value of a series' first ``lags`` steps (None in older files:
    # those steps read the first row repeated as their history)
    start_value: float | None = None

    name = "ar"

    def arrays(self) -> dict[str, np.ndarray]:
        start = {} if self.start_value is None else {"start_value": np.asarray(self.start_value, dtype=np.float64)}
        return {"mean": self.mean, "scale": self.scale, "coef": self.coef, "lags": np.asarray(self.lags, dtype=np.int64),
                "columns": np.asarray(self.columns, dtype=np.int64), **start}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> AutoRegressive:
        start = float(arrays["start_value"]) if "start_value" in arrays else None
        return cls(arrays["mean"], arrays["scale"], arrays["coef"], int(arrays["lags"]), arrays["columns"], start)

    def scores(self, rows: np.ndarray, history: np.ndarray | None = None, first_step: int = 0) -> np.ndarray:
        """Squared next-step error per step, averaged over the predicted columns; ``history``:
        the ``lags`` standardised rows before ``rows`` (:meth:`standardise`; None: a series'
        start, where the first row repeated stands in for it); ``first_step``: the step of ``rows[0]``.

        Steps ``< lags`` of a series have no full history: a prediction from the stand-in jumps,
        and on normal data they were flagged three to four times as often as the rest. They take
        ``start_value`` (the training mean error: no evidence either way) instead."""
        if len(self.columns) == 0:
            return np.zeros(len(rows))
        z = self.standardise(rows)
        values = ((lagged(z, self.lags, history) @ self.coef - z) ** 2).mean(axis=1)
        if self.start_value is not None and first_step < self.lags:
            values[: self.lags - first_step] = self.start_value
        return values

    def standardise(self, rows: np.ndarray) -> np.ndarray:
        """The predicted columns of ``rows``, standardised as the predictor reads them."""
        return (np.asarray(rows, dtype=np.float64)[:, self.columns] - self.mean) / self.scale


InputTerm = WindowKMeans | AutoRegressive
_KINDS: dict[str, type] = {"kmeans": WindowKMeans, "ar": AutoRegressive}


def balanced_window_means(window_scores: np.ndarray, starts: np.ndarray, window: int, n_steps: int,
                          steps: np.ndarray | None = None) -> np.ndarray:
    """Per step, the mean score of the windows starting in ``[a_t, a_t + window - 1]`` with
    ``a_t = clip(t - window + 1, 0, n_steps - 2 window + 1)``: the windows covering t in the middle
    of the series; near either end, the block of as many windows nearest to it.

    Why: a step near an end is covered by fewer windows (one, at step 0), and a mean of fewer
    distances swings more, so the start and end of every scored file were flagged two to three
    times as often as the middle on normal data. Averaging as many windows everywhere gives every
    step the same spread; an anomaly in the first or last window still lifts those steps.

    ``steps`` (default: all ``n_steps``): the steps to average for, of a series of ``n_steps``
    whose windows in that reach are all in ``starts`` (a stream holds only its recent windows).
    Each mean adds its windows in order, so a stream and a whole series give the same bits.
    """
    scores = np.asarray(window_scores, dtype=np.float64)
    steps = np.arange(n_steps) if steps is None else np.asarray(steps)
    first = np.clip(steps - window + 1, 0, max(0, n_steps - 2 * window + 1))
    lo = np.searchsorted(starts, first, side="left")
    hi = np.searchsorted(starts, first + window - 1, side="right")
    count = hi - lo
    total = np.zeros(len(steps))
    for k in range(int(count.max(initial=0))):
        index = lo + k
        total += np.where(index < hi, scores[np.minimum(index, len(scores) - 1)], 0.0)
    return total / np.maximum(count, 1)


def lagged(z: np.ndarray, lags: int, history: np.ndarray | None = None) -> np.ndarray:
    """Rows ``[z_{t-1}, ..., z_{t-lags}, 1]`` for every step t; ``history``: the ``lags`` rows
    before ``z`` (a stream's last rows). Without it, before the first row the history repeats it
    (a series' first steps then score as a steady start, not as a jump from zero)."""
    history = np.repeat(z[:1], lags, axis=0) if history is None else history
    padded = np.vstack([history, z])
    return np.hstack([*(padded[lags - k : lags - k + len(z)] for k in range(1, lags + 1)), np.ones((len(z), 1))])


def column_levels(rows: np.ndarray) -> np.ndarray:
    """Distinct values of each column of ``rows``."""
    return np.asarray([len(np.unique(rows[:, j])) for j in range(rows.shape[1])])


def fit_autoregressive(rows: np.ndarray, lags: int = AR_LAGS, ridge: float = AR_RIDGE, max_levels: int = FEW_LEVELS) -> AutoRegressive:
    """The ridge predictor of the columns of training ``rows`` with more than ``max_levels`` values."""
    data = np.asarray(rows, dtype=np.float64)
    columns = np.flatnonzero(column_levels(data) > max_levels).astype(np.int64)
    data = data[:, columns]
    lags = max(1, min(lags, AR_MAX_REGRESSORS // max(1, len(columns))))
    mean, scale = data.mean(axis=0), data.std(axis=0)
    scale = np.where(scale > 1e-8, scale, 1.0)  # a constant column: unit scale, as the network's scaler
    z = (data - mean) / scale
    a = lagged(z, lags)
    coef = np.linalg.solve(a.T @ a + ridge * np.eye(a.shape[1]), a.T @ z)
    errors = ((a @ coef - z) ** 2).mean(axis=1)[lags:] if len(columns) else np.zeros(0)
    return AutoRegressive(mean, scale, coef, lags, columns, float(errors.mean()) if len(errors) else 0.0)


def fit_window_kmeans(rows: np.ndarray, window_size: int, random_state: int | None) -> WindowKMeans:
    """Fit the window-KMeans baseline on training ``rows`` ``(T, D)`` and keep what scoring needs."""
    from madcluster.baselines import KMeansDetector
    from madcluster.data.window_grid import window_starts

    levels = column_levels(rows)
    columns = np.flatnonzero((levels > FEW_LEVELS) | (levels == 1)).astype(np.int64)
    if len(columns) == 0:  # only binary-like columns: they are all there is to read
        columns = np.arange(rows.shape[1], dtype=np.int64)
    rows = np.asarray(rows)[:, columns]
    # the baseline's k = 20, or one centroid per window where a short series has fewer windows
    probe = KMeansDetector(window_size=window_size)
    n_windows = len(window_starts(len(rows), window_size, max(1, window_size // 10)))
    k = min(probe.n_centroids, n_windows)
    baseline = KMeansDetector(window_size=window_size, n_centroids=k, random_state=random_state).fit(rows)
    scaler = baseline.scaler_
    return WindowKMeans(
        scaler_mean=np.asarray(scaler.mean_, dtype=np.float64),
        scaler_scale=np.asarray(scaler.scale_, dtype=np.float64),
        centroids=np.ascontiguousarray(baseline.cluster_centers_, dtype=np.float32),
        window_size=window_size,
        stride=int(baseline.stride_),
        columns=columns,
        balanced_edges=True,
    )


def fit_input_terms(names: tuple[str, ...], rows: np.ndarray, window_size: int, random_state: int | None) -> list[InputTerm]:
    """The named terms fitted on the training ``rows``."""
    return [fit_window_kmeans(rows, window_size, random_state) if n == "kmeans" else fit_autoregressive(rows) for n in names]


def window_distances(term: WindowKMeans, rows: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Distance of each window of ``rows`` starting at ``starts`` to its nearest centroid, in
    float64 (a stream scores a few windows at a time and must give the bits a whole series gives)."""
    scaled = (np.asarray(rows, dtype=np.float64) - term.scaler_mean) / term.scaler_scale
    window = term.window_size
    centroids = np.asarray(term.centroids, dtype=np.float64)
    centers_t = np.ascontiguousarray(centroids.T)
    center_sq = np.einsum("ij,ij->i", centroids, centroids)
    windows = np.lib.stride_tricks.sliding_window_view(scaled, window, axis=0).transpose(0, 2, 1)
    per_chunk = max(1, _CHUNK_VALUES // (window * scaled.shape[1]))
    distances = np.empty(len(starts), dtype=np.float64)
    for lo in range(0, len(starts), per_chunk):
        chunk = starts[lo : lo + per_chunk]
        flat = windows[chunk].reshape(len(chunk), -1)
        # ||x - c||^2 = ||x||^2 - 2 x.c + ||c||^2, minimised over the centroids
        sq = np.einsum("ij,ij->i", flat, flat) + (center_sq[None, :] - 2.0 * (flat @ centers_t)).min(axis=1)
        distances[lo : lo + len(chunk)] = np.sqrt(np.maximum(sq, 0.0))
    return distances


def input_term_stats(own: np.ndarray, rows: np.ndarray, terms: list[InputTerm],
                     smoothing: dict[str, int] | None = None) -> dict[str, Stats]:
    """Training mean and standard deviation of each part as the score reads it (``score_stats_``
    entries): the own score and each term, centred means where ``smoothing`` says; and of each
    part's causal reading where it differs (:data:`AT_ONCE`: KMeans on trailing windows, a smoothed
    part's trailing mean), what a stream answers at once."""
    from madcluster.score.scoring import mean_std

    raw = {OWN: own, **{t.name: t.scores(rows) for t in terms}}
    stats = {part_key(n): mean_std(smoothed(n, v, smoothing)) for n, v in raw.items()}
    stats.update({part_key(n, AT_ONCE): mean_std(read_at_once(n, v, smoothing)) for n, v in raw.items()
                  if (smoothing or {}).get(n, 1) > 1})
    stats.update({part_key(t.name, AT_ONCE): mean_std(t.trailing_scores(rows)) for t in terms if isinstance(t, WindowKMeans)})
    return stats


def smoothed(name: str, values: np.ndarray, smoothing: dict[str, int] | None) -> np.ndarray:
    """Part ``name``'s per-step ``values`` of a whole series as the score reads them: centred
    means of ``smoothing[name]`` steps (:mod:`madcluster.score.smoothing`), or as they are."""
    width = (smoothing or {}).get(name, 1)
    return centred_means(values, width) if width > 1 else values


def read_at_once(name: str, values: np.ndarray, smoothing: dict[str, int] | None) -> np.ndarray:
    """Part ``name``'s per-step ``values`` as a stream reads them at once: a smoothed part's
    centred blocks cut at each step (:func:`~madcluster.score.smoothing.trailing_means`)."""
    width = (smoothing or {}).get(name, 1)
    return trailing_means(values, causal_width(width)) if width > 1 else values


def part_key(name: str, reading: str = "") -> str:
    """The ``score_stats_`` key of part ``name`` (``reading``: "" or :data:`AT_ONCE`)."""
    return (OWN_SCORE if name == OWN else f"input_term/{name}") + reading


def add_input_terms(own: np.ndarray, rows: np.ndarray, terms: list[InputTerm], stats: dict[str, Stats],
                    weights: dict[str, float] | None = None, smoothing: dict[str, int] | None = None) -> np.ndarray:
    """``w_own z(own) + sum of w_term z(term)`` with the training statistics in ``stats`` (a part
    missing from ``weights``, e.g. in files from before weights: 1), each part smoothed as
    ``smoothing`` says (none in files from before it)."""
    raw = [(OWN, own), *((t.name, t.scores(rows)) for t in terms)]
    return sum_parts([weighted_part(n, smoothed(n, v, smoothing), stats, weights) for n, v in raw])


def weighted_part(name: str, values: np.ndarray, stats: dict[str, Stats], weights: dict[str, float] | None,
                  reading: str = "") -> np.ndarray:
    """Part ``name``'s ``values`` standardised with its training statistics and weighted (numpy
    alone: the ONNX scorer adds the parts without torch); ``reading`` :data:`AT_ONCE`: the
    statistics of the part's causal reading."""
    mean, std = stats[part_key(name, reading)]
    return (weights or {}).get(name, 1.0) * ((values - mean) / std)


def sum_parts(parts: list[np.ndarray]) -> np.ndarray:
    """The weighted parts added in the score's order (own first, then the terms'), the one order
    a stream and a whole series both use."""
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return total


def terms_to_arrays(terms: list[InputTerm]) -> dict[str, np.ndarray]:
    """The fitted terms as named arrays for a model file."""
    return {f"input_terms/{t.name}/{k}": v for t in terms for k, v in t.arrays().items()}


def terms_from_arrays(names: tuple[str, ...], arrays: dict[str, np.ndarray]) -> list[InputTerm]:
    """The terms :func:`terms_to_arrays` wrote, in ``names`` order (a base-only model fitted none)."""
    out = []
    for name in names:
        prefix = f"input_terms/{name}/"
        if not any(k.startswith(prefix) for k in arrays):
            continue
        out.append(_KINDS[name].from_arrays({k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)}))
    return out
