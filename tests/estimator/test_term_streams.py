"""Streaming a model with input terms (the default): provisional scores at once, final ones L rows
later, and the final scores are the whole series' (:mod:`madcluster.score.combination`)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from madcluster import MADCluster
from madcluster.estimator.archive import read_archive, write_archive
from madcluster.estimator.stream_state import STATE_FILE
from madcluster.estimator.streaming import StreamScorer
from madcluster.exceptions import StreamError

# the parts' own timing, on the training scales alone (series scales make a stream's first final
# scores wait longer: the last test here, and tests/score/test_series_scale.py)
TINY = {"window_size": 20, "epochs": 1, "epoch_windows": 64, "batch_size": 32, "random_state": 0, "series_scale_rows": 0}
L = TINY["window_size"]
EXACT = 1e-9  # stream and whole series compute the same values in the same order; BLAS may round differently


def _series(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (np.sin(np.arange(n)[:, None] / 5 + np.arange(3)) + 0.05 * rng.normal(size=(n, 3))).astype(np.float32)


@pytest.fixture(scope="module")
def model():
    # the KMeans term's timing (final L rows later); the discord part's: tests/score/test_discord.py
    return MADCluster(input_terms=("kmeans", "ar"), **TINY).fit(_series(600, 0))


@pytest.fixture(scope="module")
def test_rows():
    rows = _series(400, 1)
    rows[200:215] += 2.0
    return rows


def _chunks(n: int, seed: int) -> list[tuple[int, int]]:
    rng, out, start = np.random.default_rng(seed), [], 0
    while start < n:
        size = int(rng.choice([1, 1, 2, 5, 13, 60]))
        out.append((start, min(n, start + size)))
        start += size
    return out


@pytest.mark.parametrize("seed", [0, 1])
def test_final_scores_are_the_whole_series_scores(model, test_rows, seed):
    scorer, finals, steps = model.stream(), [], []
    for lo, hi in _chunks(len(test_rows), seed):
        result = scorer.update(test_rows[lo:hi])
        finals.append(result.final_scores)
        steps.append(result.final_steps)
        assert np.array_equal(result.flags, result.scores > model.threshold_)
        assert np.array_equal(result.final_flags, result.final_scores > model.threshold_)
    pending = scorer.pending()
    every = np.concatenate([*steps, pending.steps])
    assert np.array_equal(every, np.arange(len(test_rows)))  # each step final once, in order
    whole = model.decision_function(test_rows)
    assert np.max(np.abs(np.concatenate([*finals, pending.scores]) - whole)) < EXACT * np.abs(whole).max()


def test_pending_scores_are_the_scores_of_the_rows_so_far(model, test_rows):
    scorer = model.stream()
    for lo, hi in _chunks(len(test_rows), 2):
        scorer.update(test_rows[lo:hi])
        if hi >= L and hi % 7 == 0:
            so_far = model.decision_function(test_rows[:hi])
            pending = scorer.pending()
            assert len(pending.steps) and np.max(np.abs(pending.scores - so_far[pending.steps])) < EXACT * np.abs(so_far).max()


def test_first_scores_are_the_at_once_scores_read_from_steps_up_to_t(model, test_rows):
    """Each row's first score reads rows <= t only: the KMeans part on the window ending at t."""
    fitted = model.model_
    rows = fitted.inputs.check_rows(test_rows)
    expected = fitted.combination.at_once_score(rows, fitted.own_scores(fitted.inputs.model_input(rows)))
    scorer = model.stream()
    first = np.concatenate([scorer.update(test_rows[lo:hi]).scores for lo, hi in _chunks(len(test_rows), 3)])
    assert np.max(np.abs(first - expected)) < EXACT * np.abs(expected).max()
    prefix = model.stream()
    cut = np.concatenate([prefix.update(test_rows[:150]).scores])
    assert np.array_equal(cut, first[:150]) or np.max(np.abs(cut - first[:150])) < EXACT * np.abs(expected).max()


def test_files_without_the_at_once_statistics_answer_with_the_provisional_score(model, test_rows):
    import copy
    from dataclasses import replace

    old = copy.deepcopy(model)
    old.model_ = replace(old.model_, combination=replace(old.model_.combination, at_once_stats={}))
    scorer = old.stream()
    scorer.update(test_rows[:100])
    result = scorer.update(test_rows[100:130])
    so_far = old.decision_function(test_rows[:130])
    assert np.max(np.abs(result.scores - so_far[100:130])) < EXACT * np.abs(so_far).max()


def test_a_score_is_final_L_rows_later_and_none_before_2L_rows(model, test_rows):
    scorer = model.stream()
    final_to = []
    for n in range(1, 3 * L + 1):
        result = scorer.update(test_rows[n - 1])
        final_to.append(result.final_steps[-1] + 1 if len(result.final_steps) else None)
    assert all(v is None for v in final_to[: 2 * L - 1])
    assert final_to[2 * L - 1] == L  # at 2L rows: the first L steps at once
    assert final_to[-1] == 2 * L  # then one a row, L back


def test_a_causal_term_alone_without_smoothing_is_final_at_once(test_rows):
    model = MADCluster(input_terms="ar", part_smoothing={"own": 1, "ar": 1}, **TINY).fit(_series(600, 0))
    scorer = model.stream()
    result = scorer.update(test_rows[:50])
    assert np.array_equal(result.final_steps, result.steps) and np.array_equal(result.final_scores, result.scores)
    assert len(scorer.pending().steps) == 0
    rest = scorer.update(test_rows[50:]).final_scores
    whole = model.decision_function(test_rows)
    assert np.max(np.abs(np.concatenate([result.final_scores, rest]) - whole)) < EXACT * np.abs(whole).max()


def test_state_round_trip_mid_stream_keeps_the_terms(model, test_rows, tmp_path):
    straight = model.stream()
    expected = [straight.update(test_rows[:130]), straight.update(test_rows[130:])]
    scorer = model.stream()
    scorer.update(test_rows[:130])
    scorer.save(tmp_path / "s.mcs")
    restored = StreamScorer.restore(model.model_, tmp_path / "s.mcs")
    got = restored.update(test_rows[130:])
    assert np.array_equal(got.final_steps, expected[1].final_steps)
    assert np.allclose(got.final_scores, expected[1].final_scores, rtol=0, atol=1e-12)
    assert np.allclose(got.scores, expected[1].scores, rtol=0, atol=1e-12)


def test_a_state_without_the_terms_is_refused(model, test_rows, tmp_path):
    import zipfile

    scorer = model.stream()
    scorer.update(test_rows[:50])
    scorer.save(tmp_path / "s.mcs")
    with zipfile.ZipFile(tmp_path / "s.mcs") as old:
        items = {name: old.read(name) for name in old.namelist()}
    import io

    arrays = dict(np.load(io.BytesIO(items["buffer.npz"])))
    buffer = io.BytesIO()
    np.savez(buffer, **{k: v for k, v in arrays.items() if not k.startswith("terms/")})
    items["buffer.npz"] = buffer.getvalue()
    with zipfile.ZipFile(tmp_path / "cut.mcs", "w") as cut:
        for name, data in items.items():
            cut.writestr(name, data)
    with pytest.raises(StreamError, match="input terms"):
        StreamScorer.restore(model.model_, tmp_path / "cut.mcs")


def test_smoothed_parts_alone_are_final_after_their_half_width(test_rows):
    model = MADCluster(input_terms="ar", part_smoothing={"own": 8, "ar": 3}, **TINY).fit(_series(600, 0))
    parts = model.model_.combination
    assert parts.smoothing == {"own": 8, "ar": 3}
    lag = parts.final_after()
    assert lag == 8 - 3 - 1  # step t's block of 8 reaches 4 steps ahead; fixed once t + 8 - 3 rows are in
    scorer, steps, scores = model.stream(), [], []
    for n in range(1, 41):
        result = scorer.update(test_rows[n - 1])
        steps.extend(result.final_steps)
        scores.extend(result.final_scores)
        if n >= 8:  # from one full block on, every step up to lag rows back is final
            assert steps[-1] == n - 1 - lag
    whole, prefix = model.decision_function(test_rows), model.decision_function(test_rows[:40])
    scale = np.abs(whole).max()
    assert np.max(np.abs(np.asarray(scores) - whole[steps])) < EXACT * scale  # final = the whole series'
    rest = scorer.pending()
    assert np.array_equal(np.concatenate([steps, rest.steps]), np.arange(40))
    assert np.max(np.abs(rest.scores - prefix[rest.steps])) < EXACT * scale  # pending = the rows so far


def test_with_series_scales_the_first_final_scores_wait_for_the_scale_steps(test_rows):
    """``series_scale_rows=S``: no score is final before the first S steps all are (S + L rows
    with the KMeans part); then they come L rows back, the whole series' scores."""
    scale_rows = 3 * L
    model = MADCluster(input_terms=("kmeans", "ar"), **{**TINY, "series_scale_rows": scale_rows}).fit(_series(600, 0))
    scorer = model.stream()
    finals = []
    for n in range(1, len(test_rows) + 1):
        result = scorer.update(test_rows[n - 1])
        finals.append(result.final_scores)
        done = sum(len(f) for f in finals)
        if n < scale_rows + L:
            assert done == 0
        else:
            assert done == n - L
    whole = model.decision_function(test_rows)
    got = np.concatenate([*finals, scorer.pending().scores])
    assert np.max(np.abs(got - whole)) < EXACT * np.abs(whole).max()


def test_a_state_is_refused_by_a_model_that_weighs_its_terms_otherwise(model, test_rows, tmp_path):
    """The same network and parts with other weights would read the held terms on another scale:
    the state names how its model combines them (``scoring``); a file without that print (written
    before it was recorded) is matched on the model's print alone."""
    scorer = StreamScorer(model.model_)
    scorer.update(test_rows[:40])
    scorer.save(tmp_path / "s.mcs")
    combination = model.model_.combination
    reweighed = replace(
        model.model_,
        combination=replace(combination, weights={**combination.weights, "ar": 7.0}),
    )
    with pytest.raises(StreamError, match="another model"):
        StreamScorer.restore(reweighed, tmp_path / "s.mcs")
    meta, arrays = read_archive(tmp_path / "s.mcs", STATE_FILE)
    assert set(meta) >= {"model", "scoring"}
    write_archive(tmp_path / "old.mcs", STATE_FILE, {k: v for k, v in meta.items() if k != "scoring"}, arrays)
    again = StreamScorer.restore(model.model_, tmp_path / "old.mcs").update(test_rows[40:60])
    want = StreamScorer(model.model_)
    want.update(test_rows[:40])
    assert np.array_equal(again.scores, want.update(test_rows[40:60]).scores)
