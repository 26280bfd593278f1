"""THOC (Shen, Li & Kwok, NeurIPS 2020): Temporal Hierarchical One-Class network on the D-RNN.

**h is the top D-RNN layer's output** ``f^L [B, L, hidden]`` (one vector per step, before the
cluster stack), so the model is causal and MADCluster's center lives beside THOC's top centers.

The dilated RNN is the project's :class:`DilatedRNN` (dilations 1, 2, 4; its per-layer outputs
``f^l``). Per layer l there are K centers ``c^l`` and, for each step t and each of the K_{l-1}
incoming cluster features i (K_0 = 1):

- join (Eq. 8): ``g^l_ti = W_prev fbar^{l-1}_ti + W_cur f^l_t + b`` (a Linear on the concatenation,
  split in two so ``W_cur f^l_t`` is computed once per step, not K times; same function, same size);
- assignment (Eq. 5-6): ``P^l_tij = softmax_j(cos(g^l_ti, c^l_j) / tau)``;
- update (Eq. 7): ``fbar^l_tj = sum_i P^l_tij ReLU(T^l g^l_ti)``;
- ``R^l_tj = sum_i R^{l-1}_ti P^l_tij`` (R^0 = 1): the chance that step t ends in cluster j.

Update equation. TimeSeAD (Wagner et al. 2023, a careful reimplementation with the authors' code
at hand) reports that the authors' code weights the update with ``softmax_i(P)`` instead of P, and
also passes R through a softmax; it calls the code wrong and follows the paper's Eq. 7. We follow
the paper too, for a reason we can check: P holds probabilities in [0, 1], and a softmax of such
values is nearly uniform (weights within a factor e of each other), so it erases the assignment
that the hierarchy exists to pass up. ``R`` is already a distribution (a product of row-stochastic
P's), so it needs no softmax either.

Objective: ``L_THOC + lambda_orth L_orth + lambda_TSS L_TSS`` with
``L_THOC = mean_t score_t``, ``score_t = sum_k R_tk * (1 - cos(fbar_tk, c_k)) / 2`` on the top
layer (in [0, 1], also the per-step score); ``L_orth = mean_l mean(C^l C^l^T - I)^2`` without
normalising C, as the paper: it pins the centers near unit norm, where the cosine's gradient
(~1/|c|) stays bounded even under weight decay; ``L_TSS = mean_l MSE(V^l f^l_t, x_{t+s})`` with
s = 1 (next step, BASE_MODELS.md) or s = the layer's dilation (``tss_horizon="dilation"``,
TimeSeAD's choice). Defaults lambda_orth = 1, lambda_TSS = 10 as TimeSeAD.

Temperature: 100, times 2/3 every 5 epochs (``on_epoch_end``, computed from the epoch number so it
is idempotent; a buffer, so it is saved and restored with the best state). With cosines in
[-1, 1], tau = 100 means almost uniform assignments; they sharpen only as tau falls (about 45
epochs to reach tau < 3). TimeSeAD decays tau on every batch of every fifth epoch, which collapses
it to its floor at epoch 5; we decay once per fifth epoch, as the paper states.

Centers start from spherical k-means (``init_from_data``), layer by layer: layer l's features
depend on the centers below it. Spherical, because assignment and score only see directions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import ClassVar

import torch
import torch.nn.functional as F
from torch import nn

from madcluster.embedders.base import BaseEmbedder, EmbedderOutput
from madcluster.embedders.drnn import DilatedRNN
from madcluster.exceptions import ParameterError

TSS_HORIZONS = ("next-step", "dilation")
MIN_TEMPERATURE = 1.0 / 300.0  # TimeSeAD's floor: logits stay below 300 / unit cosine
INIT_STEPS = 10_000  # steps sampled for the k-means initialisation
COS_EPS = 1e-6


def cosine(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Cosine of ``a [..., H]`` with every row of ``b [K, H]`` -> ``[..., K]``; 0 for a zero vector.

    The smooth denominator keeps the gradient bounded (~1/eps) where a vector vanishes, e.g. a
    ReLU output that is all 0; F.normalize's clamp would give 1/1e-12 there."""
    return (a @ b.transpose(0, 1)) / (smooth_norm(a, keepdim=True) * smooth_norm(b))


def smooth_norm(a: torch.Tensor, keepdim: bool = False) -> torch.Tensor:
    """``sqrt(|a|^2 + eps^2)`` over the last dimension (vector_norm: one fused pass over a)."""
    return (torch.linalg.vector_norm(a, dim=-1, keepdim=keepdim).square() + COS_EPS**2).sqrt()


def thoc_score(fbar: torch.Tensor, centers: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
    """``sum_k R_tk (1 - cos(fbar_tk, c_k)) / 2`` for ``fbar [..., K, H]``, ``r [..., K]`` ->
    ``[...]``."""
    cos = (fbar * centers).sum(-1) / (smooth_norm(fbar) * smooth_norm(centers))
    return (r * 0.5 * (1.0 - cos)).sum(-1)


def orthogonality_loss(centers: Iterable[torch.Tensor]) -> torch.Tensor:
    """``mean_l mean((C C^T - I)^2)``: 0 exactly when each layer's centers are orthonormal."""
    terms = [
        (c @ c.T - torch.eye(len(c), device=c.device, dtype=c.dtype)).pow(2).mean() for c in centers
    ]
    return torch.stack(terms).mean()


def tss_loss(predictions: list[torch.Tensor], x: torch.Tensor, horizons: list[int]) -> torch.Tensor:
    """Mean over layers of the MSE of layer l's prediction at t against ``x_{t + s_l}``."""
    terms = [(p[:, :-s] - x[:, s:]).pow(2).mean() for p, s in zip(predictions, horizons)]
    return torch.stack(terms).mean()


def temperature_at(epoch: int, initial: float, decay: float, every: int) -> float:
    """tau after ``epoch`` completed epochs: ``initial * decay ** (epoch // every)``, floored."""
    return max(initial * decay ** (epoch // every), MIN_TEMPERATURE)


def spherical_kmeans(points: torch.Tensor, k: int, iterations: int = 25) -> torch.Tensor:
    """K unit centers of the directions of ``points [N, H]``: k-means++ seeding on the cosine
    distance, then Lloyd steps (assign by largest cosine, center = normalised member sum).

    Where the data holds fewer than k distinct directions (a constant series), the missing
    centers are random unit vectors, never copies: identical centers get identical gradients and
    could never separate. Uses the global torch RNG (the estimator seeds it)."""
    units = F.normalize(points[points.norm(dim=-1) > COS_EPS], dim=-1)
    dim = points.shape[-1]
    centers = F.normalize(torch.randn(k, dim, dtype=points.dtype, device=points.device), dim=-1)
    if len(units) == 0:
        return centers
    centers[0] = units[int(torch.randint(len(units), ()))]
    n_seeded = 1
    for j in range(1, k):
        gap = (1.0 - units @ centers[:j].T).min(dim=1).values
        gap = torch.where(gap > 1e-5, gap, torch.zeros_like(gap))  # rounding is not a new direction
        if float(gap.sum()) == 0.0:
            break  # every point sits on a chosen center: the rest stay random
        centers[j] = units[int(torch.multinomial(gap, 1))]
        n_seeded += 1
    for _ in range(iterations):
        labels = (units @ centers[:n_seeded].T).argmax(dim=1)
        sums = torch.zeros(n_seeded, dim, dtype=units.dtype, device=units.device).index_add_(
            0, labels, units
        )
        ok = sums.norm(dim=-1) > COS_EPS  # an empty cluster keeps its center
        updated = torch.where(ok[:, None], F.normalize(sums, dim=-1), centers[:n_seeded])
        if torch.equal(updated, centers[:n_seeded]):
            break
        centers[:n_seeded] = updated
    return centers


class THOC(BaseEmbedder):
    """THOC with the project's dilated RNN; h = the top layer's output (see the module
    docstring)."""

    causal = True
    window_dependent = True
    test_params: ClassVar[dict] = {"hidden_size": 8, "n_layers": 2, "n_centers": 3}

    def __init__(
        self,
        n_features: int,
        hidden_size: int = 128,
        n_layers: int = 3,
        n_centers: int = 6,
        cell: str = "gru",
        temperature: float = 100.0,
        temperature_decay: float = 2.0 / 3.0,
        decay_every: int = 5,
        lambda_orth: float = 1.0,
        lambda_tss: float = 10.0,
        tss_horizon: str = "next-step",
        window_size: int | None = None,
    ) -> None:
        super().__init__()
        if min(n_features, hidden_size, n_layers, n_centers, decay_every) < 1:
            raise ParameterError(
                "n_features, hidden_size, n_layers, n_centers and decay_every must be >= 1"
            )
        if not temperature > 0 or not 0 < temperature_decay <= 1:
            raise ParameterError(
                f"need temperature > 0 and temperature_decay in (0, 1], got {temperature}, "
                f"{temperature_decay}"
            )
        if lambda_orth < 0 or lambda_tss < 0:
            raise ParameterError("lambda_orth and lambda_tss must be >= 0")
        if lambda_orth > 0 and n_centers > hidden_size:
            raise ParameterError(
                f"{n_centers} centers cannot be orthogonal in {hidden_size} dimensions: "
                "use n_centers <= hidden_size or lambda_orth=0"
            )
        if tss_horizon not in TSS_HORIZONS:
            raise ParameterError(
                f"unknown tss_horizon {tss_horizon!r}; choose one of {', '.join(TSS_HORIZONS)}"
            )
        self.rnn = DilatedRNN(n_features, hidden_size=hidden_size, n_layers=n_layers, cell=cell)
        self.horizons = list(self.rnn.dilations) if tss_horizon == "dilation" else [1] * n_layers
        if window_size is not None and window_size <= max(self.horizons):
            raise ParameterError(
                f"window_size must exceed the prediction horizon {max(self.horizons)}, got "
                f"{window_size}"
            )
        h = hidden_size
        self.centers = nn.ParameterList(
            nn.Parameter(F.normalize(torch.randn(n_centers, h), dim=-1)) for _ in range(n_layers)
        )
        self.transforms = nn.ModuleList(nn.Linear(h, h) for _ in range(n_layers))
        self.join_prev = nn.ModuleList(nn.Linear(h, h) for _ in range(n_layers - 1))
        self.join_cur = nn.ModuleList(nn.Linear(h, h, bias=False) for _ in range(n_layers - 1))
        self.predictors = nn.ModuleList(nn.Linear(h, n_features) for _ in range(n_layers))
        self.initial_temperature, self.temperature_decay, self.decay_every = (
            temperature,
            temperature_decay,
            decay_every,
        )
        self.lambda_orth, self.lambda_tss = lambda_orth, lambda_tss
        self.register_buffer("temperature", torch.tensor(float(temperature)))
        self.out_features = hidden_size

    # ------------------------------------------------------------------ the cluster hierarchy
    def _joined(self, layer: int, f: torch.Tensor, fbar: torch.Tensor | None) -> torch.Tensor:
        """g^l ``[..., K_{l-1}, H]``: layer 0's f alone, else fbar^{l-1} fused with f^l (Eq. 8)."""
        if fbar is None:
            return f.unsqueeze(-2)
        return self.join_prev[layer - 1](fbar) + self.join_cur[layer - 1](f).unsqueeze(-2)

    def _assign(
        self, layer: int, g: torch.Tensor, r: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(R^l ``[..., K]``, fbar^l ``[..., K, H]``) from g^l and R^{l-1} (Eq. 5-7)."""
        p = torch.softmax(cosine(g, self.centers[layer]) / self.temperature, dim=-1)  # [..., Kp, K]
        r = (r.unsqueeze(-1) * p).sum(-2)
        fbar = p.transpose(-1, -2) @ torch.relu(self.transforms[layer](g))
        return r, fbar

    def forward(self, x: torch.Tensor) -> EmbedderOutput:
        if x.shape[1] <= max(self.horizons):
            raise ParameterError(
                f"windows of {x.shape[1]} steps are too short for the prediction horizon "
                f"{max(self.horizons)}"
            )
        layers = self.rnn.layer_outputs(x)
        r, fbar = x.new_ones(*x.shape[:2], 1), None
        for i, f in enumerate(layers):
            r, fbar = self._assign(i, self._joined(i, f, fbar), r)
        score = thoc_score(fbar, self.centers[-1], r)
        loss = score.mean()
        if self.lambda_orth:
            loss = loss + self.lambda_orth * orthogonality_loss(self.centers)
        if self.lambda_tss:
            predictions = [head(f) for head, f in zip(self.predictors, layers)]
            loss = loss + self.lambda_tss * tss_loss(predictions, x, self.horizons)
        return EmbedderOutput(h=layers[-1], loss=loss, score=score)

    # ------------------------------------------------------------------ hooks
    @torch.no_grad()
    def init_from_data(self, windows: Callable[[], Iterable[torch.Tensor]]) -> None:
        """Spherical k-means centers, layer by layer, on up to INIT_STEPS steps drawn uniformly
        from one eval pass (each step keeps a random key; the smallest keys win, so memory stays
        bounded on any series length)."""
        was_training = self.training
        self.eval()
        sample: torch.Tensor | None = None
        keys: torch.Tensor | None = None
        for x in windows():
            steps = torch.stack(self.rnn.layer_outputs(x), dim=-2).reshape(
                -1, len(self.centers), self.out_features
            )
            new_keys = torch.rand(len(steps), device=steps.device)
            if sample is not None:
                steps, new_keys = torch.cat([sample, steps]), torch.cat([keys, new_keys])
            if len(steps) > INIT_STEPS:
                keep = new_keys.topk(INIT_STEPS, largest=False).indices
                steps, new_keys = steps[keep], new_keys[keep]
            sample, keys = steps, new_keys
        self.train(was_training)
        if sample is None:
            return
        r, fbar = sample.new_ones(len(sample), 1), None
        for i in range(len(self.centers)):
            g = self._joined(i, sample[:, i], fbar)
            self.centers[i].copy_(
                spherical_kmeans(g.reshape(-1, g.shape[-1]), len(self.centers[i]))
            )
            r, fbar = self._assign(i, g, r)

    def on_epoch_end(self, epoch: int) -> None:
        """tau = 100 * (2/3) ** (epoch // 5) by default: the assignments slowly harden."""
        self.temperature.fill_(
            temperature_at(
                epoch, self.initial_temperature, self.temperature_decay, self.decay_every
            )
        )
