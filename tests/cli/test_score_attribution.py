"""`madcluster score` says which channels drive each row's score."""

from __future__ import annotations

import pandas as pd
from series_helpers import make_series

from madcluster.cli import main

FAST = ["--window-size", "20", "--epochs", "2", "--stride", "4", "--hidden-size", "16", "--layers", "2", "--quiet"]


def test_scores_csv_has_top_channels_naming_the_anomalous_one(tmp_path):
    pd.DataFrame(make_series(600, 3), columns=["cpu", "requests", "mem"]).to_csv(tmp_path / "train.csv", index=False)
    test = pd.DataFrame(make_series(300, 3, seed=2), columns=["cpu", "requests", "mem"])
    test.loc[150:170, "requests"] += 6
    test.to_csv(tmp_path / "test.csv", index=False)
    assert main(["fit", str(tmp_path / "train.csv"), "-o", str(tmp_path / "m.mcz"), *FAST]) == 0
    out = tmp_path / "scores.csv"
    assert main(["score", str(tmp_path / "m.mcz"), str(tmp_path / "test.csv"), "-o", str(out), "--plot", "none"]) == 0
    scores = pd.read_csv(out, keep_default_na=False)
    first = scores["top_channels"].str.split(";").str[0]
    alerts = scores["is_anomaly"] == 1
    window = alerts & scores["row"].between(150, 170)
    assert window.sum() >= 5 and (first[window] == "requests").mean() >= 0.8
    assert (scores.loc[~alerts, "top_channels"] == "").all()  # only alerts are explained
    assert main(["score", str(tmp_path / "m.mcz"), str(tmp_path / "test.csv"), "-o", str(out), "--plot", "none", "--no-explain"]) == 0
    assert "top_channels" not in pd.read_csv(out).columns
