"""A new part of the score in one file plus one registry line: window PCA's reconstruction error.

:class:`WindowPCA` below is all a new part is (a :class:`~madcluster.score.parts.Part` and its
:class:`~madcluster.score.parts.PartStream`); the test registers it with one line
(``PART_KINDS["pca"] = WindowPCA``, here through ``monkeypatch``) and shows it fitting, scoring,
streaming (final = ``decision_function``), saving, loading and exporting with no other edit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest

from madcluster import MADCluster
from madcluster.estimator.streaming import StreamScorer
from madcluster.score.parts import PART_KINDS, FitContext, Part, PartStream

TINY = {"window_size": 16, "epochs": 1, "epoch_windows": 64, "batch_size": 32, "random_state": 0}
EXACT = 1e-9  # of the scores' scale


# ---------------------------------------------------------------------- the new part: one file
@dataclass(frozen=True)
class WindowPCA(Part):
    """The reconstruction error of the window ending at each step (the first row repeated before
    the series' start) from the training windows' top principal components: reads steps <= t."""

    mean: np.ndarray  # per column, of the training rows
    scale: np.ndarray
    window_mean: np.ndarray  # (L * D,)
    components: np.ndarray  # (k, L * D)

    name: ClassVar[str] = "pca"
    point_wise: ClassVar[bool] = True

    @property
    def window(self) -> int:
        return len(self.window_mean) // len(self.mean)

    @classmethod
    def fit(cls, rows: np.ndarray, context: FitContext) -> WindowPCA:
        data = np.asarray(rows, dtype=np.float64)
        mean, scale = data.mean(axis=0), data.std(axis=0)
        scale = np.where(scale > 1e-8, scale, 1.0)
        flat = _windows((data - mean) / scale, context.window_size)
        window_mean = flat.mean(axis=0)
        _, _, vt = np.linalg.svd(flat - window_mean, full_matrices=False)
        return cls(mean, scale, window_mean, vt[: min(4, len(vt))])

    def values(self, rows: np.ndarray) -> np.ndarray:
        return self.errors(self._standardise(rows))

    def _standardise(self, rows: np.ndarray) -> np.ndarray:
        return (np.asarray(rows, dtype=np.float64) - self.mean) / self.scale

    def errors(self, z: np.ndarray, history: np.ndarray | None = None) -> np.ndarray:
        """Errors of the windows ending at each row of ``z`` (``history``: the L - 1 rows
        before)."""
        centred = _windows(z, self.window, history) - self.window_mean
        residual = centred - (centred @ self.components.T) @ self.components
        return np.einsum("ij,ij->i", residual, residual) / centred.shape[1]

    def stream(self) -> WindowPCAStream:
        return WindowPCAStream(self)

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {
            "mean": self.mean,
            "scale": self.scale,
            "window_mean": self.window_mean,
            "components": self.components,
        }

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> WindowPCA:
        return cls(arrays["mean"], arrays["scale"], arrays["window_mean"], arrays["components"])


def _windows(z: np.ndarray, window: int, history: np.ndarray | None = None) -> np.ndarray:
    """The windows ending at each row of ``z``, flattened (before ``z``: ``history`` or its
    first row)."""
    before = np.repeat(z[:1], window - 1, axis=0) if history is None else history
    padded = np.vstack([before, z])
    view = np.lib.stride_tricks.sliding_window_view(padded, window, axis=0).transpose(0, 2, 1)
    return view.reshape(len(z), -1)


@dataclass
class WindowPCAStream(PartStream):
    part: WindowPCA
    history: np.ndarray | None = None  # the last L - 1 standardised rows

    def append(self, rows: np.ndarray, given: np.ndarray | None = None) -> np.ndarray:
        z = self.part._standardise(rows)
        values = self.part.errors(z, self.history)
        before = (
            np.repeat(z[:1], self.part.window - 1, axis=0) if self.history is None else self.history
        )
        self.history = np.vstack([before, z])[-(self.part.window - 1) :]
        return values

    def state(self) -> dict[str, np.ndarray]:
        return {} if self.history is None else {"history": self.history}

    def load(self, arrays: dict[str, np.ndarray]) -> None:
        self.history = arrays.get("history")


# ---------------------------------------------------------------------- end of the new part


def _series(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n)[:, None]
    return (np.sin(t / np.array([5.0, 7.0, 3.0])) + 0.05 * rng.normal(size=(n, 3))).astype(
        np.float32
    )


@pytest.fixture
def registered(monkeypatch):
    monkeypatch.setitem(PART_KINDS, "pca", WindowPCA)  # the one registry line


@pytest.fixture
def rows():
    test = _series(260, 1)
    test[150:165, 0] += 1.5
    return test


def _close(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape
    assert np.max(np.abs(got - want), initial=0.0) <= EXACT * max(1.0, np.abs(want).max())


def test_the_part_against_a_direct_loop(rows):
    part = WindowPCA.fit(_series(400, 0), FitContext(16))
    z = (rows.astype(np.float64) - part.mean) / part.scale
    direct = []
    for t in range(len(z)):
        window = np.vstack([np.repeat(z[:1], max(0, 15 - t), axis=0), z[max(0, t - 15) : t + 1]])
        centred = window.ravel() - part.window_mean
        residual = centred - part.components.T @ (part.components @ centred)
        direct.append(residual @ residual / centred.size)
    _close(part.values(rows), np.asarray(direct))
    _close(part.at_once(rows), np.asarray(direct))
    stream = part.stream()
    streamed = np.concatenate(
        [stream.append(rows[a:b]) for a, b in ((0, 1), (1, 40), (40, 41), (41, 260))]
    )
    _close(streamed, np.asarray(direct))
    assert part.final_after() == 0 and not part.reads_ahead


def test_a_new_part_fits_scores_streams_saves_loads_and_exports(registered, rows, tmp_path):
    model = MADCluster(input_terms=("kmeans", "ar", "pca"), part_smoothing={"pca": 3}, **TINY).fit(
        _series(500, 0)
    )
    combination = model.model_.combination
    assert combination.names == ["own", "kmeans", "ar", "pca"]
    assert (
        set(combination.stats) == {"own", "kmeans", "ar", "pca"}
        and "pca" in combination.at_once_stats
    )
    assert model.part_weights_["pca"] == 1.0 and model.part_smoothing_["pca"] == 3

    # scoring: the pca part's standardised, smoothed values are a term of the score
    scores = model.decision_function(rows)
    without = MADCluster(input_terms=("kmeans", "ar"), **TINY).fit(_series(500, 0))
    from madcluster.score.combination import series_scale
    from madcluster.score.smoothing import centred_means

    pca = combination.terms[-1]
    mean, std = combination.stats["pca"][:2]
    # the default rule adds each part's positive excess over its training mean, over the part's
    # spread on the series' first steps where wider (the other parts' scales are their own)
    z = (centred_means(pca.values(rows), 3) - mean) / std
    own_and_others = scores - np.maximum(z, 0.0) / series_scale(z[: combination.scale_rows])
    assert (
        np.max(np.abs(own_and_others - without.decision_function(rows)))
        < 1e-6 * np.abs(scores).max()
    )

    # streaming: at once the causal reading, final = decision_function, through a saved state
    scorer = model.stream()
    first = [scorer.update(rows[:100])]
    scorer.save(tmp_path / "s.mcs")
    restored = StreamScorer.restore(model.model_, tmp_path / "s.mcs")
    later = [restored.update(rows[a:b]) for a, b in ((100, 101), (101, 130), (130, 260))]
    results = first + later
    finals = np.concatenate([r.final_scores for r in results] + [restored.pending().scores])
    _close(finals, scores)
    fitted = model.model_
    checked = fitted.inputs.check_rows(rows)
    at_once = combination.at_once_score(
        checked, fitted.own_scores(fitted.inputs.model_input(checked))
    )
    _close(np.concatenate([r.scores for r in results]), at_once)

    # saving and loading
    model.save(tmp_path / "m.mcz")
    loaded = MADCluster.load(tmp_path / "m.mcz")
    assert loaded.model_.combination.names == combination.names
    _close(loaded.decision_function(rows), scores)

    # exporting: the ONNX file carries the part and scores as the model does
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    from madcluster.estimator.export import export_onnx
    from madcluster.estimator.onnx_scorer import OnnxScorer

    export_onnx(model.model_, tmp_path / "m.onnx")
    _close(OnnxScorer(tmp_path / "m.onnx").decision_function(rows), scores)


def test_an_unregistered_part_is_refused():
    from madcluster.exceptions import ParameterError

    with pytest.raises(ParameterError, match="input_terms"):
        MADCluster(input_terms=("pca",), **TINY).fit(_series(200, 0))
