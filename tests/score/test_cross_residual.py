"""The same-step cross-column residual (``cross``): its one-inverse residuals against each column's
own ridge fit, what it reads, its stream, and that it adds to the at-once score alone."""

from __future__ import annotations

import numpy as np
import pytest

from madcluster.score.autoregressive import lagged
from madcluster.score.combination import Combination
from madcluster.score.cross_residual import CrossResidual
from madcluster.score.parts import FitContext, parts_from_arrays, parts_to_arrays


def coupled(n: int, seed: int) -> np.ndarray:
    """Three columns moving together (a slow cycle plus a shared noise) and one on its own."""
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    load = np.sin(2 * np.pi * t / 90) + 0.3 * rng.normal(size=n)
    return np.stack([load, 0.8 * load + 0.05 * rng.normal(size=n), 0.9 * load + 0.05 * rng.normal(size=n),
                     rng.normal(size=n)], axis=1)  # fmt: skip


def test_each_residual_is_that_columns_own_ridge_fit():
    rows = coupled(600, 0)
    part = CrossResidual.fit(rows, lags=3, ridge=1.0)
    z = (rows - rows.mean(axis=0)) / rows.std(axis=0)
    lags = lagged(z, 3)
    errors = []
    for j in range(4):  # the reference: column j on the other columns now and every column's lags
        a = np.hstack([np.delete(z, j, axis=1), lags])
        coef = np.linalg.solve(a.T @ a + np.eye(a.shape[1]), a.T @ z[:, j])
        errors.append((z[:, j] - a @ coef) ** 2)
    errors = np.stack(errors, axis=1)
    expected = ((errors - errors[3:].mean(axis=0)) / errors[3:].std(axis=0)).mean(axis=1)
    expected[:3] = 0.0  # a series' first lags steps: no full history
    np.testing.assert_allclose(part.values(rows), expected, rtol=1e-8, atol=1e-8)


def test_a_column_leaving_the_others_is_read_on_its_first_rows():
    train, test = coupled(3000, 1), coupled(600, 2)
    part = CrossResidual.fit(train)
    normal = part.values(test)
    broken = test.copy()
    broken[300:400, 1] = test[100:200, 1]  # the second column replays another time, alone
    values = part.values(broken)
    assert values[300] > np.quantile(normal, 0.999)  # its first row already
    assert np.median(values[300:310]) > np.quantile(normal, 0.999)
    assert np.median(values[300:400]) > 10 * np.quantile(normal, 0.99)
    shared = test.copy()
    shared[300:400, :3] *= 1.0 + 1e-3  # the coupled columns moving together stay explained
    assert np.median(part.values(shared)[300:400]) < np.quantile(normal, 0.99)


def test_fewer_than_two_columns_read_zero():
    rows = np.column_stack([coupled(400, 3)[:, 0], np.repeat([0.0, 1.0], 200)])  # one continuous
    part = CrossResidual.fit(rows)
    assert np.array_equal(part.values(rows), np.zeros(len(rows)))
    assert np.array_equal(part.stream().append(rows[:10]), np.zeros(10))


def test_its_stream_reads_as_the_whole_series_and_survives_its_state():
    train, test = coupled(1000, 4), coupled(300, 5)
    part = CrossResidual.fit(train)
    stream, parts = part.stream(), []
    for chunk in np.array_split(test[:150], 7):
        parts.append(stream.append(chunk))
    again = part.stream()
    again.load(stream.state())
    parts.append(again.append(test[150:]))
    np.testing.assert_array_equal(np.concatenate(parts), part.values(test))


def test_it_round_trips_through_a_files_arrays():
    part = CrossResidual.fit(coupled(500, 6))
    (back,) = parts_from_arrays(("cross",), parts_to_arrays([part]))
    np.testing.assert_array_equal(back.values(coupled(200, 7)), part.values(coupled(200, 7)))


@pytest.mark.parametrize("weight", [1.0, 2.0])
def test_it_adds_to_the_at_once_score_alone(weight):
    train, test = coupled(2000, 8), coupled(400, 9)
    test[200:260, 1] = test[20:80, 1]
    context, own = FitContext(50, 0), np.zeros(len(train))
    weights = {"ar": 1.0, "cross": weight}
    with_cross = Combination.fit(("ar", "cross"), train, own, context, weights)
    without = Combination.fit(("ar",), train, own, context, weights)
    zeros = np.zeros(len(test))
    np.testing.assert_array_equal(with_cross.score(test, zeros), without.score(test, zeros))
    added = with_cross.at_once_score(test, zeros) - without.at_once_score(test, zeros)
    assert added[200:260].mean() > 5 * max(added[:200].mean(), 1e-3)
    stats = with_cross.stats["cross"]
    expected = weight * np.maximum((CrossResidual.fit(train).values(test) - stats[0]) / stats[1], 0)
    np.testing.assert_allclose(added, expected, rtol=1e-9, atol=1e-9)
    assert "at once" in with_cross.describe()


def test_a_stream_keeps_nothing_of_it_for_the_final_scores():
    """Final scores never read it, so a stream keeps none of its values for pending steps (with
    series scales every step waits for the first ``scale_rows``), and its state round-trips."""
    from madcluster.score.combination_stream import CombinationStream

    train, test = coupled(2000, 10), coupled(700, 11)
    context, own = FitContext(50, 0), np.zeros(len(train))
    combination = Combination.fit(("ar", "cross"), train, own, context, scale_rows=500)
    stream = CombinationStream(combination)
    first = stream.update(np.zeros(400), test[:400])
    assert len(first.final_scores) == 0  # the series scales wait for 500 steps
    assert len(stream.streams["ar"].kept.values) == 400  # the final score's part keeps them
    assert len(stream.streams["cross"].kept.values) <= 1
    again = CombinationStream(combination)
    again.load(stream.state())
    rest = again.update(np.zeros(300), test[400:])
    np.testing.assert_allclose(np.concatenate([first.final_scores, rest.final_scores]),
                               combination.score(test, np.zeros(len(test)))[: 700 - len(again.pending_scores())],
                               rtol=1e-12, atol=1e-12)  # fmt: skip
    np.testing.assert_array_equal(
        np.concatenate([first.scores, rest.scores]), combination.at_once_score(test, np.zeros(len(test)))
    )
