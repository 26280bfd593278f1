"""OmniAnomaly (Su et al., KDD 2019): a recurrent VAE with a state-space prior and a planar flow.

q-net: e_t = GRU(x_{<=t}); z_t ~ N(mu_t, sigma_t^2) with (mu_t, sigma_t) from a ReLU dense layer
on [e_t, z_{t-1}] (the stochastic variable connection), then K planar normalizing flow layers.
Prior p(z): linear-Gaussian state space, z_1 ~ N(0, I), z_t ~ N(A z_{t-1}, diag(s^2)), A and s
learned (A starts at I). p-net: d_t = GRU(z_{<=t}); x_t ~ N(mu_x, sigma_x^2) from a ReLU dense
layer on d_t. Standard deviations are softplus + 1e-4 (the official std_epsilon), so log p stays
finite on constant inputs.

h is the q-net's GRU output e_t ``[B, L, hidden_size]``: per step and causal (nothing after t).

Loss: the negative ELBO (single-sample SGVB): ``-[log p(x|z) + log p(z) - log q(z|x)]``, as a mean
per step and channel (a sum over the window would scale with L and D). Gradient norm clipped at
10 (official). Per-step score: ``-log p(x_t | z)``, the Monte Carlo mean over ``score_samples``
posterior samples in eval mode, drawn from a generator seeded with ``score_seed`` so a model's
scores are reproducible. The z_{t-1} connection needs a loop over t; only a [B, z] x [z, dense]
product runs inside it (the GRUs and the e_t part of the dense layer run once per window).

Default widths 190 (GRU and dense) give 347K parameters at D = 55, close to the paper's 350.7K
(the official code uses 500).
"""

from __future__ import annotations

import math
from typing import ClassVar

import torch
import torch.nn.functional as F
from torch import nn

from madcluster.embedders.base import BaseEmbedder, EmbedderOutput, Objective, Optimizers
from madcluster.embedders.blocks import gaussian_log_prob, positive_std
from madcluster.exceptions import ParameterError


class PlanarFlow(nn.Module):
    """f(z) = z + u_hat tanh(w'z + b) (Rezende & Mohamed 2015); u_hat keeps f invertible
    (w'u_hat >= -1), so log|det df/dz| = log|1 + u_hat' psi| is finite."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        bound = 1.0 / math.sqrt(dim)
        self.u = nn.Parameter(torch.empty(dim).uniform_(-bound, bound))
        self.w = nn.Parameter(torch.empty(dim).uniform_(-bound, bound))
        self.b = nn.Parameter(torch.zeros(()))

    def forward(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        wu = self.w @ self.u
        u_hat = self.u + (F.softplus(wu) - 1.0 - wu) * self.w / (self.w @ self.w + 1e-8)
        act = torch.tanh(torch.matmul(z, self.w) + self.b)
        det = 1.0 + (1.0 - act.pow(2)) * (self.w @ u_hat)
        return z + act.unsqueeze(-1) * u_hat, torch.log(det.abs() + 1e-8)


class OmniAnomaly(BaseEmbedder):
    """OmniAnomaly as a Base Embedder (see the module docstring)."""

    causal = True
    test_params: ClassVar[dict] = {
        "hidden_size": 8,
        "dense_size": 8,
        "n_flows": 2,
        "score_samples": 2,
    }

    def __init__(
        self,
        n_features: int,
        hidden_size: int = 190,
        dense_size: int = 190,
        z_dim: int = 3,
        n_flows: int = 20,
        score_samples: int = 10,
        score_seed: int = 0,
        grad_clip: float = 10.0,
    ) -> None:
        super().__init__()
        if min(hidden_size, dense_size, z_dim, score_samples) < 1 or n_flows < 0:
            raise ParameterError(
                "OmniAnomaly needs positive sizes, score_samples >= 1 and n_flows >= 0"
            )
        self.z_dim, self.score_samples, self.score_seed, self.grad_clip = (
            z_dim,
            score_samples,
            score_seed,
            grad_clip,
        )
        self.q_rnn = nn.GRU(n_features, hidden_size, batch_first=True)
        self.q_dense = nn.Linear(hidden_size + z_dim, dense_size)
        self.q_mean = nn.Linear(dense_size, z_dim)
        self.q_std = nn.Linear(dense_size, z_dim)
        self.flows = nn.ModuleList(PlanarFlow(z_dim) for _ in range(n_flows))
        self.transition = nn.Parameter(torch.eye(z_dim))
        self.transition_std = nn.Parameter(torch.zeros(z_dim))  # softplus(0) + floor ~ 0.69
        self.p_rnn = nn.GRU(z_dim, hidden_size, batch_first=True)
        self.p_dense = nn.Linear(hidden_size, dense_size)
        self.p_mean = nn.Linear(dense_size, n_features)
        self.p_std = nn.Linear(dense_size, n_features)
        self.out_features = hidden_size

    # ------------------------------------------------------------------ pieces
    def posterior(self, e: torch.Tensor, noise: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Sample z^0 step by step (z_t depends on z_{t-1}); ``noise [N, L, z]``.

        Returns z^0 ``[N, L, z]`` and log q(z^0 | x) per step ``[N, L]``."""
        hidden = e.shape[-1]
        w_e, w_z = self.q_dense.weight[:, :hidden], self.q_dense.weight[:, hidden:]
        from_e = F.linear(e, w_e, self.q_dense.bias)  # [N, L, dense], once per window
        z_prev = e.new_zeros(e.shape[0], self.z_dim)
        samples, log_q = [], []
        for t in range(e.shape[1]):
            a = torch.relu(from_e[:, t] + torch.matmul(z_prev, w_z.T))
            mean, std = self.q_mean(a), positive_std(self.q_std(a))
            z_prev = mean + std * noise[:, t]
            samples.append(z_prev)
            log_q.append(gaussian_log_prob(z_prev, mean, std).sum(-1))
        return torch.stack(samples, 1), torch.stack(log_q, 1)

    def flow(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """z^K and the summed log|det| per step."""
        log_det = z.new_zeros(z.shape[:-1])
        for layer in self.flows:
            z, ld = layer(z)
            log_det = log_det + ld
        return z, log_det

    def prior_log_prob(self, z: torch.Tensor) -> torch.Tensor:
        """log p(z_t | z_{t-1}) of the linear-Gaussian state space, per step ``[N, L]``."""
        mean = torch.cat(
            [torch.zeros_like(z[:, :1]), torch.matmul(z[:, :-1], self.transition.T)], dim=1
        )
        std = torch.cat(
            [torch.ones_like(z[:, :1]), positive_std(self.transition_std).expand_as(z[:, 1:])],
            dim=1,
        )
        return gaussian_log_prob(z, mean, std).sum(-1)

    def likelihood(self, z: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """log p(x_t | z_{<=t}) per step ``[N, L]``."""
        a = torch.relu(self.p_dense(self.p_rnn(z)[0]))
        return gaussian_log_prob(x, self.p_mean(a), positive_std(self.p_std(a))).sum(-1)

    # ------------------------------------------------------------------ contract
    def forward(self, x: torch.Tensor) -> EmbedderOutput:
        e = self.q_rnn(x)[0]
        n = 1 if self.training else self.score_samples
        batch, length = x.shape[:2]
        shape = (n * batch, length, self.z_dim)
        if self.training:
            noise = torch.randn(shape, device=x.device, dtype=x.dtype)
        else:
            gen = torch.Generator(device=x.device).manual_seed(self.score_seed)
            noise = torch.randn(shape, generator=gen, device=x.device, dtype=x.dtype)
        e_n = e.repeat(n, 1, 1) if n > 1 else e
        x_n = x.repeat(n, 1, 1) if n > 1 else x
        z0, log_q0 = self.posterior(e_n, noise)
        z, log_det = self.flow(z0)
        log_px = self.likelihood(z, x_n)
        elbo = log_px + self.prior_log_prob(z) - (log_q0 - log_det)  # [n * B, L]
        loss = -elbo.mean() / x.shape[-1]
        score = -log_px.reshape(n, batch, length).mean(0)
        return EmbedderOutput(h=e, loss=loss, score=score)

    def training_step(
        self, x: torch.Tensor, objective: Objective, optimizers: Optimizers, epoch: int = 1
    ) -> torch.Tensor:
        """One Adam step on the negative ELBO (+ MADCluster's loss), gradient norm clipped."""
        (optimizer,) = optimizers
        optimizer.zero_grad(set_to_none=True)
        loss = objective(self(x))
        loss.backward()
        params = [p for group in optimizer.param_groups for p in group["params"]]
        torch.nn.utils.clip_grad_norm_(params, self.grad_clip)
        optimizer.step()
        return loss.detach()
