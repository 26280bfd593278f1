"""The network the training loop trains: a Base Embedder with a head on top (the plain torch
module; the procedure is :func:`~madcluster.training.loop.train_network`), its embedder optionally
under mixed precision."""

from __future__ import annotations

import contextlib

import torch
from torch import nn

from madcluster.embedders.base import BaseEmbedder, EmbedderOutput
from madcluster.method.head import Head, LossParts

PRECISIONS: dict[str, torch.dtype | None] = {"float32": None, "bfloat16": torch.bfloat16}


def precision_context(
    device: torch.device, dtype: torch.dtype | None
) -> contextlib.AbstractContextManager:
    """Mixed precision (autocast) for the embedder's matrix products when ``dtype`` is set;
    ``dtype=None`` inside an autocast region switches it off (the head runs in float32)."""
    if dtype is None and not torch.is_autocast_enabled(device.type):
        return contextlib.nullcontext()
    return torch.autocast(device.type, dtype=dtype or torch.bfloat16, enabled=dtype is not None)


class MADClusterNet(nn.Module):
    """A Base Embedder with a head on top; ``precision`` (a dtype or None) runs the embedder under
    mixed precision, and everything it returns comes back in float32."""

    def __init__(
        self, embedder: BaseEmbedder, head: Head, precision: torch.dtype | None = None
    ) -> None:
        super().__init__()
        self.embedder = embedder
        self.head = head
        self.precision = precision

    def forward(self, x: torch.Tensor) -> EmbedderOutput:
        if self.precision is None:
            return self.embedder(x)
        with precision_context(x.device, self.precision):
            out = self.embedder(x)
        return out.float()

    def loss(self, out: EmbedderOutput) -> LossParts:
        return self.head.loss(out.h, out.loss)

    @torch.no_grad()
    def score(self, x: torch.Tensor, first_position: int = 0) -> dict[str, torch.Tensor]:
        """Named per-step score terms ``[B, L - first_position]`` of positions
        ``first_position..`` of each window: the head's, plus ``base`` when the embedder has one
        (a causal scorer reads only each window's last positions, and the head need not score the
        rest)."""
        out = self(x)
        if self.head.terms_read_the_window:
            terms = {name: v[:, first_position:] for name, v in self.head.score_terms(out.h).items()}
        else:
            terms = dict(self.head.score_terms(out.h[:, first_position:]))
        if out.score is not None:
            terms["base"] = out.score[:, first_position:]
        return terms
