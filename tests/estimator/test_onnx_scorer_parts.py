"""The torch-free ONNX scorer part by part: opening a file quietly, a file without its metadata
and one from before the scaling's kind was recorded, non-finite scores refused whole, a
non-causal model's averaged windows, the exporter's one-line reasons (the fifth mutation run's
survivors: only slow tests exported a non-causal model, and the refusals were matched in part)."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import onnx
from series_helpers import three_channels

from madcluster import MADCluster
from madcluster.estimator.export import _missing_kernel, _reason, export_onnx
from madcluster.estimator.export_check import check_export
from madcluster.estimator.onnx_scorer import METADATA_KEY, OnnxScorer
from madcluster.exceptions import DataError, ModelFileError

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "bb28e52" / "default.onnx"


def test_opening_a_file_says_nothing(capfd):
    OnnxScorer(FIXTURE)
    assert capfd.readouterr() == ("", "")  # no provider error, no fallback notice


def test_a_file_without_its_metadata_is_refused_whole(tmp_path):
    graph = onnx.load(str(FIXTURE))
    del graph.metadata_props[:]
    onnx.save(graph, str(tmp_path / "bare.onnx"))
    with pytest.raises(ModelFileError) as refused:
        OnnxScorer(tmp_path / "bare.onnx")
    assert str(refused.value) == (
        f"{str(tmp_path / 'bare.onnx')!r} has no {METADATA_KEY} metadata: export it again with "
        "`madcluster export`"
    )


def test_a_file_from_before_the_scaling_kind_scores_without_the_far_check(tmp_path):
    """The fixture's metadata has no "scaling": no column is checked against its range."""
    shutil.copy(FIXTURE, tmp_path / "old.onnx")
    scorer = OnnxScorer(tmp_path / "old.onnx")
    assert "scaling" not in scorer.metadata and scorer.inputs.scaling == ""
    far = np.full((60, scorer.n_features_in_), 1e3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isfinite(scorer.decision_function(far)).all()


def test_non_finite_scores_are_refused_whole(monkeypatch):
    scorer = OnnxScorer(FIXTURE)
    monkeypatch.setattr(scorer, "window_scores", lambda windows: np.full(windows.shape[:2], np.nan))
    with pytest.raises(DataError) as refused:
        scorer.decision_function(np.zeros((60, scorer.n_features_in_)))
    assert str(refused.value) == (
        "the model produced non-finite scores: the input may be far outside the training range"
    )


def test_a_non_causal_models_file_averages_the_windows_as_the_model(tmp_path):
    model = MADCluster(input_terms=None, embedder="usad", window_size=12, epochs=1, random_state=0)
    model.fit(three_channels(200, 0))
    assert not model.model_.grid.causal and model.model_.grid.score_stride > 1
    export_onnx(model.model_, tmp_path / "m.onnx")
    x = three_channels(61, 1)
    scores = OnnxScorer(tmp_path / "m.onnx").decision_function(x)
    np.testing.assert_allclose(scores, model.decision_function(x), rtol=0, atol=1e-9)


def test_window_level_scores_of_a_causal_embedder_take_each_steps_most_history_window(tmp_path):
    """``score_type="window"`` on the D-RNN: off the causal grid, but ``decision_function`` takes
    each step from the window where it has the most history, not the average (the file averaged
    and was off by up to 1.4 while the export's per-window check passed)."""
    model = MADCluster(
        input_terms=None, score_type="window", window_size=12, epochs=1, random_state=0
    )
    model.fit(three_channels(200, 0))
    assert not model.model_.grid.causal and model.model_.net.embedder.causal
    export_onnx(model.model_, tmp_path / "m.onnx")
    scorer = OnnxScorer(tmp_path / "m.onnx")
    x = three_channels(61, 1)
    np.testing.assert_allclose(
        scorer.decision_function(x), model.decision_function(x), rtol=0, atol=1e-9
    )
    scorer.metadata.pop("embedder_causal")  # an export from before the key: averaged, as then
    assert np.abs(scorer.decision_function(x) - model.decision_function(x)).max() > 1e-6


def test_the_exporters_reasons_are_one_line():
    assert _reason(RuntimeError("cannot trace a torch.Generator here")) == (
        "its score draws Monte Carlo noise from a seeded torch.Generator, which an ONNX graph "
        "cannot hold"
    )
    assert _reason(ValueError("first line\nsecond line")) == "ValueError: first line"
    assert _reason(KeyError()) == "KeyError: "


def test_the_metadata_is_json_under_its_key():
    graph = onnx.load(str(FIXTURE))
    props = {p.key: p.value for p in graph.metadata_props}
    assert json.loads(props[METADATA_KEY]) == OnnxScorer(FIXTURE).metadata


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    model = MADCluster(input_terms=None, window_size=12, epochs=1, random_state=0)
    model.fit(three_channels(200, 0))
    path = tmp_path_factory.mktemp("export") / "m.onnx"
    return model, path, export_onnx(model.model_, path, check=False)


def test_an_unchecked_export_reports_no_numbers(exported):
    _, _, report = exported
    assert report == {
        "input": "windows",
        "input_shape": ["batch", 12, 6],  # three channels and their roughness
        "output": "scores",
        "dtype": report["dtype"],
        "max_abs_diff": None,
        "max_rel_diff": None,
        "tolerance": None,
        "compared": None,
        "rows_max_abs_diff": None,
        "rows_tolerance": None,
        "rows_compared": None,
    }


def test_a_float32_check_allows_torch_float32s_own_gap(exported):
    import torch

    model, path, _ = exported
    numbers = check_export(model.model_, path, torch.float32)
    assert numbers["compared"].endswith("onnxruntime float32 vs torch float64")
    assert " or 4 x torch float32's own " in numbers["tolerance"]


def test_the_kernel_check_says_nothing(capfd):
    assert _missing_kernel(FIXTURE) is None
    assert capfd.readouterr() == ("", "")  # no provider error, no fallback notice


def test_predict_is_0_or_1_as_int64():
    scorer = OnnxScorer(FIXTURE)
    rows = np.vstack(
        [np.zeros((40, scorer.n_features_in_)), np.full((20, scorer.n_features_in_), 9.0)]
    )
    flags = scorer.predict(rows)
    assert flags.dtype == np.int64
    np.testing.assert_array_equal(
        flags, (scorer.decision_function(rows) > scorer.threshold_).astype(int)
    )


def test_the_check_compares_in_the_models_dtype_by_default(exported):
    model, path, _ = exported
    numbers = check_export(model.model_, path)
    assert numbers["compared"] == (
        "768 step scores of 64 probe windows, onnxruntime float64 vs torch float64"
    )
    assert numbers["tolerance"] == "1e-08 + 1e-08 |score|"
