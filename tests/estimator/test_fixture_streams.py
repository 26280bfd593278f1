"""Every model file kept as a fixture (written by older code, read through the upgrade chain)
streams what its ``decision_function`` gives: a stream's final scores, and the pending ones once
the rows stop, equal the whole series' scores, whatever generation of the parts the file holds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from madcluster import MADCluster

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FILES = {
    "bb28e52/default": "bb28e52/expected.npz",
    "bb28e52/ar": "bb28e52/expected.npz",
    "bb28e52/streaming": "bb28e52/expected.npz",
    "format1/default": "format1/expected.npz",
    "format1/streaming": "format1/expected.npz",
    "sampled_discord/model": "sampled_discord/expected.npz",
}


def streamed(model: MADCluster, rows: np.ndarray, chunk: int) -> np.ndarray:
    """Each row's final score as a stream fed ``rows`` in chunks of ``chunk`` gives it (the
    pending ones when the rows stop)."""
    scorer = model.stream()
    scores = np.full(len(rows), np.nan)
    for start in range(0, len(rows), chunk):
        result = scorer.update(rows[start : start + chunk])
        scores[result.final_steps] = result.final_scores
    pending = scorer.pending()
    scores[pending.steps] = pending.scores
    return scores


@pytest.mark.parametrize("name", sorted(FILES))
@pytest.mark.parametrize("chunk", [1, 37])
def test_fixture_files_stream_their_decision_function(name, chunk):
    model = MADCluster.load(FIXTURES / f"{name}.mcz")
    rows = np.load(FIXTURES / FILES[name])["test"]
    want = model.decision_function(rows)
    got = streamed(model, rows, chunk)
    assert not np.isnan(got).any(), "every row gets a final or pending score"
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6 * scale)
