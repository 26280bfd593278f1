"""The appendix's multi-cluster head (k > 1): Student-t assignment, DEC target, KL loss.

Appendix B of the paper: q_tj = (1 + ||h_t - c_j||^2)^-1 normalised over the k centers (Eq. 8),
the target p_tj = (q_tj^2 / sum_t q_tj) normalised over j (Eq. 8), the cluster loss KL(P || Q)
(Eq. 9), the distance loss = the mean over steps and centers of ||h_t - c_j||^2 (Eq. 10), and the
score sum_j p_tj log(p_tj / q_tj) + ||h_t - c*||^2 with c* the assigned center (Eq. 11). nu and R
are not used. The sums over t in the target run over the L steps of each window, so a step's score
does not depend on which other windows share its batch. The centers start from k-means on the
features of an initial pass (DEC's initialisation).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from madcluster.exceptions import ParameterError
from madcluster.method.config import MethodConfig
from madcluster.method.head import FeatureSource, Head, LossParts

# at most this many feature vectors go into the initial k-means (a random subsample beyond it)
KMEANS_SAMPLE = 20_000


def student_t_assignment(h: torch.Tensor, centers: torch.Tensor) -> torch.Tensor:
    """q_tj of Eq. 8 for ``h [B, L, f]`` and ``centers [k, f]``: ``[B, L, k]``, rows sum to 1."""
    d = (h.unsqueeze(-2) - centers).pow(2).sum(-1)
    kernel = 1.0 / (1.0 + d)
    return kernel / kernel.sum(-1, keepdim=True)


def dec_target(q: torch.Tensor) -> torch.Tensor:
    """p_tj of Eq. 8 (no gradient): q^2 / (sum over the window's steps of q), normalised over j."""
    weight = q.pow(2) / q.sum(dim=-2, keepdim=True)
    return (weight / weight.sum(-1, keepdim=True)).detach()


def kl_terms(p: torch.Tensor, q: torch.Tensor, eps: float) -> torch.Tensor:
    """Per-step KL(p_t || q_t) = sum_j p_tj log(p_tj / q_tj): ``[B, L]``."""
    return (p * (torch.log(p.clamp_min(eps)) - torch.log(q.clamp_min(eps)))).sum(-1)


class MultiClusterHead(Head):
    """k learnable centers; ``MADCluster(n_clusters=k)`` with k > 1 builds it."""

    terms_read_the_window = True  # dec_target's frequencies sum over the window's steps

    history_keys = ("mean_distance", "h_spread", "smallest_cluster", "assignment_entropy")

    def __init__(self, n_hidden: int, config: MethodConfig) -> None:
        super().__init__()
        if config.n_clusters < 2:
            raise ParameterError("MultiClusterHead needs n_clusters >= 2")
        self.config = config
        self.n_hidden = n_hidden
        self.centers = nn.Parameter(
            torch.zeros(config.n_clusters, n_hidden), requires_grad=config.learnable_center
        )

    @torch.no_grad()
    def start(self, features: FeatureSource) -> None:
        from sklearn.cluster import KMeans

        flat = torch.cat([h.reshape(-1, h.shape[-1]).cpu() for h in features()]).double().numpy()
        if len(flat) > KMEANS_SAMPLE:
            rng = np.random.default_rng(0)
            flat = flat[rng.choice(len(flat), KMEANS_SAMPLE, replace=False)]
        if len(np.unique(flat.round(6), axis=0)) < self.config.n_clusters:
            raise ParameterError(
                "the initial features have fewer distinct values than "
                f"n_clusters={self.config.n_clusters}"
            )
        km = KMeans(self.config.n_clusters, n_init=4, random_state=0).fit(flat)
        self.centers.copy_(torch.as_tensor(km.cluster_centers_, dtype=self.centers.dtype))

    def begin_epoch(self, epoch: int) -> None:
        self.centers.requires_grad_(
            self.config.learnable_center and epoch > self.config.center_warmup
        )

    @torch.no_grad()
    def end_epoch(self, features: FeatureSource) -> dict[str, float]:
        d_sum, count = 0.0, 0
        h_sum = h_sq = None
        sizes = torch.zeros(self.config.n_clusters, dtype=torch.float64)
        entropy = 0.0
        for h in features():
            q = student_t_assignment(h, self.centers)
            d_sum += float(self._assigned_distance(h, q).sum())
            sizes += torch.bincount(q.argmax(-1).flatten().cpu(), minlength=len(sizes)).double()
            entropy += float(-(q * q.clamp_min(1e-12).log()).sum(-1).sum())
            flat = h.reshape(-1, h.shape[-1]).double()
            h_sum = flat.sum(0) if h_sum is None else h_sum + flat.sum(0)
            h_sq = flat.pow(2).sum(0) if h_sq is None else h_sq + flat.pow(2).sum(0)
            count += flat.shape[0]
        mean = h_sum / count
        return {
            "mean_distance": d_sum / count,
            "h_spread": float((h_sq / count - mean.pow(2)).clamp_min(0).sqrt().mean()),
            "smallest_cluster": float(sizes.min() / count),
            "assignment_entropy": entropy / count,
        }

    def loss(self, h: torch.Tensor, base_loss: torch.Tensor | None = None) -> LossParts:
        cfg = self.config
        zero = h.new_zeros(())
        q = student_t_assignment(h, self.centers)
        cluster = kl_terms(dec_target(q), q, cfg.eps).mean() if cfg.uses_cluster else zero
        if cfg.uses_distance:
            distance = (h.unsqueeze(-2) - self.centers).pow(2).sum(-1).mean()
        else:
            distance = zero
        return LossParts.combine(distance + cluster, distance, cluster, base_loss)

    def score_terms(self, h: torch.Tensor) -> dict[str, torch.Tensor]:
        """Eq. 11's two terms: ``cluster`` = KL(p_t || q_t), ``distance`` = ||h_t - c*||^2."""
        q = student_t_assignment(h, self.centers)
        out: dict[str, torch.Tensor] = {}
        if self.config.uses_cluster:
            out["cluster"] = kl_terms(dec_target(q), q, self.config.eps)
        if self.config.uses_distance:
            out["distance"] = self._assigned_distance(h, q)
        return out

    def _assigned_distance(self, h: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
        nearest = self.centers[q.argmax(-1)]  # c* per step: [B, L, f]
        return (h - nearest).pow(2).sum(-1)
