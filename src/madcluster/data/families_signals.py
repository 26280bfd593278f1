"""Development families of signals: body-worn accelerometers, service metrics with drops, and
chaotic signals with 20-row shape anomalies (registered in :mod:`madcluster.data.families`).

Why: the first five families all had anomalies a window of the defaults' size saw easily; these
three are of the kinds where the parts disagreed on real data (a different movement in a periodic
body signal, a partial outage in a daily cycle, a short change of shape in a chaotic signal).

Each maker takes ``(rng, n_train, n_test, seed)`` and returns ``(train, test, labels)``; the
training rows hold no anomaly.
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np


def slots(rng: np.random.Generator, n_test: int, count: int, longest: int) -> list[int]:
    """``count`` anomaly starts spread over the test rows, none in the first 10%."""
    usable = n_test - n_test // 10 - longest
    edges = np.linspace(n_test // 10, n_test // 10 + usable, count + 1)
    return [int(rng.integers(lo, max(lo + 1, hi - longest))) for lo, hi in pairwise(edges)]


def mackey_glass(n: int, rng: np.random.Generator, tau: int = 17, step: int = 3) -> np.ndarray:
    """Mackey-Glass series (chaotic for tau = 17), sampled every ``step`` unit-time steps."""
    total = n * step + 500
    x = np.empty(total + tau)
    x[: tau + 1] = 1.2 + 0.1 * rng.normal(size=tau + 1)
    for t in range(tau, total + tau - 1):
        x[t + 1] = x[t] + 0.2 * x[t - tau] / (1 + x[t - tau] ** 10) - 0.1 * x[t]
    return x[tau + 500 :: step][:n]


# --- accelerometer: 3 sensors x 3 axes, walking with episodes of another movement -------------

_MODES = ("walk", "run", "stairs", "still", "fall")
_RATE = np.array([1.0, 1.25, 0.85, 1.0, 1.0])  # step rate of each mode, relative to walking


def _motion(phase: np.ndarray, amp: np.ndarray, lag: np.ndarray) -> np.ndarray:
    """(n, 9) periodic motion: channel c is sum_k amp[c, k] sin(k phase - lag[c, k])."""
    k = np.arange(1, amp.shape[1] + 1)
    return (amp[None] * np.sin(k[None, None] * phase[:, None, None] - lag[None])).sum(axis=2)


def accelerometer(rng: np.random.Generator, n_train: int, n_test: int, seed: int):
    n, period = n_train + n_test, rng.uniform(45, 65)  # one stride in rows (about 50 Hz)
    # the subject: how each sensor (wrist, hip, ankle) moves in each axis while walking
    walk = rng.uniform(0.05, 0.3, size=(9, 4)) * np.array([1.0, 0.8, 0.4, 0.25])
    walk[6:] *= 2.0  # the ankle moves most, with sharp heel strikes (higher harmonics)
    walk[6:, 2:] *= 2.0
    lag = rng.uniform(0, 2 * np.pi, size=(9, 4))
    up = np.tile([0.0, 1.0, 0.0], 3) + rng.normal(scale=0.12, size=9)  # gravity, sensors tilted
    lying = np.tile([1.0, 0.0, 0.0], 3) + rng.normal(scale=0.25, size=9)
    # the modes each row is in (weights, faded over 12 rows), and the labels
    weight = np.zeros((n, len(_MODES)))
    weight[:, 0] = 1
    labels = np.zeros(n_test)
    impacts = []
    for i, start in enumerate(slots(rng, n_test, 2, 250)):
        length, mode = int(rng.integers(100, 250)), 1 + (i + seed) % 4
        at = n_train + start
        fade = np.clip(np.minimum(np.arange(length) + 1, length - np.arange(length)) / 12, 0, 1)
        weight[at : at + length, 0] -= fade
        weight[at : at + length, mode] += fade
        labels[start : start + length] = 1
        if _MODES[mode] == "fall":
            impacts.append(at)
    # the subject walks faster and slower, with more and less vigour, over a few hundred rows
    cadence = 1 + 0.08 * np.convolve(rng.normal(size=n), np.ones(400) / 20, "same")
    rate = 2 * np.pi / period * cadence * (weight @ _RATE)
    phase = np.cumsum(rate)
    strength = 1 + 0.2 * np.convolve(rng.normal(size=n), np.ones(300) / 300 * 10, "same")
    run = walk * np.array([1.25, 1.35, 1.5, 1.7])
    stairs = walk * np.array([1.1, 1.2, 0.8, 0.7])
    stairs[3:6, 0] += 0.1  # the hip lifts the body at every step
    moving = (
        weight[:, :1] * _motion(phase, walk, lag)
        + weight[:, 1:2] * _motion(phase, run, lag)
        + weight[:, 2:3] * _motion(phase, stairs, lag + 0.4)
    )
    sway = 0.02 * np.sin(2 * np.pi * np.arange(n) / 400)[:, None]
    gravity = (1 - weight[:, 4:5]) * up[None] + weight[:, 4:5] * lying[None]
    gravity = gravity + weight[:, 2:3] * 0.08 * np.roll(up, 1)[None]  # leaning into the stairs
    rows = gravity + strength[:, None] * moving + weight[:, 3:4] * sway
    for at in impacts:  # the fall itself: a short burst of large accelerations
        rows[at : at + 8] += rng.normal(scale=1.2, size=(8, 9))
    rows += rng.normal(scale=0.04, size=(n, 9))
    return rows[:n_train], rows[n_train:], labels


# --- dailydrops: service metrics at 5 minutes whose anomalies are partial outages --------------


def _traffic(rng: np.random.Generator, n: int) -> np.ndarray:
    """Requests per 5 minutes: a daily cycle of 288 rows, quieter weekends, a slow trend."""
    t = np.arange(n)
    day = 2 * np.pi * (t % 288) / 288
    peaks = rng.uniform(0.6, 1.0, size=2)  # the morning and evening peaks of this service
    daily = (
        0.25
        + peaks[0] * np.exp(2.5 * (np.cos(day - 2 * np.pi * 10 / 24) - 1))
        + peaks[1] * np.exp(2.0 * (np.cos(day - 2 * np.pi * 20 / 24) - 1))
    )
    weekend = ((t // 288) % 7 >= 5).astype(float)
    weekly = 1 - rng.uniform(0.2, 0.4) * np.convolve(weekend, np.ones(24) / 24, "same")
    trend = 1 + 0.1 * t / n
    busy = np.repeat(rng.normal(scale=0.08, size=n // 288 + 1), 288)[:n]  # some days are busier
    burst = np.convolve(rng.random(n) < 0.004, np.ones(6), "same") * rng.uniform(
        0.2, 0.6
    )  # campaigns
    mean = rng.uniform(500, 3000) * daily * weekly * trend * np.exp(busy) * (1 + burst)
    return mean * np.exp(rng.normal(scale=0.06, size=n)) + rng.normal(size=n) * np.sqrt(mean)


def dailydrops(rng: np.random.Generator, n_train: int, n_test: int, seed: int):
    n = n_train + n_test
    requests = _traffic(rng, n)
    factor = np.ones(n)  # the share of traffic that still arrives
    labels = np.zeros(n_test)
    for i, start in enumerate(slots(rng, n_test, 8, 60)):
        length, depth = int(rng.integers(6, 60)), rng.uniform(0.2, 0.6)
        shape = np.ones(length)
        if i % 3 == 2:  # a slow drop: falls over a third of its rows and recovers as slowly
            edge = max(2, length // 3)
            ramp = np.arange(1, edge + 1) / edge
            shape[:edge], shape[-edge:] = ramp, ramp[::-1]
        factor[n_train + start : n_train + start + length] = 1 - (1 - depth) * shape
        labels[start : start + length] = 1
    seen = requests * factor
    ok = seen * (1 - np.clip(0.004 + 0.002 * rng.normal(size=n), 0, None))
    errors = np.abs(seen - ok) + rng.poisson(2.0, size=n)
    sent = seen * rng.uniform(20, 40) * np.exp(rng.normal(scale=0.05, size=n))  # kB out
    users = np.convolve(seen, np.ones(6) / 6, "full")[:n] * 0.3 + rng.normal(scale=5, size=n)
    latency = 80 + 40 * (requests / requests.max()) ** 2 + rng.gamma(2.0, 3.0, size=n)
    rows = np.stack([seen, ok, errors, sent, users, latency], axis=1)
    return rows[:n_train], rows[n_train:], labels


# --- chaotic20: chaotic signals with 20-row shape anomalies ------------------------------------


Vector = tuple[float, float, float]


def _ode(deriv, state: Vector, n: int, dt: float, every: int) -> np.ndarray:
    """RK4 solution of ``deriv``, the first coordinate every ``every`` steps after a warm-up
    (plain floats: a 3-vector in numpy costs more in calls than in arithmetic)."""

    def ahead(x: Vector, k: Vector, h: float) -> Vector:
        return (x[0] + h * k[0], x[1] + h * k[1], x[2] + h * k[2])

    out, x = np.empty(n), state
    for i in range(-300, n):
        for _ in range(every):
            k1 = deriv(x)
            k2 = deriv(ahead(x, k1, dt / 2))
            k3 = deriv(ahead(x, k2, dt / 2))
            k4 = deriv(ahead(x, k3, dt))
            x = tuple(x[j] + dt / 6 * (k1[j] + 2 * k2[j] + 2 * k3[j] + k4[j]) for j in range(3))
        if i >= 0:
            out[i] = x[0]
    return out


def _lorenz(x: Vector) -> Vector:
    return (10 * (x[1] - x[0]), x[0] * (28 - x[2]) - x[1], x[0] * x[1] - 8 / 3 * x[2])


def _rossler(x: Vector) -> Vector:
    return (-x[1] - x[2], x[0] + 0.2 * x[1], 0.2 + x[2] * (x[0] - 5.7))


def _chaos(rng: np.random.Generator, n: int, seed: int) -> np.ndarray:
    start = tuple(float(v) for v in rng.uniform(0.5, 1.5, size=3))
    if seed % 3 == 0:
        return mackey_glass(n, rng, step=1)
    if seed % 3 == 1:
        return _ode(_lorenz, start, n, 0.005, 3)
    return _ode(_rossler, start, n, 0.05, 2)


def chaotic20(rng: np.random.Generator, n_train: int, n_test: int, seed: int):
    length, n = 20, n_train + 2 * n_test
    signal = _chaos(rng, n, seed)
    signal = (signal - signal.mean()) / signal.std()
    train, test = signal[:n_train].copy(), signal[n_train : n_train + n_test].copy()
    spare = signal[n_train + n_test :]
    labels = np.zeros(n_test)
    for i, slot in enumerate(slots(rng, n_test, 10, 60)):
        # of 40 candidate starts, the one where the new piece meets its neighbours best
        best = None
        for start in range(slot, slot + 40):
            piece = _reshaped(test[start : start + length], spare, i % 3, rng)
            gap = abs(piece[0] - test[start]) + abs(piece[-1] - test[start + length - 1])
            if best is None or gap < best[0]:
                best = (gap, start, piece)
        _, start, piece = best
        test[start : start + length] = piece
        labels[start : start + length] = 1
    train = train + rng.normal(scale=0.02, size=n_train)
    test = test + rng.normal(scale=0.02, size=n_test)
    return train[:, None], test[:, None], labels


def _reshaped(segment: np.ndarray, spare: np.ndarray, kind: int, rng: np.random.Generator):
    """The segment played backwards (0), warped in time with its ends kept (1), or a piece of the
    same signal from elsewhere, at another phase (2)."""
    m = len(segment)
    if kind == 0:
        return segment[::-1]
    if kind == 1:
        src = (m - 1) * (np.arange(m) / (m - 1)) ** 2.2
        return np.interp(src, np.arange(m), segment)
    offset = int(rng.integers(0, len(spare) - m))
    return spare[offset : offset + m]
