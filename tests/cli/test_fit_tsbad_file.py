"""Issue 37 item 9: `madcluster fit` of a TSB-AD file trains on its first N rows (tr_N), with its
Label column as labels, and says so; --all-rows trains on every row."""

from __future__ import annotations

import numpy as np
import pytest

from madcluster import MADCluster
from madcluster.cli import main


@pytest.fixture
def tsbad_file(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((900, 2))
    label = np.zeros(900, dtype=int)
    label[700:720] = 1
    path = tmp_path / "001_MSL_id_1_Sensor_tr_500_1st_700.csv"
    with open(path, "w") as handle:
        handle.write("a,b,Label\n")
        handle.writelines(f"{a},{b},{lab}\n" for (a, b), lab in zip(x, label))
    return path


@pytest.mark.parametrize("extra, rows", [([], 500), (["--all-rows"], 900)])
def test_tsbad_file_trains_on_its_training_rows(tsbad_file, capsys, monkeypatch, extra, rows):
    seen = {}

    def fit(self, X, *args, **kwargs):
        seen["shape"] = np.asarray(X).shape
        raise KeyboardInterrupt  # stop before training: the rows are what this test checks

    monkeypatch.setattr(MADCluster, "fit", fit)
    main(["fit", str(tsbad_file), "-o", str(tsbad_file.with_suffix(".mcz")), "--window-size", "20", *extra])
    err = capsys.readouterr().err
    assert seen["shape"] == (rows, 2)  # the Label column is not a feature
    assert "'Label' column is read as labels" in err
    assert ("training on its first 500 of 900 rows" in err) == (rows == 500)
