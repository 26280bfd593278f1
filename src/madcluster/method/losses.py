"""The paper's loss terms as pure tensor functions (per time step; callers reduce).

Notation follows the paper: q = (cos(h, c) + 1) / 2 is the soft assignment (Eq. 3), nu the
one-directed threshold, p the pseudo-label (Eq. 4), d = ||h - c||^2, R the radius.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def soft_assignment(h: torch.Tensor, center: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """q_t = (cos(h_t, c) + 1) / 2, clamped to [eps, 1] so log q stays finite (Eq. 3)."""
    cos = F.cosine_similarity(h, center.expand_as(h), dim=-1, eps=1e-8)
    return ((cos + 1.0) * 0.5).clamp(eps, 1.0)


def pseudo_labels(q: torch.Tensor, nu: torch.Tensor) -> torch.Tensor:
    """p_t = 1[q_t >= nu], without gradient (Eq. 4)."""
    return (q >= nu).to(q.dtype).detach()


def smooth_labels(p: torch.Tensor, tau: float) -> torch.Tensor:
    """Label smoothing p(1 - tau) + (1 - p) tau (Section 4.2)."""
    return p * (1.0 - tau) + (1.0 - p) * tau


def upper_branch(q: torch.Tensor, nu: torch.Tensor) -> torch.Tensor:
    """f1(q, nu) = (1 - nu^(1-nu)) / (1 - nu) * (q - 1) + 1: the line from (nu, nu^(1-nu)) to (1,
    1).

    Positive on [0, 1] for nu in (0, 1), because nu^(1-nu) > nu.
    """
    slope = (1.0 - nu.pow(1.0 - nu)) / (1.0 - nu)
    return slope * (q - 1.0) + 1.0


def one_directed_adaptive_loss(q: torch.Tensor, nu: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """Per-step One-directed Adaptive loss, -[p log f1(q, nu) + (1 - p) log q^(1-nu)] (Eq. 5).

    ``p`` may be hard (the anomaly score, Eq. 7) or label-smoothed (training). dL/dq < 0 and
    dL/dnu < 0 on (0, 1) (Appendix A): both q and nu are pushed up.
    """
    return -(p * torch.log(upper_branch(q, nu)) + (1.0 - p) * (1.0 - nu) * torch.log(q))


def dec_kl_term(q: torch.Tensor) -> torch.Tensor:
    """The released code's extra term p log(p / q) with the unsmoothed DEC target p = 1: -log q.

    With one cluster DEC's target distribution is identically 1, so the KL reduces to -log q, which
    is minimal at q = 1 (it pulls q toward the center, like Eq. 5). A Bernoulli KL against the
    smoothed target 1 - tau would instead be minimal at q = 1 - tau and push q away from 1.
    """
    return -torch.log(q)


def squared_distance(h: torch.Tensor, center: torch.Tensor) -> torch.Tensor:
    """d_t = ||h_t - c||^2."""
    return (h - center).pow(2).sum(dim=-1)


def soft_boundary_terms(d: torch.Tensor, radius: torch.Tensor, rho: float) -> torch.Tensor:
    """Per-step soft-boundary DeepSVDD terms whose mean is R^2 + (1/rho) mean max(0, d - R^2) (Eq.
    2).

    The paper writes sums; we take means over batch and time so the loss does not scale with the
    window or batch size. Weight decay lambda * Omega(W) is applied by the optimiser.
    """
    r2 = radius.pow(2)
    return r2 + torch.relu(d - r2) / rho
