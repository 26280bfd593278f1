"""Each part over its spread on the scored series (``series_scale_rows``, issue 34): the scale
against its definition, what it does to a part that moved on every row, and a stream that waits
for the scale's steps and then gives the whole series' scores."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from series_helpers import periodic_pair

from madcluster.score.combination import Combination, series_scale
from madcluster.score.combination_stream import CombinationStream
from madcluster.score.parts import FitContext

WINDOW = 16
SCALE_ROWS = 60


def test_the_scale_is_the_iqr_over_1_349_and_never_below_1():
    rng = np.random.default_rng(0)
    spread = 5.0 + rng.normal(scale=4.0, size=4000)  # moved by 5, spread 4
    q25, q75 = np.percentile(spread, [25, 75])
    assert series_scale(spread) == pytest.approx((q75 - q25) / 1.349)
    assert 3.8 < series_scale(spread) < 4.2
    assert series_scale(rng.normal(size=4000)) == pytest.approx(1.0, abs=0.06)
    assert series_scale(0.1 * rng.normal(size=100)) == 1.0  # narrower than training: 1
    assert series_scale(np.empty(0)) == 1.0


@pytest.fixture(scope="module")
def fitted() -> Combination:
    rows = periodic_pair(600, 0)
    own = np.random.default_rng(5).normal(size=len(rows))
    return Combination.fit(("discord",), rows, own, FitContext(WINDOW, 0), scale_rows=SCALE_ROWS)


def _moved_own_and_a_discord(n: int = 300) -> tuple[np.ndarray, np.ndarray]:
    """Test rows with a reversed stretch (a discord, its part's z-score about 500 at the peak) and
    an own score that moved for good: 2,000 training deviations up, with 500 of noise, on every
    row (its noise alone above the discord's peak)."""
    rows = periodic_pair(n, 1)
    rows[200:220, 0] = rows[200:220, 0][::-1].copy()
    own = 2000.0 + 500.0 * np.random.default_rng(6).normal(size=n)
    return rows, own


def test_a_part_that_moved_on_every_row_no_longer_drowns_the_others(fitted):
    rows, own = _moved_own_and_a_discord()
    plain = replace(fitted, scale_rows=0)
    scaled, unscaled = fitted.score(rows, own), plain.score(rows, own)
    # the own part's scale: its spread on the first steps, in training deviations (about 500)
    mean, std = fitted.stats["own"][:2]
    assert fitted.series_scales({"own": own, "discord": np.zeros(len(rows))})["own"] == (
        pytest.approx(series_scale((own[:SCALE_ROWS] - mean) / std))
    )
    # on the training scales the moved part's noise ranks first; over its spread the discord does
    top = 20
    assert np.isin(np.argsort(unscaled)[-top:], np.arange(195, 240)).mean() < 0.5
    assert np.isin(np.argsort(scaled)[-top:], np.arange(195, 240)).mean() > 0.8


def test_a_stream_waits_for_the_scale_steps_then_gives_the_whole_series_scores(fitted):
    rows, own = _moved_own_and_a_discord()
    whole = fitted.score(rows, own)
    delay = fitted.final_after()
    stream, finals, saved = CombinationStream(fitted), [], None
    for t in range(len(rows)):
        update = stream.update(own[t : t + 1], rows[t : t + 1])
        finals.append(update.final_scores)
        done = sum(len(f) for f in finals)
        if t + 1 < SCALE_ROWS + delay:
            assert done == 0 and stream.scales is None  # the scale's steps are not all final
            # the pending scores: the whole series' of the rows so far (its own first steps)
            if (t + 1) % 25 == 0:
                so_far = fitted.score(rows[: t + 1], own[: t + 1])
                np.testing.assert_allclose(stream.pending_scores(), so_far, rtol=0, atol=1e-9)
        else:
            assert done >= SCALE_ROWS and stream.scales is not None
        if t == SCALE_ROWS + delay + 10:
            saved = {k: np.array(v, copy=True) for k, v in stream.state().items()}
    got = np.concatenate([*finals, stream.pending_scores()])
    np.testing.assert_allclose(got, whole, rtol=0, atol=1e-9 * np.abs(whole).max())
    # a stream restored after its scales were fixed goes on with them
    again = CombinationStream(fitted)
    again.load(saved)
    assert again.scales == stream.scales
    rest = [
        again.update(own[t : t + 1], rows[t : t + 1]).final_scores
        for t in range(SCALE_ROWS + delay + 11, len(rows))
    ]
    start = again.pending_from - sum(len(r) for r in rest)
    np.testing.assert_allclose(
        np.concatenate(rest),
        whole[start : again.pending_from],
        rtol=0,
        atol=1e-9 * np.abs(whole).max(),
    )
