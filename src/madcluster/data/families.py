"""Development families: generated series of the kinds the TSB-AD development set lacks.

Why: defaults chosen on the mean of one development set (46 TSB-AD MSL / SMAP / SMD series) did
not transfer to data of other kinds (benchmarks/results/parts/families.md). Each family here is
one kind of data with the anomalies that kind has, generated from fixed seeds (no downloaded
anomaly data), so a default can be required to hold on *every* family (its worst family
decides), not on one set's mean:

* ``chaotic``: one deterministic or chaotic channel (Mackey-Glass, a pulse train with harmonics);
  anomalies change the shape of a few cycles (time reversal, a local time warp, a splice at the
  wrong phase) without moving the level or the range.
* ``rhythm``: six channels of a periodic sensor (a gait-like cycle seen with different harmonics
  and lags); anomalies are episodes of another rhythm (faster, slower, irregular steps).
* ``server``: six server metrics with a daily cycle (requests, CPU, latency, memory, network,
  disk); anomalies are frequency changes, level shifts, broken correlations and stuck channels.
* ``point``: four noisy correlated channels with short (1-3 step) spikes and dips.
* ``drift``: server metrics whose normal level and spread move during the test (a shifted normal
  that must not be flagged as a whole) with broken-correlation and rhythm anomalies on top.

Five more (``ALL_FAMILIES``; the makers live in :mod:`madcluster.data.families_plant` and
:mod:`madcluster.data.families_signals`) are kinds on which the parts disagreed on real data:

* ``states``: a machine cycling through discrete states (a command channel, six sensors following
  each state); anomalies break the sequence (a state skipped, repeated, out of order, held too
  long), every value in its normal range.
* ``accelerometer``: nine channels (three sensors x three axes) of a subject walking; anomalies are
  100-600 rows of another movement (running, stairs, standing still, a fall and lying).
* ``dailydrops``: six service metrics at 5 minutes (a daily cycle of 288 rows, quieter weekends);
  anomalies are partial outages (traffic falls to 20-60 % for 6-60 rows), some falling slowly.
* ``water``: 33 channels of a water network (tank levels, pumps switched on them, pressures, a
  valve, hourly demand); attacks of 100-240 rows spoof a level, force a pump, close the valve or
  make a reading drift.
* ``chaotic20``: Mackey-Glass, Lorenz or Rossler; anomalies are 20-row shape changes (reversed,
  warped, another phase) that meet their neighbours.

``FAMILIES`` stays the first five (the studies that iterate over it keep their series).
``make_family(name, seed)`` returns a :class:`FamilySeries`; same arguments, same arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from madcluster.data import families_plant, families_signals
from madcluster.data.families_signals import mackey_glass, slots
from madcluster.exceptions import ParameterError

FAMILIES = ("chaotic", "rhythm", "server", "point", "drift")
# the families of the left-out study: the first five and five more (kinds the first lacked)
ALL_FAMILIES = (*FAMILIES, "states", "accelerometer", "dailydrops", "water", "chaotic20")
SERIES_PER_FAMILY = 4


@dataclass(frozen=True)
class FamilySeries:
    """Normal training rows, a test series and its per-step labels (1 = anomalous)."""

    name: str
    train: np.ndarray  # (T, D) float32
    test: np.ndarray  # (T', D) float32
    labels: np.ndarray  # (T',) uint8


def family_names(name: str) -> list[str]:
    """The series names of one family, ``<family>-<seed>``."""
    return [f"{name}-{seed}" for seed in range(SERIES_PER_FAMILY)]


def make_family(name: str, seed: int, n_train: int = 5000, n_test: int = 5000) -> FamilySeries:
    """One series of family ``name`` (see the module docstring)."""
    if name not in _MAKERS:
        raise ParameterError(f"unknown family {name!r}; choose one of {', '.join(ALL_FAMILIES)}")
    rng = np.random.default_rng([ALL_FAMILIES.index(name), seed])
    train, test, labels = _MAKERS[name](rng, n_train, n_test, seed)
    return FamilySeries(
        f"{name}-{seed}", train.astype(np.float32), test.astype(np.float32), labels.astype(np.uint8)
    )


def _pulse_train(n: int, rng: np.random.Generator, period: float) -> np.ndarray:
    """A deterministic cycle with sharp harmonics (ECG-like), period ``period`` steps."""
    phase = 2 * np.pi * np.arange(n) / period + rng.uniform(0, 2 * np.pi)
    return np.exp(3 * np.cos(phase)) / np.exp(3) + 0.3 * np.sin(2 * phase + 1.0)


def _chaotic(rng: np.random.Generator, n_train: int, n_test: int, seed: int):
    n = n_train + 2 * n_test
    signal = mackey_glass(n, rng) if seed % 2 == 0 else _pulse_train(n, rng, rng.uniform(40, 70))
    signal = (signal - signal.mean()) / signal.std()
    train, test = signal[:n_train].copy(), signal[n_train : n_train + n_test].copy()
    spare = signal[n_train + n_test :]
    labels = np.zeros(n_test)
    for i, start in enumerate(slots(rng, n_test, 6, 160)):
        length = int(rng.integers(40, 120))
        segment = test[start : start + length]
        kind = i % 3
        if kind == 0:  # the same values, played backwards
            test[start : start + length] = segment[::-1]
        elif kind == 1:  # a local time warp: the middle runs 1.5x slower
            src = np.linspace(0, length - 1, int(length * 1.5))[:length]
            test[start : start + length] = np.interp(src, np.arange(length), segment)
        else:  # a splice from elsewhere, at another phase
            offset = int(rng.integers(0, len(spare) - length))
            test[start : start + length] = spare[offset : offset + length]
        labels[start : start + length] = 1
    noise = 0.02
    train = train + rng.normal(scale=noise, size=n_train)
    test = test + rng.normal(scale=noise, size=n_test)
    return train[:, None], test[:, None], labels


def _gait(phase: np.ndarray, harmonics: np.ndarray, lags: np.ndarray) -> np.ndarray:
    """Channels of one periodic motion: channel c is sum_k h[c,k] sin(k (phase - lag_c))."""
    k = np.arange(1, harmonics.shape[1] + 1)
    angles = k[None, None, :] * (phase[:, None, None] - lags[None, :, None])
    return (harmonics[None] * np.sin(angles)).sum(axis=2)


def _rhythm(rng: np.random.Generator, n_train: int, n_test: int, seed: int):
    channels, period = 6, rng.uniform(40, 80)
    harmonics = rng.uniform(0.2, 1.0, size=(channels, 3)) * np.array([1.0, 0.6, 0.3])
    lags = rng.uniform(0, 2 * np.pi, size=channels)
    n = n_train + n_test
    rate = np.full(n, 2 * np.pi / period) * (
        1 + 0.03 * np.convolve(rng.normal(size=n), np.ones(50) / 50, "same")
    )
    labels = np.zeros(n_test)
    for i, start in enumerate(slots(rng, n_test, 5, 320)):
        length = int(rng.integers(100, 220))
        kind = i % 3
        at = n_train + start
        if kind == 0:
            rate[at : at + length] *= 1.5
        elif kind == 1:
            rate[at : at + length] *= 0.6
        else:  # irregular steps: the rate jumps every few steps
            rate[at : at + length] *= np.repeat(rng.uniform(0.4, 1.8, size=length // 10 + 1), 10)[
                :length
            ]
        labels[start : start + length] = 1
    rows = _gait(np.cumsum(rate), harmonics, lags) + rng.normal(scale=0.05, size=(n, channels))
    return rows[:n_train], rows[n_train:], labels


def _server_clean(rng: np.random.Generator, n: int, day: int) -> np.ndarray:
    """Six server metrics over ``n`` steps with a ``day``-step cycle; channels follow requests."""
    t = np.arange(n)
    daily = 0.5 + 0.4 * np.sin(2 * np.pi * t / day - np.pi / 2) + 0.1 * np.sin(4 * np.pi * t / day)
    requests = daily * (1 + 0.05 * rng.normal(size=n))
    cpu = 0.8 * requests + 0.05 * rng.normal(size=n)
    latency = 0.2 + 0.5 * np.maximum(cpu - 0.6, 0) ** 2 + 0.02 * rng.normal(size=n)
    memory = 0.5 + 0.3 * ((t % (day // 3)) / (day // 3)) + 0.01 * rng.normal(size=n)  # GC saw-tooth
    network = 0.9 * requests + 0.1 * np.sin(2 * np.pi * t / 37) + 0.05 * rng.normal(size=n)
    disk = 0.3 + 0.05 * rng.normal(size=n) + 0.3 * (rng.random(n) < 0.01)  # background jobs
    return np.stack([requests, cpu, latency, memory, network, disk], axis=1)


def _server_anomalies(
    rng: np.random.Generator,
    test: np.ndarray,
    clean_future: np.ndarray,
    count: int,
    kinds: tuple[str, ...],
) -> np.ndarray:
    labels = np.zeros(len(test))
    scale = test.std(axis=0)
    for i, start in enumerate(slots(rng, len(test), count, 260)):
        kind, length = kinds[i % len(kinds)], int(rng.integers(60, 200))
        end = start + length
        if kind == "frequency":  # requests (and what follows them) cycle 4x faster
            src = start + (4 * np.arange(length)) % (len(clean_future) - start)
            test[start:end, [0, 1, 4]] = clean_future[src][:, [0, 1, 4]]
        elif kind == "level":
            c = int(rng.integers(0, 6))
            test[start:end, c] += rng.choice([-1, 1]) * rng.uniform(2, 3) * scale[c]
        elif kind == "correlation":  # CPU stops following requests: it replays another time
            src = int(rng.integers(0, len(clean_future) - length))
            test[start:end, 1] = clean_future[src : src + length, 1]
        else:  # stuck channel
            c = int(rng.integers(0, 6))
            test[start:end, c] = test[start, c]
        labels[start:end] = 1
    return labels


def _server(rng: np.random.Generator, n_train: int, n_test: int, seed: int):
    day = int(rng.choice([144, 288]))
    rows = _server_clean(rng, n_train + 2 * n_test, day)
    train, test = rows[:n_train], rows[n_train : n_train + n_test].copy()
    labels = _server_anomalies(
        rng, test, rows[n_train + n_test :], 6, ("frequency", "level", "correlation", "stuck")
    )
    return train, test, labels


def _point(rng: np.random.Generator, n_train: int, n_test: int, seed: int):
    n, channels = n_train + n_test, 4
    t = np.arange(n)[:, None]
    latent = np.sin(2 * np.pi * t / rng.uniform(30, 90, size=2))
    rows = latent @ rng.normal(size=(2, channels)) + 0.3 * rng.normal(size=(n, channels))
    train, test = rows[:n_train], rows[n_train:].copy()
    scale = train.std(axis=0)
    labels = np.zeros(n_test)
    for start in slots(rng, n_test, 15, 5):
        length = int(rng.integers(1, 4))
        chans = rng.choice(channels, size=int(rng.integers(1, 3)), replace=False)
        test[start : start + length, chans] += (
            rng.choice([-1, 1]) * rng.uniform(3, 6) * scale[chans]
        )
        labels[start : start + length] = 1
    return train, test, labels


def _drift(rng: np.random.Generator, n_train: int, n_test: int, seed: int):
    day = int(rng.choice([144, 288]))
    rows = _server_clean(rng, n_train + 2 * n_test, day)
    train, test = rows[:n_train], rows[n_train : n_train + n_test].copy()
    labels = _server_anomalies(rng, test, rows[n_train + n_test :], 6, ("correlation", "frequency"))
    # the new normal: two channels move by 2-4 training deviations over the first fifth of the test
    # and stay there; their noise grows by half
    scale = train.std(axis=0)
    ramp = np.minimum(np.arange(n_test) / (n_test / 5), 1.0)
    for c in rng.choice([2, 3, 5], size=2, replace=False):
        test[:, c] += ramp * rng.uniform(2, 4) * scale[c] + 0.5 * ramp * 0.05 * rng.normal(
            size=n_test
        )
    return train, test, labels


_MAKERS = {
    "chaotic": _chaotic,
    "rhythm": _rhythm,
    "server": _server,
    "point": _point,
    "drift": _drift,
    "states": families_plant.states,
    "accelerometer": families_signals.accelerometer,
    "dailydrops": families_signals.dailydrops,
    "water": families_plant.water,
    "chaotic20": families_signals.chaotic20,
}
