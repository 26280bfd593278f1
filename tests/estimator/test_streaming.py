"""Streaming scores equal decision_function on the whole series, chunk by chunk."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from madcluster import MADCluster
from madcluster.embedders.drnn import DilatedRNN
from madcluster.estimator.streaming import STEP_ROWS, StreamScorer, row_stepper
from madcluster.exceptions import DataError, StreamError


def _series(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    return np.stack([np.sin(2 * np.pi * t / p) for p in (13.0, 31.0)], axis=1) + 0.1 * rng.standard_normal((n, 2))


@pytest.fixture(scope="module", params=[{}, {"embedder": "deepsvdd"}], ids=["default", "deepsvdd"])
def fitted(request) -> MADCluster:
    return MADCluster(input_terms=None, window_size=16, epochs=1, random_state=0, **request.param).fit(_series(600, 0))


def _feed(scorer: StreamScorer, x: np.ndarray, rng: np.random.Generator, max_chunk: int) -> np.ndarray:
    out, i = [], 0
    while i < len(x):
        size = int(rng.integers(1, max_chunk + 1))
        result = scorer.update(x[i : i + size])
        assert np.array_equal(result.steps, np.arange(i, min(i + size, len(x))))
        out.append(result.scores)
        i += size
    return np.concatenate(out)


@pytest.mark.slow
@pytest.mark.parametrize("max_chunk", [1, 7, 40])
def test_chunks_give_the_scores_of_the_whole_series(fitted, max_chunk):
    x = _series(300, 1)
    x[150:160, 0] += 3.0  # an anomaly, so the comparison covers high scores too
    expected = fitted.decision_function(x)
    scorer = fitted.stream()
    got = _feed(scorer, x, np.random.default_rng(max_chunk), max_chunk)
    np.testing.assert_allclose(got, expected, atol=1e-5, rtol=0)
    assert scorer.buffered_rows <= fitted.window_size + 10, "keeps only the history it needs"


def test_flags_use_the_threshold_and_single_rows_are_accepted(fitted):
    x = _series(60, 2)
    scorer = fitted.stream()
    results = [scorer.update(row) for row in x]  # 1-D rows
    scores = np.concatenate([r.scores for r in results])
    flags = np.concatenate([r.flags for r in results])
    assert np.array_equal(flags, scores > fitted.threshold_)
    np.testing.assert_allclose(scores, fitted.decision_function(x), atol=1e-5, rtol=0)


def test_state_saves_and_restores_mid_stream(fitted, tmp_path):
    x = _series(200, 3)
    scorer = fitted.stream()
    first = scorer.update(x[:77]).scores
    scorer.save(tmp_path / "s.mcs")
    restored = StreamScorer.restore(fitted.model_, tmp_path / "s.mcs")
    rest = np.concatenate([restored.update(x[77:100]).scores, restored.update(x[100:]).scores])
    np.testing.assert_allclose(np.concatenate([first, rest]), fitted.decision_function(x), atol=1e-5, rtol=0)


def test_restore_takes_the_detector_or_its_fitted_model(fitted, tmp_path):
    """Both spellings resume (the detector is what earlier releases documented); anything else, an
    unfitted detector included, is refused by name."""
    x = _series(120, 8)
    scorer = fitted.stream()
    first = scorer.update(x[:50]).scores
    scorer.save(tmp_path / "s.mcs")
    expected = fitted.decision_function(x)
    for owner in (fitted, fitted.model_):
        rest = StreamScorer.restore(owner, tmp_path / "s.mcs").update(x[50:]).scores
        np.testing.assert_allclose(np.concatenate([first, rest]), expected, atol=1e-5, rtol=0)
    with pytest.raises(StreamError, match="fitted detector or its model_, got MADCluster"):
        StreamScorer.restore(MADCluster(), tmp_path / "s.mcs")


def test_restore_refuses_another_models_state_and_garbage(fitted, tmp_path):
    scorer = fitted.stream()
    scorer.update(_series(30, 4))
    scorer.save(tmp_path / "s.mcs")
    other = MADCluster(input_terms=None, window_size=16, epochs=1, random_state=1).fit(_series(300, 5))
    with pytest.raises(StreamError, match="another model"):
        StreamScorer.restore(other.model_, tmp_path / "s.mcs")
    (tmp_path / "bad.mcs").write_bytes(b"not a zip")
    with pytest.raises(StreamError, match="not a readable stream state"):
        StreamScorer.restore(fitted.model_, tmp_path / "bad.mcs")


def test_bad_rows_are_refused_with_a_clear_error(fitted):
    scorer = fitted.stream()
    with pytest.raises(DataError, match="NaN"):
        scorer.update(np.array([[np.nan, 1.0]]))
    with pytest.raises(DataError, match="feature"):
        scorer.update(np.ones((2, 5)))
    assert scorer.steps_seen == 0, "a refused chunk leaves the stream as it was"


def test_dataframe_columns_are_aligned_by_name():
    train = pd.DataFrame(_series(300, 6), columns=["a", "b"])
    model = MADCluster(input_terms=None, window_size=16, epochs=1, random_state=0).fit(train)
    x = pd.DataFrame(_series(40, 7), columns=["a", "b"])
    got = model.stream().update(x[["b", "a"]]).scores
    np.testing.assert_allclose(got, model.decision_function(x), atol=1e-5, rtol=0)


def test_non_causal_models_say_why_they_cannot_stream():
    model = MADCluster(input_terms=None, embedder="usad", window_size=16, epochs=1, random_state=0).fit(_series(300, 8))
    with pytest.raises(StreamError, match=r"non-causal embedder \(usad\)"):
        model.stream()


@pytest.mark.slow
@pytest.mark.parametrize("score_stride", [None, 30])
def test_stepper_and_window_reruns_mix_and_agree(score_stride):
    """The D-RNN steps short chunks and reruns windows for long ones; switching between the two
    (and a restored state) rebuilds the stepper from the buffer, scores unchanged."""
    model = MADCluster(input_terms=None, window_size=30, epochs=1, random_state=0, score_stride=score_stride).fit(_series(400, 9))
    assert row_stepper(model.model_) is not None
    x = _series(260, 10)
    x[200:205, 1] -= 2.5
    expected = model.decision_function(x)
    sizes = [1, 1, 40, 3, 1, 25, 12, 13, 1, 2, 60, 1, 1, 1, 5, 93]
    assert sum(sizes) == len(x)
    for step_rows in (STEP_ROWS, 0, 10**6):
        scorer, out, i = StreamScorer(model.model_, step_rows=step_rows), [], 0
        for size in sizes:
            out.append(scorer.update(x[i : i + size]).scores)
            i += size
        np.testing.assert_allclose(np.concatenate(out), expected, atol=1e-5, rtol=0)


def test_models_without_a_stepper_rerun_windows(fitted):
    expected_stepper = isinstance(fitted.net_.embedder, DilatedRNN)
    assert (row_stepper(fitted.model_) is not None) == expected_stepper


def test_a_constant_column_back_at_its_value_steps_in_a_stream_as_in_the_whole_series():
    """A row whose constant training column is back at the training value, after rows that moved
    it, enters as the step back (as in the whole series), also when its chunk alone never moved."""
    rng = np.random.default_rng(3)
    train = np.column_stack([np.sin(np.arange(400) / 4) + 0.05 * rng.normal(size=400), np.zeros(400)]).astype(np.float32)
    model = MADCluster(input_terms=None, window_size=16, epochs=1, random_state=0).fit(train)
    test = np.column_stack([np.sin(np.arange(120) / 4), np.zeros(120)]).astype(np.float32)
    test[50:53, 1] = 1.0  # moves for three rows, then back at 0
    scorer = model.stream()
    streamed = np.concatenate([scorer.update(row).scores for row in test])
    np.testing.assert_allclose(streamed, model.decision_function(test), rtol=0, atol=1e-6)


def test_several_clusters_say_why_they_cannot_stream():
    """k > 1: DEC's target sums q over the window's steps, so a step's score reads rows after it
    (a stream of such a model gave other scores than the whole series)."""
    model = MADCluster(input_terms=None, n_clusters=2, window_size=16, epochs=1, random_state=0).fit(_series(300, 8))
    with pytest.raises(StreamError, match="n_clusters > 1"):
        model.stream()
