"""Fleet `score` gives what single-file `score` gives."""

from __future__ import annotations

import pandas as pd
import pytest
from PIL import Image
from series_helpers import make_series

from madcluster.cli import main

FAST = ["--window-size", "20", "--epochs", "2", "--stride", "4", "--hidden-size", "8", "--layers", "1",
        "--executor", "sequential"]


@pytest.fixture
def fleet(tmp_path):
    folder = tmp_path / "servers"
    folder.mkdir()
    for i in range(2):
        frame = pd.DataFrame(make_series(300, 3, seed=i), columns=["cpu", "requests", "mem"])
        frame.insert(0, "timestamp", pd.date_range("2024-01-01", periods=300, freq="min").astype(str))
        frame["label"] = 0
        frame.loc[200:215, "requests"] += 6
        frame.loc[200:215, "label"] = 1
        frame.to_csv(folder / f"srv{i}.csv", index=False)
    return folder


def test_fleet_fit_writes_plain_epoch_lines_not_bar_redraws(fleet, tmp_path, capsys):
    assert main(["fit", str(fleet), "-o", str(tmp_path / "models"), "--label-column", "label", *FAST]) == 0
    err = capsys.readouterr().err
    assert "srv0: epoch 1:" in err and "srv1: epoch 2:" in err
    assert "\r" not in err and "entities:" not in err


@pytest.mark.slow
def test_fleet_score_matches_single_file_score(fleet, tmp_path, capsys):
    models = tmp_path / "models"
    assert main(["fit", str(fleet), "-o", str(models), "--label-column", "label", *FAST, "--quiet"]) == 0
    # a label column without --label-column: the single-file hint, naming the flag
    assert main(["score", str(models), str(fleet), "-o", str(tmp_path / "s0"), *FAST[-2:]]) == 1
    err = capsys.readouterr().err
    assert "FAILED srv0" in err and "pass --label-column label" in err
    out = tmp_path / "scores"
    assert main(["score", str(models), str(fleet), "-o", str(out), "--label-column", "label", *FAST[-2:]]) == 0
    printed = capsys.readouterr().out
    assert "metrics per entity" in printed and "mean of 2" in printed and "vus_pr" in printed
    scores = pd.read_csv(out / "srv0.scores.csv", keep_default_na=False)
    assert list(scores.columns) == ["row", "timestamp", "score", "is_anomaly", "top_channels", "label"]
    assert scores["timestamp"].iloc[0] == "2024-01-01 00:00:00"
    assert scores["label"].sum() == 16
    Image.open(out / "srv0.scores.png").load()
