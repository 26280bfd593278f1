"""Ctrl-C after the last epoch, while the model is being finished, keeps the fit."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pandas as pd
import pytest
from series_helpers import make_series

from madcluster import MADCluster
from madcluster.cli import main
from madcluster.estimator import fitting

FAST = ["--window-size", "20", "--epochs", "2", "--stride", "4", "--hidden-size", "16", "--layers", "2", "--quiet"]


@pytest.fixture(autouse=True)
def python_ctrl_c_handler():
    """Python's own Ctrl-C handler while each test runs: a test run started as a background job
    of a non-interactive shell inherits SIGINT ignored, where no Ctrl-C would reach the fit."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


@pytest.fixture
def train_csv(tmp_path):
    pd.DataFrame(make_series(600, 3), columns=["a", "b", "c"]).to_csv(tmp_path / "train.csv", index=False)
    return tmp_path / "train.csv"


def _ctrl_c_while_finishing(monkeypatch, times: int) -> None:
    """Press Ctrl-C ``times`` times in the after-training step (input terms, warm-up, baseline)."""
    original = fitting.fit_model

    def finish_then_interrupt(*args, **kwargs):
        for _ in range(times):
            os.kill(os.getpid(), signal.SIGINT)
        return original(*args, **kwargs)

    monkeypatch.setattr(fitting, "fit_model", finish_then_interrupt)


def test_ctrl_c_after_the_last_epoch_still_writes_the_model(train_csv, monkeypatch, capsys):
    _ctrl_c_while_finishing(monkeypatch, times=1)
    model = train_csv.parent / "m.mcz"
    assert main(["fit", str(train_csv), "-o", str(model), *FAST]) == 0
    assert "finished and written" in capsys.readouterr().err
    loaded = MADCluster.load(model)
    assert loaded.threshold_ > 0
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


def test_sigterm_while_finishing_still_writes_the_model(train_csv, monkeypatch, capsys):
    """SIGTERM (timeout, systemd, docker stop) after the last epoch is treated as Ctrl-C: noted, and
    the model finished and written."""
    original = fitting.fit_model

    def finish_after_sigterm(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)
        return original(*args, **kwargs)

    monkeypatch.setattr(fitting, "fit_model", finish_after_sigterm)
    model = train_csv.parent / "m.mcz"
    assert main(["fit", str(train_csv), "-o", str(model), *FAST]) == 0
    assert "SIGTERM came after the last epoch" in capsys.readouterr().err
    assert MADCluster.load(model).threshold_ > 0
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


@pytest.mark.slow
def test_sigterm_during_training_saves_the_partial_file(train_csv):
    """SIGTERM while the epochs run stops like Ctrl-C: the training state goes to OUTPUT.partial,
    the --resume hint is printed and the status is not 0 (143, as a shell reports SIGTERM); the
    partial file resumes."""
    model = train_csv.parent / "m.mcz"
    argv = ["fit", str(train_csv), "-o", str(model), *FAST, "--epochs", "100000", "--validation-size", "0"]
    argv.remove("--quiet")  # the epoch lines say when training is under way
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
    fit = subprocess.Popen(
        [sys.executable, "-m", "madcluster", *argv], stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        for line in fit.stderr:
            if line.startswith("epoch 2/"):
                break
        fit.send_signal(signal.SIGTERM)
        err = fit.stderr.read()
        status = fit.wait(timeout=120)
        assert status == 128 + signal.SIGTERM, (status, err)
    finally:
        fit.kill()
    partial = train_csv.parent / "m.mcz.partial"
    assert partial.is_file() and not model.exists()
    assert "SIGTERM: interrupted" in err and "--resume" in err and "Traceback" not in err
    # --epochs at most the epochs done: the best model so far, written at once
    assert main(["fit", str(train_csv), "-o", str(model), *FAST, "--validation-size", "0", "--epochs", "1", "--resume"]) == 0
    assert model.is_file() and not partial.exists()
