"""Ctrl-C after the last epoch, while the model is being finished, keeps the fit."""

from __future__ import annotations

import os
import signal

import pandas as pd
import pytest
from series_helpers import make_series

from madcluster import MADCluster
from madcluster.cli import main

FAST = ["--window-size", "20", "--epochs", "2", "--stride", "4", "--hidden-size", "16", "--layers", "2", "--quiet"]


@pytest.fixture
def train_csv(tmp_path):
    pd.DataFrame(make_series(600, 3), columns=["a", "b", "c"]).to_csv(tmp_path / "train.csv", index=False)
    return tmp_path / "train.csv"


def _ctrl_c_while_finishing(monkeypatch, times: int) -> None:
    """Press Ctrl-C ``times`` times in the after-training step (input terms, warm-up, baseline)."""
    original = MADCluster._fit_training_scores

    def finish_then_interrupt(self, *args, **kwargs):
        for _ in range(times):
            os.kill(os.getpid(), signal.SIGINT)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(MADCluster, "_fit_training_scores", finish_then_interrupt)


def test_ctrl_c_after_the_last_epoch_still_writes_the_model(train_csv, monkeypatch, capsys):
    _ctrl_c_while_finishing(monkeypatch, times=1)
    model = train_csv.parent / "m.mcz"
    assert main(["fit", str(train_csv), "-o", str(model), *FAST]) == 0
    assert "finished and written" in capsys.readouterr().err
    loaded = MADCluster.load(model)
    assert loaded.threshold_ > 0 and "_fit_training_scores" not in vars(loaded)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_second_ctrl_c_stops_without_a_traceback(train_csv, monkeypatch, capsys):
    _ctrl_c_while_finishing(monkeypatch, times=2)
    model = train_csv.parent / "m.mcz"
    assert main(["fit", str(train_csv), "-o", str(model), *FAST]) == 130
    err = capsys.readouterr().err
    assert "Ctrl-C again" in err and "Traceback" not in err
    assert not model.exists()
    # issue 37 item 7: the double tap keeps the training; --resume finishes the model without training again
    partial = train_csv.parent / "m.mcz.partial"
    assert partial.is_file() and "--resume to finish the model" in err
    monkeypatch.undo()
    assert main(["fit", str(train_csv), "-o", str(model), *FAST, "--resume"]) == 0
    assert model.is_file() and not partial.exists()
