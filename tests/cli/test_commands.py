"""The command line end to end on small files."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from series_helpers import make_series

from madcluster.cli import build_parser, main

FAST = ["--window-size", "20", "--epochs", "2", "--stride", "4", "--hidden-size", "16", "--layers", "2", "--quiet"]


@pytest.fixture
def csv_files(tmp_path):
    train = pd.DataFrame(make_series(600, 3), columns=["a", "b", "c"])
    train.insert(0, "timestamp", pd.date_range("2024-01-01", periods=600, freq="min").astype(str))
    test = pd.DataFrame(make_series(300, 3, seed=2), columns=["a", "b", "c"])
    test.loc[150:160, "b"] += 5
    test["label"] = 0
    test.loc[150:160, "label"] = 1
    train.to_csv(tmp_path / "train.csv", index=False)
    test.to_csv(tmp_path / "test.csv", index=False)
    return tmp_path


@pytest.mark.slow
def test_fit_then_score_writes_model_scores_and_plot(csv_files, capsys):
    model = csv_files / "model.mcz"
    assert main(["fit", str(csv_files / "train.csv"), "-o", str(model), "--history-plot", str(csv_files / "curves.png"), *FAST]) == 0
    assert model.exists() and (csv_files / "curves.png").stat().st_size > 1000
    out_csv = csv_files / "scores.csv"
    assert main(["score", str(model), str(csv_files / "test.csv"), "-o", str(out_csv), "--label-column", "label"]) == 0
    scores = pd.read_csv(out_csv)
    assert len(scores) == 300 and list(scores.columns) == ["row", "score", "is_anomaly", "top_channels", "label"]
    assert np.isfinite(scores["score"]).all()
    assert (csv_files / "scores.png").stat().st_size > 1000
    printed = capsys.readouterr().out
    assert "auc_roc" in printed and "vus_pr" in printed


def test_errors_exit_2_with_a_message(csv_files, capsys):
    bad = csv_files / "bad.csv"
    pd.DataFrame({"a": np.arange(200.0), "kind": ["x"] * 200}).to_csv(bad, index=False)
    assert main(["fit", str(bad), "-o", str(csv_files / "m.mcz"), *FAST]) == 2
    assert "non-numeric" in capsys.readouterr().err
    assert main(["score", str(csv_files / "missing.mcz"), str(csv_files / "test.csv")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["fit", str(csv_files / "train.csv"), "-o", str(csv_files / "m.mcz"), *FAST, "--embedder", "nope"]) == 2
    assert "unknown embedder" in capsys.readouterr().err


def test_help_lists_commands():
    text = build_parser().format_help()
    for command in ("demo", "fit", "score", "benchmark"):
        assert command in text


@pytest.mark.parametrize(("preset", "scaling"), [("default", "standardized"), ("paper", "raw")])
def test_fit_preset_selects_the_configuration(csv_files, preset, scaling):
    from madcluster import MADCluster

    model = csv_files / f"{preset}.mcz"
    assert main(["fit", str(csv_files / "train.csv"), "-o", str(model), "--preset", preset, *FAST]) == 0
    loaded = MADCluster.load(model)
    assert loaded.score_scaling == scaling
    assert (loaded.score_stride == 20) == (preset == "paper")
    assert loaded.embedder_params["hidden_size"] == 16  # the CLI's own flags still apply
    assert loaded.roughness_window_ == (0 if preset == "paper" else 3)
    mine = csv_files / f"{preset}-w5.mcz"
    args = ["fit", str(csv_files / "train.csv"), "-o", str(mine), "--preset", preset, *FAST]
    assert main([*args, "--roughness-window", "5"]) == 0
    assert MADCluster.load(mine).roughness_window_ == 5


def test_fit_defaults_are_the_detectors():
    """`madcluster fit` without training flags trains what `MADCluster()` trains: every training
    flag defaults to None (the estimator's signature decides), and its help shows that default."""
    import inspect

    from madcluster import MADCluster
    from madcluster.cli.options import (
        CLI_SETTINGS,
        TRAINING_FLAGS,
        detector_params_from_args,
        signature_default,
    )
    from madcluster.embedders import EMBEDDERS

    parser = build_parser()
    args = parser.parse_args(["fit", "train.csv", "-o", "model.mcz"])
    signature = inspect.signature(MADCluster).parameters
    for flag, param, _, _ in TRAINING_FLAGS:
        assert getattr(args, flag[2:].replace("-", "_")) is None, flag
        owner, _, name = param.rpartition(".")
        if owner:
            assert name in inspect.signature(EMBEDDERS[owner]).parameters, flag
        elif param != "preset":
            assert param in signature, flag
            assert signature_default(param) == signature[param].default
    # progress unless --quiet: bars on a terminal, epoch lines with the time left in a log
    assert detector_params_from_args(args) == {**CLI_SETTINGS, "verbose": True}
    fit_help = parser._subparsers._group_actions[0].choices["fit"].format_help()
    assert f"(default: {signature['window_size'].default})" in " ".join(fit_help.split())
    assert MADCluster.from_preset("default", **CLI_SETTINGS).get_params() == MADCluster(random_state=0).get_params()


@pytest.mark.slow
def test_fit_input_terms_flag_chooses_the_terms_and_none_turns_them_off(csv_files):
    from madcluster import MADCluster

    model, out_csv = csv_files / "input-terms.mcz", csv_files / "scores.csv"
    assert main(["fit", str(csv_files / "train.csv"), "-o", str(model), "--input-terms", "kmeans", *FAST]) == 0
    loaded = MADCluster.load(model)
    assert loaded.input_terms == ("kmeans",) and loaded.input_terms_[0].centroids.shape == (20, 20 * 3)
    assert main(["score", str(model), str(csv_files / "test.csv"), "-o", str(out_csv), "--label-column", "label"]) == 0
    assert len(pd.read_csv(out_csv)) == 300
    assert main(["fit", str(csv_files / "train.csv"), "-o", str(model), "--input-terms", "none", *FAST]) == 0
    assert MADCluster.load(model).input_terms is None
