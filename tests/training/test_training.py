"""Training dynamics: the center moves, features do not collapse, the fixed-center ablation stays put."""

from __future__ import annotations

import math

import pytest
import torch
from series_helpers import make_series

from madcluster.data.windows import gather_windows, window_starts
from madcluster.embedders import DilatedRNN
from madcluster.method import MADClusterHead, MethodConfig
from madcluster.training.loop import TrainSettings, feature_source, train_network
from madcluster.training.network import MADClusterNet


def _spread(net: MADClusterNet, series: torch.Tensor, window: int) -> float:
    with torch.no_grad():
        h = net.embedder(gather_windows(series, window_starts(len(series), window, window), window)).h
    return float(h.reshape(-1, h.shape[-1]).std(dim=0).mean())


def _train(mode: str):
    torch.manual_seed(0)
    series = torch.from_numpy(make_series(1500, 3))
    embedder = DilatedRNN(3, hidden_size=16, n_layers=2, auxiliary="none")
    net = MADClusterNet(embedder, MADClusterHead(16, MethodConfig(mode=mode)))
    settings = TrainSettings(window_size=20, stride=2, epochs=6, batch_size=32, patience=100)
    net.head.start(feature_source(net, series, settings))
    c0, spread0 = net.head.center.detach().clone(), _spread(net, series, 20)
    history = train_network(net, series, None, settings, torch.Generator().manual_seed(0))
    return net, series, c0, spread0, history


@pytest.mark.slow
def test_center_moves_and_features_do_not_collapse():
    net, series, c0, spread0, history = _train("full")
    shift = float((net.head.center.detach() - c0).norm())
    assert shift > 1e-2, "the learnable center must move during training"
    assert _spread(net, series, 20) > 0.2 * spread0, "features collapsed to a constant"
    assert history["mean_distance"][-1] < history["mean_distance"][0], "features should be drawn toward the center"
    assert history["nu"][-1] > history["nu"][0], "the one-directed threshold should rise"


@pytest.mark.slow
def test_fixed_center_ablation_keeps_its_center():
    net, _, c0, _, history = _train("distance-only")
    assert torch.equal(net.head.center.detach(), c0)
    assert history["nu"][-1] == history["nu"][0] == 0.5


def test_bfloat16_runs_the_embedder_in_bfloat16_and_the_head_in_float32():
    from madcluster.embedders.base import BaseEmbedder, EmbedderOutput

    class Probe(BaseEmbedder):
        out_features = 4

        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(3, 4)
            self.seen: list[torch.dtype] = []

        def forward(self, x):
            h = self.linear(x)
            self.seen.append(h.dtype)
            return EmbedderOutput(h=h)

    head = MADClusterHead(4, MethodConfig())
    net = MADClusterNet(Probe(), head, precision=torch.bfloat16)
    series = torch.from_numpy(make_series(400, 3))
    settings = TrainSettings(window_size=20, stride=10, epochs=1, batch_size=8)
    history = train_network(net, series, None, settings, torch.Generator().manual_seed(0))
    assert set(net.embedder.seen) == {torch.bfloat16}
    assert net.head.center.dtype == torch.float32 and all(map(math.isfinite, history["train_loss"]))
    x = gather_windows(series, window_starts(len(series), 20, 20), 20)
    assert net(x).h.dtype == torch.float32
    assert all(t.dtype == torch.float32 for t in net.score(x).values())
    net.precision = None
    net(x)
    assert net.embedder.seen[-1] == torch.float32
