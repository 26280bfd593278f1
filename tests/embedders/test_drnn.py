from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from madcluster.embedders import DilatedRNN, build_embedder
from madcluster.embedders.drnn import dilate


@pytest.mark.parametrize("dilation,length", [(1, 10), (2, 10), (4, 10), (4, 12), (8, 5)])
def test_folded_dilation_equals_explicit_subsequences(dilation, length):
    torch.manual_seed(0)
    rnn = nn.GRU(3, 5, batch_first=True)
    x = torch.randn(2, length, 3)
    y = dilate(rnn, x, dilation)
    assert y.shape == (2, length, 5)
    for r in range(min(dilation, length)):
        assert torch.allclose(y[:, r::dilation], rnn(x[:, r::dilation])[0], atol=1e-6)


def test_drnn_shapes_and_causality():
    torch.manual_seed(0)
    m = DilatedRNN(4, hidden_size=8, n_layers=3)
    x = torch.randn(2, 30, 4)
    h = m(x).h
    assert h.shape == (2, 30, 8) and m.out_features == 8
    x2 = x.clone()
    x2[:, 20:] += 10.0  # the future must not change the past
    assert torch.allclose(m(x2).h[:, :20], h[:, :20], atol=1e-6)
    assert m.dilations == [1, 2, 4]


def test_registry_errors():
    with pytest.raises(ValueError, match="unknown embedder 'transformerx'.*drnn"):
        build_embedder("transformerx", 3)
    with pytest.raises(ValueError, match="bad embedder_params"):
        build_embedder("drnn", 3, hidden=4)
    with pytest.raises(ValueError, match="unknown cell"):
        build_embedder("drnn", 3, cell="tcn")


@pytest.mark.parametrize("bias", [True, False])
def test_macs_match_a_hand_count(bias):
    """ptflops' count of the D-RNN (the paper's convention) equals the hand count per step and
    layer: 3H(D_in + H) for the gate projections, 7H for the gate products and the interpolation,
    and 6H for the two bias vectors; the MADCluster head adds element-wise work only."""
    pytest.importorskip("ptflops")
    from madcluster import MADCluster

    x = np.random.default_rng(0).normal(size=(300, 5)).astype(np.float32)
    model = MADCluster(window_size=20, epochs=1, random_state=0, validation_size=0.0,
                       embedder_params={"hidden_size": 8, "n_layers": 3, "bias": bias}).fit(x)
    cost = model.cost()
    L, H = 20, 8
    # the first layer sees the 5 channels and their 5 roughness channels (the default input)
    hand = sum(L * (3 * H * (d_in + H) + 7 * H + 6 * H * bias) for d_in in (10, H, H))
    assert cost["macs_per_window"] == hand and "ptflops" in cost["macs_method"]
    assert cost["n_params_head"] == H + 1  # the center c and theta
