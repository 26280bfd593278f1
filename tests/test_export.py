"""`madcluster export` writes an ONNX graph whose scores equal torch's."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from madcluster import MADCluster
from madcluster.cli import main
from madcluster.estimator.export import run_both


def _series(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    return np.stack([np.sin(2 * np.pi * t / p) for p in (11.0, 23.0, 37.0)], axis=1) + 0.1 * rng.standard_normal((n, 3))


@pytest.mark.slow
@pytest.mark.parametrize("params", [{}, {"embedder": "usad"}], ids=["default", "usad"])
def test_cli_export_scores_equal_torch(tmp_path, params, capsys):
    model = MADCluster(input_terms=None, window_size=16, epochs=1, random_state=0, **params).fit(_series(400, 0))
    model.save(tmp_path / "m.mcz")
    assert main(["export", str(tmp_path / "m.mcz"), "-o", str(tmp_path / "m.onnx")]) == 0
    assert "max abs diff" in capsys.readouterr().out
    x = _series(200, 1)
    x[100:104, 1] += 4.0
    windows, starts = model.model_.model_windows(x)
    assert windows.shape == (len(starts), 16, model.scaler_mean_.shape[0])
    session = ort.InferenceSession(str(tmp_path / "m.onnx"), providers=["CPUExecutionProvider"])
    got = session.run(["scores"], {"windows": windows})[0]
    assert got.shape == (len(starts), 16)
    got_again, expected = run_both(model, tmp_path / "m.onnx", windows)
    np.testing.assert_allclose(got, expected, atol=1e-4, rtol=0)
    np.testing.assert_array_equal(got, got_again)


def test_export_to_a_bad_path_names_the_problem(tmp_path, capsys):
    model = MADCluster(input_terms=None, window_size=16, epochs=1, random_state=0).fit(_series(300, 2))
    model.save(tmp_path / "m.mcz")
    assert main(["export", str(tmp_path / "missing.mcz"), "-o", str(tmp_path / "m.onnx")]) == 2
    assert "does not exist" in capsys.readouterr().err
