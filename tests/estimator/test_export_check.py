"""The export's whole-row check: after the window check, a probe series scored by the file's
OnnxScorer and by ``decision_function`` must agree row by row (the per-window check alone passed a
file whose scorer mapped a causal embedder's window scores back to rows the other way, up to 1.4
off per row); a file that maps rows the other way, or leaves out the input terms, is refused and
nothing is written."""

from __future__ import annotations

import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from series_helpers import three_channels

from madcluster import MADCluster
from madcluster.cli import main
from madcluster.data.window_grid import windows_to_points
from madcluster.estimator import onnx_scorer
from madcluster.estimator.export import export_onnx
from madcluster.estimator.export_check import ExportError, row_probe_length
from madcluster.estimator.fitted import ScoringGrid


@pytest.fixture(scope="module")
def default_model():
    """The default model (input terms included) on a short window."""
    return MADCluster(window_size=12, epochs=1, random_state=0).fit(three_channels(200, 0))


def test_a_default_export_passes_the_row_check_and_reports_it(default_model, tmp_path):
    assert default_model.model_.combination.combines  # the file adds the input terms itself
    report = export_onnx(default_model.model_, tmp_path / "m.onnx")
    assert report["rows_compared"] == (
        "73 rows of a probe series scored whole, OnnxScorer on the file vs decision_function"
    )
    assert 0.0 <= report["rows_max_abs_diff"] < 1e-9  # both float64
    assert report["rows_tolerance"].endswith(
        " (the largest step allowance) + 1e-08 + 1e-08 |row score|"
    )
    assert (tmp_path / "m.onnx").is_file()


def test_the_command_prints_the_row_check(default_model, tmp_path, capsys):
    default_model.save(tmp_path / "m.mcz")
    assert main(["export", str(tmp_path / "m.mcz"), "-o", str(tmp_path / "m.onnx")]) == 0
    out = capsys.readouterr().out
    assert "; checked 73 rows of a probe series scored whole, OnnxScorer on the file vs " in out
    assert "decision_function: max abs diff " in out


def _window_level_model() -> MADCluster:
    """``score_type="window"`` on the D-RNN: each row read from its most-history window."""
    return MADCluster(
        input_terms=None, score_type="window", window_size=12, epochs=1, random_state=0
    ).fit(three_channels(200, 0))


@pytest.mark.parametrize("planted", ["rows from the averaged windows", "no input terms"])
def test_a_file_whose_rows_differ_is_refused_and_not_written(
    default_model, planted, tmp_path, monkeypatch
):
    if planted == "rows from the averaged windows":  # the mismatch the window check let through
        model = _window_level_model()
        monkeypatch.setattr(onnx_scorer, "windows_to_points_with_history", windows_to_points)
    else:
        model = default_model
        monkeypatch.setattr(onnx_scorer, "_read_input_terms", lambda meta, path: None)
    with pytest.raises(ExportError) as refused:
        export_onnx(model.model_, tmp_path / "m.onnx")
    message = str(refused.value)
    assert (
        ": the whole-row comparison failed: the file's row scores differ from decision_function's by up to "
        in message
    )
    assert " of 73, " in message and "over the tolerance " in message and "|row score|" in message
    assert message.endswith("(the window check passed): not written")
    assert list(tmp_path.iterdir()) == []  # the temporary file is gone too


def test_a_float32_graph_passes_the_row_check(tmp_path):
    model = MADCluster(
        input_terms=None,
        embedder="beatgan",
        embedder_params={"channels": (8, 16)},
        window_size=12,
        epochs=1,
        random_state=0,
    ).fit(three_channels(200, 0))
    report = export_onnx(model.model_, tmp_path / "m.onnx")
    assert report["dtype"] == "float32" and "Conv" in report["why_float32"]
    assert report["rows_max_abs_diff"] > 1e-9  # float32 rounding shows in the rows
    assert report["rows_tolerance"].endswith(" + 1e-04 + 1e-05 |row score|")


def test_the_row_probe_is_several_windows_long_and_off_the_stride():
    for size in range(2, 41):
        for stride in range(1, size + 1):
            n = row_probe_length(ScoringGrid(size, stride, False, 512))
            assert 6 * size + 1 <= n <= 6 * size + 2
            assert stride == 1 or n % stride != 0, (size, stride)
    assert row_probe_length(ScoringGrid(8, 7, True, 512)) == 50  # 49 is 7 strides: one more
