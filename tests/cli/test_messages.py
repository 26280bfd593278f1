"""One-line messages that name what the user typed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from madcluster.cli import main


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "x.csv"
    pd.DataFrame({"a": np.arange(50.0), "kind": ["x"] * 50}).to_csv(path, index=False)
    return path


def test_argparse_errors_are_one_line_and_point_to_help(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["fit", "somefile.csv"])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "madcluster fit: error: the following arguments are required: -o/--output",
        "see `madcluster fit --help`",
    ]


def test_unknown_command_is_one_line(capsys):
    with pytest.raises(SystemExit):
        main(["fitt"])
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "invalid choice: 'fitt'" in err[0] and "usage" not in err[0]


def test_non_numeric_column_hint_uses_the_cli_flags(data, tmp_path, capsys):
    assert main(["fit", str(data), "-o", str(tmp_path / "m.mcz"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "['kind']" in err and "--drop-columns" in err and "--columns" in err


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux /proc, where no folder can be made")
def test_missing_output_folder_is_named(data, capsys):
    assert main(["fit", str(data), "-o", "/proc/madcluster/m.mcz", "--drop-columns", "kind"]) == 2
    err = capsys.readouterr().err
    assert "folder '/proc/madcluster' does not exist" in err, err


def test_short_series_hint_names_the_cli_flag(data, tmp_path, capsys):
    assert main(["fit", str(data), "-o", str(tmp_path / "m.mcz"), "--drop-columns", "kind"]) == 2
    assert "--window-size" in capsys.readouterr().err
