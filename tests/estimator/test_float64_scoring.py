"""Scores come from a float64 copy of the float32-trained network, on every path."""

from __future__ import annotations

import copy
import pickle
import zipfile

import numpy as np
import pytest
import torch

from madcluster import MADCluster


@pytest.fixture(scope="module")
def model():
    rng = np.random.default_rng(0)
    x = np.sin(np.arange(600)[:, None] / np.array([3.0, 7.0, 11.0])) + 0.1 * rng.standard_normal((600, 3))
    return MADCluster.from_preset("streaming", window_size=16, epochs=3, random_state=0).fit(x), x


def test_the_network_trains_float32_and_scores_float64(model, tmp_path):
    detector, x = model
    fitted = detector.model_
    assert next(fitted.net.parameters()).dtype == torch.float32
    assert next(fitted.scoring_net.parameters()).dtype == torch.float64
    assert fitted.scoring_net is fitted.scoring_net  # made once
    detector.save(tmp_path / "m.mcz")
    with zipfile.ZipFile(tmp_path / "m.mcz") as zf, zf.open("arrays.npz") as f:
        arrays = np.load(f)
        assert all(arrays[k].dtype == np.float32 for k in arrays.files if k.startswith("state/"))
    loaded = MADCluster.load(tmp_path / "m.mcz")
    np.testing.assert_array_equal(loaded.decision_function(x), detector.decision_function(x))


def test_stream_and_batch_agree_to_float64_rounding(model):
    detector, x = model
    expected = detector.decision_function(x)
    scorer, got, i = detector.stream(), [], 0
    for size in [1, 3, 1, 20, 1, 7] * 100:
        if i >= len(x):
            break
        got.append(scorer.update(x[i : i + size]).scores)
        i += size
    np.testing.assert_allclose(np.concatenate(got), expected, atol=1e-10, rtol=0)


def test_copies_and_pickles_leave_the_float64_copy_out(model):
    detector, x = model
    assert len(pickle.dumps(detector.model_)) < 1.5 * len(pickle.dumps(detector.model_.net))
    for other in (copy.deepcopy(detector), pickle.loads(pickle.dumps(detector))):
        assert next(other.model_.scoring_net.parameters()).dtype == torch.float64  # made again
        np.testing.assert_array_equal(other.decision_function(x[:100]), detector.decision_function(x[:100]))
