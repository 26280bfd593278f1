"""DeepSVDD: one-class / soft-boundary losses on a hand-sized case, the fixed center, the score."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from series_helpers import make_series

from madcluster import MADCluster
from madcluster.embedders import DeepSVDD


def zero_weights(model: DeepSVDD) -> DeepSVDD:
    """A bias-free GRU with zero weights maps every input to h = 0."""
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
    return model


def test_one_class_loss_and_score_by_hand():
    model = zero_weights(DeepSVDD(2, hidden_size=2, n_layers=1))
    model.center.copy_(torch.tensor([0.1, -0.2]))
    out = model(torch.randn(3, 5, 2))
    assert torch.equal(out.h, torch.zeros(3, 5, 2))
    # ||0 - c||^2 = 0.01 + 0.04
    torch.testing.assert_close(out.loss, torch.tensor(0.05))
    torch.testing.assert_close(out.score, torch.full((3, 5), 0.05))


def test_soft_boundary_loss_by_hand():
    model = zero_weights(DeepSVDD(2, hidden_size=2, n_layers=1, objective="soft-boundary", nu=0.1))
    model.center.copy_(torch.tensor([0.1, -0.2]))
    model.radius.fill_(0.1)
    out = model(torch.randn(2, 4, 2))
    # R^2 + mean(max(0, d - R^2)) / nu = 0.01 + 0.04 / 0.1
    torch.testing.assert_close(out.loss, torch.tensor(0.41))
    torch.testing.assert_close(out.score, torch.full((2, 4), 0.04))


def test_center_is_the_mean_of_an_initial_pass_with_the_guard():
    model = DeepSVDD(3, hidden_size=6, n_layers=2)
    x = torch.randn(4, 10, 3)
    model.init_from_data(lambda: iter([x[:2], x[2:]]))
    with torch.no_grad():
        mean = model.eval()(x).h.reshape(-1, 6).mean(0)
    expected = torch.where(mean.abs() < 0.1, torch.where(mean < 0, -0.1, 0.1), mean)
    torch.testing.assert_close(model.center, expected)

    zero = zero_weights(DeepSVDD(3, hidden_size=4, n_layers=1))
    zero.init_from_data(lambda: iter([x]))
    torch.testing.assert_close(zero.center, torch.full((4,), 0.1))  # h = 0 -> +eps


def test_no_biases_and_a_fixed_center():
    """Ruff et al.'s remedies against hypersphere collapse."""
    model = DeepSVDD(3)
    assert not [n for n, _ in model.named_parameters() if "bias" in n]
    assert "center" not in dict(model.named_parameters())
    x = make_series(300, 3)
    fitted = MADCluster(
        embedder="deepsvdd",
        embedder_params=DeepSVDD.test_params,
        window_size=16,
        stride=4,
        epochs=1,
        mode="base-only",
        random_state=0,
        validation_size=0.0,
    )
    fitted.fit(x)
    emb = fitted.net_.embedder
    center = emb.center.clone()
    emb.init_from_data(lambda: iter([]))  # no windows: keeps a center at +-eps, never NaN
    assert torch.isfinite(emb.center).all()
    assert not torch.equal(center, torch.zeros_like(center))


def test_soft_boundary_radius_follows_the_batch_after_warmup():
    model = DeepSVDD(3, hidden_size=4, n_layers=1, objective="soft-boundary", nu=0.25, warmup=1)
    x = torch.randn(4, 8, 3)
    model.init_from_data(lambda: iter([x]))
    (opt,) = model.configure_optimizers([], lr=0.0, weight_decay=0.0)
    model.training_step(x, lambda out: out.loss, [opt], epoch=1)
    assert float(model.radius) == 0.0  # warm-up: R untouched
    model.training_step(x, lambda out: out.loss, [opt], epoch=2)
    d = (model(x).h - model.center).pow(2).sum(-1)
    assert float(model.radius) == pytest.approx(
        float(np.quantile(d.sqrt().detach().numpy(), 0.75)), rel=1e-5
    )


@pytest.mark.slow
def test_score_is_larger_on_an_injected_spike():
    x = make_series(800, 3)
    model = MADCluster(
        embedder="deepsvdd",
        embedder_params={"hidden_size": 32, "n_layers": 2},
        window_size=32,
        stride=4,
        epochs=8,
        mode="base-only",
        random_state=0,
        validation_size=0.0,
    ).fit(x)
    test = make_series(400, 3, seed=1)
    test[200:203] += 6.0
    scores = model.decision_function(test)
    assert scores.shape == (400,)
    assert 200 <= int(np.argmax(scores)) < 210  # the spike is the farthest from the center
