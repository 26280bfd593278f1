"""Fleets: one model per entity file, fitted and scored from a folder (API and CLI)."""

from __future__ import annotations

import pandas as pd
import pytest
from grid_data import write_fleet

from madcluster.fleet import entity_files, entity_name, fit_fleet, score_fleet

PARAMS = {
    "window_size": 20,
    "stride": 10,
    "epochs": 1,
    "random_state": 0,
    "embedder_params": {"hidden_size": 8, "n_layers": 2},
}


def test_entity_names(tmp_path):
    assert entity_name("m-1.csv.gz") == "m-1" and entity_name("x.npy") == "x"
    assert entity_name("notes.txt") is None
    write_fleet(tmp_path / "f", 2)
    (tmp_path / "f" / "README.txt").write_text("not a series")
    assert list(entity_files(tmp_path / "f")) == ["srv0", "srv1"]
    with pytest.raises(FileNotFoundError, match="no series files"):
        entity_files(tmp_path / "f" / "..")


@pytest.mark.slow
def test_fit_and_score_a_folder(tmp_path):
    data = write_fleet(tmp_path / "fleet", 3, bad=True)
    fitted = fit_fleet(
        data, tmp_path / "models", params=PARAMS, executor="sequential", progress=False
    )
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == [
        "srv0.mcz",
        "srv1.mcz",
        "srv2.mcz",
    ]
    assert list(fitted.failures) == ["bad"] and "non-numeric" in fitted.failures["bad"]
    assert fitted.details["srv0"]["n_rows"] == 200 and fitted.details["srv0"]["epochs_run"] == 1

    scored = score_fleet(tmp_path / "models", data, executor="sequential", progress=False)
    out = tmp_path / "fleet.scores"  # the default: next to the data folder
    assert sorted(scored.outputs) == ["srv0", "srv1", "srv2"] and "bad" in scored.failures
    frame = pd.read_csv(out / "srv1.scores.csv")
    assert list(frame.columns) == ["row", "score", "is_anomaly", "top_channels"] and len(frame) == 200

    # one model file for every entity
    one = score_fleet(tmp_path / "models" / "srv0.mcz", data, tmp_path / "one", progress=False)
    assert sorted(one.outputs) == ["srv0", "srv1", "srv2"]
    assert (tmp_path / "one" / "srv0.scores.csv").read_text() == (
        out / "srv0.scores.csv"
    ).read_text()

    # resume: existing models are kept, only missing ones are fitted
    (tmp_path / "models" / "srv2.mcz").unlink()
    again = fit_fleet(
        data, tmp_path / "models", params=PARAMS, resume=True, executor="sequential", progress=False
    )
    assert sorted(again.skipped) == ["srv0", "srv1"] and "srv2" in again.details


@pytest.mark.slow
def test_cli_fit_and_score_folders(tmp_path, capsys):
    from madcluster.cli import main

    data = write_fleet(tmp_path / "fleet", 2)
    small = ["--window-size", "20", "--stride", "10", "--epochs", "1"]
    small += ["--embedder-param", "hidden_size=8"]
    small += ["--layers", "2", "--executor", "sequential"]
    models = tmp_path / "models"
    assert main(["fit", str(data), "-o", str(models), "--quiet", *small]) == 0
    assert "2 entities with a model" in capsys.readouterr().out
    assert sorted(p.name for p in models.iterdir()) == ["srv0.mcz", "srv1.mcz"]
    from madcluster.estimator.detector import MADCluster

    params = MADCluster.load(models / "srv0.mcz").get_params()["embedder_params"]
    assert params == {"hidden_size": 8, "n_layers": 2}  # --embedder-param over --hidden-size
    scores = tmp_path / "scores"
    code = main(["score", str(models), str(data), "-o", str(scores), "--executor", "sequential"])
    assert code == 0
    assert sorted(p.name for p in scores.iterdir()) == [
        "srv0.scores.csv", "srv0.scores.png", "srv1.scores.csv", "srv1.scores.png",
    ]
    write_fleet(data, 0, bad=True)
    assert main(["fit", str(data), "-o", str(models), "--quiet", "--resume", *small]) == 1
    captured = capsys.readouterr()
    assert "2 kept from before" in captured.out and "FAILED bad" in captured.err
