"""The command line reads European CSVs and time-order options."""

from __future__ import annotations

import pandas as pd
from series_helpers import make_series

from madcluster.cli import main

FAST = ["--window-size", "20", "--epochs", "1", "--stride", "8", "--hidden-size", "8", "--layers", "1", "--quiet"]


def _european_csv(path, *, shuffle=False):
    frame = pd.DataFrame(make_series(200, 3), columns=["a", "b", "c"])
    frame.insert(0, "timestamp", pd.date_range("2024-01-01", periods=200, freq="min").astype(str))
    if shuffle:
        frame = frame.sample(frac=1.0, random_state=0)
    frame.to_csv(path, index=False, sep=";", decimal=",")
    return path


def test_semicolon_decimal_comma_csv_fits_without_options(tmp_path, capsys):
    data = _european_csv(tmp_path / "eu.csv")
    assert main(["fit", str(data), "-o", str(tmp_path / "m.mcz"), *FAST]) == 0, capsys.readouterr().err


def test_shuffled_rows_fail_with_the_option_to_sort(tmp_path, capsys):
    data = _european_csv(tmp_path / "eu.csv", shuffle=True)
    assert main(["fit", str(data), "-o", str(tmp_path / "m.mcz"), *FAST]) == 2
    err = capsys.readouterr().err
    assert "not in time order" in err and "--sort-by-time" in err
    assert main(["fit", str(data), "-o", str(tmp_path / "m.mcz"), "--sort-by-time", *FAST]) == 0
    assert (tmp_path / "m.mcz").exists()


def test_explicit_sep_flag(tmp_path, capsys):
    data = tmp_path / "x.csv"
    frame = pd.DataFrame(make_series(200, 2), columns=["a", "b"])
    frame.to_csv(data, index=False, sep="|")
    assert main(["fit", str(data), "-o", str(tmp_path / "m.mcz"), "--sep", "|", *FAST]) == 0
