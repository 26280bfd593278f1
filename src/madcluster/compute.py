"""What one window costs a torch model: parameters and multiply-accumulates (MACs).

The paper's compute table counts MACs as ``ptflops`` (pytorch backend) does: every matrix product
plus the bias adds and the gate products inside RNN cells, one window [1, L, D], batch 1. We use
ptflops when it is installed (the ``dev`` extra) and fall back to torch's own ``FlopCounterMode``
(matrix products only, so a few percent lower for RNNs); ``macs_method`` says which one ran.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn


class _ScorePath(nn.Module):
    """Wraps a network so that ``forward`` is its scoring path, which ptflops can hook."""

    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        terms = self.net.score(x)
        return sum(terms.values()) if terms else x.new_zeros(())


def torch_model_cost(net: Any, window_size: int, n_features: int) -> dict[str, Any]:
    """Parameters (embedder / head / total) and MACs of one window through ``net.score``."""
    device = next(net.parameters()).device
    was_training = net.training
    net.eval()
    try:
        macs, method = _ptflops_macs(net, window_size, n_features)
    except ImportError:
        macs, method = _torch_macs(net, window_size, n_features, device)
    finally:
        net.train(was_training)
    n_embedder = sum(p.numel() for p in net.embedder.parameters())
    n_total = sum(p.numel() for p in net.parameters())
    return {
        "n_params": int(n_total),
        "n_params_embedder": int(n_embedder),
        "n_params_head": int(n_total - n_embedder),
        "macs_per_window": int(macs),
        "macs_method": method,
    }


def _ptflops_macs(net: nn.Module, window_size: int, n_features: int) -> tuple[int, str]:
    from ptflops import get_model_complexity_info

    device = next(net.parameters()).device
    with torch.no_grad():
        macs, _ = get_model_complexity_info(
            _ScorePath(net),
            (window_size, n_features),
            as_strings=False,
            print_per_layer_stat=False,
            backend="pytorch",
            input_constructor=lambda shape: torch.zeros(1, *shape, device=device),
        )
    return int(macs), "ptflops (pytorch backend), one window [1, L, D]"


def _torch_macs(
    net: nn.Module, window_size: int, n_features: int, device: torch.device
) -> tuple[int, str]:
    from torch.utils.flop_counter import FlopCounterMode

    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        net.score(torch.zeros(1, window_size, n_features, device=device))
    return int(
        counter.get_total_flops() // 2
    ), "torch FlopCounterMode FLOPs / 2 (matrix products only)"
