"""Heads: what sits on top of a Base Embedder's features ``h [B, L, f]``.

A head is a plain ``torch.nn.Module`` (anomalib style) with a small contract the training loop
talks to, so the loop never needs to know whether it trains the paper's single cluster, another
head, or the base model alone:

- ``start(features)``: before the first epoch, from an eval-mode pass over the training series
  (``features()`` yields h batches); e.g. the center's initial value and R.
- ``begin_epoch(epoch)``: e.g. keep the center fixed during a warm-up.
- ``loss(h, base_loss)``: the training loss of a batch, as :class:`LossParts`.
- ``end_epoch(features)``: after each epoch (R update) and the per-epoch diagnostics it returns,
  which go into ``history_`` under the names in ``history_keys``.
- ``score_terms(h)``: named per-step score terms ``[B, L]``; the detector combines them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from madcluster.exceptions import ParameterError
from madcluster.method.config import MethodConfig
from madcluster.method.losses import (
    dec_kl_term,
    one_directed_adaptive_loss,
    pseudo_labels,
    smooth_labels,
    soft_assignment,
    soft_boundary_terms,
    squared_distance,
)

# DeepSVDD's guard: center components this close to 0 are pushed to +-eps, so a network with biases
# cannot trivially match them.
CENTER_EPS = 0.1

FeatureSource = Callable[[], Iterator[torch.Tensor]]


@dataclass
class LossParts:
    """Scalar losses of one batch; ``total`` is what is back-propagated."""

    total: torch.Tensor
    distance: torch.Tensor
    cluster: torch.Tensor
    base: torch.Tensor

    @classmethod
    def combine(
        cls,
        head_total: torch.Tensor,
        distance: torch.Tensor,
        cluster: torch.Tensor,
        base_loss: torch.Tensor | None,
    ) -> LossParts:
        """A head's loss plus the base model's own loss, if any (Eq. 6 + the wrapped model's)."""
        if base_loss is None:
            return cls(head_total, distance.detach(), cluster.detach(), head_total.new_zeros(()))
        return cls(head_total + base_loss, distance.detach(), cluster.detach(), base_loss.detach())


class Head(nn.Module):
    """The head contract (see the module docstring). The default methods do nothing."""

    history_keys: tuple[str, ...] = ()
    #: whether a step's score terms read the other steps of its window (k > 1: DEC's target
    #: normalises over the window); where not, a scorer may pass the head only the steps it reads
    terms_read_the_window: bool = False

    def start(self, features: FeatureSource) -> None:
        """Initialise from an eval-mode pass over the training series."""

    def begin_epoch(self, epoch: int) -> None:
        """Called before each epoch (1-based)."""

    def end_epoch(self, features: FeatureSource) -> dict[str, float]:
        """Update after an epoch; return the per-epoch diagnostics named in ``history_keys``."""
        return {}

    def loss(self, h: torch.Tensor, base_loss: torch.Tensor | None = None) -> LossParts:
        raise NotImplementedError

    def score_terms(self, h: torch.Tensor) -> dict[str, torch.Tensor]:
        raise NotImplementedError

    def outside_fraction(self, h: torch.Tensor) -> torch.Tensor | None:
        """A scale-free validation criterion, or None where the head has none (see
        MADClusterHead)."""
        return None

    def score(self, h: torch.Tensor) -> torch.Tensor:
        """The unscaled sum of the score terms ``[B, L]`` (for the single cluster: Eq. 7)."""
        terms = list(self.score_terms(h).values())
        return sum(terms[1:], terms[0]) if terms else h.new_zeros(h.shape[:-1])


class NoHead(Head):
    """The base model alone (``mode="base-only"``): its own loss, no MADCluster terms."""

    def loss(self, h: torch.Tensor, base_loss: torch.Tensor | None = None) -> LossParts:
        if base_loss is None:
            raise ParameterError("mode='base-only' needs a base model with its own loss and score")
        zero = h.new_zeros(())
        return LossParts(total=base_loss, distance=zero, cluster=zero, base=base_loss.detach())

    def score_terms(self, h: torch.Tensor) -> dict[str, torch.Tensor]:
        return {}


class MADClusterHead(Head):
    """Cluster Distance Mapping + Sequence-wise Clustering on top of any Base Embedder (k = 1)."""

    history_keys = (
        "nu",
        "radius",
        "mean_distance",
        "q_mean",
        "q_std",
        "q_p01",
        "q_p50",
        "frac_p0",
        "h_spread",
        "cluster_term_std",
        "distance_term_std",
    )

    def __init__(self, n_hidden: int, config: MethodConfig | None = None) -> None:
        super().__init__()
        self.config = config or MethodConfig()
        # score_type="window": each step scores its window's mean
        self.terms_read_the_window = self.config.score_type == "window"
        self.n_hidden = n_hidden
        center = torch.empty(n_hidden)
        if self.config.center_init == "random":
            # He-normal, as the released code
            nn.init.normal_(center, std=math.sqrt(2.0 / n_hidden))
        else:
            center.zero_()  # replaced by the mean of h in start()
        self.center = nn.Parameter(center, requires_grad=self.config.learnable_center)
        if self.config.nu_param == "sigmoid":
            self.nu_param = nn.Parameter(torch.zeros(()))  # theta, nu = sigmoid(0) = 0.5
        else:
            self.nu_param = nn.Parameter(torch.full((), 0.5))
        self.register_buffer("radius", torch.zeros(()))

    @property
    def nu(self) -> torch.Tensor:
        """The one-directed threshold, always strictly inside (0, 1)."""
        if self.config.nu_param == "sigmoid":
            return torch.sigmoid(self.nu_param)
        eps = self.config.eps
        return self.nu_param.clamp(eps, 1.0 - eps)

    # ------------------------------------------------------------------ contract
    def start(self, features: FeatureSource) -> None:
        """Center = mean of h over an initial pass (if configured), then R from the distances to
        it."""
        if self.config.center_init == "mean":
            total, count = None, 0
            with torch.no_grad():
                for h in features():
                    flat = h.reshape(-1, h.shape[-1])
                    total = flat.sum(0) if total is None else total + flat.sum(0)
                    count += flat.shape[0]
            self.init_center(total / count)
        self.end_epoch(features)

    def begin_epoch(self, epoch: int) -> None:
        """Keep c fixed during the first ``center_warmup`` epochs (DeepSVDD's guard, then learn
        it)."""
        learnable = self.config.learnable_center and epoch > self.config.center_warmup
        self.center.requires_grad_(learnable)

    @torch.no_grad()
    def end_epoch(self, features: FeatureSource) -> dict[str, float]:
        """R = (1 - rho) quantile of sqrt(d) over the training series; diagnostics of collapse."""
        d_parts, q_parts, clus_parts = [], [], []
        h_sum = h_sq = None
        count = 0
        nu = self.nu
        for h in features():
            d_parts.append(self.distances(h).flatten().double().cpu())
            q = soft_assignment(h, self.center, self.config.eps)
            q_parts.append(q.flatten().double().cpu())
            clus_parts.append(self._cluster_terms(h, smoothed=False).flatten().double().cpu())
            flat = h.reshape(-1, h.shape[-1]).double()
            h_sum = flat.sum(0) if h_sum is None else h_sum + flat.sum(0)
            h_sq = flat.pow(2).sum(0) if h_sq is None else h_sq + flat.pow(2).sum(0)
            count += flat.shape[0]
        d = torch.cat(d_parts).numpy()
        q = torch.cat(q_parts).numpy()
        self.set_radius_from_distances(d)
        mean = h_sum / count
        spread = (h_sq / count - mean.pow(2)).clamp_min(0).sqrt().mean()
        return {
            "nu": float(nu),
            "radius": float(self.radius),
            "mean_distance": float(d.mean()),
            "q_mean": float(q.mean()),
            "q_std": float(q.std()),
            "q_p01": float(np.quantile(q, 0.01)),
            "q_p50": float(np.quantile(q, 0.5)),
            "frac_p0": float(np.mean(q < float(nu))),
            "h_spread": float(spread),
            "cluster_term_std": float(torch.cat(clus_parts).std()),
            "distance_term_std": float(d.std()),
        }

    def loss(self, h: torch.Tensor, base_loss: torch.Tensor | None = None) -> LossParts:
        """Training loss of features ``h [B, L, f]`` (Eq. 6), plus the base model's own loss if
        any."""
        cfg = self.config
        d = self.distances(h)
        zero = h.new_zeros(())
        if cfg.uses_distance:
            if cfg.distance_loss == "soft-boundary":
                dist_terms = soft_boundary_terms(d, self.radius, cfg.rho)
            else:
                dist_terms = d
        else:
            dist_terms = torch.zeros_like(d)
        clus_terms = (
            self._cluster_terms(h, smoothed=True) if cfg.uses_cluster else torch.zeros_like(d)
        )
        distance = dist_terms.mean() if cfg.uses_distance else zero
        cluster = clus_terms.mean() if cfg.uses_cluster else zero
        if cfg.loss_combination == "log-mean":
            total = torch.log((dist_terms + clus_terms).mean().clamp_min(cfg.eps))
        else:
            total = distance + cluster
        return LossParts.combine(total, distance, cluster, base_loss)

    def score_terms(self, h: torch.Tensor) -> dict[str, torch.Tensor]:
        """Per-step terms of Eq. 7: ``cluster`` (hard p) and ``distance`` = d - R^2, each
        ``[B, L]``."""
        cfg = self.config
        if cfg.score_type == "window":
            terms = self._cluster_terms(h, smoothed=False)
            return {"cluster": terms.mean(dim=1, keepdim=True).expand_as(terms)}
        out: dict[str, torch.Tensor] = {}
        if cfg.uses_cluster:
            out["cluster"] = self._cluster_terms(h, smoothed=False)
        if cfg.uses_distance:
            out["distance"] = self.distances(h) - self.radius.pow(2)
        return out

    def outside_fraction(self, h: torch.Tensor) -> torch.Tensor:
        """mean max(0, d / R^2 - 1): how far steps fall outside the training sphere, in units of
        R^2.

        Unlike the soft-boundary loss it cannot be lowered by shrinking every feature toward c,
        since R shrinks with them: the early-stopping criterion
        ``early_stopping="relative-distance"``.
        """
        r2 = self.radius.pow(2).clamp_min(1e-12)
        return torch.relu(self.distances(h) / r2 - 1.0).mean()

    # ------------------------------------------------------------------ pieces
    @torch.no_grad()
    def init_center(self, mean_h: torch.Tensor) -> None:
        """Set c to the mean feature of an initial pass (the default ``center_init='mean'``)."""
        c = mean_h.to(self.center)
        small = c.abs() < CENTER_EPS
        c[small & (c < 0)] = -CENTER_EPS
        c[small & (c >= 0)] = CENTER_EPS
        self.center.copy_(c)

    @torch.no_grad()
    def set_radius_from_distances(self, distances: np.ndarray | torch.Tensor) -> None:
        """R = (1 - rho) quantile of sqrt(d) over the given (training) distances."""
        d = np.asarray(torch.as_tensor(distances).detach().cpu().numpy(), dtype=np.float64).ravel()
        self.radius.fill_(float(np.quantile(np.sqrt(np.maximum(d, 0.0)), 1.0 - self.config.rho)))

    def distances(self, h: torch.Tensor) -> torch.Tensor:
        return squared_distance(h, self.center)

    def _cluster_terms(self, h: torch.Tensor, *, smoothed: bool) -> torch.Tensor:
        cfg = self.config
        q = soft_assignment(h, self.center, cfg.eps)
        nu = self.nu
        if cfg.cluster_target == "dec":
            p = torch.ones_like(q)  # DEC's target distribution with one cluster
        else:
            p = pseudo_labels(q, nu)
        target = smooth_labels(p, cfg.tau) if smoothed else p
        terms = one_directed_adaptive_loss(q, nu, target)
        if cfg.cluster_kl:
            terms = terms + dec_kl_term(q)
        return terms
