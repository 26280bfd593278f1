"""Fixed inputs on which our metrics are compared with the published implementations.

Each case is rebuilt from a seed, so the committed fixture (``reference_values.json``) stays small;
the fixture stores a SHA-256 of every input so that a change here (or in numpy's generator) is
reported as "regenerate the fixture", not as a metric mismatch.

Used by ``make_reference.py`` (which writes the fixture) and by the tests (which read it).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

#: Extra buffer sizes at which Range-AUC and VUS are also checked, besides the case's own window.
EXTRA_WINDOWS: tuple[int, ...] = (0, 1, 7)


@dataclass(frozen=True)
class Case:
    name: str
    scores: np.ndarray  # float64
    labels: np.ndarray  # int64 0/1
    threshold: float
    window: int = 100
    extra_windows: tuple[int, ...] = field(default=EXTRA_WINDOWS)

    @property
    def predictions(self) -> np.ndarray:
        return (self.scores > self.threshold).astype(np.int64)

    def digest(self) -> str:
        h = hashlib.sha256()
        h.update(np.ascontiguousarray(self.scores, dtype="<f8").tobytes())
        h.update(np.ascontiguousarray(self.labels, dtype="<i8").tobytes())
        h.update(repr((self.threshold, self.window, self.extra_windows)).encode())
        return h.hexdigest()


def _segments(n: int, spans: list[tuple[int, int]]) -> np.ndarray:
    lab = np.zeros(n, dtype=np.int64)
    for s, e in spans:
        lab[s:e] = 1
    return lab


def _random_segments(rng: np.random.Generator, n: int, k: int, max_len: int) -> np.ndarray:
    lab = np.zeros(n, dtype=np.int64)
    for _ in range(k):
        length = int(rng.integers(1, max_len + 1))
        start = int(rng.integers(0, n - length))
        lab[start : start + length] = 1
    return lab


def _lagged_response(lab: np.ndarray, lag: int, width: int) -> np.ndarray:
    """A detector that reacts ``lag`` points late and smooths over ``width`` points.

    A moving sum of integers, then one division: exact, so the inputs are bit-identical on every
    machine (``np.convolve`` may go through BLAS, whose summation order depends on the CPU).
    """
    shifted = np.roll(lab.astype(np.int64), lag)
    csum = np.concatenate([[0], np.cumsum(shifted)])
    n = lab.size
    lo = np.clip(np.arange(n) - width // 2, 0, n)
    hi = np.clip(lo + width, 0, n)
    return (csum[hi] - csum[lo]) / width


def _noise(rng: np.random.Generator, n: int) -> np.ndarray:
    """Roughly standard-normal noise from uniforms with +, -, * only (no libm, no SIMD reduction),
    so it is bit-identical across platforms; ``rng.normal``/``gamma`` call ``exp``/``log``."""
    u = rng.random((4, n))
    return (u[0] + u[1] + u[2] + u[3] - 2.0) * 1.7320508075688772


def _skewed(rng: np.random.Generator, n: int) -> np.ndarray:
    """Positive, right-skewed noise (a stand-in for gamma/exponential scores), platform-exact."""
    u = rng.random((2, n))
    return 2.0 * (u[0] + u[1]) ** 2


def _case_segments_seed0() -> Case:
    rng = np.random.default_rng(0)
    n = 3000
    lab = _random_segments(rng, n, 6, 150)
    scores = _noise(rng, n) + lab * rng.uniform(0.5, 2.5, size=n)
    return Case("segments_seed0", scores, lab, float(np.quantile(scores, 0.95)))


def _case_segments_lagged() -> Case:
    rng = np.random.default_rng(1)
    n = 4000
    lab = _random_segments(rng, n, 8, 120)
    scores = _skewed(rng, n) + 3.0 * _lagged_response(lab, 30, 15)
    return Case("segments_lagged", scores, lab, float(np.quantile(scores, 0.93)))


def _case_start_end() -> Case:
    rng = np.random.default_rng(2)
    n = 2000
    lab = _segments(n, [(0, 40), (900, 960), (n - 25, n)])
    scores = _noise(rng, n) + 1.5 * _lagged_response(lab, -5, 9)
    scores[0] = -5.0  # the first point is missed, the first segment is hit later (PA corner case)
    return Case("start_end", scores, lab, float(np.quantile(scores, 0.96)))


def _case_single_points() -> Case:
    """Isolated one-point anomalies at gaps that stress the extension overlaps: 1, 2, 50, 100,
    101 (extensions of window 100 touch without overlapping), 102, 150."""
    rng = np.random.default_rng(3)
    n = 2500
    pos, spans = 37, []
    for gap in [2, 3, 51, 101, 102, 103, 151, 2, 101, 60, 300, 101, 5, 400]:
        spans.append((pos, pos + 1))
        pos += gap
    spans.append((pos, pos + 1))
    lab = _segments(n, spans)
    scores = _noise(rng, n) + 2.0 * _lagged_response(lab, 3, 5) * 5
    return Case("single_points", scores, lab, float(np.quantile(scores, 0.98)))


def _case_long_range() -> Case:
    rng = np.random.default_rng(4)
    n = 2500
    lab = _segments(n, [(300, 1300), (2000, 2030)])
    scores = _noise(rng, n) + 0.8 * lab + 0.5 * _lagged_response(lab, 50, 101)
    return Case("long_range", scores, lab, float(np.quantile(scores, 0.7)))


def _case_ties() -> Case:
    """Heavily tied scores, threshold equal to a tied value (strict ``>`` matters)."""
    rng = np.random.default_rng(5)
    n = 3000
    lab = _random_segments(rng, n, 7, 80)
    scores = np.round(_noise(rng, n) + lab * 1.2, 0)
    return Case("ties", scores, lab, 1.0)


def _case_constant() -> Case:
    rng = np.random.default_rng(6)
    n = 1500
    lab = _random_segments(rng, n, 4, 60)
    return Case("constant_scores", np.full(n, 0.25), lab, 0.0)


def _case_binary_scores() -> Case:
    rng = np.random.default_rng(7)
    n = 2000
    lab = _random_segments(rng, n, 5, 100)
    scores = ((_lagged_response(lab, 10, 21) + 0.15 * _noise(rng, n)) > 0.5).astype(np.float64)
    return Case("binary_scores", scores, lab, 0.5)


def _case_short_series() -> Case:
    """Shorter than one window: extensions are clipped at both ends."""
    rng = np.random.default_rng(8)
    n = 60
    lab = _segments(n, [(20, 26), (40, 41)])
    scores = _noise(rng, n) + 1.5 * lab
    return Case("short_series", scores, lab, float(np.quantile(scores, 0.85)))


def _case_no_prediction() -> Case:
    rng = np.random.default_rng(9)
    n = 1500
    lab = _random_segments(rng, n, 3, 90)
    scores = _noise(rng, n) + lab
    return Case("no_prediction", scores, lab, float(scores.max()))


def _case_scattered_predictions() -> Case:
    """Many short predicted events (noisy detector), several per zone of affiliation."""
    rng = np.random.default_rng(10)
    n = 5000
    lab = _random_segments(rng, n, 10, 200)
    scores = _noise(rng, n) + 0.7 * _lagged_response(lab, 0, 3)
    return Case("scattered_predictions", scores, lab, float(np.quantile(scores, 0.85)))


def _case_dense_anomalies() -> Case:
    rng = np.random.default_rng(11)
    n = 3000
    lab = _random_segments(rng, n, 40, 60)
    scores = _noise(rng, n) + 0.9 * lab
    return Case("dense_anomalies", scores, lab, float(np.quantile(scores, 0.75)), window=40)


def _case_perfect() -> Case:
    rng = np.random.default_rng(12)
    n = 2000
    lab = _random_segments(rng, n, 5, 70)
    scores = lab + 0.01 * rng.random(size=n)
    return Case("perfect", scores, lab, 0.5)


def _case_float32_like() -> Case:
    """Scores that went through float32 (as detector outputs do)."""
    rng = np.random.default_rng(13)
    n = 3000
    lab = _random_segments(rng, n, 6, 100)
    scores = (_skewed(rng, n) + 2.0 * _lagged_response(lab, 15, 31)).astype(np.float32)
    scores = scores.astype(np.float64)
    return Case("float32_scores", scores, lab, float(np.quantile(scores, 0.95)), window=50)


BUILDERS: tuple[Callable[[], Case], ...] = (
    _case_segments_seed0,
    _case_segments_lagged,
    _case_start_end,
    _case_single_points,
    _case_long_range,
    _case_ties,
    _case_constant,
    _case_binary_scores,
    _case_short_series,
    _case_no_prediction,
    _case_scattered_predictions,
    _case_dense_anomalies,
    _case_perfect,
    _case_float32_like,
)


def all_cases() -> dict[str, Case]:
    cases = [build() for build in BUILDERS]
    return {c.name: c for c in cases}


def paper_example() -> tuple[np.ndarray, np.ndarray]:
    """The example of Huet et al. (KDD 2022, fig. 2 / their ``test_paper``), in minutes -> points.

    Returns ``(predictions, labels)`` of length 180 * 60 built from their events, where an event
    ``[a, b)`` covers points ``a .. b - 1``.
    """
    n = 180 * 60
    gt = [(0, 10 * 60), (50 * 60, 70 * 60), (170 * 60, 175 * 60)]
    pred = [
        (5 * 60, 6 * 60),
        (7 * 60, 10 * 60),
        (11 * 60, 12 * 60),
        (40 * 60, 60 * 60),
        (115 * 60, 130 * 60),
        (135 * 60, 140 * 60),
        (165 * 60, 170 * 60),
    ]
    return _segments(n, pred), _segments(n, gt)


def smd_like(
    n: int = 708_420, anomaly_ratio: float = 0.0416, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """A series of SMD's test size (708,420 points, ~4.2 % anomalous) with realistic segments.

    Segment lengths are log-normal (median ~55 points, up to 3000), like SMD's; the scores are
    gamma noise plus a smoothed response to the anomalies. Returns ``(scores, labels)``.
    """
    rng = np.random.default_rng(seed)
    lab = np.zeros(n, dtype=bool)
    target = int(anomaly_ratio * n)
    count = 0
    while count < target:
        length = int(np.clip(rng.lognormal(4.0, 1.2), 1, 3000))
        start = int(rng.integers(0, n - length))
        count += int(length - np.count_nonzero(lab[start : start + length]))
        lab[start : start + length] = True
    response = np.convolve(lab.astype(np.float64), np.ones(20) / 20, mode="same")
    scores = _skewed(rng, n) + response * rng.uniform(0, 4, size=n)
    return scores, lab.astype(np.int64)
