"""BeatGAN: D and G losses by hand, shapes for any window, the D/G schedule, D reset, score."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from series_helpers import make_series

from madcluster import MADCluster
from madcluster.embedders import BeatGAN, build_embedder
from madcluster.embedders.beatgan import discriminator_loss, generator_loss

SMALL = {"channels": (4, 8), "nz": 4}


def test_discriminator_loss_by_hand():
    real, fake = torch.tensor([0.8, 0.6]), torch.tensor([0.3, 0.1])
    expected = -(math.log(0.8) + math.log(0.6)) / 2 - (math.log(0.7) + math.log(0.9)) / 2
    assert float(discriminator_loss(real, fake)) == pytest.approx(expected, rel=1e-6)


def test_generator_loss_by_hand():
    x, fake = torch.zeros(1, 2, 2), torch.tensor([[[1.0, 0.0], [0.0, 1.0]]])  # MSE = .5
    feat_real, feat_fake = torch.zeros(1, 4, 1), torch.full((1, 4, 1), 2.0)  # MSE = 4
    assert float(generator_loss(x, fake, feat_real, feat_fake, w_adv=0.25)) == pytest.approx(1.5)


@pytest.mark.parametrize("length", [16, 37, 100, 128])
def test_reconstruction_and_h_have_the_window_length(length):
    model = BeatGAN(3, window_size=length, channels=(4, 8, 16) if length > 16 else (4, 8), nz=5)
    real, fake, h = model.generate(torch.randn(2, length, 3))
    assert real.shape == fake.shape == (2, 3, length)
    assert h.shape == (2, length, 4)
    assert float(fake.detach().abs().max()) <= 1.0  # tanh output, inputs scaled to [-1, 1]


def test_paper_size_at_l100():
    model = BeatGAN(55)  # the paper's defaults: 32 -> ... -> 512, nz = 50, L = 100
    _, fake, h = model.generate(torch.randn(1, 100, 55))
    assert fake.shape == (1, 55, 100) and h.shape == (1, 100, 32)


def test_h_is_the_decoders_last_map_repeated_per_step():
    model = BeatGAN(3, window_size=16, **SMALL).eval()
    x = torch.randn(2, 16, 3)
    with torch.no_grad():
        feat = model.decoder_features(model.encoder(model.scaler(x).transpose(1, 2)))  # [B, 4, 8]
        h = model(x).h
    torch.testing.assert_close(h, feat.repeat_interleave(2, dim=-1).transpose(1, 2))


def test_a_window_too_short_is_refused_at_construction():
    with pytest.raises(ValueError, match="needs window_size >= 64"):
        build_embedder("beatgan", 3, window_size=32)
    with pytest.raises(ValueError, match="window_size"):
        MADCluster(embedder="beatgan", window_size=16).fit(make_series(200, 3))
    build_embedder("beatgan", 3, window_size=64)  # 5 layers: 32, 16, 8, 4, 2


def test_one_step_is_a_d_step_then_a_g_step_with_the_objective():
    torch.manual_seed(0)
    model = BeatGAN(3, window_size=16, **SMALL)
    x = torch.randn(4, 16, 3)
    model.init_from_data(lambda: iter([x]))
    opt_g, opt_d = model.configure_optimizers([], lr=1e-3, weight_decay=0.0)
    order = []
    for name, opt in (("G", opt_g), ("D", opt_d)):
        step = opt.step
        opt.step = lambda *a, _n=name, _s=step, **k: (order.append(_n), _s(*a, **k))[1]
    d_before = [p.detach().clone() for p in model.discriminator.parameters()]
    seen = []

    def objective(out):
        seen.append(out)
        return out.loss

    model.training_step(x, objective, [opt_g, opt_d])
    assert order == ["D", "G"] and len(seen) == 1
    assert seen[0].h.shape == (4, 16, 4) and seen[0].score.shape == (4, 16)
    assert any(not torch.equal(a, b) for a, b in zip(d_before, model.discriminator.parameters()))
    # G's own lr (1e-4, BeatGAN's) and the head's group at the detector's lr
    assert opt_g.param_groups[0]["lr"] == 1e-4 and opt_g.param_groups[0]["betas"] == (0.5, 0.999)


def test_discriminator_is_reinitialised_when_its_loss_collapses():
    torch.manual_seed(0)
    model = BeatGAN(3, window_size=16, d_reset_loss=1e9, **SMALL)  # every D loss counts as "< 5e-6"
    x = torch.randn(4, 16, 3)
    optimizers = model.configure_optimizers([], lr=1e-3, weight_decay=0.0)
    model.training_step(x, lambda out: out.loss, optimizers)
    model.training_step(x, lambda out: out.loss, optimizers)
    assert model.d_resets == 2
    weights = torch.cat(
        [
            m.weight.detach().flatten()
            for m in model.discriminator.modules()
            if isinstance(m, torch.nn.Conv1d)
        ]
    )
    assert abs(float(weights.std()) - 0.02) < 0.01  # freshly drawn from N(0, .02)


class CountingBeatGAN(BeatGAN):
    """Counts the G and D optimiser steps."""

    def configure_optimizers(self, head_params, *, lr, weight_decay):
        self.steps = {"G": 0, "D": 0}
        opt_g, opt_d = super().configure_optimizers(head_params, lr=lr, weight_decay=weight_decay)
        for name, opt in (("G", opt_g), ("D", opt_d)):
            step = opt.step

            def counted(*args, _n=name, _step=step, **kw):
                self.steps[_n] += 1
                return _step(*args, **kw)

            opt.step = counted
        return [opt_g, opt_d]


def test_one_d_and_one_g_step_per_batch_through_the_estimator():
    x = make_series(600, 3)
    embedder = CountingBeatGAN(3, window_size=16, **SMALL)
    model = MADCluster(
        embedder=embedder,
        window_size=16,
        stride=4,
        epochs=2,
        batch_size=32,
        random_state=0,
        validation_size=0.0,
    ).fit(x)
    n_batches = int(np.ceil(len(range(0, 600 - 16 + 1, 4)) / 32))
    emb = model.net_.embedder
    assert emb.steps == {"G": 2 * n_batches, "D": 2 * n_batches}
    assert emb.d_resets == 0 and np.isfinite(emb.last_d_loss)


def test_score_is_largest_at_an_injected_spike():
    torch.manual_seed(0)
    model = BeatGAN(3, window_size=16, **SMALL)
    x = torch.randn(4, 16, 3)
    model.init_from_data(lambda: iter([x]))
    spiked = x.clone()
    spiked[1, 9] += 10.0
    with torch.no_grad():
        out = model.eval()(spiked)
    real, fake, _ = model.generate(spiked)
    torch.testing.assert_close(out.score, (real - fake).pow(2).mean(1))
    assert int(out.score[1].argmax()) == 9
