"""Blocks shared by the two association-discrepancy models, Anomaly Transformer and DCdetector.

Both embed a sequence with the same DataEmbedding, compare two row-stochastic attention maps
(Anomaly Transformer: learned "series" attention vs. a Gaussian "prior"; DCdetector: patch-wise vs.
in-patch attention) with a symmetric KL, train on that discrepancy with a stop-gradient on one side
of each term, and score a step by a softmax over the window of minus its discrepancy. Nothing here
knows a device: tensors are made on the input's device.

Maps are ``[B, H, L, L]`` with rows that sum to 1; a "per-step" value is ``[B, L]``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import nn

from madcluster.embedders.blocks import at_least_float32
from madcluster.exceptions import ParameterError

KL_EPS = 1e-4  # both official codes add 1e-4 inside the logs: a zero entry must not give -inf
SCORE_TEMPERATURE = 50.0  # both official codes' temperature in the per-step score


def sinusoidal_positions(
    length: int,
    d_model: int,
    *,
    device: torch.device | None = None,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """The Transformer's sinusoidal position encoding ``[length, d_model]`` (sin on even, cos on odd
    dimensions). Made per call on the caller's device: it is cheap and needs no buffer or max
    length."""
    pos = torch.arange(length, device=device, dtype=torch.float32)[:, None]
    rate = torch.exp(
        torch.arange(0, d_model, 2, device=device, dtype=torch.float32)
        * (-math.log(10000.0) / d_model)
    )
    pe = torch.zeros(length, d_model, device=device, dtype=torch.float32)
    pe[:, 0::2] = torch.sin(pos * rate)
    pe[:, 1::2] = torch.cos(pos * rate)[:, : d_model // 2]
    return pe.to(dtype)


class QueryKeyAttention(nn.Module):
    """Query and key projections of ``d_model`` features split over ``n_heads`` heads, and their
    attention maps ``softmax(QK^T / sqrt(E))`` per head, E = d_model / n_heads (Anomaly
    Transformer's series association, DCdetector's two views)."""

    def __init__(self, d_model: int, n_heads: int) -> None:
        super().__init__()
        if d_model % n_heads:
            raise ParameterError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
        self.n_heads = n_heads
        self.query = nn.Linear(d_model, d_model)
        self.key = nn.Linear(d_model, d_model)

    def attention_map(self, x: torch.Tensor) -> torch.Tensor:
        """The maps ``[B, H, L, L]`` of tokens ``x`` ``[B, L, d_model]``, in float32 even under
        autocast (the KL's logs)."""
        b, length, d = x.shape
        q = self.query(x).view(b, length, self.n_heads, -1)
        k = self.key(x).view(b, length, self.n_heads, -1)
        scores = torch.einsum("blhe,bshe->bhls", q, k) / math.sqrt(d // self.n_heads)
        return torch.softmax(at_least_float32(scores), dim=-1)


class DataEmbedding(nn.Module):
    """Token embedding (bias-free circular Conv1d, kernel 3, over the sequence axis) plus the
    sinusoidal position encoding: ``[B, T, c_in] -> [B, T, d_model]`` (both authors' DataEmbedding,
    dropout 0 as in their defaults). Circular padding treats the window as a loop, so the first
    and last steps see a full kernel."""

    def __init__(self, c_in: int, d_model: int) -> None:
        super().__init__()
        if c_in < 1 or d_model < 2:
            raise ParameterError(
                f"DataEmbedding needs c_in >= 1 and d_model >= 2 (got {c_in}, {d_model})"
            )
        self.conv = nn.Conv1d(c_in, d_model, 3, padding=1, padding_mode="circular", bias=False)
        nn.init.kaiming_normal_(self.conv.weight, mode="fan_in", nonlinearity="leaky_relu")
        self.d_model = d_model

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        tokens = self.conv(x.transpose(1, 2)).transpose(1, 2)
        return tokens + sinusoidal_positions(
            x.shape[1], self.d_model, device=x.device, dtype=tokens.dtype
        )

    # The embedding is linear in x: ``forward(x) = [unfold(x), I_T] @ basis(T)``. A bilinear form
    # of the embedded tokens (DCdetector's ``x Wq^T Wk x'^T``) can then be taken in the small space
    # of 3 * c_in + T coordinates instead of d_model.
    def unfold(self, x: torch.Tensor) -> torch.Tensor:
        """``[B, T, c_in] -> [B, T, 3 c_in]``: each step with its circular neighbours
        ``(t-1, t, t+1)``."""
        return torch.cat([torch.roll(x, 1, dims=1), x, torch.roll(x, -1, dims=1)], dim=-1)

    def basis(self, length: int) -> torch.Tensor:
        """``[3 c_in + length, d_model]``: the conv weight as a matrix over :meth:`unfold`'s
        coordinates, then the position encoding, one row per step."""
        weight = self.conv.weight.permute(2, 1, 0).reshape(-1, self.d_model)  # [k * c_in + i, out]
        positions = sinusoidal_positions(
            length, self.d_model, device=weight.device, dtype=weight.dtype
        )
        return torch.cat([weight, positions], dim=0)


def kl_rows(p: torch.Tensor, q: torch.Tensor, eps: float = KL_EPS) -> torch.Tensor:
    """KL(p || q) of each row of two maps ``[B, H, L, L]``, averaged over heads: ``[B, L]``.

    ``eps`` inside the logs as in both official codes, so a zero attention weight stays finite."""
    return (p * (torch.log(p + eps) - torch.log(q + eps))).sum(dim=-1).mean(dim=1)


def symmetric_kl(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """The association discrepancy of each step: ``KL(p || q) + KL(q || p)``, ``[B, L]``.

    Computed as ``sum (p - q)(log p - log q)``, the same sum with two logs instead of four."""
    return _symmetric_kl_from_logs(p, q, torch.log(p + KL_EPS), torch.log(q + KL_EPS))


def _symmetric_kl_from_logs(
    p: torch.Tensor, q: torch.Tensor, log_p: torch.Tensor, log_q: torch.Tensor
) -> torch.Tensor:
    return ((p - q) * (log_p - log_q)).sum(dim=-1).mean(dim=1)


def discrepancy_losses(
    series: Sequence[torch.Tensor], prior: Sequence[torch.Tensor]
) -> tuple[torch.Tensor, torch.Tensor]:
    """The two stop-gradient halves of the minimax / contrastive objective, each averaged over
    layers (or patch scales) and over ``B, L``:

    - ``series_loss`` = mean symKL(series, prior.detach()): its gradient reaches the series side
      only;
    - ``prior_loss`` = mean symKL(prior, series.detach()): its gradient reaches the prior side only.

    Both have the same value; only where their gradients go differs (the Anomaly Transformer's
    minimax strategy, DCdetector's contrastive loss).
    """
    if len(series) != len(prior) or not series:
        raise ParameterError("need the same positive number of series and prior maps")
    series_loss = prior_loss = 0.0
    for s, p in zip(series, prior):
        log_s, log_p = torch.log(s + KL_EPS), torch.log(p + KL_EPS)  # once per layer, not 4x
        s_, p_, log_s_, log_p_ = s.detach(), p.detach(), log_s.detach(), log_p.detach()
        series_loss = series_loss + _symmetric_kl_from_logs(s, p_, log_s, log_p_).mean()
        prior_loss = prior_loss + _symmetric_kl_from_logs(p, s_, log_p, log_s_).mean()
    return series_loss / len(series), prior_loss / len(series)


def step_discrepancy(series: Sequence[torch.Tensor], prior: Sequence[torch.Tensor]) -> torch.Tensor:
    """Each step's discrepancy summed over layers / scales, ``[B, L]`` (the official scoring sums,
    where training averages)."""
    return sum(symmetric_kl(s, p) for s, p in zip(series, prior))


def discrepancy_score(
    discrepancy: torch.Tensor,
    temperature: float = SCORE_TEMPERATURE,
    *,
    larger_is_anomalous: bool = False,
) -> torch.Tensor:
    """``softmax_L(-discrepancy * temperature)`` per step, ``[B, L]`` (both official codes): in the
    Anomaly Transformer, anomalies attend mostly to their neighbours, so their discrepancy is the
    smallest in the window and their score the largest. ``larger_is_anomalous`` flips the sign
    (``softmax_L(+discrepancy * temperature)``). The softmax is over the window's steps and is kept
    per step (averaging it over L gives the constant 1/L of the released MADCluster code)."""
    sign = 1.0 if larger_is_anomalous else -1.0
    return torch.softmax(sign * temperature * discrepancy, dim=-1)
