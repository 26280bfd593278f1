"""The documented "one file plus one registry line" example (docs/embedders.md) really trains,
alone and + MADCluster."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from madcluster import MADCluster
from madcluster.embedders import EMBEDDERS

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "embedders.md"


@pytest.fixture
def toy_registered():
    text = EXAMPLE.read_text()
    match = re.search(r"# src/madcluster/embedders/toy_ae.py\n(.*?)\n# src/madcluster/embedders/__init__.py", text, re.DOTALL)
    assert match, "the example in docs/embedders.md moved: update this test"
    namespace: dict = {}
    exec(match.group(1), namespace)  # noqa: S102 - our own documentation
    EMBEDDERS["toy-ae"] = namespace["ToyAutoencoder"]
    yield
    EMBEDDERS.pop("toy-ae")


@pytest.mark.parametrize("mode", ["full", "base-only"])
def test_readme_toy_embedder_trains(toy_registered, mode):
    x = np.sin(np.arange(600)[:, None] / 8 + np.arange(3)).astype(np.float32)
    model = MADCluster(embedder="toy-ae", mode=mode, window_size=20, epochs=2, stride=4, random_state=0).fit(x)
    scores = model.decision_function(x)
    assert scores.shape == (600,) and np.isfinite(scores).all()
    assert ("cluster" in model.score_stats_) == (mode == "full")
