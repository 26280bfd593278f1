"""Ctrl-C during training saves the state; resuming gives the uninterrupted run (madcluster.training.checkpoint)."""

from __future__ import annotations

import pytest
import torch
from series_helpers import make_series

from madcluster.embedders import DilatedRNN
from madcluster.method import MADClusterHead, MethodConfig
from madcluster.training.checkpoint import (
    CheckpointError,
    Checkpointing,
    TrainingInterrupted,
    partial_path,
)
from madcluster.training.loop import TrainSettings, train_network
from madcluster.training.network import MADClusterNet

SETTINGS = TrainSettings(window_size=20, stride=1, epochs=4, batch_size=32, patience=100, epoch_windows=96)
SERIES = torch.from_numpy(make_series(700, 3))
TRAIN, VAL = SERIES[:550], SERIES[550:]


def _net() -> MADClusterNet:
    torch.manual_seed(0)
    return MADClusterNet(DilatedRNN(3, hidden_size=8, n_layers=2), MADClusterHead(8, MethodConfig()))


def _fit(checkpointing: Checkpointing | None, net: MADClusterNet | None = None):
    net = net or _net()
    history = train_network(net, TRAIN, VAL, SETTINGS, torch.Generator().manual_seed(0), checkpointing=checkpointing)
    return net, history


def _interrupt_at_step(net: MADClusterNet, step: int) -> None:
    """Make the embedder's ``step``-th optimisation step (1-based) raise KeyboardInterrupt, as Ctrl-C would."""
    original, calls = net.embedder.training_step, [0]

    def step_or_interrupt(*args, **kwargs):
        calls[0] += 1
        if calls[0] == step:
            raise KeyboardInterrupt
        return original(*args, **kwargs)

    net.embedder.training_step = step_or_interrupt


def test_resume_after_ctrl_c_equals_uninterrupted(tmp_path):
    path = partial_path(tmp_path / "model.mcz")
    assert path.name == "model.mcz.partial"
    reference, ref_history = _fit(None)

    net = _net()
    _interrupt_at_step(net, 3 * 3 + 2)  # 3 batches per epoch: the second batch of epoch 4
    with pytest.raises(TrainingInterrupted) as caught:
        _fit(Checkpointing(path, {"data": "a"}), net)
    assert isinstance(caught.value, KeyboardInterrupt)
    assert caught.value.path == path and caught.value.epochs_done == 3 and path.is_file()
    assert str(path) in caught.value.describe()

    resumed, history = _fit(Checkpointing(path, {"data": "a"}, resume=True))
    assert history["epoch"] == [1.0, 2.0, 3.0, 4.0]
    assert history["val_loss"] == ref_history["val_loss"]
    for key, value in reference.state_dict().items():
        assert torch.equal(resumed.state_dict()[key], value), key


def test_interrupt_in_first_epoch_saves_nothing(tmp_path):
    net = _net()
    _interrupt_at_step(net, 1)
    path = tmp_path / "m.partial"
    with pytest.raises(TrainingInterrupted, match="nothing saved"):
        _fit(Checkpointing(path, {}), net)
    assert not path.exists()


def test_resume_refuses_other_data_or_a_missing_file(tmp_path):
    path = tmp_path / "m.partial"
    with pytest.raises(CheckpointError, match="nothing to resume"):
        _fit(Checkpointing(path, {}, resume=True))
    net = _net()
    _interrupt_at_step(net, 5)
    with pytest.raises(TrainingInterrupted):
        _fit(Checkpointing(path, {"data": "a", "lr": 0.001}), net)
    with pytest.raises(CheckpointError, match="differs in: data, lr"):
        _fit(Checkpointing(path, {"data": "b", "lr": 0.01}, resume=True))
    path.write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match="not a madcluster checkpoint"):
        _fit(Checkpointing(path, {}, resume=True))
