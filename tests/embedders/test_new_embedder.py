"""A new Base Embedder in one file plus one registry line: a causal convolution with its own score.

:class:`CausalConv` below is all a new embedder is (a :class:`~madcluster.embedders.BaseEmbedder`
returning h, and here its own loss and per-step score); the test registers it with one line
(``EMBEDDERS["causalconv"] = CausalConv``, here through ``monkeypatch``) and shows it fitting,
scoring, streaming (final = ``decision_function``), saving, loading and exporting with no other
edit.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pytest
import torch
from torch import nn

from madcluster import MADCluster
from madcluster.embedders import EMBEDDERS, BaseEmbedder, EmbedderOutput
from madcluster.estimator.fitted import score_terms
from madcluster.estimator.streaming import StreamScorer
from madcluster.exceptions import ParameterError

TINY = {"window_size": 16, "epochs": 1, "epoch_windows": 64, "batch_size": 32, "random_state": 0}
PARTS = ("kmeans", "ar")
EXACT = 1e-9  # of the scores' scale


# ---------------------------------------------------------------------- the new embedder
class CausalConv(BaseEmbedder):
    """h_t from steps t - k + 1..t only (a convolution padded on the left), so it streams; its own
    score is how badly a linear read of h_t rebuilds x_t."""

    causal: ClassVar[bool] = True

    def __init__(self, n_features: int, hidden_size: int = 8, kernel: int = 4) -> None:
        super().__init__()
        self.kernel = kernel
        self.conv = nn.Conv1d(n_features, hidden_size, kernel)
        self.decoder = nn.Linear(hidden_size, n_features)
        self.out_features = hidden_size

    def forward(self, x: torch.Tensor) -> EmbedderOutput:
        padded = nn.functional.pad(x.transpose(1, 2), (self.kernel - 1, 0))
        h = torch.tanh(self.conv(padded)).transpose(1, 2)  # [B, L, f]
        error = (self.decoder(h) - x).pow(2).mean(dim=-1)  # [B, L]
        return EmbedderOutput(h=h, loss=error.mean(), score=error)


# ---------------------------------------------------------------------- end of the new embedder


def _series(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n)[:, None]
    return (np.sin(t / np.array([5.0, 7.0, 3.0])) + 0.05 * rng.normal(size=(n, 3))).astype(
        np.float32
    )


@pytest.fixture
def registered(monkeypatch):
    monkeypatch.setitem(EMBEDDERS, "causalconv", CausalConv)  # the one registry line


@pytest.fixture
def rows():
    test = _series(260, 1)
    test[150:165, 0] += 1.5
    return test


def _close(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape
    assert np.max(np.abs(got - want), initial=0.0) <= EXACT * max(1.0, np.abs(want).max())


@pytest.mark.slow
def test_a_new_embedder_fits_scores_streams_saves_loads_and_exports(registered, rows, tmp_path):
    model = MADCluster(
        embedder="causalconv", embedder_params={"hidden_size": 6}, input_terms=PARTS, **TINY
    ).fit(_series(500, 0))
    assert isinstance(model.net_.embedder, CausalConv) and model.net_.embedder.out_features == 6
    assert model.model_.grid.causal, "a causal embedder scores each step from steps <= t"
    terms = score_terms(model.model_, rows)
    assert "base" in terms, "its own score is a term of the own score"

    # scoring: an anomaly the training never saw scores higher than the rows around it
    scores = model.decision_function(rows)
    assert np.isfinite(scores).all() and scores.shape == (len(rows),)
    assert scores[150:165].mean() > np.median(scores[:140])

    # streaming: final = decision_function, through a saved state
    scorer = model.stream()
    first = [scorer.update(rows[:100])]
    scorer.save(tmp_path / "s.mcs")
    restored = StreamScorer.restore(model, tmp_path / "s.mcs")
    later = [restored.update(rows[a:b]) for a, b in ((100, 101), (101, 260))]
    finals = np.concatenate([r.final_scores for r in first + later] + [restored.pending().scores])
    _close(finals, scores)

    # saving and loading: the file names the embedder and its parameters; it is built again
    model.save(tmp_path / "m.mcz")
    loaded = MADCluster.load(tmp_path / "m.mcz")
    assert isinstance(loaded.net_.embedder, CausalConv)
    _close(loaded.decision_function(rows), scores)

    # exporting: the ONNX graph holds the embedder and scores as the model does
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    from madcluster.estimator.export import export_onnx
    from madcluster.estimator.onnx_scorer import OnnxScorer

    export_onnx(model.model_, tmp_path / "m.onnx")
    # onnxruntime runs a Conv in float32 only, so the graph is float32: the export's own float32
    # tolerance (docs/export.md), not the float64 graphs' ~1e-12 (2e-7 of the scale seen here)
    from madcluster.estimator.export_check import TOLERANCE

    atol, rtol = TOLERANCE["float32"]
    onnx_scores = OnnxScorer(tmp_path / "m.onnx").decision_function(rows)
    np.testing.assert_allclose(onnx_scores, scores, atol=atol, rtol=rtol)


def test_an_unregistered_embedder_is_refused():
    with pytest.raises(ParameterError, match="causalconv"):
        MADCluster(embedder="causalconv", **TINY).fit(_series(200, 0))
