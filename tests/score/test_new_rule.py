"""A new combination rule in one file plus one registry line: the two most surprised parts' sum.

:class:`TopTwoSum` below is all a new rule is (a :class:`~madcluster.score.combination.ZScoreSum`
with its own ``total``); the test registers it with one line (``RULES["top-two-sum"] =
TopTwoSum()``, here through ``monkeypatch``) and shows it fitting, scoring, streaming (final =
``decision_function``), saving, loading and exporting with no other edit.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pytest

from madcluster import MADCluster
from madcluster.estimator.streaming import StreamScorer
from madcluster.exceptions import ParameterError
from madcluster.score.combination import RULES, ZScoreSum

TINY = {"window_size": 16, "epochs": 1, "epoch_windows": 64, "batch_size": 32, "random_state": 0}
PARTS = ("kmeans", "ar")
EXACT = 1e-9  # of the scores' scale


# ---------------------------------------------------------------------- the new rule: one class
class TopTwoSum(ZScoreSum):
    """At each step the sum of the two largest weighted z-scores: one part alone cannot raise the
    score as far as two that agree."""

    name: ClassVar[str] = "top-two-sum"

    def total(self, parts: list[np.ndarray]) -> np.ndarray:
        ranked = np.sort(np.stack(parts), axis=0)
        return ranked[-1] + ranked[-2]


# ---------------------------------------------------------------------- end of the new rule


def _series(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n)[:, None]
    return (np.sin(t / np.array([5.0, 7.0, 3.0])) + 0.05 * rng.normal(size=(n, 3))).astype(
        np.float32
    )


@pytest.fixture
def registered(monkeypatch):
    monkeypatch.setitem(RULES, TopTwoSum.name, TopTwoSum())  # the one registry line


@pytest.fixture
def rows():
    test = _series(260, 1)
    test[150:165, 0] += 1.5
    return test


def _close(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape
    assert np.max(np.abs(got - want), initial=0.0) <= EXACT * max(1.0, np.abs(want).max())


@pytest.mark.slow
def test_a_new_rule_fits_scores_streams_saves_loads_and_exports(registered, rows, tmp_path):
    model = MADCluster(input_terms=PARTS, part_rule="top-two-sum", **TINY).fit(_series(500, 0))
    combination = model.model_.combination
    assert combination.rule == "top-two-sum" and "top-two-sum" in combination.describe()

    # scoring: the plain sum's model (same seed: the same network, parts and statistics) has the
    # same per-part terms; the new rule adds the two largest of them
    plain = MADCluster(input_terms=PARTS, part_rule="zscore-sum", **TINY).fit(_series(500, 0))
    fitted = plain.model_
    checked = fitted.inputs.check_rows(rows)
    own = fitted.own_scores(fitted.inputs.model_input(checked))
    parts = fitted.combination.parts
    readings = fitted.combination.readings(checked, own)
    scales = fitted.combination.series_scales(readings)
    terms = np.stack(
        [fitted.combination.contribution(p, readings[p.name], scale=scales[p.name]) for p in parts]
    )
    scores = model.decision_function(rows)
    _close(scores, np.sort(terms, axis=0)[-2:].sum(axis=0))
    assert np.abs(scores - plain.decision_function(rows)).max() > 1e-3, "the rule is read"

    # streaming: final = decision_function, through a saved state
    scorer = model.stream()
    first = [scorer.update(rows[:100])]
    scorer.save(tmp_path / "s.mcs")
    restored = StreamScorer.restore(model, tmp_path / "s.mcs")
    later = [restored.update(rows[a:b]) for a, b in ((100, 101), (101, 260))]
    finals = np.concatenate([r.final_scores for r in first + later] + [restored.pending().scores])
    _close(finals, scores)

    # saving and loading: the file names the rule
    model.save(tmp_path / "m.mcz")
    loaded = MADCluster.load(tmp_path / "m.mcz")
    assert loaded.model_.combination.rule == "top-two-sum"
    _close(loaded.decision_function(rows), scores)

    # exporting: the ONNX file's metadata carries the rule and scores as the model does
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    from madcluster.estimator.export import export_onnx
    from madcluster.estimator.onnx_scorer import OnnxScorer

    export_onnx(model.model_, tmp_path / "m.onnx")
    _close(OnnxScorer(tmp_path / "m.onnx").decision_function(rows), scores)


def test_an_unregistered_rule_is_refused():
    with pytest.raises(ParameterError, match="part_rule must be one of"):
        MADCluster(input_terms=PARTS, part_rule="top-two-sum", **TINY).fit(_series(200, 0))
