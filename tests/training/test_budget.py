"""The training budget through the estimator and the CLI: windows per epoch, the thread
default, POT thresholds, Ctrl-C and --resume."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from series_helpers import make_series
from torch import nn

from madcluster import MADCluster
from madcluster.cli import build_parser, main
from madcluster.extreme_value import pot_threshold
from madcluster.threads import resolve_threads

SMALL = {"window_size": 20, "epochs": 2, "batch_size": 32, "embedder_params": {"hidden_size": 8, "n_layers": 1}, "random_state": 0}
FAST = ["--window-size", "20", "--epochs", "3", "--hidden-size", "8", "--layers", "1", "--batch-size", "32", "--epoch-windows", "64"]


def _count_steps(monkeypatch) -> list[int]:
    from madcluster.embedders.base import BaseEmbedder

    steps, original = [], BaseEmbedder.training_step

    def counted(self, x, *args, **kwargs):
        steps.append(len(x))
        return original(self, x, *args, **kwargs)

    monkeypatch.setattr(BaseEmbedder, "training_step", counted)
    return steps


@pytest.mark.slow
def test_epoch_windows_bounds_the_steps_per_epoch(monkeypatch):
    X = make_series(900, 3)
    steps = _count_steps(monkeypatch)
    MADCluster(**SMALL, epoch_windows=40, validation_size=0.0).fit(X)
    assert steps == [32, 8, 32, 8]  # 40 windows per epoch, batches of 32
    steps.clear()
    MADCluster(**SMALL, epoch_windows=None, validation_size=0.0).fit(X)
    assert sum(steps) == 2 * (900 - 20 + 1)  # every window, every epoch
    assert MADCluster.from_preset("paper").epoch_windows is None
    with pytest.raises(ValueError, match="epoch_windows must be a positive integer, 'auto'"):
        MADCluster(**SMALL, epoch_windows=0).fit(X)


def test_auto_batch_is_the_embedders_training_batch(monkeypatch):
    """The default trains the D-RNN in 15 batches of 32 an epoch (what the fast preset was) and
    every other embedder in 15 of 128: as many steps either way, the measurement behind the D-RNN's
    batch assumes exactly that; a batch the user gives wins."""
    from madcluster.estimator.network import resolve_training_batch

    default = MADCluster()
    assert (default.batch_size, default.epoch_windows) == ("auto", "auto")
    assert resolve_training_batch(default.get_params()) == (32, 480)
    assert resolve_training_batch(MADCluster(embedder="usad").get_params()) == (128, 1920)
    assert resolve_training_batch(MADCluster(embedder=nn.GRU(3, 4)).get_params()) == (128, 1920)
    assert resolve_training_batch(MADCluster(batch_size=16, epoch_windows=None).get_params()) == (16, None)
    assert resolve_training_batch(MADCluster.from_preset("paper").get_params()) == (128, None)
    fast = MADCluster.from_preset("fast")
    assert resolve_training_batch(fast.get_params()) == resolve_training_batch(default.get_params())
    X = make_series(2_000, 2)
    counted = _count_steps(monkeypatch)
    small = {k: v for k, v in SMALL.items() if k != "batch_size"}  # the default's batch, not SMALL's
    MADCluster(**small, epoch_windows=64, validation_size=0.0).fit(X)
    assert counted == [32, 32, 32, 32]
    with pytest.raises(ValueError, match="batch_size must be a positive integer, 'auto'"):
        MADCluster(batch_size="big").fit(X)


class _ThreadProbe(nn.Module):
    """A tiny embedder that records torch's thread count whenever it runs."""

    def __init__(self, seen: list[int]) -> None:
        super().__init__()
        self.record = lambda threads: seen.append(threads)  # a function survives the estimator's deepcopy
        self.linear = nn.Linear(3, 4)

    def forward(self, x):
        self.record(torch.get_num_threads())
        return self.linear(x)


def test_one_thread_by_default_and_n_jobs_otherwise():
    seen: list[int] = []
    X = make_series(300, 3)
    before = torch.get_num_threads()
    probe = _ThreadProbe(seen)
    model = MADCluster(embedder=probe, window_size=20, epochs=1, random_state=0).fit(X)
    assert model.n_jobs is None and set(seen) == {1}
    assert torch.get_num_threads() == before
    seen.clear()
    model.set_params(n_jobs=2).decision_function(X)
    assert set(seen) == {resolve_threads(2)} and torch.get_num_threads() == before
    with pytest.raises(ValueError, match="n_jobs"):
        MADCluster(n_jobs=0).fit(X)


@pytest.mark.slow
def test_pot_threshold_in_the_estimator():
    X = make_series(1500, 3)
    model = MADCluster(**SMALL, threshold="pot", contamination=0.005).fit(X)
    assert model.threshold_ == pot_threshold(model.decision_scores_, 0.005)
    assert model.threshold_ != np.quantile(model.decision_scores_, 0.995)
    with pytest.raises(ValueError, match="unknown threshold 'evt'"):
        MADCluster(threshold="evt").fit(X)
    with pytest.raises(ValueError, match="needs contamination > 0"):
        MADCluster(threshold="pot", contamination=0.0).fit(X)
    with pytest.raises(ValueError, match="needs at least 500 training rows"):
        MADCluster(**SMALL, threshold="pot").fit(X[:400])  # before any training


def test_cli_defaults_are_the_estimator_s():
    parser = build_parser()
    for argv in (["fit", "x.csv", "-o", "m.mcz"], ["score", "m.mcz", "x.csv"], ["demo"]):
        assert parser.parse_args(argv).threads is None  # = MADCluster(n_jobs=None): one thread
    args = parser.parse_args(["fit", "x.csv", "-o", "m.mcz", "--threads", "-1", "--threshold-method", "pot", "--epoch-windows", "all"])
    from madcluster.cli.options import detector_params_from_args

    params = detector_params_from_args(args)
    assert params["n_jobs"] == -1 and params["threshold"] == "pot" and params["epoch_windows"] is None
    for bad in (["--threads", "0"], ["--threads", "-2"], ["--epoch-windows", "0"], ["--threshold-method", "evt"]):
        with pytest.raises(SystemExit):
            parser.parse_args(["fit", "x.csv", "-o", "m.mcz", *bad])


def test_cli_ctrl_c_saves_and_resume_finishes(tmp_path, monkeypatch, capsys):
    pd.DataFrame(make_series(700, 3), columns=["a", "b", "c"]).to_csv(tmp_path / "train.csv", index=False)
    model = tmp_path / "model.mcz"
    argv = ["fit", str(tmp_path / "train.csv"), "-o", str(model), *FAST]
    assert main([*argv, "-o", str(tmp_path / "reference.mcz")]) == 0
    reference = MADCluster.load(tmp_path / "reference.mcz")

    steps = _count_steps(monkeypatch)
    from madcluster.embedders.base import BaseEmbedder

    counted = BaseEmbedder.training_step

    def ctrl_c_in_epoch_3(self, x, *args, **kwargs):
        if len(steps) == 4:  # two batches per epoch: the first step of epoch 3
            raise KeyboardInterrupt
        return counted(self, x, *args, **kwargs)

    monkeypatch.setattr(BaseEmbedder, "training_step", ctrl_c_in_epoch_3)
    capsys.readouterr()
    assert main(argv) == 130
    err = capsys.readouterr().err
    partial = tmp_path / "model.mcz.partial"
    assert partial.is_file() and not model.exists()
    assert "after epoch 2" in err and str(partial) in err and "--resume" in err

    monkeypatch.setattr(BaseEmbedder, "training_step", counted)
    assert main([*argv, "--resume"]) == 0
    assert model.is_file() and not partial.exists()
    resumed = MADCluster.load(model)
    assert resumed.history_["epoch"] == [1.0, 2.0, 3.0]
    assert np.array_equal(resumed.decision_scores_, reference.decision_scores_)
