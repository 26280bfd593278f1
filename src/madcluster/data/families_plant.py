"""Development families of plants: a machine cycling through operating states, and a water
network of tanks, pumps and pressures under attack (registered in
:mod:`madcluster.data.families`).

Why: on real processes the anomalies are often wrong *behaviour* with every value in its normal
range (a step of a cycle skipped, a pump running when its tank is full), which neither a value
range nor a short window's shape shows; these families make that kind of anomaly.

Each maker takes ``(rng, n_train, n_test, seed)`` and returns ``(train, test, labels)``; the
training rows hold no anomaly.
"""

from __future__ import annotations

import numpy as np

from madcluster.data.families_signals import slots

# --- states: a batch machine cycling through discrete operating states -------------------------


def _schedule(
    rng: np.random.Generator, n: int, mean: np.ndarray, breaks: dict[int, str], optional: int = 0
):
    """(state, label, cycle) per row of cycles through the states in order, each state lasting
    0.75-1.25 of its ``mean``; cycle ``c`` in ``breaks`` is broken: a state ``skipped``,
    ``repeated``, two ``swapped`` or one ``held`` 2-3 times its mean. State ``optional`` (if
    not 0) is left out of a third of the normal cycles (a second program of the machine)."""
    k = len(mean)
    states: list[int] = []
    flags: list[bool] = []
    cycles: list[int] = []
    cycle = 0
    while len(states) < n:
        order, hold, kind = list(range(k)), np.ones(k + 1), breaks.get(cycle)
        at = int(rng.integers(1, k - 1))
        at = at + 1 if at == optional else at
        wrong: set[int] = set()
        if optional and kind is None and rng.random() < 1 / 3:
            order.remove(optional)
        elif kind == "skipped":
            order.pop(at)
            wrong = {at}  # the state that came too early
        elif kind == "repeated":
            order.insert(at, order[at])
            wrong = {at + 1}
        elif kind == "swapped":
            order[at], order[at + 1] = order[at + 1], order[at]
            wrong = {at, at + 1}
        elif kind == "held":
            hold[at] = rng.uniform(2.0, 3.0)
            wrong = {at}
        for j, s in enumerate(order):
            rows = max(3, round(mean[s] * hold[j] * rng.uniform(0.75, 1.25)))
            states += [s] * rows
            flags += [j in wrong] * rows
            cycles += [cycle] * rows
        cycle += 1
    return np.array(states[:n]), np.array(flags[:n], dtype=float), np.array(cycles[:n])


def _follow(target: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """Each channel follows its target with a first-order lag of ``tau`` rows."""
    out = np.empty_like(target)
    out[0] = target[0]
    alpha = 1 / tau
    for t in range(1, len(target)):
        out[t] = out[t - 1] + alpha * (target[t] - out[t - 1])
    return out


def states(rng: np.random.Generator, n_train: int, n_test: int, seed: int):
    k, sensors = int(rng.integers(5, 8)), 6
    mean = rng.uniform(25, 70, size=k)  # how long each state lasts, in rows
    command = rng.permutation(np.arange(k) % 4).astype(float)  # 4 command levels for k states
    # where each sensor settles in each state: two actuators (a valve, a motor) on or off, four
    # process values at one of three levels, so that neighbouring states often share a level
    levels = np.column_stack(
        [rng.integers(0, 2, size=(k, 2)), rng.choice([0.2, 0.5, 0.8], size=(k, sensors - 2))]
    ).astype(float)
    tau = np.r_[1.0, 1.0, rng.uniform(3, 15, size=sensors - 3), 60.0]  # the last never settles
    cycle_rows = int(mean.sum())
    kinds = ("skipped", "repeated", "swapped", "held")
    starts = slots(rng, n_test, 5, 3 * cycle_rows)
    breaks = {s // cycle_rows + 1: kinds[(i + seed) % 4] for i, s in enumerate(starts)}
    optional = int(rng.integers(1, k - 2))
    train, _, train_cycles = _schedule(rng, n_train, mean, {}, optional)
    test, labels, test_cycles = _schedule(rng, n_test, mean, breaks, optional)
    rows = []
    for states, cycles in ((train, train_cycles), (test, test_cycles)):
        batch = 1 + 0.08 * rng.normal(size=(cycles[-1] + 1, sensors))  # batch-to-batch spread
        batch[:, :2] = 1
        target = levels[states] * batch[cycles]
        sensor = _follow(target, tau) + rng.normal(scale=0.04, size=(len(states), sensors))
        rows.append(np.column_stack([command[states], sensor]))
    return rows[0], rows[1], labels


# --- water: tanks filled by pumps switched on tank levels, pressures following the pumps --------

_PUMPS = np.array([2, 2, 2, 1, 1])  # pumps at each tank's station; tank 1 also feeds the valve
_TANKS = len(_PUMPS)


def _demand(rng: np.random.Generator, n: int) -> np.ndarray:
    """(n, tanks) hourly demand of each tank's zone: a daily cycle, quieter weekends, noise."""
    t = np.arange(n)
    day = 2 * np.pi * (t % 24) / 24
    shape = (
        0.6
        + 0.35 * np.exp(1.8 * (np.cos(day - 2 * np.pi * 8 / 24) - 1))
        + 0.3 * np.exp(1.5 * (np.cos(day - 2 * np.pi * 19 / 24) - 1))
    )
    weekly = 1 - 0.1 * (((t // 24) % 7) >= 5)
    zone = rng.uniform(0.5, 1.0, size=_TANKS)
    noise = np.exp(rng.normal(scale=0.08, size=(n, _TANKS)))
    return (shape * weekly)[:, None] * zone[None] * noise


def _plant(rng: np.random.Generator, demand: np.ndarray) -> dict[str, np.ndarray]:
    """One network's pump flows, tank areas and the control's switching levels."""
    # the lead pump alone falls behind the morning peak, so the lag pump runs most days
    lead = rng.uniform(1.0, 1.3, size=_TANKS) * demand.mean(axis=0) * np.where(_PUMPS > 1, 1.0, 1.4)
    flow = np.column_stack([lead, 0.7 * lead])
    flow[_PUMPS == 1, 1] = 0.0
    return {
        "flow": flow,
        "area": rng.uniform(1.5, 3.0, size=_TANKS),
        "low": rng.uniform(1.0, 1.8, size=_TANKS),
        "high": rng.uniform(4.0, 5.0, size=_TANKS),
        "start": rng.uniform(2.0, 4.0, size=_TANKS),
    }


def _simulate(
    plant: dict[str, np.ndarray],
    demand: np.ndarray,
    spoof: np.ndarray,
    force: np.ndarray,
    valve: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """(levels (n, tanks), pump flows (n, tanks, 2)): each station switches its pumps on the level
    it reads (``spoof`` where not NaN) with hysteresis; pump 1 ``force``d where not NaN."""
    low, high, flow = plant["low"], plant["high"], plant["flow"]
    level, on = plant["start"].copy(), np.zeros((_TANKS, 2), dtype=bool)
    levels, pumps = np.empty(demand.shape), np.zeros((*demand.shape, 2), dtype=bool)
    through_valve = np.where(np.arange(_TANKS) == 1, 0.5, 0.0)  # of tank 1's zone's demand
    for i in range(len(demand)):
        read = np.where(np.isnan(spoof[i]), level, spoof[i])
        on[:, 0] = (read < low) | (on[:, 0] & (read <= high))
        on[:, 1] = (_PUMPS > 1) & ((read < low - 0.1) | (on[:, 1] & (read < (low + high) / 2)))
        on[:, 0] = np.where(np.isnan(force[i]), on[:, 0], force[i] > 0)
        outflow = demand[i] * (1 - through_valve * (1 - valve[i]))
        level = np.clip(level + ((on * flow).sum(axis=1) - outflow) / plant["area"], 0.05, 6.0)
        levels[i], pumps[i] = level, on
    return levels, pumps * flow[None]


def _readings(
    rng: np.random.Generator,
    demand: np.ndarray,
    levels: np.ndarray,
    seen: np.ndarray,
    flows: np.ndarray,
    valve: np.ndarray,
) -> np.ndarray:
    """The 33 channels SCADA sees: tank levels (as read: ``seen``), pump status and flow, each
    station's discharge pressure, each zone's junction pressure, the valve's position and flow;
    the pressures follow the real ``levels``."""
    n = len(levels)
    pumps = flows.reshape(n, -1)[:, [2 * j + k for j, p in enumerate(_PUMPS) for k in range(p)]]
    status = (pumps > 0).astype(float)
    pumps = pumps * (1 + 0.03 * rng.normal(size=pumps.shape))
    discharge = 2.0 + 1.5 * status.sum(axis=1, keepdims=True) / 8 + 0.3 * levels
    junction = 3.0 + 0.5 * levels - 1.2 * demand
    junction[:, 1] -= 0.8 * (1 - valve)  # the zone past the valve loses pressure when it closes
    valve_flow = valve * demand[:, 1] * 0.5
    rows = np.column_stack([seen, status, pumps, discharge, junction, valve, valve_flow])
    noisy = np.r_[
        np.full(_TANKS, 0.02), np.zeros(8), np.zeros(8), np.full(2 * _TANKS, 0.05), 0, 0.01
    ]
    return rows + rng.normal(size=rows.shape) * noisy


def water(rng: np.random.Generator, n_train: int, n_test: int, seed: int):
    n = n_train + n_test
    demand = _demand(rng, n)
    plant = _plant(rng, demand)
    spoof, force = np.full((n, _TANKS), np.nan), np.full((n, _TANKS), np.nan)
    valve = (np.arange(n) % 24 >= 5).astype(float)  # closed from midnight to five each night
    labels, drifts = np.zeros(n_test), []
    kinds = ("spoof", "pump", "valve", "drift")
    normal = None
    for i, start in enumerate(slots(rng, n_test, 2, 240)):
        length, kind = int(rng.integers(100, 240)), kinds[(2 * seed + i) % 4]
        rows, tank = slice(n_train + start, n_train + start + length), int(rng.integers(0, _TANKS))
        if kind == "spoof":  # the level read replays last week's: the control acts on it
            if normal is None:
                normal, _ = _simulate(plant, demand, spoof.copy(), force, valve)
            spoof[rows, tank] = normal[rows.start - 168 : rows.stop - 168, tank]
        elif kind == "pump":  # forced on until the tank is full, or off until it is empty
            force[rows, tank] = float(i % 2 == 0)
        elif kind == "valve":
            valve[rows] = 0.0  # closed by day too
        else:  # a level or pressure reading drifts away, by up to 2.5 of its deviations
            channel = int(rng.choice(np.r_[0:_TANKS, 21 : 21 + 2 * _TANKS]))
            drifts.append((rows, channel, np.linspace(0, rng.choice([-2.5, 2.5]), length)))
        labels[start : start + length] = 1
    levels, flows = _simulate(plant, demand, spoof, force, valve)
    seen = np.where(np.isnan(spoof), levels, spoof)
    out = _readings(rng, demand, levels, seen, flows, valve)
    scale = out[:n_train].std(axis=0)
    for rows, channel, ramp in drifts:
        out[rows, channel] += ramp * scale[channel]
    return out[:n_train], out[n_train:], labels
