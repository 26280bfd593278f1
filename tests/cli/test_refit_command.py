"""``madcluster refit MODEL RECENT`` (issue 36 item 5)."""

from __future__ import annotations

import numpy as np
import pytest
from series_helpers import make_series

from madcluster import MADCluster
from madcluster.cli import main


@pytest.fixture
def model_and_recent(tmp_path, small_params):
    path = tmp_path / "m.mcz"
    MADCluster(**small_params).fit(make_series(600, 3, seed=0)).save(path)
    recent = tmp_path / "recent.npy"
    np.save(recent, make_series(500, 3, seed=1) + np.float32(3.0))
    return path, recent


def test_refit_replaces_the_model_warm_started(model_and_recent, capsys):
    path, recent = model_and_recent
    before = MADCluster.load(path)
    assert main(["refit", str(path), str(recent), "--epochs", "1"]) == 0
    out = capsys.readouterr().out
    assert "refitted on 500 rows x 3 features" in out and "warm-started" in out and "1 epochs" in out
    after = MADCluster.load(path)
    assert after.threshold_ != before.threshold_ and after.epochs == before.epochs
    assert np.allclose(after.scaler_mean_[:3], np.load(recent).mean(axis=0), atol=1e-4)


def test_refit_to_another_file_and_bad_input(model_and_recent, tmp_path, capsys):
    path, recent = model_and_recent
    out = tmp_path / "new.mcz"
    assert main(["refit", str(path), str(recent), "-o", str(out), "--from-scratch"]) == 0
    assert out.exists() and "from scratch" in capsys.readouterr().out
    wide = tmp_path / "wide.npy"
    np.save(wide, make_series(500, 4, seed=1))
    assert main(["refit", str(path), str(wide)]) == 2
    assert "madcluster refit: error:" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:  # argparse refuses it before anything is read
        main(["refit", str(path), str(recent), "--epochs", "0"])
    assert stop.value.code == 2
