"""DCdetector (Yang et al., KDD 2023): dual attention contrastive representation learning.

Each window is normalised per instance (RevIN without its affine) and each channel is handled on
its own (channel independence: the batch becomes ``B * D`` univariate series). For each patch size
p (which must divide L; N = L / p patches) the series is viewed as ``[N, p]`` with step
t = n * p + j at patch n, position j:

- *patch-wise* branch: N tokens (one per patch, its p values) -> DataEmbedding -> attention among
  patches ``[N, N]``;
- *in-patch* branch: p tokens (one per in-patch position, its N values) -> DataEmbedding ->
  attention among positions ``[p, p]``.

Attention keeps only ``softmax(QK^T / sqrt(E))`` (no values: nothing is reconstructed); each of
the ``n_layers`` layers has its own Q and K projections, shared by both branches and all patch
sizes, and, as in the official code, every layer reads the same embedded tokens (they are not
stacked). Both maps are brought to ``[L, L]``: patch-wise ``A[t, s] = A_pw[t // p, s // p] / p`` and
in-patch ``A[t, s] = A_ip[t % p, s % p] / N``, so both rows sum to 1 and both views use the same
step <-> (patch, position) map (as we read the official code, its upsampled patch-wise rows sum to
p, and its in-patch reshape groups contiguous runs of N steps while its upsampling tiles by t % p).
Channels are averaged **before** upsampling (the same result as after, both are linear), so the
large ``[B * D, H, L, L]`` maps are never built: the maps are ``[B, H, L, L]``.

Objective: ``prior_loss - series_loss`` with series = patch-wise, prior = in-patch and a
stop-gradient on the other side in each (``attention.discrepancy_losses``). Its value is 0 by
construction (the two halves are the same number; only their gradients differ), so ``train_loss``
and ``val_loss`` in base-only mode carry nothing and early stopping on them ends after
``patience`` epochs.

Per-step score, kept per step (the released MADCluster code averages it over the window: the
constant 1/L), from the discrepancy ``disc_t`` = sum over layers and patch sizes of symKL:

- ``score="official"`` (default): ``softmax_L(-disc * 50)``, the released DCdetector code's sign
  (copied from the Anomaly Transformer's, where anomalies have the *smallest* discrepancy);
- ``score="discrepancy"``: ``softmax_L(+disc * 50)``, a larger discrepancy between the two views is
  more anomalous, as the DCdetector paper motivates its criterion.

Known limitation: with both maps brought to ``[L, L]`` as above, step t's discrepancy splits into
how peaked its patch's patch-wise row and its position's in-patch row are (each a symKL to the
uniform row), which a single outlying value moves for every step, and the temperature-50 softmax
puts nearly all of a window's mass on one step: neither score reliably ranks an injected spike above
the other steps of its window.

**h is the input DataEmbedding of the normalised window, ``[B, L, d_model]``**, as the MADCluster
authors attach: it feeds no attention map, so only MADCluster's loss trains it (the official
``x_ori`` embedding only reaches an unused value projection). Not causal.

Q and K are combined first (``Wq^T Wk``, the official order is kept for ``n_heads > 1``), so the
``[B * D, N + p, d_model]`` token tensors of the official order are never built; the unused value /
output projections, norms and reconstruction head of the official code are left out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import torch
from torch import nn

from madcluster.defaults import DEFAULT_WINDOW_SIZE
from madcluster.embedders.attention import (
    SCORE_TEMPERATURE,
    DataEmbedding,
    QueryKeyAttention,
    discrepancy_losses,
    discrepancy_score,
    step_discrepancy,
)
from madcluster.embedders.base import BaseEmbedder, EmbedderOutput
from madcluster.embedders.blocks import at_least_float32
from madcluster.exceptions import ParameterError

SCORES = ("official", "discrepancy")


def instance_normalise(x: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """Each window's channels to mean 0 and unit variance over the window (RevIN's 'norm'; the
    official code re-creates RevIN at every call, so its affine stays the identity). A constant
    channel becomes 0, not NaN."""
    centred = x - x.mean(dim=1, keepdim=True)
    return centred / torch.sqrt(centred.pow(2).mean(dim=1, keepdim=True) + eps)


def check_patch_sizes(patch_sizes: Sequence[int], window_size: int) -> tuple[int, ...]:
    """Patch sizes as a tuple, each dividing the window (the views ``[N, p]`` need it) with at
    least 2 patches and 2 positions per patch (one token has no attention to learn)."""
    sizes = tuple(int(p) for p in patch_sizes)
    bad = [p for p in sizes if p < 2 or p >= window_size or window_size % p]
    if not sizes or bad:
        fits = [p for p in range(2, window_size) if window_size % p == 0]
        raise ParameterError(
            f"DCdetector patch sizes must divide window_size={window_size} and lie in "
            f"[2, {window_size // 2}]; "
            f"{bad or 'none'} do not (divisors of {window_size}: {fits})"
        )
    return sizes


class DualAttentionLayer(QueryKeyAttention):
    """Q and K projections of one layer: maps ``softmax(QK^T / sqrt(E))`` per head, no values."""

    def attend(self, tokens: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """Each embedded token set ``[S, T, d_model]`` to its map ``[S, H, T, T]`` (any heads)."""
        return [self.attention_map(x) for x in tokens]

    def attend_linear(
        self, coords: Sequence[torch.Tensor], bases: Sequence[torch.Tensor]
    ) -> list[torch.Tensor]:
        """One head, tokens given as ``coords [S, T, w] @ basis [w, d_model]`` (a linear
        embedding, :meth:`DataEmbedding.basis`): the same maps as :meth:`attend`, in w dimensions.

        ``q_t . k_s = x_t Wq^T Wk x_s^T + (Wk^T b_q) . x_s`` plus terms constant along a row, which
        cancel in the softmax; with ``x = v Z`` that is ``v_t (Z M Z^T) v_s^T + (Z Wk^T b_q) . v_s``
        (M = Wq^T Wk). w = 3 c + T is 6 + 50 for the patch-wise tokens of p = 2 against d_model =
        256, so no ``[B * D, T, d_model]`` tensor is made: at B = 128, D = 55 the largest was 0.36
        GB.
        """
        if self.n_heads != 1:
            raise ParameterError("attend_linear needs one head")
        w_q, w_k = self.query.weight, self.key.weight  # nn.Linear: q = x W_q^T + b_q
        product = torch.matmul(w_q.t(), w_k)
        key_bias = torch.matmul(w_k.t(), self.query.bias)
        scale = 1.0 / math.sqrt(w_q.shape[0])
        maps = []
        for v, z in zip(coords, bases):
            gram = torch.matmul(torch.matmul(z, product), z.t())  # [w, w]
            key_term = torch.matmul(v, torch.matmul(z, key_bias)).unsqueeze(1)  # [S, 1, T]
            scores = torch.bmm(torch.matmul(v, gram), v.transpose(1, 2)) + key_term
            maps.append(torch.softmax(at_least_float32(scores) * scale, dim=-1).unsqueeze(1))
        return maps


def _identity_like(raw: torch.Tensor) -> torch.Tensor:
    """One-hot step coordinates ``[S, T, T]`` (they pick the position encoding's rows)."""
    s, t, _ = raw.shape
    return torch.eye(t, device=raw.device, dtype=raw.dtype).expand(s, t, t)


class DCdetector(BaseEmbedder):
    """DCdetector as a Base Embedder (see the module docstring); h is ``[B, L, d_model]``."""

    window_dependent = True

    causal = False
    test_params: ClassVar[dict] = {"d_model": 8, "n_layers": 2, "patch_sizes": (2, 4)}

    def __init__(
        self,
        n_features: int,
        window_size: int = DEFAULT_WINDOW_SIZE,
        d_model: int = 256,
        n_heads: int = 1,
        n_layers: int = 3,
        patch_sizes: Sequence[int] = (2, 5, 10),
        temperature: float = SCORE_TEMPERATURE,
        score: str = "official",
    ) -> None:
        super().__init__()
        if min(n_features, d_model, n_heads, n_layers) < 1:
            raise ParameterError(
                "DCdetector needs positive n_features, d_model, n_heads and n_layers"
            )
        if score not in SCORES:
            raise ParameterError(f"unknown score {score!r}; choose one of {', '.join(SCORES)}")
        self.patch_sizes = check_patch_sizes(patch_sizes, window_size)
        self.score_kind = score
        self.window_size, self.temperature = window_size, float(temperature)
        self.embedding = DataEmbedding(n_features, d_model)  # h
        self.patch_wise_embedding = nn.ModuleList(
            DataEmbedding(p, d_model) for p in self.patch_sizes
        )
        self.in_patch_embedding = nn.ModuleList(
            DataEmbedding(window_size // p, d_model) for p in self.patch_sizes
        )
        self.layers = nn.ModuleList(DualAttentionLayer(d_model, n_heads) for _ in range(n_layers))
        self.out_features = d_model

    def associations(
        self, x: torch.Tensor, explicit: bool = False
    ) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """Patch-wise ("series") and in-patch ("prior") maps ``[B, H, L, L]``, one pair per layer
        and patch size, averaged over channels. One head takes
        :meth:`DualAttentionLayer.attend_linear` unless ``explicit`` (embed the tokens, then Q and
        K: the reference, and the multi-head path)."""
        b, length, d = x.shape
        if length != self.window_size:
            raise ParameterError(
                f"DCdetector was built for windows of {self.window_size} steps, got {length}"
            )
        univariate = x.transpose(1, 2).reshape(b * d, length)  # channel independence
        sets = []  # (embedding, raw tokens [B * D, T, c])
        for p, embed_pw, embed_ip in zip(
            self.patch_sizes, self.patch_wise_embedding, self.in_patch_embedding
        ):
            patches = univariate.view(b * d, length // p, p)  # [n, j] = step n * p + j
            sets.append((embed_pw, patches))  # N tokens of p values
            sets.append((embed_ip, patches.transpose(1, 2)))  # p tokens of N values
        if self.layers[0].n_heads == 1 and not explicit:
            coords = [
                torch.cat([emb.unfold(raw), _identity_like(raw)], dim=-1) for emb, raw in sets
            ]
            bases = [emb.basis(raw.shape[1]) for emb, raw in sets]
            maps = [layer.attend_linear(coords, bases) for layer in self.layers]
        else:
            tokens = [emb(raw) for emb, raw in sets]
            maps = [layer.attend(tokens) for layer in self.layers]
        series, prior = [], []
        for i, p in enumerate(self.patch_sizes):
            n = length // p
            for layer_maps in maps:
                pw = layer_maps[2 * i].view(b, d, -1, n, n).mean(dim=1)
                ip = layer_maps[2 * i + 1].view(b, d, -1, p, p).mean(dim=1)
                series.append(pw.repeat_interleave(p, dim=-1).repeat_interleave(p, dim=-2) / p)
                prior.append(ip.repeat(1, 1, n, n) / n)
        return series, prior

    def forward(self, x: torch.Tensor) -> EmbedderOutput:
        x = instance_normalise(x)
        series, prior = self.associations(x)
        series_loss, prior_loss = discrepancy_losses(series, prior)
        with torch.no_grad():
            score = discrepancy_score(
                step_discrepancy(series, prior),
                self.temperature,
                larger_is_anomalous=self.score_kind == "discrepancy",
            )
        return EmbedderOutput(h=self.embedding(x), loss=prior_loss - series_loss, score=score)
