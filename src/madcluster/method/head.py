"""The MADCluster head: learnable center c, one-directed threshold nu, radius R, loss and score.

A plain ``torch.nn.Module`` (anomalib style): it knows nothing of data loading or optimisers.
It consumes Base Embedder features ``h [B, L, f]``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from madcluster.method.config import MethodConfig
from madcluster.method.losses import (
    bernoulli_kl,
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


@dataclass
class LossParts:
    """Scalar losses of one batch; ``total`` is what is back-propagated."""

    total: torch.Tensor
    distance: torch.Tensor
    cluster: torch.Tensor
    mean_distance: torch.Tensor


class MADClusterHead(nn.Module):
    """Cluster Distance Mapping + Sequence-wise Clustering on top of any Base Embedder."""

    def __init__(self, n_hidden: int, config: MethodConfig | None = None) -> None:
        super().__init__()
        self.config = config or MethodConfig()
        self.n_hidden = n_hidden
        center = torch.empty(n_hidden)
        if self.config.center_init == "random":
            nn.init.normal_(center, std=math.sqrt(2.0 / n_hidden))  # He-normal, as the released code
        else:
            center.zero_()  # replaced by the mean of h in init_from_features
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

    @torch.no_grad()
    def init_center(self, mean_h: torch.Tensor) -> None:
        """Set c to the mean feature of an initial pass (the default ``center_init='mean'``)."""
        if self.config.center_init != "mean":
            return
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
            terms = terms + bernoulli_kl(target, q, cfg.eps)
        return terms

    def loss(self, h: torch.Tensor, base_loss: torch.Tensor | None = None) -> LossParts:
        """Training loss of features ``h [B, L, f]`` (Eq. 6), plus the base model's own loss if any."""
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
        clus_terms = self._cluster_terms(h, smoothed=True) if cfg.uses_cluster else torch.zeros_like(d)
        distance = dist_terms.mean() if cfg.uses_distance else zero
        cluster = clus_terms.mean() if cfg.uses_cluster else zero
        if cfg.loss_combination == "log-mean":
            total = torch.log((dist_terms + clus_terms).mean().clamp_min(cfg.eps))
        else:
            total = distance + cluster
        if base_loss is not None:
            total = total + base_loss
        return LossParts(total=total, distance=distance, cluster=cluster, mean_distance=d.mean().detach())

    def score(self, h: torch.Tensor) -> torch.Tensor:
        """Per-step anomaly score ``[B, L]`` (Eq. 7): cluster term with hard p, plus d - R^2."""
        cfg = self.config
        if cfg.score_type == "window":
            terms = self._cluster_terms(h, smoothed=False)
            return terms.mean(dim=1, keepdim=True).expand_as(terms)
        score = torch.zeros(h.shape[:-1], dtype=h.dtype, device=h.device)
        if cfg.uses_cluster:
            score = score + self._cluster_terms(h, smoothed=False)
        if cfg.uses_distance:
            score = score + self.distances(h) - self.radius.pow(2)
        return score
