"""Hints and messages about the input that a user pastes or acts on: quoted column names, the
options an out-of-order file offers, True/False and object-stored number columns, an empty or NaN
stream update naming the model's columns, the help of --preset fast and --part-weight."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from series_helpers import make_series

from madcluster import MADCluster
from madcluster.cli import main
from madcluster.data.validation import check_series
from madcluster.exceptions import DataError
from madcluster.score.input_terms import CONTINUOUS_PART_WEIGHTS, DISCRETE_PART_WEIGHTS

FAST = [
    "--window-size",
    "20",
    "--epochs",
    "1",
    "--stride",
    "8",
    "--hidden-size",
    "8",
    "--layers",
    "1",
    "--quiet",
]


def _help(capsys, command: str) -> str:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    return " ".join(capsys.readouterr().out.split())


def test_a_column_hint_is_quoted_so_it_works_when_pasted(tmp_path, capsys):
    frame = pd.DataFrame(make_series(200, 2), columns=["a", "b"])
    frame.to_csv(tmp_path / "train.csv", index=False)
    frame.to_csv(tmp_path / "indexed.csv")  # pandas' index: a column named "Unnamed: 0"
    assert main(["fit", str(tmp_path / "train.csv"), "-o", str(tmp_path / "m.mcz"), *FAST]) == 0
    score = ["score", str(tmp_path / "m.mcz"), str(tmp_path / "indexed.csv"), "--plot", "none"]
    capsys.readouterr()
    assert main(score) == 2
    hint = re.search(r"--drop-columns (.*)$", capsys.readouterr().err.strip()).group(1)
    assert hint == "'Unnamed: 0'"
    assert main([*score, "--drop-columns", *shlex.split(hint)]) == 0


def test_rows_out_of_time_order_offer_dropping_the_timestamp_too(tmp_path, capsys):
    frame = pd.DataFrame(make_series(200, 2), columns=["a", "b"])
    stamps = pd.date_range("2024-10-27 00:00", periods=200, freq="min")
    frame.insert(0, "timestamp", stamps.where(np.arange(200) != 100, stamps[40]).astype(str))
    frame.to_csv(tmp_path / "back.csv", index=False)
    fit = ["fit", str(tmp_path / "back.csv"), "-o", str(tmp_path / "m.mcz"), *FAST]
    assert main(fit) == 2
    err = capsys.readouterr().err
    assert "--sort-by-time" in err and "--drop-columns timestamp" in err
    assert main([*fit, "--drop-columns", "timestamp"]) == 0


def test_true_false_and_object_stored_number_columns_are_numbers():
    flags = pd.DataFrame({"a": [0.5, 1.5, 2.5], "on": [True, False, True]})
    assert check_series(flags).tolist() == [[0.5, 1.0], [1.5, 0.0], [2.5, 1.0]]
    stored = pd.DataFrame({"a": [0.5, 1.5], "b": [2.0, 3.0]}).astype(object)
    assert check_series(stored).tolist() == [[0.5, 2.0], [1.5, 3.0]]
    with pytest.raises(DataError, match=r"non-numeric column\(s\) \['s'\]"):
        check_series(pd.DataFrame({"a": [0.5, 1.5], "s": [1.0, "x"]}))


def test_stream_updates_empty_or_with_nan_say_so_by_the_model_s_names():
    frame = pd.DataFrame(make_series(200, 3), columns=["flow", "pressure", "temp"])
    stream = MADCluster(window_size=12, epochs=1, random_state=0).fit(frame).stream()
    with pytest.raises(DataError, match=r"empty \(no rows\)") as empty:
        stream.update(np.empty((0, 3)))
    assert "window" not in str(empty.value)
    with pytest.raises(DataError, match=r"column 'pressure'"):
        stream.update(np.array([[1.0, np.nan, 2.0]]))


def test_fast_preset_help_says_it_is_the_default_s_fit_for_the_drnn(capsys, series):
    text = _help(capsys, "fit")
    assert "half its fit time" not in text and "what the default D-RNN trains with" in text
    fast = MADCluster.from_preset("fast", window_size=12, epochs=1, random_state=0).fit(series)
    default = MADCluster(window_size=12, epochs=1, random_state=0).fit(series)
    # the same budget; the scoring batch (four training batches) differs, so only to rounding
    assert np.allclose(fast.decision_scores_, default.decision_scores_, rtol=1e-5, atol=1e-6)


def test_part_weight_help_gives_the_weights_a_fit_uses(capsys):
    def listed(weights: dict[str, float]) -> str:
        return " ".join(f"{name}={value:g}" for name, value in weights.items())

    text = _help(capsys, "fit")
    expected = f"from {listed(DISCRETE_PART_WEIGHTS)} to {listed(CONTINUOUS_PART_WEIGHTS)}"
    assert expected in text


def test_the_venvs_the_docs_create_are_ignored_by_git():
    root = Path(__file__).resolve().parents[2]
    ignored = set((root / ".gitignore").read_text().split())
    created = {
        folder
        for doc in (root / "docs").glob("*.md")
        for folder in re.findall(r"python3? -m venv (\S+)", doc.read_text())
    }
    assert ".venv-onnx" in created
    assert {f for f in created if f not in ignored and f"{f}/" not in ignored} == set()
