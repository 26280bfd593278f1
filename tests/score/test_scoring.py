"""From the network's per-window outputs to one value per step (:mod:`madcluster.score.scoring`),
against direct loops. Found by the mutation run of ``docs/mutation.md``: every change to
``to_points`` passed the suite (a whole series and a stream go through it alike)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from madcluster.data.window_grid import causal_window_of
from madcluster.score.scoring import causal_point_outputs, point_outputs, to_points

L, STRIDE, T = 8, 3, 29


def _starts() -> np.ndarray:
    starts = list(range(0, T - L + 1, STRIDE))
    return np.asarray(starts if starts[-1] == T - L else [*starts, T - L])


def test_window_values_are_averaged_over_the_covering_windows():
    starts = _starts()
    rng = np.random.default_rng(0)
    values = rng.normal(size=(len(starts), L))
    features = rng.normal(size=(len(starts), L, 3))
    direct = np.zeros(T)
    direct_features = np.zeros((T, 3))
    for t in range(T):
        covering = [(i, t - s) for i, s in enumerate(starts) if s <= t < s + L]
        direct[t] = np.mean([values[i, k] for i, k in covering])
        direct_features[t] = np.mean([features[i, k] for i, k in covering], axis=0)
    got = to_points(values, starts, T, causal=False)
    assert got.shape == (T,) and np.allclose(got, direct, rtol=0, atol=1e-12)
    got = to_points(features, starts, T, causal=False)
    assert got.shape == (T, 3) and np.allclose(got, direct_features, rtol=0, atol=1e-12)


def test_a_causal_models_step_reads_the_covering_window_where_it_has_most_history():
    starts = _starts()
    values = np.random.default_rng(1).normal(size=(len(starts), L))
    direct = np.empty(T)
    for t in range(T):
        first = min(i for i, s in enumerate(starts) if s <= t < s + L)  # the earliest start
        direct[t] = values[first, t - starts[first]]
    got = to_points(values, starts, T, causal=True)
    assert got.dtype == np.float64 and np.array_equal(got, direct)


@pytest.mark.parametrize("causal", [False, True])
def test_point_outputs_maps_each_named_output_to_the_steps(causal):
    series = torch.from_numpy(np.random.default_rng(2).normal(size=(T, 2)))

    def read(windows: torch.Tensor, first_position: int) -> dict[str, torch.Tensor]:
        # per step of a window: its row's sum plus its position in the window; the row doubled
        assert first_position == 0
        return {"sum": windows.sum(dim=2) + torch.arange(L), "h": windows * 2.0}

    got = point_outputs(read, series, L, STRIDE, chunk=2, causal=causal)
    x, starts = series.numpy(), _starts()
    direct = np.empty(T)
    for t in range(T):
        positions = [t - s for s in starts if s <= t < s + L]
        direct[t] = x[t].sum() + (positions[0] if causal else np.mean(positions))
    assert np.allclose(got["sum"], direct, rtol=0, atol=1e-12)
    assert got["h"].shape == (T, 2) and np.allclose(got["h"], 2.0 * x, rtol=0, atol=1e-12)


def test_the_base_models_score_alone_and_the_head_weighed():
    from madcluster.exceptions import DataError
    from madcluster.score.scoring import combine

    base = np.linspace(0.0, 1.0, 5)
    assert combine({"base": base}, {}, "raw", "raw") is base  # no head terms: the base alone
    with pytest.raises(DataError, match="the model produced no score terms"):
        combine({}, {}, "raw", "raw")
    terms = {"distance": np.arange(5.0), "base": base}
    assert np.array_equal(
        combine(terms, {}, "raw", "raw", head_weight=2.0), 2 * np.arange(5.0) + base
    )
    assert np.array_equal(combine(terms, {}, "raw", "raw"), np.arange(5.0) + base)


@pytest.mark.parametrize(("first_step", "score_from"), [(0, 0), (4, 11)])
def test_causal_outputs_read_only_the_positions_their_steps_sit_at(first_step, score_from):
    """Each step from its window on the grid (at its position there), whether the read is given
    every position or, as the scorer asks, only those from the chunk's first scored one."""
    series = torch.from_numpy(np.random.default_rng(3).normal(size=(T, 2)))
    asked: list[int] = []

    def read(windows: torch.Tensor, first_position: int) -> dict[str, torch.Tensor]:
        asked.append(first_position)
        full = {"sum": windows.sum(dim=2) + torch.arange(L), "h": windows * 2.0}
        return {name: v[:, first_position:] for name, v in full.items()}

    got = causal_point_outputs(read, series, L, STRIDE, 2, first_step, score_from)
    x = series.numpy()  # row i is step first_step + i
    steps = np.arange(score_from, first_step + T)
    windows = causal_window_of(steps, L, STRIDE)
    direct = np.array([x[t - first_step].sum() + (t - w) for t, w in zip(steps, windows)])
    assert np.allclose(got["sum"], direct, rtol=0, atol=1e-12)
    assert np.allclose(got["h"], 2.0 * x[score_from - first_step :], rtol=0, atol=1e-12)
    # past the first window's chunk the read is asked for the last positions only
    assert asked[0] == min(score_from - int(windows[0]), L - STRIDE) and min(asked[1:]) >= L - STRIDE
