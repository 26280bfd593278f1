"""The MADCluster head: nu stays in (0,1), gradients reach every parameter, options behave."""

from __future__ import annotations

import pytest
import torch

from madcluster.embedders import DilatedRNN
from madcluster.method import MADClusterHead, MethodConfig


@pytest.mark.slow
@pytest.mark.parametrize("nu_param", ["sigmoid", "raw"])
def test_nu_stays_inside_unit_interval_for_thousands_of_steps(nu_param):
    torch.manual_seed(0)
    head = MADClusterHead(8, MethodConfig(nu_param=nu_param))
    head.init_center(torch.randn(8))
    h = torch.randn(16, 10, 8)
    opt = torch.optim.Adam(head.parameters(), lr=0.05)
    nus = []
    for _ in range(3000):
        opt.zero_grad()
        loss = head.loss(h).total
        assert torch.isfinite(loss)
        loss.backward()
        opt.step()
        nus.append(float(head.nu.detach()))
    assert all(0.0 < v < 1.0 for v in nus)
    assert nus[-1] > nus[0], "the one-directed threshold must rise during training"


def test_gradients_reach_center_nu_and_every_embedder_parameter():
    torch.manual_seed(0)
    emb = DilatedRNN(4, hidden_size=8, n_layers=3)
    head = MADClusterHead(8)
    head.init_center(torch.randn(8))
    head.radius.fill_(0.1)  # small radius so the hinge is active
    x = torch.randn(5, 12, 4)
    out = emb(x)
    head.loss(out.h, out.loss).total.backward()
    assert head.center.grad is not None and head.center.grad.abs().sum() > 0
    assert head.nu_param.grad is not None and head.nu_param.grad.abs() > 0
    for name, p in emb.named_parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0, name


def test_distance_only_has_fixed_center_and_no_cluster_term():
    head = MADClusterHead(4, MethodConfig(mode="distance-only"))
    assert not head.center.requires_grad
    parts = head.loss(torch.randn(2, 3, 4, requires_grad=True))
    assert parts.cluster.item() == 0.0 and parts.distance.item() > 0


def test_cluster_only_score_has_no_distance_term():
    head = MADClusterHead(4, MethodConfig(mode="cluster-only"))
    head.init_center(torch.ones(4))
    h = torch.ones(1, 2, 4) * 5.0  # same direction as c, far away
    assert torch.allclose(head.score(h), head.score(h / 5.0))


def test_score_equals_paper_equation_seven():
    torch.manual_seed(1)
    head = MADClusterHead(6)
    head.init_center(torch.randn(6))
    head.radius.fill_(0.7)
    h = torch.randn(2, 5, 6)
    q = ((torch.nn.functional.cosine_similarity(h, head.center.expand_as(h), dim=-1) + 1) / 2).clamp(1e-6, 1)
    nu = head.nu
    p = (q >= nu).float()
    f1 = (1 - nu ** (1 - nu)) / (1 - nu) * (q - 1) + 1
    expected = -(p * torch.log(f1) + (1 - p) * torch.log(q ** (1 - nu))) + ((h - head.center) ** 2).sum(-1) - 0.7**2
    assert torch.allclose(head.score(h), expected, atol=1e-5)


def test_window_score_is_constant_within_window():
    head = MADClusterHead(4, MethodConfig(score_type="window"))
    head.init_center(torch.ones(4))
    s = head.score(torch.randn(3, 7, 4))
    assert torch.allclose(s, s[:, :1].expand_as(s))


def test_radius_is_quantile_of_distances():
    head = MADClusterHead(2, MethodConfig(rho=0.1))
    d = torch.arange(1, 101, dtype=torch.float32) ** 2  # sqrt(d) = 1..100
    head.set_radius_from_distances(d)
    assert float(head.radius) == pytest.approx(90.1, rel=1e-3)


@pytest.mark.parametrize("bad", [{"mode": "nope"}, {"tau": 0.7}, {"rho": 0.0}, {"nu_param": "x"}, {"distance_loss": "l1"}])
def test_bad_options_raise_clear_errors(bad):
    with pytest.raises(ValueError, match="|".join(bad)):
        MethodConfig(**bad)


def test_outside_fraction_is_invariant_to_shrinking_the_sphere():
    """Scaling h, c and R together leaves the relative-distance criterion unchanged."""
    torch.manual_seed(0)
    head = MADClusterHead(4)
    head.init_center(torch.randn(4))
    head.radius.fill_(0.5)
    h = torch.randn(3, 7, 4)
    before = head.outside_fraction(h)
    with torch.no_grad():
        head.center.mul_(0.1)
    head.radius.mul_(0.1)
    assert torch.allclose(head.outside_fraction(0.1 * h), before, rtol=1e-5)
    assert before > 0

