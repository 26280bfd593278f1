"""The step-by-step recurrent layers the float64 ONNX graph holds equal torch's own layers."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from madcluster.estimator.onnx_rnn import UnrolledRNN, unrolled


@pytest.mark.parametrize("cell", [nn.GRU, nn.LSTM, nn.RNN])
@pytest.mark.parametrize("batch_first", [True, False])
def test_unrolled_layers_give_torch_outputs(cell, batch_first):
    torch.manual_seed(0)
    rnn = cell(3, 5, num_layers=2, batch_first=batch_first).double().eval()
    x = torch.randn(4, 7, 3, dtype=torch.float64)
    with torch.no_grad():
        expected_out, expected_state = rnn(x)
        out, state = UnrolledRNN(rnn)(x)
    torch.testing.assert_close(out, expected_out, atol=1e-13, rtol=0)
    for got, want in zip(state if isinstance(state, tuple) else (state,), expected_state if isinstance(expected_state, tuple) else (expected_state,)):
        torch.testing.assert_close(got, want, atol=1e-13, rtol=0)


def test_unrolled_swaps_nested_layers_and_leaves_the_module():
    model = nn.Sequential(nn.Linear(2, 3), nn.ModuleList([nn.GRU(3, 3, batch_first=True)]))
    swapped = unrolled(model)
    assert isinstance(swapped[1][0], UnrolledRNN) and isinstance(model[1][0], nn.GRU)
