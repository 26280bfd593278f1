"""The discord part's training reading from a sample of the training subsequences
(:meth:`~madcluster.score.discord.SubsequenceReadings.reference_values`, here of the sampled
reading of older files): a step that no sampled subsequence covers takes the value of the
nearest one, against a direct loop. The sample is all of them below
``MAX_REFERENCE`` (4096) subsequences and covers every step below about 65,000 rows, so the cap is
lowered here. Found by the mutation run of ``docs/mutation.md`` (no test reached that path)."""

from __future__ import annotations

import numpy as np
import pytest
from series_helpers import periodic_pair

from madcluster.score import discord_subsequences
from madcluster.score.discord import STD_FLOOR
from madcluster.score.discord_sampled import SampledDiscord
from madcluster.score.parts import FitContext


def _direct_distance(part: SampledDiscord, read: np.ndarray, start: int) -> float:
    """One subsequence's distance to its nearest neighbour at least m steps away, by a loop."""
    m, p = part.length, part.segment
    sub = read[start : start + m].T
    centred = sub - sub.mean(axis=1, keepdims=True)
    z = centred / np.maximum(centred.std(axis=1, keepdims=True), STD_FLOOR)
    q = z.reshape(z.shape[0], m // p, p).mean(axis=2).ravel()
    best = min(
        (
            float(np.mean((q - nb) ** 2))
            for nb, nb_start in zip(part.neighbours, part.neighbour_starts, strict=True)
            if abs(int(nb_start) - start) >= m
        ),
        default=np.inf,
    )
    return float(np.sqrt(best)) if np.isfinite(best) else 0.0


@pytest.mark.parametrize("cap", [2, 7, 12, 200])
def test_a_step_no_sampled_subsequence_covers_takes_the_nearest_ones_value(monkeypatch, cap):
    rows = periodic_pair(500, 0)
    part = SampledDiscord.fit(rows, FitContext(16))
    monkeypatch.setattr(discord_subsequences, "MAX_REFERENCE", cap)
    n, m = len(rows), part.length
    read = part.read(rows)
    starts = np.unique(np.linspace(0, n - m, cap).round()).astype(int)
    sampled = np.asarray([_direct_distance(part, read, int(s)) for s in starts])
    got = part.reference_values(rows)
    assert got.shape == (n,)
    uncovered = 0
    for t in range(m - 1, n - m + 1):  # the steps m subsequences cover (the ends read fewer)
        covering = (starts <= t) & (t < starts + m)
        if covering.any():
            assert got[t] == pytest.approx(sampled[covering].min(), abs=1e-9)
            continue
        uncovered += 1
        wanted = min(max(t - m // 2, starts[0]), starts[-1])
        gaps = np.abs(starts - wanted)
        nearest = sampled[gaps == gaps.min()]  # either of two equally near ones
        assert np.isclose(nearest, got[t], rtol=0, atol=1e-9).any(), t
    # sparse samples leave most steps uncovered; dense ones cover each step several times
    assert uncovered > (n - 2 * m) // 2 if cap < 20 else uncovered == 0


def test_a_series_shorter_than_a_subsequence_reads_zero():
    part = SampledDiscord.fit(periodic_pair(300, 0), FitContext(16))
    short = periodic_pair(part.length - 1, 1)
    assert np.array_equal(part.reference_values(short), np.zeros(part.length - 1))
    assert np.array_equal(part.values(short), np.zeros(part.length - 1))


def test_a_series_of_one_subsequence_reads_its_distance_on_every_step():
    part = SampledDiscord.fit(periodic_pair(300, 0), FitContext(16))
    one = periodic_pair(part.length, 2)
    want = _direct_distance(part, part.read(one), 0)
    assert want > 0
    got = part.reference_values(one)
    assert got.shape == (part.length,) and np.allclose(got, want, rtol=0, atol=1e-9)


def test_a_series_of_one_subsequence_reads_its_nearest_neighbour_on_every_step():
    part = SampledDiscord.fit(periodic_pair(300, 0), FitContext(16))
    one = periodic_pair(part.length, 2)
    m, p = part.length, part.segment
    sub = part.read(one).T
    centred = sub - sub.mean(axis=1, keepdims=True)
    z = centred / np.maximum(centred.std(axis=1, keepdims=True), STD_FLOOR)
    q = z.reshape(z.shape[0], m // p, p).mean(axis=2).ravel()
    want = np.sqrt(min(np.mean((q - nb) ** 2) for nb in part.neighbours))
    assert want > 0
    assert np.allclose(part.values(one), want, rtol=0, atol=1e-9)


def test_a_subsequence_with_no_neighbour_m_steps_away_reads_zero():
    """A training series shorter than two subsequences: every neighbour overlaps every training
    subsequence, so none is compared, and the training reading is 0 rather than infinite."""
    rows = periodic_pair(24, 0)
    part = SampledDiscord.fit(rows, FitContext(16))
    assert part.length == 16 and part.neighbour_starts.max() < part.length
    assert np.array_equal(part.reference_values(rows), np.zeros(24))


def test_values_with_segments_of_several_steps_against_a_direct_loop():
    """Subsequences longer than ``SEGMENTS`` steps are averaged over segments of p > 1 steps."""
    part = SampledDiscord.fit(periodic_pair(600, 0, period=70.0), FitContext(16))
    m, p = part.length, part.segment
    assert p > 1
    rows = periodic_pair(200, 1, period=70.0)
    rows[100:130, 1] = rows[100:130, 1][::-1].copy()
    read = part.read(rows)
    each = []
    for start in range(len(rows) - m + 1):
        sub = read[start : start + m].T
        centred = sub - sub.mean(axis=1, keepdims=True)
        z = centred / np.maximum(centred.std(axis=1, keepdims=True), STD_FLOOR)
        q = z.reshape(z.shape[0], m // p, p).mean(axis=2).ravel()
        each.append(np.sqrt(np.min(np.mean((q[None, :] - part.neighbours) ** 2, axis=1))))
    n = len(rows)
    inner = np.arange(m - 1, n - m + 1)  # the steps m subsequences cover (the ends read fewer)
    direct = [min(each[t - m + 1 : t + 1]) for t in inner]
    assert np.allclose(part.values(rows)[inner], direct, rtol=0, atol=1e-9)
