"""Files written by main at ``bb28e52`` (model format 2, stream state format 1, ONNX metadata
version 1; ``tests/fixtures/bb28e52/make.py``) load, score and resume as they did then."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from madcluster import MADCluster
from madcluster.estimator.streaming import StreamScorer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "bb28e52"
EXPECTED = dict(np.load(FIXTURES / "expected.npz"))
NAMES = ("default", "ar", "streaming")
# the script that wrote the files: its split, its chunks after the saved state, its feeding loop
_spec = importlib.util.spec_from_file_location("bb28e52_make", FIXTURES / "make.py")
MAKE = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(MAKE)
SPLIT = MAKE.SPLIT
TOL = 1e-9


def _close(got: np.ndarray, want: np.ndarray) -> None:
    """Within 1e-9 of the scale of what the old code gave."""
    assert got.shape == want.shape
    scale = max(1.0, float(np.abs(want).max(initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=0, atol=TOL * scale)


@pytest.mark.parametrize("name", NAMES)
def test_model_files_load_and_score_as_they_did(name, tmp_path):
    model = MADCluster.load(FIXTURES / f"{name}.mcz")
    assert model.threshold_ == float(EXPECTED[f"{name}_threshold"])
    _close(model.decision_function(EXPECTED["test"]), EXPECTED[f"{name}_scores"])
    model.save(tmp_path / "again.mcz")  # written again in today's format: the same scores
    again = MADCluster.load(tmp_path / "again.mcz").decision_function(EXPECTED["test"])
    _close(again, EXPECTED[f"{name}_scores"])


def test_format_2_files_are_upgraded_to_one_combination_record():
    import json
    import zipfile

    from madcluster.estimator.persistence import FORMAT_VERSION, read_model_file

    with zipfile.ZipFile(FIXTURES / "default.mcz") as zf:
        written = json.loads(zf.read("config.json"))
    assert (
        written["format_version"] == 2
        and "input_term/kmeans/at_once" in written["fitted"]["score_stats_"]
    )
    config, _ = read_model_file(FIXTURES / "default.mcz")
    assert config["format_version"] == FORMAT_VERSION == 4
    record = config["fitted"]["combination"]
    assert record["parts"] == ["own", "kmeans", "ar"]
    assert set(record["stats"]) == {"own", "kmeans", "ar"}
    assert set(record["at_once_stats"]) == {
        "own",
        "kmeans",
    }  # the parts whose causal reading differs
    assert record["weights"] == {"own": 0.5, "kmeans": 1.5, "ar": 1.0} and record["smoothing"] == {
        "own": 8
    }
    assert not any(
        "input_term" in k or k == "before_input_terms" for k in config["fitted"]["score_stats_"]
    )
    assert "part_weights_" not in config["fitted"] and "part_smoothing_" not in config["fitted"]


@pytest.mark.parametrize("name", NAMES)
def test_stream_states_resume_as_they_did(name):
    model = MADCluster.load(FIXTURES / f"{name}.mcz")
    scorer = StreamScorer.restore(model.model_, FIXTURES / f"{name}.mcs")
    assert scorer.steps_seen == SPLIT
    at_once, final_steps, final_scores = MAKE.feed(
        scorer, EXPECTED["test"][SPLIT:], MAKE.CHUNKS_AFTER
    )
    _close(at_once, EXPECTED[f"{name}_resumed_at_once"])
    assert np.array_equal(final_steps, EXPECTED[f"{name}_resumed_final_steps"])
    _close(final_scores, EXPECTED[f"{name}_resumed_final_scores"])
    pending = scorer.pending()
    assert np.array_equal(pending.steps, EXPECTED[f"{name}_pending_steps"])
    _close(pending.scores, EXPECTED[f"{name}_pending_scores"])


@pytest.mark.parametrize("name", NAMES)
def test_a_fresh_stream_gives_what_the_old_one_gave(name):
    """Also: the final scores and the pending ones are ``decision_function`` of the whole."""
    model = MADCluster.load(FIXTURES / f"{name}.mcz")
    scorer = model.stream()
    results = [scorer.update(c) for c in np.array_split(EXPECTED["test"], 7)]
    finals = np.concatenate([r.final_scores for r in results] + [scorer.pending().scores])
    _close(finals, EXPECTED[f"{name}_scores"])
    _close(np.concatenate([r.scores for r in results]), EXPECTED[f"{name}_stream_at_once"])


def test_the_onnx_file_scores_as_it_did():
    pytest.importorskip("onnxruntime")
    from madcluster.estimator.onnx_scorer import OnnxScorer

    scorer = OnnxScorer(FIXTURES / "default.onnx")
    assert scorer.threshold_ == float(EXPECTED["default_threshold"])
    _close(scorer.decision_function(EXPECTED["test"]), EXPECTED["default_scores"])
