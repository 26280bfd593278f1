"""The sampled discord reading of older model files (:mod:`madcluster.score.discord_sampled`)
against a direct loop and as a stream; a file that holds it loads as it (``legacy.discord_from_arrays``)
and scores as it did."""

from __future__ import annotations

import numpy as np
import pytest
from series_helpers import periodic_pair

from madcluster.score.discord import STD_FLOOR, covering_minimum
from madcluster.score.discord_sampled import SampledDiscord
from madcluster.score.legacy import SampledDiscordCovering, discord_from_arrays
from madcluster.score.parts import FitContext
from madcluster.score.scales import dominant_period

TINY = {"window_size": 16, "epochs": 1, "epoch_windows": 64, "batch_size": 32, "random_state": 0}
EXACT = 1e-9


@pytest.fixture
def test_rows() -> np.ndarray:
    rows = periodic_pair(300, 1)
    rows[150:170, 0] = rows[150:170, 0][::-1].copy()  # a reversed stretch: same values, other shape
    return rows


def _close(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape
    assert np.max(np.abs(got - want), initial=0.0) <= EXACT * max(
        1.0, np.abs(want).max(initial=0.0)
    )


def _direct_distance(
    part: SampledDiscord, read: np.ndarray, start: int, exclude_near: bool = False
) -> float:
    """One subsequence's distance to its nearest neighbour, by a loop over the neighbours."""
    m, p = part.length, part.segment
    sub = read[start : start + m].T  # (C, m)
    centred = sub - sub.mean(axis=1, keepdims=True)
    z = centred / np.maximum(centred.std(axis=1, keepdims=True), STD_FLOOR)
    q = z.reshape(z.shape[0], m // p, p).mean(axis=2).ravel()
    best = np.inf
    for nb, nb_start in zip(part.neighbours, part.neighbour_starts, strict=True):
        if exclude_near and abs(int(nb_start) - start) < m:
            continue
        best = min(best, float(np.mean((q - nb) ** 2)))
    return float(np.sqrt(best)) if np.isfinite(best) else 0.0


def test_the_period_sets_the_subsequence_length():
    assert abs(dominant_period(periodic_pair(2000, 0, period=40.0), fallback=99) - 40) <= 1
    rng = np.random.default_rng(0)
    assert dominant_period(rng.normal(size=(2000, 2)), fallback=99) in (99, *range(3, 400))
    part = SampledDiscord.fit(periodic_pair(2000, 0, period=40.0), FitContext(100))
    assert 38 <= part.length <= 41 and part.length % part.segment == 0


def _block(t: int, n: int, m: int) -> int:
    """The first of the m subsequences step t of n reads."""
    return min(max(0, t - m + 1), max(0, n - 2 * m + 1))


def test_values_against_a_direct_loop(test_rows):
    part = SampledDiscord.fit(periodic_pair(600, 0), FitContext(16))
    read = part.read(test_rows)
    n, m = len(read), part.length
    each = np.asarray([_direct_distance(part, read, s) for s in range(n - m + 1)])
    # a step's value: the least distance of the subsequences covering it; within m - 1 steps of
    # an end, of the m subsequences nearest to it
    direct = np.asarray([each[_block(t, n, m) : _block(t, n, m) + m].min() for t in range(n)])
    _close(part.values(test_rows), direct)
    # no causal reading: at once the part adds nothing (its reading and statistics are 0)
    assert not part.at_once(test_rows).any() and not part.reference_at_once(test_rows).any()
    assert part.final_after() == m - 1 and part.reads_ahead


def test_training_statistics_leave_each_subsequence_own_neighbourhood_out():
    train = periodic_pair(600, 0)
    part = SampledDiscord.fit(train, FitContext(16))
    read = part.read(train)
    n, m = len(read), part.length
    reference = part.reference_values(train)  # per step, fewer subsequences than the cap: exact
    each = np.asarray(
        [_direct_distance(part, read, s, exclude_near=True) for s in range(n - m + 1)]
    )
    direct = [each[_block(t, n, m) : _block(t, n, m) + m].min() for t in range(0, n, 37)]
    _close(reference[::37], np.asarray(direct))
    assert part.values(train).mean() < reference.mean()  # in-sample, a subsequence matches itself


def test_the_reversed_stretch_stands_out_and_its_neighbours_do_not(test_rows):
    part = SampledDiscord.fit(periodic_pair(2000, 0), FitContext(16))
    values = part.values(test_rows)
    reference = part.reference_values(periodic_pair(2000, 0))
    assert values[150:170].min() > np.quantile(reference, 0.999)
    assert np.median(values[:120]) < np.quantile(reference, 0.99)
    # the steps just outside the stretch are covered by subsequences that miss it
    assert (
        values[140:145].max() < values[150:170].min()
        and values[175:180].max() < values[150:170].min()
    )


def test_stream_equals_the_whole_series(test_rows):
    part = SampledDiscord.fit(periodic_pair(600, 0), FitContext(16))
    whole, causal = part.values(test_rows), part.at_once(test_rows)
    stream = part.stream()
    got = []
    for a, b in ((0, 1), (1, 5), (5, 40), (40, 41), (41, 300)):
        got.append(stream.append(test_rows[a:b]))
        final = stream.final_before(b)
        _close(
            stream.values(np.arange(max(0, final - 3), final)),
            part.values(test_rows[:b])[max(0, final - 3) : final],
        )
        stream.forget_before(max(0, final - 3))
    _close(np.concatenate(got), causal)
    kept = max(0, stream.final_before(300) - 3)  # the steps not forgotten
    _close(stream.values(np.arange(kept, 300)), whole[kept:])
    restored = part.stream()
    restored.load(stream.state())
    _close(restored.values(np.arange(kept, 300)), whole[kept:])


def test_files_round_trip():
    """A discord part's arrays that hold ``neighbours`` load as the sampled reading."""
    part = SampledDiscord.fit(periodic_pair(600, 0), FitContext(16))
    again = discord_from_arrays(part.to_arrays())
    assert type(again) is SampledDiscord
    rows = periodic_pair(200, 3)
    _close(again.values(rows), part.values(rows))


def test_a_flat_stretch_stays_flat_instead_of_blowing_its_noise_up():
    """A subsequence's deviation is floored at STD_FLOOR training deviations: a stretch that barely
    moves keeps z-values near 0 rather than noise rescaled to unit variance."""
    part = SampledDiscord.fit(periodic_pair(600, 0), FitContext(16))
    rng = np.random.default_rng(3)
    flat = (0.3 + 1e-4 * rng.normal(size=(200, 2))).astype(np.float64)
    shapes = part.shapes(part.read(flat), np.arange(0, 200 - part.length, 7))
    assert np.abs(shapes).max() < 0.05
    moving = part.shapes(part.read(periodic_pair(200, 4)), np.arange(0, 200 - part.length, 7))
    assert np.abs(moving).max() > 0.5


def test_a_series_ends_score_as_its_middle_and_old_files_as_they_did():
    """Steps near either end read as many subsequences as the middle: on fresh normal series the
    first and last rows score like the rest (with the covering subsequences alone, fewer there,
    they scored 2 training deviations higher). A model file from before reads as it did."""
    part = SampledDiscord.fit(periodic_pair(2000, 0), FitContext(16))
    m = part.length
    values = np.stack([part.values(periodic_pair(400, seed)) for seed in range(1, 21)])
    scale = part.reference_values(periodic_pair(2000, 0)).std()
    ends = np.concatenate([values[:, : m // 2], values[:, -m // 2 :]], axis=1)
    middle = values[:, m:-m]
    assert abs(ends.mean() - middle.mean()) < 0.5 * scale
    arrays = {k: v for k, v in part.to_arrays().items() if k != "balanced_edges"}
    old = discord_from_arrays(arrays)
    assert type(old) is SampledDiscordCovering
    assert type(discord_from_arrays(old.to_arrays())) is SampledDiscordCovering
    assert not old.balanced_edges and part.balanced_edges
    x = periodic_pair(400, 1)
    each = old.distances(old.read(x), np.arange(len(x) - m + 1))
    _close(old.values(x), covering_minimum(each, 0, np.arange(len(x)), m))
    assert old.values(x)[0] > part.values(x)[0]
