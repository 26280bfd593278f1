"""The sampled discord reading's fit (:meth:`~madcluster.score.discord_sampled.SampledDiscord.fit`,
the reading older model files hold): the columns it reads, its float64 arithmetic whatever the
input's dtype, and a file's round trip of every fitted array. Found by the mutation run of
``docs/mutation.md``."""

from __future__ import annotations

import numpy as np
import pytest

from madcluster.score.discord_sampled import SampledDiscord
from madcluster.score.legacy import discord_from_arrays
from madcluster.score.parts import FitContext


def _wave(n: int, seed: int, period: float = 20.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    return np.sin(2 * np.pi * t / period) + 0.02 * rng.normal(size=n)


def _columns(n: int, seed: int) -> dict[str, np.ndarray]:
    t = np.arange(n)
    return {
        "wave": _wave(n, seed),
        "binary": (t % 40 < 20).astype(float),
        "three": (t // 7 % 3).astype(float),
        "four": (t // 5 % 4).astype(float),
        "constant": np.full(n, 2.5),
    }


@pytest.mark.parametrize(
    ("names", "read"),
    [
        # more than 3 distinct values: the columns with a shape
        (("binary", "wave", "three", "constant", "four"), [1, 4]),
        # none: those that move at all
        (("constant", "binary", "three"), [1, 2]),
        # none moves: every column
        (("constant", "constant"), [0, 1]),
    ],
)
def test_the_part_reads_the_columns_with_a_shape(names, read):
    rows = np.stack([_columns(400, 0)[n] for n in names], axis=1).astype(np.float32)
    part = SampledDiscord.fit(rows, FitContext(16))
    assert part.columns.tolist() == read and part.columns.dtype == np.int64
    chosen = rows[:, read].astype(np.float64)
    assert np.array_equal(part.mean, chosen.mean(axis=0))
    # each column's training deviation; 1 for a constant one (no division by 0)
    spread = chosen.std(axis=0)
    assert np.array_equal(part.scale, np.where(spread > 0, spread, 1.0))


def test_float32_rows_fit_the_part_of_their_float64_values():
    rows = np.stack([_wave(400, 0), _wave(400, 1, period=25.0)], axis=1).astype(np.float32)
    part = SampledDiscord.fit(rows, FitContext(16))
    wide = SampledDiscord.fit(rows.astype(np.float64), FitContext(16))
    for name in ("mean", "scale", "neighbours"):
        got = getattr(part, name)
        assert got.dtype == np.float64 and np.array_equal(got, getattr(wide, name)), name
    assert (part.length, part.segment) == (wide.length, wide.segment)
    test_rows = np.stack([_wave(200, 2), _wave(200, 3, period=25.0)], axis=1).astype(np.float32)
    assert np.array_equal(part.values(test_rows), part.values(test_rows.astype(np.float64)))


def test_a_file_round_trip_keeps_every_fitted_array():
    rows = np.stack([_wave(500, 0), _wave(500, 1, period=25.0)], axis=1).astype(np.float32)
    part = SampledDiscord.fit(rows, FitContext(16))
    again = discord_from_arrays(part.to_arrays())
    for name in ("columns", "mean", "scale", "neighbours", "neighbour_starts"):
        got, want = getattr(again, name), getattr(part, name)
        assert got.dtype == want.dtype and np.array_equal(got, want), name
    assert (again.length, again.segment) == (part.length, part.segment)
    # the training reading (neighbours at least m steps away) reads the neighbours' starts
    assert np.array_equal(again.reference_values(rows), part.reference_values(rows))


def _two_waves(n: int, period: float) -> np.ndarray:
    t = np.arange(n)
    return np.stack([np.sin(2 * np.pi * t / period), np.cos(2 * np.pi * t / period)], axis=1)


@pytest.mark.parametrize(
    ("rows", "window", "length"),
    [
        (_two_waves(300, 8.0), 16, 16),  # a short period: MIN_LENGTH (16)
        (_two_waves(300, 120.0), 16, 75),  # a long one: at most a quarter of the training rows
        (np.full((400, 2), 3.0), 200, 100),  # no period: the window, at most a quarter
        (np.full((400, 2), 3.0), 40, 40),
    ],
)
def test_the_subsequence_length_follows_the_period_within_its_bounds(rows, window, length):
    part = SampledDiscord.fit(rows.astype(np.float32), FitContext(window))
    assert part.length == length and part.length % part.segment == 0
    assert part.segment == -(-length // 32)


@pytest.mark.parametrize("n", [16, 17, 18, 40])
def test_a_short_training_series_keeps_each_subsequence_as_a_neighbour(n):
    t = np.arange(n)
    rows = np.stack([np.sin(t / 2), np.cos(t / 3)], axis=1).astype(np.float32)
    part = SampledDiscord.fit(rows, FitContext(16))
    assert part.length == 16
    assert part.neighbour_starts.tolist() == list(range(n - 15))
    assert part.neighbour_starts.dtype == np.int64
    assert np.allclose(part.neighbours, part.shapes(part.read(rows), np.arange(n - 15)))
    assert np.allclose(part.values(rows), 0.0, atol=1e-6)  # every subsequence is a neighbour


def test_the_deviation_floor_is_in_training_deviations_of_the_column():
    """A column that moves by 100 in training: a test stretch moving by 0.5 (0.005 training
    deviations) is flat, its subsequences' z-values held near 0 by the floor, whatever its level."""
    rows = (100.0 * np.stack([_wave(400, 0), _wave(400, 1, period=25.0)], axis=1)).astype(
        np.float32
    )
    part = SampledDiscord.fit(rows, FitContext(16))
    assert np.allclose(part.scale, rows.astype(np.float64).std(axis=0))
    rng = np.random.default_rng(4)
    for level in (0.0, 300.0):
        stretch = level + 0.5 * rng.normal(size=(120, 2))
        shapes = part.shapes(part.read(stretch), np.arange(0, 120 - part.length, 5))
        assert np.abs(shapes).max() < 0.5
