"""Issue 37 items 5 and 6: negative numbers in any notation are option values; a .tsv file is read;
`madcluster.metrics` works after a bare `import madcluster`, which stays light."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from madcluster.cli import build_parser
from madcluster.data.io import read_table

SRC = str(Path(__file__).resolve().parents[2] / "src")


@pytest.mark.parametrize("text, value", [("-1e308", -1e308), ("-1.5E-3", -1.5e-3), ("-.5", -0.5), ("-3", -3.0)])
def test_negative_threshold_in_any_notation_is_a_value(text, value):
    args = build_parser({"score"}).parse_args(["score", "m.mcz", "x.csv", "--threshold", text])
    assert args.threshold == value


def test_negative_infinity_threshold_is_refused_as_not_finite(capsys):
    with pytest.raises(SystemExit) as stop:
        build_parser({"score"}).parse_args(["score", "m.mcz", "x.csv", "--threshold", "-inf"])
    assert stop.value.code == 2
    assert "must be a finite number" in capsys.readouterr().err


def test_tsv_file_is_read(tmp_path):
    path = tmp_path / "x.tsv"
    path.write_text("a\tb\n1\t2\n3\t4\n")
    table = read_table(path)
    assert table.columns == ["a", "b"]
    np.testing.assert_array_equal(table.values, [[1, 2], [3, 4]])


def _python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": SRC})
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_submodules_are_reached_from_a_bare_import():
    out = _python("import sys, numpy as np, madcluster\n"
                  "print('light', 'torch' in sys.modules, 'pandas' in sys.modules)\n"
                  "m = madcluster.metrics.evaluate(np.r_[0.1, 0.9, 0.2, 0.8], np.r_[0, 1, 0, 1], threshold=0.5)\n"
                  "print('f1', m['f1'])\n"
                  "print('has', hasattr(madcluster, 'no_such_thing'))")
    assert "light False False" in out and "f1 1.0" in out and "has False" in out
