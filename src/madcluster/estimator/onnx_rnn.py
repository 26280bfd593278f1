"""Recurrent layers written out step by step, for ONNX graphs in float64.

The fitted model scores in float64 (:mod:`madcluster.estimator.fitted` says why), and its ONNX
graph must too, or onnxruntime's float32 rounding shows in the standardised scores (2e-4 of a
score on a 20-epoch model). onnxruntime's ``GRU``, ``LSTM`` and ``RNN`` operators run float32 only
("GRU operator does not support double yet", onnxruntime 1.32), so before export each
``nn.GRU`` / ``nn.LSTM`` / ``nn.RNN`` is swapped for :class:`UnrolledRNN`: the same equations
(PyTorch's gate order and biases) as matrix products and element-wise ops, which onnxruntime runs
in double. The tracer unrolls the loop over time steps (the window length is fixed in the graph;
the batch stays dynamic).
"""

from __future__ import annotations

import copy
from typing import Any

import torch
from torch import nn

from madcluster.exceptions import MADClusterError


class UnrolledRNN(nn.Module):
    """A single-direction ``nn.GRU`` / ``nn.LSTM`` / ``nn.RNN`` (any number of layers) as one
    explicit step per time step, sharing the original's parameters; returns what it returns
    (``output, h_n`` or ``output, (h_n, c_n)``)."""

    def __init__(self, rnn: nn.RNNBase) -> None:
        super().__init__()
        if rnn.bidirectional or getattr(rnn, "proj_size", 0):
            raise MADClusterError(
                f"{type(rnn).__name__} with bidirectional or proj_size does not export in float64"
            )
        if rnn.training and rnn.dropout:
            raise MADClusterError("a recurrent layer in training mode with dropout does not export")
        self.rnn = rnn
        self.kind = rnn.mode  # "GRU", "LSTM", "RNN_TANH" or "RNN_RELU"

    def forward(self, x: torch.Tensor, hx: Any = None) -> tuple[torch.Tensor, Any]:
        rnn = self.rnn
        if not rnn.batch_first:
            x = x.transpose(0, 1)
        batch, length = x.shape[0], x.shape[1]
        lstm = self.kind == "LSTM"
        if hx is None:
            zeros = x.new_zeros(rnn.num_layers, batch, rnn.hidden_size)
            hx = (zeros, zeros) if lstm else zeros
        h0, c0 = hx if lstm else (hx, None)
        last_h: list[torch.Tensor] = []
        last_c: list[torch.Tensor] = []
        for layer in range(rnn.num_layers):
            w_ih, w_hh = getattr(rnn, f"weight_ih_l{layer}"), getattr(rnn, f"weight_hh_l{layer}")
            b_ih = getattr(rnn, f"bias_ih_l{layer}") if rnn.bias else None
            b_hh = getattr(rnn, f"bias_hh_l{layer}") if rnn.bias else None
            projected = x @ w_ih.t()  # [B, T, gates * H]: every step's input part at once
            if b_ih is not None:
                projected = projected + b_ih
            h, c = h0[layer], None if c0 is None else c0[layer]
            outputs = []
            for t in range(length):
                recurrent = h @ w_hh.t()
                if b_hh is not None:
                    recurrent = recurrent + b_hh
                h, c = self._cell(projected[:, t], recurrent, h, c)
                outputs.append(h)
            x = torch.stack(outputs, dim=1)
            last_h.append(h)
            if c is not None:
                last_c.append(c)
        out = x if rnn.batch_first else x.transpose(0, 1)
        h_n = torch.stack(last_h)
        return out, ((h_n, torch.stack(last_c)) if lstm else h_n)

    def _cell(
        self, gi: torch.Tensor, gh: torch.Tensor, h: torch.Tensor, c: torch.Tensor | None
    ) -> tuple[torch.Tensor, Any]:
        """One step from the input part ``gi`` and the recurrent part ``gh`` of the gates."""
        if self.kind == "GRU":  # r, z, n; n = tanh(W_in x + b_in + r * (W_hn h + b_hn))
            i_r, i_z, i_n = gi.chunk(3, dim=-1)
            h_r, h_z, h_n = gh.chunk(3, dim=-1)
            r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)
            n = torch.tanh(i_n + r * h_n)
            return (1 - z) * n + z * h, None
        if self.kind == "LSTM":  # i, f, g, o
            i, f, g, o = (gi + gh).chunk(4, dim=-1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            return torch.sigmoid(o) * torch.tanh(c), c
        pre = gi + gh
        return (torch.tanh(pre) if self.kind == "RNN_TANH" else torch.relu(pre)), None


def unrolled(module: nn.Module) -> nn.Module:
    """A copy of ``module`` with every ``nn.GRU`` / ``nn.LSTM`` / ``nn.RNN`` inside wrapped in
    :class:`UnrolledRNN` (``module`` itself is left as it is)."""
    out = copy.deepcopy(module)
    targets = [
        (name, child) for name, child in out.named_modules() if isinstance(child, nn.RNNBase)
    ]
    for name, child in targets:
        if not name:  # the module itself is a bare RNN: no embedder is
            return UnrolledRNN(child)
        parent_name, _, attr = name.rpartition(".")
        parent = out.get_submodule(parent_name) if parent_name else out
        if isinstance(parent, nn.ModuleList):
            parent[int(attr)] = UnrolledRNN(child)
        else:
            setattr(parent, attr, UnrolledRNN(child))
    return out
