"""The embedded demo dataset: a deterministic multivariate series with injected anomalies.

Eight channels driven by three latent oscillators (so channels are correlated), plus noise.
The test part carries four kinds of anomaly, each labelled: spikes, level shifts, frequency
changes and broken correlations between channels. Generated from a fixed seed, so every
install sees the same data without a download.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from madcluster.exceptions import ParameterError

ANOMALY_KINDS = ("spike", "level-shift", "frequency-change", "broken-correlation")


@dataclass(frozen=True)
class AnomalySegment:
    start: int
    end: int  # exclusive
    kind: str
    channel: int
    #: every channel the anomaly was injected into (a spike can hit several); () means (channel,)
    channels: tuple[int, ...] = ()

    @property
    def affected(self) -> tuple[int, ...]:
        """The channels the anomaly was injected into."""
        return self.channels or (self.channel,)


@dataclass(frozen=True)
class DemoData:
    train: np.ndarray  # (T, D) float32, normal only
    test: np.ndarray  # (T', D) float32
    labels: np.ndarray  # (T',) uint8
    segments: list[AnomalySegment] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)


def _latents(
    n: int, offset: int, periods: tuple[float, ...], freq_scale: np.ndarray | None = None
) -> np.ndarray:
    t = np.arange(offset, offset + n, dtype=np.float64)
    out = []
    for k, period in enumerate(periods):
        if freq_scale is None:
            phase = 2 * np.pi * t / period
        else:  # integrate a time-varying frequency so the phase stays continuous
            phase = 2 * np.pi * (t[0] / period + np.cumsum(freq_scale) / period)
        out.append(np.sin(phase + k))
    return np.stack(out, axis=1)


def make_demo_data(n_train: int = 6000, n_test: int = 5000, seed: int = 7) -> DemoData:
    """Build the demo series. Same arguments, same arrays, on every machine."""
    rng = np.random.default_rng(seed)
    periods = (50.0, 120.0, 23.0)
    n_channels = 8
    mixing = rng.normal(size=(len(periods), n_channels))
    mixing /= np.linalg.norm(mixing, axis=0, keepdims=True)
    bias = rng.normal(scale=0.5, size=n_channels)

    def observe(latent: np.ndarray, noise_rng: np.random.Generator) -> np.ndarray:
        return latent @ mixing + bias + noise_rng.normal(scale=0.1, size=(len(latent), n_channels))

    train = observe(_latents(n_train, 0, periods), rng)

    # test: frequency changes act on the latent oscillators before mixing
    freq_scale = np.ones(n_test)
    segments: list[AnomalySegment] = []
    slots = np.arange(300, n_test - 200, 400)  # well-separated anomaly slots
    kinds = [ANOMALY_KINDS[i % len(ANOMALY_KINDS)] for i in range(len(slots))]
    plan = []
    for start, kind in zip(slots, kinds):
        start = int(start + rng.integers(0, 60))
        length = 1 if kind == "spike" else int(rng.integers(40, 90))
        channel = int(rng.integers(0, n_channels))
        plan.append((start, length, kind, channel))
    latent = _latents(n_test, n_train, periods, freq_scale=None)
    if np.any(freq_scale != 1):
        latent = _latents(n_test, n_train, periods, freq_scale=freq_scale)
    test = observe(latent, rng)
    labels = np.zeros(n_test, dtype=np.uint8)
    for start, length, kind, channel in plan:
        end = start + length
        if kind == "spike":
            test[start, channel] += rng.choice([-1, 1]) * rng.uniform(4, 6)
        elif kind == "level-shift":
            test[start:end, channel] += rng.choice([-1, 1]) * rng.uniform(1.5, 2.5)
        elif kind == "frequency-change":
            # this channel oscillates three times faster than the oscillators it normally follows
            t = np.arange(start, end, dtype=np.float64)
            fast = np.stack(
                [np.sin(2 * np.pi * 3.0 * t / p + k) for k, p in enumerate(periods)], axis=1
            )
            test[start:end, channel] = fast @ mixing[:, channel] + bias[channel]
        elif kind == "broken-correlation":
            # this channel stops following the shared oscillators: it moves against them
            test[start:end, channel] = 2 * bias[channel] - test[start:end, channel]
        labels[start:end] = 1
        segments.append(AnomalySegment(start, end, kind, channel))
    return DemoData(
        train=train.astype(np.float32),
        test=test.astype(np.float32),
        labels=labels,
        segments=segments,
        columns=[f"sensor_{i}" for i in range(n_channels)],
    )


# ---------------------------------------------------------------------------------------------
# The anomaly suite: seven anomaly kinds on three kinds of base signal, with per-step kind labels.
# It is the synthetic half of the development set on which the library defaults were chosen.

SUITE_KINDS = (
    "spike",
    "level-shift",
    "trend-drift",
    "frequency-change",
    "variance-burst",
    "broken-correlation",
    "flat-line",
)
BASE_SIGNALS = ("sines", "random-walk", "seasonal")


@dataclass(frozen=True)
class SuiteData:
    """A train/test pair from :func:`make_anomaly_suite`.

    ``kinds`` holds, per test step, the index into ``kind_names`` of its anomaly kind, or -1 for a
    normal step; ``labels`` is ``kinds >= 0``.
    """

    train: np.ndarray  # (T, D) float32, normal only
    test: np.ndarray  # (T', D) float32
    labels: np.ndarray  # (T',) uint8
    kinds: np.ndarray  # (T',) int8, -1 = normal
    kind_names: tuple[str, ...]
    segments: list[AnomalySegment]
    base: str


def _ar1(rng: np.random.Generator, n: int, k: int, phi: float) -> np.ndarray:
    """k independent AR(1) paths of length n with unit stationary variance."""
    out = np.empty((n, k))
    out[0] = rng.normal(size=k)
    noise = rng.normal(scale=np.sqrt(1 - phi**2), size=(n, k))
    for t in range(1, n):
        out[t] = phi * out[t - 1] + noise[t]
    return out


def _clean_signal(base: str, n: int, n_channels: int, rng: np.random.Generator) -> np.ndarray:
    """A noise-free (T, D) signal of the given base kind; channels share latent factors."""
    t = np.arange(n, dtype=np.float64)[:, None]
    if base == "sines":
        periods = np.array([40.0, 97.0, 23.0])
        latent = np.sin(2 * np.pi * t / periods + rng.uniform(0, 2 * np.pi, size=3))
    elif base == "seasonal":
        season = np.sin(2 * np.pi * t / 100.0) + 0.5 * np.sign(np.sin(2 * np.pi * t / 100.0 + 1.0))
        slow = np.sin(2 * np.pi * t / 700.0)
        latent = np.concatenate([season, slow, 0.5 * _ar1(rng, n, 1, 0.95)], axis=1)
    elif base == "random-walk":
        # mean-reverting walks (AR(1), phi = 0.995): wander like random walks but stay stationary,
        # so train and test come from the same distribution
        latent = _ar1(rng, n, 3, 0.995)
    else:
        raise ParameterError(
            f"unknown base signal {base!r}; choose one of {', '.join(BASE_SIGNALS)}"
        )
    mixing = rng.normal(size=(latent.shape[1], n_channels))
    mixing /= np.linalg.norm(mixing, axis=0, keepdims=True)
    return latent @ mixing + rng.normal(scale=0.5, size=n_channels)


def make_anomaly_suite(
    base: str = "sines",
    n_train: int = 4000,
    n_test: int = 5000,
    n_channels: int = 6,
    per_kind: int = 2,
    noise: float = 0.1,
    seed: int = 0,
) -> SuiteData:
    """Normal training data and a test series with ``per_kind`` anomalies of each of the seven
    kinds.

    Kinds (amplitudes relative to each channel's standard deviation s):
    spike (one step, +-4-6 s on 1..D channels), level-shift (+-1.5-2.5 s, 30-80 steps), trend-drift
    (a ramp to +-3 s over 100-200 steps), frequency-change (the channel runs 3x faster, 60-100
    steps), variance-burst (extra noise 0.6 s, 50-100 steps), broken-correlation (the channel
    replays its own values from elsewhere in time, so its marginal is normal but it stops following
    the others, 40-80 steps), flat-line (stuck at its first value, 50-100 steps). Same arguments,
    same arrays.
    """
    if base not in BASE_SIGNALS:
        raise ParameterError(
            f"unknown base signal {base!r}; choose one of {', '.join(BASE_SIGNALS)}"
        )
    n_segments = per_kind * len(SUITE_KINDS)
    slot = n_test // (n_segments + 1)
    if slot < 260:
        raise ParameterError(
            f"n_test={n_test} is too short for {n_segments} anomalies (need >= "
            f"{260 * (n_segments + 1)})"
        )
    rng = np.random.default_rng(seed)
    # one long clean signal: train, test, and room for the 3x-faster replay and for replays
    clean = _clean_signal(base, n_train + 4 * n_test, n_channels, rng)
    scale = clean[:n_train].std(axis=0)
    train = clean[:n_train] + rng.normal(scale=noise, size=(n_train, n_channels)) * scale
    test_clean = clean[n_train : n_train + n_test]
    test = test_clean + rng.normal(scale=noise, size=(n_test, n_channels)) * scale
    kinds = np.full(n_test, -1, dtype=np.int8)
    order = rng.permutation(np.repeat(np.arange(len(SUITE_KINDS)), per_kind))
    segments: list[AnomalySegment] = []
    for i, k in enumerate(order):
        kind = SUITE_KINDS[k]
        start = int((i + 1) * slot - 60 + rng.integers(0, 60))
        c = int(rng.integers(0, n_channels))
        s = scale[c]
        sign = rng.choice([-1.0, 1.0])
        affected: tuple[int, ...] = (c,)
        if kind == "spike":
            length = 1
            chans = rng.choice(n_channels, size=int(rng.integers(1, n_channels + 1)), replace=False)
            test[start, chans] += sign * rng.uniform(4, 6) * scale[chans]
            affected = tuple(sorted(int(j) for j in chans))
        elif kind == "level-shift":
            length = int(rng.integers(30, 81))
            test[start : start + length, c] += sign * rng.uniform(1.5, 2.5) * s
        elif kind == "trend-drift":
            length = int(rng.integers(100, 201))
            test[start : start + length, c] += sign * np.linspace(0, 3 * s, length)
        elif kind == "frequency-change":
            length = int(rng.integers(60, 101))
            src = n_train + start + 3 * np.arange(length)
            test[start : start + length, c] += clean[src, c] - test_clean[start : start + length, c]
        elif kind == "variance-burst":
            length = int(rng.integers(50, 101))
            test[start : start + length, c] += rng.normal(scale=0.6 * s, size=length)
        elif kind == "broken-correlation":
            length = int(rng.integers(40, 81))
            src = n_train + n_test + int(rng.integers(0, 2 * n_test)) + np.arange(length)
            test[start : start + length, c] += clean[src, c] - test_clean[start : start + length, c]
        else:  # flat-line
            length = int(rng.integers(50, 101))
            test[start : start + length, c] = test[start, c]
        kinds[start : start + length] = k
        segments.append(AnomalySegment(start, start + length, kind, c, affected))
    return SuiteData(
        train=train.astype(np.float32),
        test=test.astype(np.float32),
        labels=(kinds >= 0).astype(np.uint8),
        kinds=kinds,
        kind_names=SUITE_KINDS,
        segments=sorted(segments, key=lambda seg: seg.start),
        base=base,
    )


def roc_auc_by_kind(
    scores: np.ndarray, kinds: np.ndarray, kind_names: tuple[str, ...]
) -> dict[str, float]:
    """ROC-AUC of ``scores`` on the normal steps plus the steps of each anomaly kind, and
    overall."""
    from sklearn.metrics import roc_auc_score

    scores = np.asarray(scores, dtype=np.float64)
    normal = kinds < 0
    out = {}
    for k, name in enumerate(kind_names):
        mask = normal | (kinds == k)
        if np.any(kinds == k):
            out[name] = float(roc_auc_score(kinds[mask] == k, scores[mask]))
    out["all"] = float(roc_auc_score(~normal, scores))
    return out
