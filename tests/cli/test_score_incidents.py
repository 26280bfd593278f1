"""`madcluster score --incidents PATH` writes the incidents a stream would raise, as CSV, and the
plot shades them."""

from __future__ import annotations

import pandas as pd
import pytest
from series_helpers import make_series

from madcluster import MADCluster
from madcluster.cli import main
from madcluster.incidents.table import COLUMNS

FAST = ["--window-size", "20", "--epochs", "2", "--stride", "4", "--hidden-size", "16", "--layers", "2", "--quiet"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("incidents")
    # 120 validation rows: calibrated in sample (threshold_ alone opened a false incident at 73)
    pd.DataFrame(make_series(600, 3), columns=["cpu", "requests", "mem"]).to_csv(
        folder / "train.csv", index=False
    )
    test = pd.DataFrame(make_series(300, 3, seed=2), columns=["cpu", "requests", "mem"])
    test.loc[150:180, "requests"] += 6
    test.to_csv(folder / "test.csv", index=False)
    assert main(["fit", str(folder / "train.csv"), "-o", str(folder / "m.mcz"), *FAST]) == 0
    return folder


def test_score_writes_the_detector_s_incidents_and_shades_them(files):
    out = files / "incidents.csv"
    args = ["score", str(files / "m.mcz"), str(files / "test.csv"), "-o", str(files / "s.csv")]
    assert main([*args, "--plot", str(files / "s.png"), "--incidents", str(out)]) == 0
    written = pd.read_csv(out, keep_default_na=False)
    assert list(written.columns) == list(COLUMNS) and len(written) >= 1
    detector = MADCluster.load(files / "m.mcz")
    expected = detector.incidents(pd.read_csv(files / "test.csv"))
    assert written["start"].tolist() == expected["start"].tolist()
    assert written["peak_score"].tolist() == pytest.approx(expected["peak_score"].tolist())
    hit = written[(written["start"] <= 185) & (written["end"].astype(str).replace("", "299").astype(int) >= 150)]
    assert len(hit) == 1 and hit["channels"].iloc[0].split(";")[0] == "requests"
    assert (written["start"] >= 140).all()  # none opened on the normal rows before the anomaly
    assert (files / "s.png").stat().st_size > 0


def test_false_incidents_alone_and_incidents_over_another_output_are_refused(files, capsys):
    args = ["score", str(files / "m.mcz"), str(files / "test.csv"), "-o", str(files / "s.csv"), "--plot", "none"]
    assert main([*args, "--false-incidents", "2"]) != 0
    assert "--false-incidents needs --incidents" in capsys.readouterr().err
    assert main([*args, "--incidents", str(files / "s.csv")]) != 0
    assert "is another output" in capsys.readouterr().err
