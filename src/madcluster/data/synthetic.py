"""The embedded demo dataset: a deterministic multivariate series with injected anomalies.

Eight channels driven by three latent oscillators (so channels are correlated), plus noise.
The test part carries four kinds of anomaly, each labelled: spikes, level shifts, frequency
changes and broken correlations between channels. Generated from a fixed seed, so every
install sees the same data without a download.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

ANOMALY_KINDS = ("spike", "level-shift", "frequency-change", "broken-correlation")


@dataclass(frozen=True)
class AnomalySegment:
    start: int
    end: int  # exclusive
    kind: str
    channel: int


@dataclass(frozen=True)
class DemoData:
    train: np.ndarray  # (T, D) float32, normal only
    test: np.ndarray  # (T', D) float32
    labels: np.ndarray  # (T',) uint8
    segments: list[AnomalySegment] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)


def _latents(n: int, offset: int, periods: tuple[float, ...], freq_scale: np.ndarray | None = None) -> np.ndarray:
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
            fast = np.stack([np.sin(2 * np.pi * 3.0 * t / p + k) for k, p in enumerate(periods)], axis=1)
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
