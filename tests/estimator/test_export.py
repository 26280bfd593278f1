"""`madcluster export` writes an ONNX graph whose scores equal torch's, and OnnxScorer /
`madcluster score model.onnx` score rows with it as the .mcz model does, without torch."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from madcluster import MADCluster
from madcluster.cli import build_parser, main
from madcluster.estimator.export_check import model_windows, run_both
from madcluster.estimator.onnx_scorer import OnnxScorer
from madcluster.exceptions import ModelFileError


def _series(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    return np.stack([np.sin(2 * np.pi * t / p) for p in (11.0, 23.0, 37.0)], axis=1) + 0.1 * rng.standard_normal((n, 3))


@pytest.mark.slow
@pytest.mark.parametrize("params", [{}, {"embedder": "usad"}, {"embedder": "beatgan", "embedder_params": {"channels": (8, 16)}}],
                         ids=["default", "usad", "beatgan, a float32 graph (Conv)"])
def test_cli_export_scores_equal_torch(tmp_path, params, capsys):
    model = MADCluster(input_terms=None, window_size=16, epochs=1, random_state=0, **params).fit(_series(400, 0))
    model.save(tmp_path / "m.mcz")
    assert main(["export", str(tmp_path / "m.mcz"), "-o", str(tmp_path / "m.onnx")]) == 0
    assert "max abs diff" in capsys.readouterr().out
    x = _series(200, 1)
    x[100:104, 1] += 4.0
    windows, starts = model_windows(model.model_, x)
    assert windows.shape == (len(starts), 16, model.scaler_mean_.shape[0])
    session = ort.InferenceSession(str(tmp_path / "m.onnx"), providers=["CPUExecutionProvider"])
    got = session.run(["scores"], {"windows": windows})[0]
    assert got.shape == (len(starts), 16)
    got_again, expected = run_both(model.model_, tmp_path / "m.onnx", windows)
    np.testing.assert_allclose(got, expected, atol=1e-4, rtol=0)
    np.testing.assert_array_equal(got, got_again)
    # rows: the causal grid with its warm-up (default) or the covering windows averaged (usad)
    np.testing.assert_allclose(OnnxScorer(tmp_path / "m.onnx").decision_function(x), model.decision_function(x), atol=1e-3, rtol=0)


def test_export_to_a_bad_path_names_the_problem(tmp_path, capsys):
    model = MADCluster(input_terms=None, window_size=16, epochs=1, random_state=0).fit(_series(300, 2))
    model.save(tmp_path / "m.mcz")
    assert main(["export", str(tmp_path / "missing.mcz"), "-o", str(tmp_path / "m.onnx")]) == 2
    assert "does not exist" in capsys.readouterr().err


SRC = str(Path(__file__).resolve().parents[2] / "src")


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A streaming model trained for several epochs: its terms' training spread is small, so
    float32 rounding shows in the standardised scores (1-epoch models hide that)."""
    folder = tmp_path_factory.mktemp("trained")
    model = MADCluster.from_preset("streaming", window_size=32, epochs=5, random_state=0).fit(_series(1500, 0))
    model.save(folder / "m.mcz")
    assert main(["export", str(folder / "m.mcz"), "-o", str(folder / "m.onnx")]) == 0
    return model, folder


def _test_series() -> np.ndarray:
    x = _series(700, 3)
    x[300:310, 2] += 3.0
    return x


def test_trained_model_exports_and_its_onnx_rows_equal_the_model_rows(trained):
    model, folder = trained
    assert (folder / "m.onnx").is_file()
    x = _test_series()
    expected = model.decision_function(x)
    got = OnnxScorer(folder / "m.onnx").decision_function(x)
    assert got.shape == expected.shape == (len(x),)
    # float64 on both sides (float32 graphs were 2e-4 off on a 20-epoch model, 3e-5 here)
    diff = np.abs(got - expected)
    assert np.max(diff / np.maximum(np.abs(expected), model.threshold_)) < 1e-8
    assert np.all(diff <= 1e-4 * np.abs(expected) + 1e-9)
    assert np.array_equal(got > model.threshold_, expected > model.threshold_)
    # the warm-up calibration is in: uncalibrated first-window rows are far from the model's
    scorer = OnnxScorer(folder / "m.onnx")
    scorer.warmup = dataclasses.replace(scorer.warmup, quantiles=None)
    raw = scorer.decision_function(x)
    warm = slice(0, model.window_size - model.model_.grid.score_stride)
    assert np.max(np.abs(raw[warm] - expected[warm])) > 100 * np.max(np.abs(got[warm] - expected[warm]))


def test_the_export_check_compares_with_float64_and_says_so(trained, capsys):
    _, folder = trained
    assert main(["export", str(folder / "m.mcz"), "-o", str(folder / "again.onnx")]) == 0
    out = capsys.readouterr().out
    assert "step scores of 64 probe windows, onnxruntime float64 vs torch float64" in out
    assert "tolerance 1e-08 + 1e-08 |score|" in out and "OnnxScorer" in out
    import onnx

    graph = onnx.load(str(folder / "again.onnx"))
    assert graph.graph.output[0].type.tensor_type.elem_type == onnx.TensorProto.DOUBLE
    assert not {node.op_type for node in graph.graph.node} & {"GRU", "LSTM", "RNN"}  # float32-only in onnxruntime


def test_a_failed_export_check_writes_no_file(trained, tmp_path, monkeypatch, capsys):
    from madcluster.estimator import export_check

    _, folder = trained
    monkeypatch.setattr(export_check, "TOLERANCE", {"float64": (-1.0, 0.0), "float32": (-1.0, 0.0)})  # nothing passes
    assert main(["export", str(folder / "m.mcz"), "-o", str(tmp_path / "m.onnx")]) == 2
    assert "not written" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_score_an_onnx_file_without_torch(trained, tmp_path):
    model, folder = trained
    x = _test_series()
    pd.DataFrame(x, columns=["a", "b", "c"]).to_csv(tmp_path / "x.csv", index=False)
    code = (
        "import sys; sys.modules['torch'] = None\n"  # any import of torch now fails
        "from madcluster.cli import main\n"
        f"sys.exit(main(['score', {str(folder / 'm.onnx')!r}, {str(tmp_path / 'x.csv')!r}, '-o', "
        f"{str(tmp_path / 'x.scores.csv')!r}, '--plot', 'none']))"
    )
    env = {**os.environ, "PYTHONPATH": SRC, "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "with onnxruntime" in proc.stdout
    scores = pd.read_csv(tmp_path / "x.scores.csv")["score"].to_numpy()
    expected = model.decision_function(x)
    assert np.max(np.abs(scores - expected) / np.maximum(np.abs(expected), model.threshold_)) < 1e-3


def test_onnx_scorer_refuses_a_file_without_its_metadata(tmp_path):
    model = MADCluster(input_terms=None, window_size=16, epochs=1, random_state=0).fit(_series(300, 4))
    model.save(tmp_path / "m.mcz")
    assert main(["export", str(tmp_path / "m.mcz"), "-o", str(tmp_path / "m.onnx"), "--no-check"]) == 0
    import onnx

    graph = onnx.load(str(tmp_path / "m.onnx"))
    del graph.metadata_props[:]
    onnx.save(graph, str(tmp_path / "bare.onnx"))
    with pytest.raises(ModelFileError, match="export it again"):
        OnnxScorer(tmp_path / "bare.onnx")


def test_export_help_names_what_exists():
    import madcluster

    parser = build_parser({"export"})
    help_text = parser._subparsers._group_actions[0].choices["export"].format_help()
    assert "madcluster.OnnxScorer" in help_text and hasattr(madcluster, "OnnxScorer")
    assert "docs/export.md" in help_text
    assert (Path(SRC).parent / "docs" / "export.md").is_file()
