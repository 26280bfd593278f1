"""OmniAnomaly: densities, the planar flow's log-det, the ELBO from its pieces, clipping, score."""

from __future__ import annotations

import math

import pytest
import torch
from torch.distributions import MultivariateNormal, Normal

from madcluster.embedders import OmniAnomaly
from madcluster.embedders.blocks import gaussian_log_prob, positive_std
from madcluster.embedders.omnianomaly import PlanarFlow

SMALL = {"hidden_size": 6, "dense_size": 5, "n_flows": 2, "score_samples": 3}


def test_gaussian_log_prob_and_std_floor():
    x, mean, std = torch.tensor([0.5, -1.0]), torch.tensor([0.0, 1.0]), torch.tensor([2.0, 0.5])
    torch.testing.assert_close(gaussian_log_prob(x, mean, std), Normal(mean, std).log_prob(x))
    assert float(
        gaussian_log_prob(torch.zeros(()), torch.zeros(()), torch.ones(()))
    ) == pytest.approx(-0.5 * math.log(2 * math.pi))
    std = positive_std(torch.tensor([-1e4, 0.0, 1e4]))
    assert float(std[0]) == pytest.approx(1e-4) and torch.isfinite(std).all()


def test_planar_flow_log_det_matches_the_jacobian():
    torch.manual_seed(0)
    flow = PlanarFlow(3)
    with torch.no_grad():
        flow.u.copy_(torch.tensor([2.0, -1.0, 0.5]))  # w'u < -1 before the u_hat correction
        flow.w.copy_(torch.tensor([-1.0, 0.5, 0.2]))
    for z in torch.randn(4, 3):
        jac = torch.autograd.functional.jacobian(lambda v: flow(v)[0], z)
        _, log_det = flow(z)
        assert float(log_det.detach()) == pytest.approx(
            float(torch.linalg.slogdet(jac)[1]), abs=1e-5
        )
        assert float(torch.linalg.det(jac)) > 0  # invertible


def test_prior_is_the_linear_gaussian_state_space():
    torch.manual_seed(0)
    model = OmniAnomaly(2, **SMALL)
    with torch.no_grad():
        model.transition.copy_(torch.tensor([[0.9, 0.1, 0.0], [0.0, 0.5, 0.0], [0.2, 0.0, 1.0]]))
        model.transition_std.copy_(torch.tensor([0.0, 1.0, -1.0]))
    z = torch.randn(2, 4, 3)
    noise_std = positive_std(model.transition_std)
    expected = torch.stack(
        [
            MultivariateNormal(torch.zeros(3), torch.eye(3)).log_prob(z[:, 0]),
            *(
                MultivariateNormal(
                    z[:, t - 1] @ model.transition.T, torch.diag(noise_std**2)
                ).log_prob(z[:, t])
                for t in range(1, 4)
            ),
        ],
        dim=1,
    )
    torch.testing.assert_close(model.prior_log_prob(z), expected.detach())


def test_loss_is_the_negative_elbo_per_step_and_channel():
    torch.manual_seed(0)
    model = OmniAnomaly(2, **SMALL).train()
    x = torch.randn(3, 7, 2)
    torch.manual_seed(1)
    out = model(x)
    torch.manual_seed(1)
    noise = torch.randn(3, 7, 3)
    e = model.q_rnn(x)[0]
    z0, log_q0 = model.posterior(e, noise)
    # by hand: z^0_t = mean_t + std_t * noise_t, so log q = sum log N(noise; 0, 1) - log std
    a = torch.relu(model.q_dense(torch.cat([e[:, 2], z0[:, 1]], -1)))
    std = positive_std(model.q_std(a))
    by_hand = (Normal(0.0, 1.0).log_prob(noise[:, 2]) - torch.log(std)).sum(-1)
    torch.testing.assert_close(log_q0[:, 2], by_hand)
    z, log_det = model.flow(z0)
    elbo = model.likelihood(z, x) + model.prior_log_prob(z) - log_q0 + log_det
    torch.testing.assert_close(out.loss, -elbo.mean() / 2)
    torch.testing.assert_close(out.h, e)


def test_score_is_the_monte_carlo_negative_log_likelihood_and_repeatable():
    torch.manual_seed(0)
    model = OmniAnomaly(2, **SMALL).eval()
    x = torch.randn(2, 6, 2)
    with torch.no_grad():
        first, second = model(x).score, model(x).score
        torch.testing.assert_close(first, second)  # seeded generator: a model's scores repeat
        gen = torch.Generator().manual_seed(model.score_seed)
        noise = torch.randn(3 * 2, 6, 3, generator=gen)
        z, _ = model.flow(model.posterior(model.q_rnn(x)[0].repeat(3, 1, 1), noise)[0])
        expected = -model.likelihood(z, x.repeat(3, 1, 1)).reshape(3, 2, 6).mean(0)
    torch.testing.assert_close(first, expected)
    assert first.shape == (2, 6)


def test_score_is_largest_at_an_injected_spike():
    torch.manual_seed(0)
    model = OmniAnomaly(2, **SMALL).eval()
    x = 0.1 * torch.randn(2, 12, 2)
    x[1, 7] += 20.0
    with torch.no_grad():
        score = model(x).score
    assert int(score[1].argmax()) == 7 and float(score[1, 7]) == float(score.max())


def test_gradient_norm_is_clipped():
    torch.manual_seed(0)
    model = OmniAnomaly(2, grad_clip=10.0, **SMALL)
    (opt,) = model.configure_optimizers([], lr=0.0, weight_decay=0.0)
    model.training_step(torch.randn(2, 5, 2), lambda out: 1e6 * out.loss, [opt])
    norm = torch.linalg.vector_norm(
        torch.stack([p.grad.norm() for p in model.parameters() if p.grad is not None])
    )
    assert float(norm) == pytest.approx(10.0, rel=1e-4)


def test_constant_input_gives_finite_loss_and_gradients():
    torch.manual_seed(0)
    model = OmniAnomaly(2, **SMALL)
    (opt,) = model.configure_optimizers([], lr=1e-2, weight_decay=0.0)
    x = torch.zeros(4, 8, 2)
    for _ in range(20):
        loss = model.training_step(x, lambda out: out.loss, [opt])
        assert torch.isfinite(loss)
    assert all(torch.isfinite(p).all() for p in model.parameters())
