"""A model file written before the exact discord part (its discord part the sampled reading:
``neighbours`` in the file; ``tests/fixtures/sampled_discord/make.py``) loads, scores and resumes
its stream exactly as it did then."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

from madcluster import MADCluster
from madcluster.estimator.streaming import StreamScorer
from madcluster.score.discord_sampled import SampledDiscord

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sampled_discord"
EXPECTED = dict(np.load(FIXTURES / "expected.npz"))
_spec = importlib.util.spec_from_file_location("sampled_discord_make", FIXTURES / "make.py")
MAKE = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(MAKE)


def _close(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape
    scale = max(1.0, float(np.abs(want).max(initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9 * scale)


def test_the_old_file_scores_with_the_sampled_reading_as_it_did(tmp_path):
    model = MADCluster.load(FIXTURES / "model.mcz")
    assert isinstance(model.model_.combination.parts[-1], SampledDiscord)
    assert model.threshold_ == float(EXPECTED["threshold"])
    _close(model.decision_function(EXPECTED["test"]), EXPECTED["scores"])
    model.save(tmp_path / "again.mcz")  # written again in today's format: still the sampled part
    again = MADCluster.load(tmp_path / "again.mcz")
    assert isinstance(again.model_.combination.parts[-1], SampledDiscord)
    _close(again.decision_function(EXPECTED["test"]), EXPECTED["scores"])


def test_its_stream_state_resumes_as_it_did():
    model = MADCluster.load(FIXTURES / "model.mcz")
    scorer = StreamScorer.restore(model.model_, FIXTURES / "model.mcs")
    test, at, finals = EXPECTED["test"], MAKE.SPLIT, []
    for size in MAKE.CHUNKS_AFTER:
        finals.append(scorer.update(test[at : at + size]).final_scores)
        at += size
    finals.append(scorer.pending().scores)
    _close(np.concatenate(finals), EXPECTED["stream_finals"])
