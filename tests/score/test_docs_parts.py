"""The documented "one file and one registry line" part (docs/parts.md) really fits, scores,
smooths, streams and saves with the default's parts."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from madcluster import MADCluster
from madcluster.score.parts import PART_KINDS

DOC = Path(__file__).resolve().parents[2] / "docs" / "parts.md"
TINY = {"window_size": 16, "epochs": 1, "epoch_windows": 32, "batch_size": 32, "random_state": 0}


@pytest.fixture
def registered(monkeypatch):
    text = DOC.read_text()
    match = re.search(r"# src/madcluster/score/row_distance.py\n(.*?)\n```", text, re.DOTALL)
    assert match, "the example in docs/parts.md moved: update this test"
    namespace: dict = {}
    exec(match.group(1), namespace)  # noqa: S102 - our own documentation
    assert '"rowdist": "madcluster.score.row_distance:RowDistance"' in text
    monkeypatch.setitem(PART_KINDS, "rowdist", namespace["RowDistance"])  # the registry line
    return namespace["RowDistance"]


def _series(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n)[:, None]
    return (np.sin(t / np.array([5.0, 7.0])) + 0.05 * rng.normal(size=(n, 2))).astype(np.float32)


def test_the_documented_part_fits_smooths_streams_and_saves(registered, tmp_path):
    model = MADCluster(input_terms=("kmeans", "rowdist"), part_smoothing={"rowdist": 5}, **TINY)
    model.fit(_series(400, 0))
    combination = model.model_.combination
    assert combination.names == ["own", "kmeans", "rowdist"]
    assert model.part_weights_["rowdist"] == 1.0 and model.part_smoothing_["rowdist"] == 5
    assert "rowdist" in combination.describe() and "mean of 5" in combination.describe()
    test = _series(200, 1)
    test[120:130, 0] += 6.0  # rows far from the training mean: the part rises there
    scores = model.decision_function(test)
    part = next(p for p in combination.terms if p.name == "rowdist")
    assert isinstance(part, registered) and part.values(test)[120:130].min() > 10.0
    stream = model.stream()
    results = [stream.update(test[a:b]) for a, b in ((0, 50), (50, 51), (51, 200))]
    finals = np.concatenate([r.final_scores for r in results] + [stream.pending().scores])
    np.testing.assert_allclose(finals, scores, rtol=1e-9, atol=1e-9)
    model.save(tmp_path / "m.mcz")
    again = MADCluster.load(tmp_path / "m.mcz")
    np.testing.assert_array_equal(again.decision_function(test), scores)
