"""THOC: the score, the hierarchy (paper's Eq. 5-8), the losses, the temperature schedule, the
k-means initialisation, and numerical safety."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from series_helpers import make_series

from madcluster import MADCluster
from madcluster.embedders import THOC, build_embedder
from madcluster.embedders.thoc import (
    MIN_TEMPERATURE,
    orthogonality_loss,
    spherical_kmeans,
    thoc_score,
    tss_loss,
)


def small(**kw) -> THOC:
    torch.manual_seed(0)
    return THOC(3, **{"hidden_size": 4, "n_layers": 2, "n_centers": 3, **kw})


def test_score_of_a_step_on_its_center_is_0_and_opposite_is_1():
    centers = torch.tensor([[1.0, 0.0], [0.0, 2.0]])
    r = torch.tensor([[0.3, 0.7]])
    assert float(thoc_score(centers.unsqueeze(0) * 5.0, centers, r)) == pytest.approx(0.0, abs=1e-6)
    assert float(thoc_score(-centers.unsqueeze(0), centers, r)) == pytest.approx(1.0, abs=1e-6)
    # orthogonal to c_0 (1/2) with weight .3, on c_1 (0) with weight .7
    mixed = torch.tensor([[[0.0, 1.0], [0.0, 1.0]]])
    assert float(thoc_score(mixed, centers, r)) == pytest.approx(0.15, abs=1e-6)
    # a zero feature (all ReLUs off) scores 1/2, not NaN
    assert float(thoc_score(torch.zeros(1, 2, 2), centers, r)) == pytest.approx(0.5, abs=1e-6)


def test_forward_follows_the_papers_equations_by_hand():
    """Eq. 5-8 written out step by step: P softmaxed over the current clusters only, the update
    weighted by P itself (not softmax(P), the authors' code per TimeSeAD), R = sum_i R_i P_ij."""
    model = small(temperature=0.2, lambda_orth=0.0, lambda_tss=0.0).eval()
    x = torch.randn(2, 5, 3)
    with torch.no_grad():
        out = model(x)
        f0, f1 = model.rnn.layer_outputs(x)
        c0, c1 = model.centers
        tau = 0.2
        for b in range(2):
            for t in range(5):
                p0 = torch.softmax(F.cosine_similarity(f0[b, t][None], c0) / tau, dim=0)  # [K]
                fbar0 = p0[:, None] * torch.relu(model.transforms[0](f0[b, t]))[None]
                g1 = fbar0 @ model.join_prev[0].weight.T + model.join_prev[0].bias
                g1 = g1 + model.join_cur[0].weight @ f1[b, t]
                p1 = torch.stack([torch.softmax(F.cosine_similarity(g[None], c1) / tau, 0) for g in g1])
                r1 = (p0[:, None] * p1).sum(0)
                fbar1 = p1.T @ torch.relu(model.transforms[1](g1))
                expected = (r1 * 0.5 * (1 - F.cosine_similarity(fbar1, c1))).sum()
                assert float(out.score[b, t]) == pytest.approx(float(expected), abs=1e-5)
                assert float(r1.sum()) == pytest.approx(1.0, abs=1e-6)
        torch.testing.assert_close(out.loss, out.score.mean())
        torch.testing.assert_close(out.h, f1)  # h is the top D-RNN layer's output


def test_temperature_is_divided_by_one_and_a_half_every_five_epochs():
    model = small()
    seen = []
    for epoch in range(1, 16):
        model.on_epoch_end(epoch)
        seen.append(float(model.temperature))
    np.testing.assert_allclose(seen[:4], 100.0)
    np.testing.assert_allclose(seen[4:9], 100.0 * 2 / 3, rtol=1e-6)
    np.testing.assert_allclose(seen[9:14], 100.0 * 4 / 9, rtol=1e-6)
    model.on_epoch_end(10)  # computed from the epoch, so a repeated call changes nothing
    assert float(model.temperature) == pytest.approx(100.0 * 4 / 9)
    model.on_epoch_end(100_000)
    assert float(model.temperature) == pytest.approx(MIN_TEMPERATURE)

    fitted = MADCluster(embedder="thoc", embedder_params=THOC.test_params, window_size=16, stride=8,
                        epochs=5, mode="base-only", random_state=0, validation_size=0.0)
    fitted.fit(make_series(200, 3))
    assert float(fitted.net_.embedder.temperature) == pytest.approx(100.0 * 2 / 3)


def test_orthogonality_loss_is_zero_only_for_orthonormal_centers():
    q, _ = torch.linalg.qr(torch.randn(8, 8))
    assert float(orthogonality_loss([q[:6], q[:3]])) == pytest.approx(0.0, abs=1e-10)
    # C = 2I: C C^T - I = 3I, mean of squares = 9 * 3 / 9; a second layer on I adds 0
    assert float(orthogonality_loss([2 * torch.eye(3), torch.eye(3)])) == pytest.approx(1.5)
    model = small()
    with torch.no_grad():
        for c in model.centers:
            c.copy_(torch.eye(4)[:3])
    assert float(orthogonality_loss(model.centers).detach()) == 0.0


def test_tss_loss_predicts_the_next_step_or_the_dilation_ahead():
    x = torch.arange(12.0).reshape(1, 6, 2)
    assert float(tss_loss([torch.roll(x, -1, dims=1)], x, [1])) == 0.0
    # predicting 0 everywhere: MSE of x[:, s:] per layer, then the mean over layers
    zero = torch.zeros_like(x)
    expected = (x[:, 1:].pow(2).mean() + x[:, 2:].pow(2).mean()) / 2
    torch.testing.assert_close(tss_loss([zero, zero], x, [1, 2]), expected)

    for horizon, shifts in (("next-step", [1, 1]), ("dilation", [1, 2])):
        model = small(lambda_orth=0.0, lambda_tss=1.0, tss_horizon=horizon)
        with torch.no_grad():
            for head in model.predictors:
                head.weight.zero_()
                head.bias.zero_()
            xs = torch.randn(2, 7, 3)
            out = model(xs)
        expected = np.mean([xs[:, s:].pow(2).mean().item() for s in shifts])
        assert float(out.loss - out.score.mean()) == pytest.approx(expected, rel=1e-5)


def test_kmeans_init_puts_the_centers_on_the_data():
    # six steps, six centers: each center is one step's (normalised) layer-1 feature
    model = small(n_layers=1, n_centers=6, hidden_size=8)
    x = torch.randn(3, 2, 3)
    model.init_from_data(lambda: iter([x[:1], x[1:]]))
    with torch.no_grad():
        f = F.normalize(model.rnn.layer_outputs(x)[0].reshape(-1, 8), dim=-1)
        cos = model.centers[0] @ f.T
    assert torch.allclose(cos.max(dim=1).values, torch.ones(6), atol=1e-5)
    assert len(set(cos.argmax(dim=1).tolist())) == 6  # one center per step

    # three noisy directions: k-means finds all three
    torch.manual_seed(1)
    directions = torch.eye(5)[:3]
    points = torch.cat([d * s + 0.05 * torch.randn(50, 5) for d, s in zip(directions, (1.0, 3.0, 0.2))])
    centers = spherical_kmeans(points, 3)
    assert sorted((centers @ directions.T).argmax(dim=1).tolist()) == [0, 1, 2]
    assert (centers @ directions.T).max(dim=1).values.min() > 0.95


def test_kmeans_on_one_direction_keeps_the_centers_distinct():
    """A constant series gives one direction: the missing centers are random, not copies (copies
    get the same gradient and could never separate)."""
    centers = spherical_kmeans(torch.ones(100, 4) * 7.0, 3)
    assert torch.allclose(centers[0], torch.full((4,), 0.5))
    assert float((centers[1:] @ centers[0]).abs().max()) < 0.999
    assert torch.allclose(centers.norm(dim=-1), torch.ones(3))
    assert torch.isfinite(spherical_kmeans(torch.zeros(10, 4), 2)).all()


def test_later_layers_are_initialised_on_the_joined_features():
    model = small()
    x = torch.randn(4, 6, 3)
    model.init_from_data(lambda: iter([x]))
    with torch.no_grad():
        f0, f1 = model.rnn.layer_outputs(x)
        _, fbar = model._assign(0, f0.unsqueeze(-2), x.new_ones(4, 6, 1))
        g1 = F.normalize(model._joined(1, f1, fbar).reshape(-1, 4), dim=-1)
        assigned = (g1 @ model.centers[1].T).max(dim=1).values
    assert float(assigned.mean()) > 0.8  # the joined features sit close to their centers


def test_huge_and_constant_inputs_stay_finite_with_finite_gradients():
    model = small()
    for x in (torch.full((2, 8, 3), 1e6), torch.zeros(2, 8, 3), torch.randn(2, 8, 3) * 1e4):
        model.init_from_data(lambda x=x: iter([x]))
        model.zero_grad()
        out = model(x)
        out.loss.backward()
        assert torch.isfinite(out.loss) and torch.isfinite(out.score).all()
        assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)


def test_impossible_configurations_are_refused():
    with pytest.raises(ValueError, match="cannot be orthogonal"):
        THOC(3, hidden_size=4, n_centers=5)
    THOC(3, hidden_size=4, n_centers=5, lambda_orth=0.0)  # without L_orth it is allowed
    with pytest.raises(ValueError, match="temperature"):
        THOC(3, temperature=0.0)
    with pytest.raises(ValueError, match="temperature"):
        THOC(3, temperature_decay=1.5)
    with pytest.raises(ValueError, match=">= 1"):
        THOC(3, n_centers=0)
    with pytest.raises(ValueError, match="lambda"):
        THOC(3, lambda_tss=-1.0)
    with pytest.raises(ValueError, match="tss_horizon"):
        THOC(3, tss_horizon="two-steps")
    with pytest.raises(ValueError, match="window_size"):
        build_embedder("thoc", 3, window_size=4, tss_horizon="dilation")
    with pytest.raises(ValueError, match="too short"):
        small()(torch.randn(1, 1, 3))
