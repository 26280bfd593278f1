"""Anomalies injected into normal rows: the label-free test each part of the score sits at fit
time (:mod:`madcluster.score.evidence`).

Why: which part sees a series' anomalies depends on the series, not on the kind of its columns.
Rows the model did not fit (the end of the training rows) with anomalies of known kinds and extent
injected are the one place where that can be measured without labels (selection on injected
anomalies is the best label-free choice on multivariate data in TSB-AutoAD, PVLDB 2025).

Each kind changes one to a quarter of the columns over a segment, in units of each column's
training deviation; short segments (3-20 rows) and long ones (40-200 rows, at most an eighth of
the rows) alternate:

* ``spike``: a few rows moved by 4-8 deviations; ``level``: a shift of 2-4; ``trend``: a ramp to
  3-5; ``noise``: added noise of 1.5;
* ``frequency``: the segment replays the rows around it twice as fast or half as fast;
* ``correlation``: each changed column replays another stretch of its own (its values stay
  normal, its relation to the other columns breaks);
* ``stuck``: the columns hold their value at the segment's start;
* ``shape``: the segment runs backwards (same values, same range, another shape).

Two more kinds change every column together, so that each row stays a normal row of the system
and only the order breaks (studies choose them through ``kinds``; the fit's evidence reads
:data:`KINDS`):

* ``reorder``: the segment's second half is played before its first (a sequence replayed out of
  order: a machine's states, a cycle's phases);
* ``transplant``: the segment is replaced by a stretch of the same rows from elsewhere, where its
  ends meet their neighbours best (normal values and shape, the wrong place in the series).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from madcluster.score.window_kmeans import FEW_LEVELS, column_levels

#: The injected kinds, in the order their events cycle.
KINDS = ("spike", "level", "trend", "frequency", "correlation", "stuck", "shape", "noise")
#: Kinds that change every column together (the event's columns are all of them).
WHOLE_ROW_KINDS = ("reorder", "transplant")
SHORT, LONG = (3, 20), (40, 200)
MIN_ROWS = 200  # a holdout shorter than this cannot hold a long event and its gaps
MIN_CHANGE = 0.5  # training deviations: an event that moved no value this far is not labelled


@dataclass(frozen=True)
class Injected:
    """A copy of normal rows with events injected: ``rows`` ``(T, D)``, ``labels`` ``(T,)`` 1 on
    injected rows, and per event its ``kinds``, ``starts`` and ``ends`` (end exclusive)."""

    rows: np.ndarray
    labels: np.ndarray
    kinds: tuple[str, ...]
    starts: np.ndarray
    ends: np.ndarray


def inject(
    rows: np.ndarray,
    scale: np.ndarray,
    seed: int,
    skip: int = 0,
    share: float = 0.12,
    kinds: tuple[str, ...] = KINDS,
) -> Injected:
    """Events of every one of ``kinds`` injected into a copy of ``rows`` (``scale``: each
    column's training deviation; ``skip``: rows at the start left clean, a scorer's warm-up),
    covering about ``share`` of the rows, kinds cycling from one chosen by ``seed``."""
    unknown = sorted(set(kinds) - set(_APPLY))
    if unknown or not kinds:
        named = f"unknown injected kind(s) {unknown}" if unknown else "no injected kind given"
        raise ValueError(f"{named}; the kinds are {sorted(_APPLY)}")
    rng = np.random.default_rng(seed)
    data = np.array(rows, dtype=np.float64)
    n, width = data.shape
    levels = column_levels(data)
    movable = np.flatnonzero(levels > FEW_LEVELS)
    if len(movable) == 0:
        movable = np.flatnonzero(levels > 1)
    if len(movable) == 0:
        movable = np.arange(width)
    labels = np.zeros(n, dtype=np.uint8)
    starts: list[int] = []
    ends: list[int] = []
    long_cap = max(SHORT[1] + 1, min(LONG[1], (n - skip) // 8))
    budget = share * (n - skip)
    at = skip + int(rng.integers(10, 40))
    k = int(rng.integers(len(kinds)))
    done: list[str] = []
    while budget > 0:
        kind = kinds[k % len(kinds)]
        low, high = SHORT if (k // len(kinds) + len(done)) % 2 == 0 else (LONG[0], long_cap)
        if kind == "spike":
            low, high = 1, 4
        length = int(rng.integers(low, max(low + 1, high)))
        gap = max(30, length)
        if at + length + gap > n:
            break
        cols = rng.choice(
            movable, size=max(1, int(rng.integers(1, len(movable) // 4 + 2))), replace=False
        )
        if kind in WHOLE_ROW_KINDS:
            cols = np.arange(width)
        before = data[at : at + length, cols].copy()
        _APPLY[kind](data, at, at + length, cols, scale, rng)
        moved = np.abs(data[at : at + length, cols] - before) / scale[cols]
        if moved.max(initial=0.0) >= MIN_CHANGE:  # an event that changed nothing is not one
            labels[at : at + length] = 1
            done.append(kind)
            starts.append(at)
            ends.append(at + length)
            budget -= length
        at += length + gap + int(rng.integers(0, gap))
        k += 1
    return Injected(data, labels, tuple(done), np.asarray(starts), np.asarray(ends))


Apply = Callable[[np.ndarray, int, int, np.ndarray, np.ndarray, np.random.Generator], None]


def _sign(rng: np.random.Generator, size: int) -> np.ndarray:
    return rng.choice([-1.0, 1.0], size=size)


def _spike(data, start, end, cols, scale, rng) -> None:
    data[start:end, cols] += _sign(rng, len(cols)) * rng.uniform(4, 8, len(cols)) * scale[cols]


def _level(data, start, end, cols, scale, rng) -> None:
    data[start:end, cols] += _sign(rng, len(cols)) * rng.uniform(2, 4, len(cols)) * scale[cols]


def _trend(data, start, end, cols, scale, rng) -> None:
    ramp = np.linspace(0.0, 1.0, end - start)[:, None]
    size = _sign(rng, len(cols)) * rng.uniform(3, 5, len(cols)) * scale[cols]
    data[start:end, cols] += ramp * size


def _noise(data, start, end, cols, scale, rng) -> None:
    data[start:end, cols] += rng.normal(0.0, 1.5, (end - start, len(cols))) * scale[cols]


def _frequency(data, start, end, cols, scale, rng) -> None:
    length = end - start
    speed = 2.0 if rng.random() < 0.5 else 0.5
    span = round(length * speed)
    origin = min(max(0, start - span // 4), len(data) - span) if span < len(data) else 0
    source = data[origin : origin + span, cols].copy()
    where = np.linspace(0, len(source) - 1, length)
    for j in range(len(cols)):
        data[start:end, cols[j]] = np.interp(where, np.arange(len(source)), source[:, j])


def _correlation(data, start, end, cols, scale, rng) -> None:
    length = end - start
    for col in cols:
        other = int(rng.integers(0, len(data) - length))
        if abs(other - start) < length:  # not its own stretch
            other = (other + len(data) // 2) % (len(data) - length)
        data[start:end, col] = data[other : other + length, col]


def _stuck(data, start, end, cols, scale, rng) -> None:
    data[start:end, cols] = data[start, cols]


def _shape(data, start, end, cols, scale, rng) -> None:
    data[start:end, cols] = data[start:end, cols][::-1]


def _reorder(data, start, end, cols, scale, rng) -> None:
    middle = (start + end) // 2
    data[start:end] = np.concatenate([data[middle:end], data[start:middle]])


def _transplant(data, start, end, cols, scale, rng) -> None:
    length = end - start
    floor = np.where(scale > 0, scale, 1.0)
    best: tuple[float, int] | None = None
    for origin in rng.integers(0, len(data) - length, size=40):
        if abs(int(origin) - start) < 2 * length:  # not its own neighbourhood
            continue
        piece = data[origin : origin + length]
        gap = float(
            np.abs((piece[0] - data[start - 1]) / floor).sum()
            + np.abs((piece[-1] - data[min(end, len(data) - 1)]) / floor).sum()
        )
        if best is None or gap < best[0]:
            best = (gap, int(origin))
    if best is not None:
        data[start:end] = data[best[1] : best[1] + length].copy()


_APPLY: dict[str, Apply] = {
    "spike": _spike,
    "level": _level,
    "trend": _trend,
    "frequency": _frequency,
    "correlation": _correlation,
    "stuck": _stuck,
    "shape": _shape,
    "noise": _noise,
    "reorder": _reorder,
    "transplant": _transplant,
}

__all__ = ["KINDS", "MIN_ROWS", "WHOLE_ROW_KINDS", "Injected", "inject"]
