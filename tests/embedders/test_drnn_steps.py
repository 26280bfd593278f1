"""The D-RNN stepper (streaming's fast path) builds exactly the outputs of the whole-window pass."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from madcluster.data.windows import causal_window_of, gather_windows, pad_for_windows
from madcluster.embedders.drnn import DilatedRNN
from madcluster.embedders.drnn_steps import DilatedRNNSteps


def _whole_window_features(embedder: DilatedRNN, x: torch.Tensor, window: int, stride: int) -> torch.Tensor:
    """Last layer's output of each step in the window that scores it, from one batched pass."""
    steps = np.arange(len(x))
    starts_of = causal_window_of(steps, window, stride)
    starts = np.unique(starts_of)
    batch = gather_windows(pad_for_windows(x, starts, window), starts, window)
    with torch.no_grad():
        out = embedder.layer_outputs(torch.cat([batch, batch[-1:].expand(3, -1, -1)]))[-1]
    return out[np.searchsorted(starts, starts_of), steps - starts_of]


@pytest.mark.parametrize(
    ("cell", "n_layers", "window", "stride"),
    [("gru", 3, 20, 2), ("gru", 4, 24, 24), ("rnn", 2, 9, 1), ("gru", 3, 30, 7)],
)
def test_steps_and_replays_give_the_whole_window_outputs(cell, n_layers, window, stride):
    torch.manual_seed(0)
    embedder = DilatedRNN(5, hidden_size=8, n_layers=n_layers, cell=cell).eval()
    x = torch.randn(97, 5)
    expected = _whole_window_features(embedder, x, window, stride)
    stepper = DilatedRNNSteps(embedder, window, stride, min_batch=4)
    stepped = torch.stack([stepper.advance(x[t], t) for t in range(len(x))])
    torch.testing.assert_close(stepped, expected, atol=1e-6, rtol=0)
    for resume in (1, window - 1, 61):  # a fresh stepper rebuilt from the open windows' rows
        other = DilatedRNNSteps(embedder, window, stride, min_batch=4)
        first = other.window_of(resume)
        other.replay(x[first:resume], first)
        rest = torch.stack([other.advance(x[t], t) for t in range(resume, len(x))])
        torch.testing.assert_close(rest, expected[resume:], atol=1e-6, rtol=0)


def test_only_plain_full_precision_drnns_step():
    assert DilatedRNNSteps.supports(DilatedRNN(3), None)
    assert not DilatedRNNSteps.supports(DilatedRNN(3, cell="lstm"), None)
    assert not DilatedRNNSteps.supports(DilatedRNN(3, auxiliary="next-step"), None)
    assert not DilatedRNNSteps.supports(DilatedRNN(3), torch.bfloat16)
    assert not DilatedRNNSteps.supports(torch.nn.Linear(3, 3), None)
