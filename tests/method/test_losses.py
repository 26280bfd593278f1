"""Appendix A of the paper: the One-directed Adaptive loss decreases in q and in nu."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from madcluster.method.losses import (
    one_directed_adaptive_loss,
    pseudo_labels,
    smooth_labels,
    soft_assignment,
    soft_boundary_terms,
    upper_branch,
)

GRID = torch.linspace(0.01, 0.99, 99, dtype=torch.float64)


def _grads(p_value: float | None):
    q, nu = torch.meshgrid(GRID, GRID, indexing="ij")
    q = q.clone().requires_grad_(True)
    nu = nu.clone().requires_grad_(True)
    p = (q >= nu).double() if p_value is None else torch.full_like(q, p_value)
    one_directed_adaptive_loss(q, nu, p.detach()).sum().backward()
    return q.grad, nu.grad


@pytest.mark.parametrize("p_value", [None, 0.0, 1.0, 0.01, 0.99])
def test_loss_decreases_in_q_and_nu(p_value):
    dq, dnu = _grads(p_value)
    assert torch.all(dq < 0), "dL/dq must be negative on (0,1)^2 (Appendix A.3.1)"
    assert torch.all(dnu < 0), "dL/dnu must be negative on (0,1)^2 (Appendix A.3.2)"


def test_branches_meet_at_threshold():
    nu = GRID
    assert torch.allclose(upper_branch(nu, nu), nu.pow(1 - nu), atol=1e-12)
    # the loss itself is continuous across q = nu (p flips from 0 to 1 there)
    below = one_directed_adaptive_loss(nu - 1e-9, nu, torch.zeros_like(nu))
    at = one_directed_adaptive_loss(nu, nu, torch.ones_like(nu))
    assert torch.allclose(below, at, atol=1e-6)


def test_hand_computed_values():
    q, nu = torch.tensor(0.8, dtype=torch.float64), torch.tensor(0.5, dtype=torch.float64)
    f1 = (1 - math.sqrt(0.5)) / 0.5 * (0.8 - 1) + 1  # 0.882842...
    assert one_directed_adaptive_loss(q, nu, torch.tensor(1.0, dtype=torch.float64)).item() == pytest.approx(-math.log(f1), rel=1e-12)
    q = torch.tensor(0.3, dtype=torch.float64)
    assert one_directed_adaptive_loss(q, nu, torch.tensor(0.0, dtype=torch.float64)).item() == pytest.approx(-0.5 * math.log(0.3), rel=1e-12)
    # label smoothing mixes the two branches
    p = smooth_labels(torch.tensor(1.0, dtype=torch.float64), 0.01)
    assert p.item() == pytest.approx(0.99)


def test_upper_branch_positive_on_whole_interval():
    q, nu = torch.meshgrid(torch.linspace(0, 1, 101, dtype=torch.float64), GRID, indexing="ij")
    assert torch.all(upper_branch(q, nu) > 0)


def test_soft_assignment_range_and_pseudo_labels():
    h = torch.randn(4, 10, 6)
    c = torch.randn(6)
    q = soft_assignment(h, c)
    assert q.shape == (4, 10) and torch.all(q > 0) and torch.all(q <= 1)
    assert torch.allclose(soft_assignment(c.expand(1, 1, 6), c), torch.ones(1, 1))
    assert torch.allclose(soft_assignment(-c.expand(1, 1, 6), c), torch.full((1, 1), 1e-6))
    p = pseudo_labels(q, torch.tensor(0.5))
    assert not p.requires_grad and set(p.unique().tolist()) <= {0.0, 1.0}
    assert torch.equal(p, (q >= 0.5).float())


def test_soft_boundary_mean_matches_paper_formula():
    d = torch.tensor([0.1, 0.5, 2.0, 4.0])
    radius = torch.tensor(1.0)
    expected = 1.0 + (1 / 0.1) * np.mean([0, 0, 1.0, 3.0])
    assert soft_boundary_terms(d, radius, rho=0.1).mean().item() == pytest.approx(expected)


def test_dec_kl_term_is_released_codes_minus_log_q():
    """p log(p/q) with the unsmoothed DEC target p = 1 is -log q: minimal at q = 1, decreasing in q."""
    from madcluster.method.losses import dec_kl_term

    q = torch.linspace(0.05, 1.0, 96, dtype=torch.float64, requires_grad=True)
    kl = dec_kl_term(q)
    assert torch.allclose(kl, -torch.log(q))
    assert kl[-1].item() == pytest.approx(0.0) and int(torch.argmin(kl)) == len(q) - 1
    kl.sum().backward()
    assert torch.all(q.grad < 0), "the term must pull q toward 1, never away from it"
