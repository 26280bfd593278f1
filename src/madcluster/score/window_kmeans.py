"""Window KMeans as a part of the score (``kmeans``): a step's value is the mean, over the windows
covering it, of each window's distance to its nearest training centroid.

Fitted with scikit-learn's ``KMeans`` on standardised windows of the detector's L every L // 10
steps (k = 20, or one centroid per window where a short series has fewer). Columns with 2 or 3
distinct training values (binary command channels) are left out: standardised, a rarely toggling
one turns each toggle into a jump of ten or more deviations; constant columns stay (their steps
are how a move reaches the model, :mod:`madcluster.data.constant_columns`).

The whole-series value averages windows that start after a step, so a stream's value of step t is
final L rows later (:class:`KMeansStream`); its causal reading takes the windows that will cover
t as far as they go (:mod:`madcluster.score.kmeans_prefix`; :meth:`WindowKMeans.at_once`). Model
files written before the reading took this shape hold older kinds of the part
(:mod:`madcluster.score.legacy`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar

import numpy as np

from madcluster.score.kmeans_prefix import PrefixStream, prefix_reading
from madcluster.score.parts import FitContext, Part, PartStream

FEW_LEVELS = 3  # columns with 2..FEW_LEVELS distinct training values are left out
N_CENTROIDS = 20  # TSB-AD's KMeansAD k, the window-KMeans baseline's default
MAX_TRAIN_WINDOWS = 10_000  # at most this many (evenly spaced) training windows fit the clustering
_CHUNK_VALUES = 1 << 22  # windows x values scored at a time (32 MB of float64)


def column_levels(rows: np.ndarray) -> np.ndarray:
    """Distinct values of each column of ``rows``."""
    return np.asarray([len(np.unique(rows[:, j])) for j in range(rows.shape[1])])


def continuous_share(rows: np.ndarray) -> float:
    """The share of ``rows``' columns with more than ``FEW_LEVELS`` distinct values (what the
    default's weights and rule follow)."""
    return float(np.mean(column_levels(np.asarray(rows)) > FEW_LEVELS))


@dataclass(frozen=True)
class WindowKMeans(Part):
    """A fitted window-KMeans part: the input scaler, the centroids ``(k, L * C)`` of the
    ``columns`` it reads, and the windows."""

    scaler_mean: np.ndarray
    scaler_scale: np.ndarray
    centroids: np.ndarray
    window_size: int
    stride: int
    columns: np.ndarray | None = None  # None: every column (files from before the column choice)

    name: ClassVar[str] = "kmeans"

    @cached_property
    def centroid_products(self) -> tuple[np.ndarray, np.ndarray]:
        """The centroids transposed (contiguous) and their squared norms, in float64, computed
        once (a streamed row computed them again for every window it scored)."""
        centroids = np.asarray(self.centroids, dtype=np.float64)
        return np.ascontiguousarray(centroids.T), np.einsum("ij,ij->i", centroids, centroids)

    @classmethod
    def fit(cls, rows: np.ndarray, context: FitContext) -> WindowKMeans:
        """KMeans on the standardised training windows (scikit-learn's k-means++, ``n_init="auto"``,
        seeded by ``context.random_state``)."""
        from sklearn.cluster import KMeans
        from sklearn.preprocessing import StandardScaler

        from madcluster.data.window_grid import window_starts

        window = context.window_size
        levels = column_levels(rows)
        columns = np.flatnonzero((levels > FEW_LEVELS) | (levels == 1)).astype(np.int64)
        if len(columns) == 0:  # only binary-like columns: they are all there is to read
            columns = np.arange(rows.shape[1], dtype=np.int64)
        data = np.ascontiguousarray(np.asarray(rows, dtype=np.float32)[:, columns])
        scaler = StandardScaler().fit(data)
        scaled = np.ascontiguousarray(scaler.transform(data), dtype=np.float32)
        stride = max(1, window // 10)
        starts = window_starts(len(scaled), window, stride)
        if len(starts) > MAX_TRAIN_WINDOWS:  # evenly spaced, deterministic subsample
            picks = np.linspace(0, len(starts) - 1, MAX_TRAIN_WINDOWS).round().astype(np.int64)
            starts = starts[np.unique(picks)]
        view = np.lib.stride_tricks.sliding_window_view(scaled, window, axis=0).transpose(0, 2, 1)
        windows = view[starts].reshape(len(starts), -1)
        k = min(N_CENTROIDS, len(window_starts(len(scaled), window, stride)))
        kmeans = KMeans(n_clusters=k, random_state=context.random_state, n_init="auto").fit(windows)
        return cls(
            scaler_mean=np.asarray(scaler.mean_, dtype=np.float64),
            scaler_scale=np.asarray(scaler.scale_, dtype=np.float64),
            centroids=np.ascontiguousarray(kmeans.cluster_centers_, dtype=np.float32),
            window_size=window,
            stride=stride,
            columns=columns,
        )

    def to_arrays(self) -> dict[str, np.ndarray]:
        shape = np.asarray([self.window_size, self.stride], dtype=np.int64)
        out = {
            "scaler_mean": self.scaler_mean,
            "scaler_scale": self.scaler_scale,
            "centroids": self.centroids,
            "shape": shape,
        }
        # what older files lack (madcluster.score.legacy tells their kinds apart by them)
        out["balanced_edges"] = np.asarray(1, dtype=np.int64)
        out["prefix_at_once"] = np.asarray(1, dtype=np.int64)
        if self.columns is not None:
            out["columns"] = np.asarray(self.columns, dtype=np.int64)
        return out

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> WindowKMeans:
        window_size, stride = (int(v) for v in arrays["shape"])
        return cls(
            arrays["scaler_mean"],
            arrays["scaler_scale"],
            arrays["centroids"],
            window_size,
            stride,
            arrays.get("columns"),
        )

    def read(self, rows: np.ndarray) -> np.ndarray:
        """The columns of ``rows`` this part reads."""
        return np.asarray(rows) if self.columns is None else np.asarray(rows)[:, self.columns]

    def values(self, rows: np.ndarray) -> np.ndarray:
        """Per step: window distances averaged over the windows covering it (windows every
        ``stride`` steps, the last one at the series end); the first and last L - 1 steps
        average as many windows as the middle (:func:`balanced_window_means`)."""
        from madcluster.data.window_grid import window_starts

        read = self.read(rows)
        starts = window_starts(len(read), self.window_size, self.stride)
        distances = window_distances(self, read, starts)
        return balanced_window_means(distances, starts, self.window_size, len(read))

    def at_once(self, rows: np.ndarray) -> np.ndarray:
        """Per step, the covering windows read as far as they go
        (:func:`~madcluster.score.kmeans_prefix.prefix_reading`)."""
        read = self.read(rows)
        return prefix_reading(self, read, 0, np.arange(len(read)))

    def stream_at_once(
        self, stream: KMeansStream, buffer: np.ndarray, seen: int, total: int
    ) -> np.ndarray:
        """:meth:`at_once` of steps ``seen..total-1`` of ``stream``, whose read rows from its
        ``rows_start`` on are ``buffer``."""
        return stream.prefix.values(buffer, stream.rows_start, range(seen, total))

    def window_means(
        self, distances: np.ndarray, starts: np.ndarray, n_steps: int, steps: np.ndarray
    ) -> np.ndarray:
        """:meth:`values` of ``steps`` of a series of ``n_steps`` from the windows ``starts``
        (a stream's recent ones) and their ``distances``."""
        return balanced_window_means(distances, starts, self.window_size, n_steps, steps)

    def final_after(self) -> int:
        return self.window_size

    def stream(self) -> KMeansStream:
        return KMeansStream(self)


def balanced_window_means(
    window_scores: np.ndarray,
    starts: np.ndarray,
    window: int,
    n_steps: int,
    steps: np.ndarray | None = None,
) -> np.ndarray:
    """Per step, the mean score of the windows starting in ``[a_t, a_t + window - 1]`` with
    ``a_t = clip(t - window + 1, 0, n_steps - 2 window + 1)``: the windows covering t in the
    middle of the series; near either end, the block of as many windows nearest to it.

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


def window_distances(part: WindowKMeans, rows: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Distance of each window of ``rows`` starting at ``starts`` to its nearest centroid, in
    float64 (a stream scores a few windows at a time and must give the bits a whole series
    gives)."""
    window = part.window_size
    starts = np.asarray(starts, dtype=np.int64)
    distances = np.empty(len(starts), dtype=np.float64)
    if len(starts) == 0:
        return distances
    # only the rows the windows read are scaled (a stream passes its whole tail for a window or two)
    first = int(starts.min())
    rows = np.asarray(rows)[first : int(starts.max()) + window]
    scaled = (np.asarray(rows, dtype=np.float64) - part.scaler_mean) / part.scaler_scale
    centers_t, center_sq = part.centroid_products
    offsets = np.arange(window)
    per_chunk = max(1, _CHUNK_VALUES // (window * scaled.shape[1]))
    for lo in range(0, len(starts), per_chunk):
        chunk = starts[lo : lo + per_chunk] - first
        flat = scaled[chunk[:, None] + offsets].reshape(len(chunk), -1)
        # ||x - c||^2 = ||x||^2 - 2 x.c + ||c||^2, minimised over the centroids
        cross = center_sq[None, :] - 2.0 * (flat @ centers_t)
        sq = np.einsum("ij,ij->i", flat, flat) + cross.min(axis=1)
        distances[lo : lo + len(chunk)] = np.sqrt(np.maximum(sq, 0.0))
    return distances


@dataclass
class KMeansStream(PartStream):
    """Window KMeans over a growing series: its recent rows and grid windows' distances.

    Step ``t < n - L`` is final once ``n >= 2 L`` rows are seen (the windows it averages all lie
    within them, and the series' end block no longer reaches it); a newer step gets the value the
    whole series of the rows so far gives it."""

    part: WindowKMeans
    steps_seen: int = 0
    rows: np.ndarray = field(
        default_factory=lambda: np.empty((0, 0))
    )  # read columns, from rows_start
    rows_start: int = 0
    starts: np.ndarray = field(
        default_factory=lambda: np.empty(0, dtype=np.int64)
    )  # grid windows kept
    distances: np.ndarray = field(default_factory=lambda: np.empty(0))
    prefix: PrefixStream = field(init=False, repr=False)  # the causal reading's running sums

    def __post_init__(self) -> None:
        self.prefix = PrefixStream(self.part)

    def final_before(self, n_steps: int) -> int:
        window = self.part.window_size
        return n_steps - window if n_steps >= 2 * window else 0

    def forget_before(self, step: int) -> None:
        window = self.part.window_size
        keep = self.starts >= max(0, min(step - window + 1, self.steps_seen - 2 * window + 1))
        self.starts, self.distances = self.starts[keep], self.distances[keep]

    def append(self, rows: np.ndarray, given: np.ndarray | None = None) -> np.ndarray:
        """Add checked ``rows`` (all columns); score the grid windows they complete; return the
        new rows' causal reading (:meth:`WindowKMeans.at_once`)."""
        read = self.part.read(np.asarray(rows, dtype=np.float64))
        window, stride = self.part.window_size, self.part.stride
        buffer = read if len(self.rows) == 0 else np.concatenate([self.rows, read])
        seen, total = self.steps_seen, self.steps_seen + len(read)
        at_once = self.part.stream_at_once(self, buffer, seen, total)
        first = (
            -(-max(0, seen - window + 1) // stride) * stride
        )  # the first grid window not yet scored
        new = np.arange(first, total - window + 1, stride, dtype=np.int64)
        if len(new):
            self.starts = np.concatenate([self.starts, new])
            fresh = window_distances(self.part, buffer, new - self.rows_start)
            self.distances = np.concatenate([self.distances, fresh])
        self.steps_seen = total
        keep_rows = max(
            self.rows_start, total - window
        )  # the next series end's window starts after it
        self.rows, self.rows_start = _narrow(buffer[keep_rows - self.rows_start :]), keep_rows
        return at_once

    def values(self, steps: np.ndarray) -> np.ndarray:
        window, n = self.part.window_size, self.steps_seen
        if n < window:
            return np.full(len(steps), np.nan)
        starts, distances = self.starts, self.distances
        end = n - window  # the series' last window, off the grid unless it falls on it
        if len(starts) == 0 or starts[-1] != end:
            rows = np.asarray(self.rows, dtype=np.float64)
            tail = window_distances(self.part, rows, np.asarray([end - self.rows_start]))
            starts, distances = np.append(starts, end), np.append(distances, tail)
        return self.part.window_means(distances, starts, n, np.asarray(steps))

    def state(self) -> dict[str, np.ndarray]:
        steps = np.asarray([self.steps_seen, self.rows_start], dtype=np.int64)
        return {
            "steps": steps,
            "rows": self.rows,
            "starts": self.starts,
            "distances": self.distances,
        }

    def load(self, arrays: dict[str, np.ndarray]) -> None:
        self.steps_seen, self.rows_start = (int(v) for v in arrays["steps"])
        self.rows, self.distances = arrays["rows"], arrays["distances"]
        self.starts = arrays["starts"].astype(np.int64)
        self.prefix.reset()  # rebuilt from the kept rows at the next row


def _narrow(rows: np.ndarray) -> np.ndarray:
    """``rows`` in float32 where that holds them exactly (a stream's checked rows are float32;
    read back as float64, the same values): half the bytes a served stream keeps."""
    small = rows.astype(np.float32)
    return small if np.array_equal(small, rows) else rows


__all__ = [
    "KMeansStream",
    "WindowKMeans",
    "balanced_window_means",
    "column_levels",
    "window_distances",
]
