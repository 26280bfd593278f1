"""USAD: the phase losses by hand, the 1/n schedule, two phases with no gradient leak, the score."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from series_helpers import make_series

from madcluster import MADCluster
from madcluster.embedders import USAD
from madcluster.embedders.usad import usad_losses


def fitted_usad(seed: int = 0) -> tuple[USAD, torch.Tensor]:
    torch.manual_seed(seed)
    model = USAD(3, window_size=8, hidden=2)
    x = torch.randn(5, 8, 3)
    model.init_from_data(lambda: iter([x]))
    return model, x


@pytest.mark.parametrize(
    ("epoch", "l1", "l2"), [(1, 1.0, 0.25), (2, 0.53125, 0.09375), (4, 0.296875, 0.015625)]
)
def test_phase_losses_by_hand(epoch, l1, l2):
    # x = 1, w1 = 0, w2 = .5, w3 = .75: ||x-w1||^2 = 1, ||x-w2||^2 = .25, ||x-w3||^2 = .0625
    x = torch.ones(2, 3)
    loss1, loss2 = usad_losses(
        x, torch.zeros(2, 3), torch.full((2, 3), 0.5), torch.full((2, 3), 0.75), epoch
    )
    assert float(loss1) == pytest.approx(l1)  # 1/n * 1 + (1 - 1/n) * .0625
    assert float(loss2) == pytest.approx(l2)  # 1/n * .25 - (1 - 1/n) * .0625


@pytest.mark.parametrize("epoch", [1, 2, 5])
def test_objective_gets_l1_with_the_epoch_weights(epoch):
    model, x = fitted_usad()
    flat, z, w1, w2, w3 = model.reconstruct(x)
    expected = usad_losses(flat, w1, w2, w3, epoch)[0]
    seen = []

    def objective(out):
        seen.append(out)
        return out.loss

    model.training_step(
        x, objective, model.configure_optimizers([], lr=1e-3, weight_decay=0.0), epoch=epoch
    )
    (out,) = seen
    torch.testing.assert_close(out.loss, expected)
    assert out.h.shape == (5, 8, 2)  # h: the latent z = L * hidden viewed per step
    torch.testing.assert_close(out.h.reshape(5, -1), z)


def test_phase_two_sees_only_its_own_gradients():
    """Every gradient is zeroed before phase 2: after it, each gradient is that of L2 alone (the
    official loop leaks phase 1's gradient of ||x - w3||^2 into decoder 2)."""
    model, x = fitted_usad()
    opt1, _ = model.configure_optimizers([], lr=1e-2, weight_decay=0.0)
    frozen = torch.optim.SGD(
        model.parameters(), lr=0.0
    )  # phase 2 leaves the weights as phase 1 left them
    model.training_step(x, lambda out: out.loss, [opt1, frozen], epoch=3)
    ref = copy.deepcopy(model)
    ref.zero_grad(set_to_none=True)
    flat, _, w1, w2, w3 = ref.reconstruct(x)
    usad_losses(flat, w1, w2, w3, 3)[1].backward()
    for (name, p), r in zip(model.named_parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad, r.grad, msg=name)


class CountingUSAD(USAD):
    """Counts each phase's optimiser steps and the epochs it was called with."""

    def configure_optimizers(self, head_params, *, lr, weight_decay):
        self.steps, self.epochs_seen = [0, 0], []
        optimizers = super().configure_optimizers(head_params, lr=lr, weight_decay=weight_decay)
        for i, opt in enumerate(optimizers):
            step = opt.step

            def counted(*args, _i=i, _step=step, **kw):
                self.steps[_i] += 1
                return _step(*args, **kw)

            opt.step = counted
        return optimizers

    def training_step(self, x, objective, optimizers, epoch=1):
        self.epochs_seen.append(epoch)
        return super().training_step(x, objective, optimizers, epoch=epoch)


def test_each_phase_steps_once_per_batch_and_epochs_count_from_one():
    x = make_series(600, 3)
    model = MADCluster(
        embedder=CountingUSAD(3, window_size=20, hidden=2),
        window_size=20,
        stride=4,
        epochs=3,
        batch_size=32,
        random_state=0,
        validation_size=0.0,
    ).fit(x)
    emb = model.net_.embedder
    n_batches = int(np.ceil(len(range(0, 600 - 20 + 1, 4)) / 32))
    assert emb.steps == [3 * n_batches, 3 * n_batches]
    assert emb.epochs_seen == [e for e in (1, 2, 3) for _ in range(n_batches)]


def test_score_is_the_weighted_reconstruction_error_per_step():
    model, x = fitted_usad()
    model.alpha, model.beta = 0.3, 0.7
    flat, _, w1, _, w3 = model.reconstruct(x)
    expected = (0.3 * (flat - w1) ** 2 + 0.7 * (flat - w3) ** 2).reshape(5, 8, 3).mean(-1)
    out = model(x)
    torch.testing.assert_close(out.score, expected)
    torch.testing.assert_close(out.loss, expected.mean())


def test_inputs_are_min_max_scaled_with_the_training_range():
    model, x = fitted_usad()
    scaled = model.scaler(x)
    assert float(scaled.min()) == pytest.approx(0.0, abs=1e-6) and float(
        scaled.max()
    ) == pytest.approx(1.0)
    assert {"scaler.minimum", "scaler.span"} <= set(model.state_dict())


def test_score_is_largest_at_an_injected_spike():
    model, x = fitted_usad()
    spiked = x.clone()
    spiked[2, 5] += 10.0
    with torch.no_grad():
        score = model.eval()(spiked).score
    assert score.shape == (5, 8)
    assert int(score[2].argmax()) == 5 and float(score[2, 5]) == float(score.max())
