"""Anomaly Transformer: the Gaussian prior, the association discrepancy, which side each minimax
phase trains, the two update schedules, lr halving, the score, and the paper's size."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch
from ptflops import get_model_complexity_info
from series_helpers import make_series
from torch import nn

from madcluster import MADCluster
from madcluster.embedders import AnomalyTransformer, build_embedder
from madcluster.embedders.anomaly_transformer import gaussian_prior, learned_sigma
from madcluster.embedders.attention import (
    DataEmbedding,
    discrepancy_losses,
    kl_rows,
    sinusoidal_positions,
    step_discrepancy,
    symmetric_kl,
)

SMALL = {"d_model": 8, "n_heads": 2, "n_layers": 1, "d_ff": 8}


def small(seed: int = 0, **kw) -> tuple[AnomalyTransformer, torch.Tensor]:
    torch.manual_seed(seed)
    return AnomalyTransformer(3, **{**SMALL, **kw}), torch.randn(4, 12, 3)


# ---------------------------------------------------------------------------- prior and sigma
def test_gaussian_prior_rows_sum_to_one_peak_on_the_diagonal_and_match_the_density():
    sigma = torch.tensor([[[0.3, 1.0, 2.0, 5.0, 1e-5]]])  # [B=1, H=1, L=5]
    prior = gaussian_prior(sigma)[0, 0]
    torch.testing.assert_close(prior.sum(-1), torch.ones(5))
    assert torch.equal(prior.argmax(-1), torch.arange(5))
    # row 1 (sigma 1): the normalised N(j; 1, 1) density over j = 0..4
    density = torch.tensor([math.exp(-((j - 1) ** 2) / 2) for j in range(5)])
    torch.testing.assert_close(prior[1], density / density.sum())
    assert float(prior[4, 4]) == pytest.approx(1.0)  # a vanishing sigma: all mass on the step itself
    assert torch.isfinite(prior).all()


def test_learned_sigma_is_the_official_transform_and_bounded():
    raw = torch.tensor([-1e4, 0.0, 1e4])
    sigma = learned_sigma(raw)
    assert float(sigma[1]) == pytest.approx(3 ** (0.5 + 1e-5) - 1)
    assert 0 < float(sigma[0]) < 1e-4 and float(sigma[2]) == pytest.approx(2.0, abs=1e-4)


# ---------------------------------------------------------------------------- discrepancy
def test_kl_is_zero_for_identical_maps_and_matches_a_hand_count():
    p = torch.softmax(torch.randn(2, 3, 4, 4), dim=-1)
    assert float(symmetric_kl(p, p).abs().max()) == 0.0
    a = torch.tensor([[[[0.5, 0.5]]]])  # [B, H, L=1, 2]
    b = torch.tensor([[[[0.9, 0.1]]]])
    eps = 1e-4
    by_hand = 0.5 * (math.log(0.5 + eps) - math.log(0.9 + eps)) + 0.5 * (
        math.log(0.5 + eps) - math.log(0.1 + eps)
    )
    assert float(kl_rows(a, b)) == pytest.approx(by_hand, rel=1e-5)
    assert float(symmetric_kl(a, b)) == pytest.approx(
        by_hand + float(kl_rows(b, a)), rel=1e-6
    ) and float(symmetric_kl(a, b)) > 0


def test_kl_averages_heads():
    p = torch.softmax(torch.randn(1, 2, 3, 3), dim=-1)
    q = torch.softmax(torch.randn(1, 2, 3, 3), dim=-1)
    per_head = [kl_rows(p[:, h : h + 1], q[:, h : h + 1]) for h in range(2)]
    torch.testing.assert_close(kl_rows(p, q), (per_head[0] + per_head[1]) / 2)


def test_data_embedding_is_circular_and_positions_are_sinusoidal():
    emb = DataEmbedding(2, 6)
    assert emb.conv.bias is None and emb.conv.padding_mode == "circular"
    x = torch.randn(1, 5, 2)
    rolled = torch.roll(x, 1, dims=1)  # circular conv commutes with a roll of the window
    pos = sinusoidal_positions(5, 6)
    torch.testing.assert_close(
        torch.roll(emb(x) - pos, 1, dims=1), emb(rolled) - pos, atol=1e-6, rtol=1e-5
    )
    assert float(pos[3, 0]) == pytest.approx(math.sin(3.0)) and float(pos[3, 1]) == pytest.approx(
        math.cos(3.0)
    )


# ---------------------------------------------------------------------------- minimax sides
def grads_of(model: nn.Module, loss: torch.Tensor) -> dict[str, torch.Tensor | None]:
    model.zero_grad(set_to_none=True)
    loss.backward(retain_graph=True)
    return {n: p.grad for n, p in model.named_parameters()}


def nonzero(grad: torch.Tensor | None) -> bool:
    return grad is not None and float(grad.abs().sum()) > 0


def test_each_minimax_phase_trains_only_its_own_side():
    """series_loss moves the learned attention (Q, K), never sigma (the prior is detached);
    prior_loss moves sigma, never Q or K (the series is detached)."""
    model, x = small()
    _, _, series, prior = model.encode(x)
    series_loss, prior_loss = discrepancy_losses(series, prior)
    assert float(series_loss.detach()) == pytest.approx(float(prior_loss.detach()))  # same value
    g = grads_of(model, series_loss)
    assert nonzero(g["layers.0.attention.query.weight"]) and nonzero(g["layers.0.attention.key.weight"])
    assert not nonzero(g["layers.0.attention.sigma.weight"])
    g = grads_of(model, prior_loss)
    assert nonzero(g["layers.0.attention.sigma.weight"])
    assert not nonzero(g["layers.0.attention.query.weight"])
    assert not nonzero(g["layers.0.attention.key.weight"])


def test_minimax_losses_by_their_definition():
    model, x = small(k=2.5)
    _, recon, series, prior = model.encode(x)
    loss1, loss2 = model.minimax_losses(x, recon, series, prior)
    rec = ((recon - x) ** 2).mean()
    disc = torch.stack([symmetric_kl(s, p).mean() for s, p in zip(series, prior)]).mean()
    torch.testing.assert_close(loss1, rec - 2.5 * disc)
    torch.testing.assert_close(loss2, rec + 2.5 * disc)


def frozen(model: nn.Module) -> list[torch.optim.Optimizer]:
    """An optimiser that keeps the weights, so the gradients left after a step can be compared."""
    return [torch.optim.SGD(model.parameters(), lr=0.0)]


def test_joint_step_applies_both_phases_and_the_objective_once():
    model, x = small(n_layers=2)
    seen = []
    model.training_step(x, lambda out: seen.append(out) or out.loss + out.h.pow(2).mean(), frozen(model))
    assert len(seen) == 1
    ref = copy.deepcopy(model)
    ref.zero_grad(set_to_none=True)
    h, recon, series, prior = ref.encode(x)
    loss1, loss2 = ref.minimax_losses(x, recon, series, prior)
    (loss1 + h.pow(2).mean() + loss2).backward()
    for (name, p), r in zip(model.named_parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad, r.grad, msg=name)


def test_alternating_step_zeroes_before_phase_two():
    """After the alternating step the gradients are phase 2's alone: nothing of phase 1 (loss1 and
    MADCluster's objective) leaks into it."""
    model, x = small(n_layers=2, minimax="alternating")
    calls = []
    model.training_step(x, lambda out: calls.append(1) or out.loss + out.h.pow(2).mean(), frozen(model))
    assert calls == [1]
    ref = copy.deepcopy(model)
    ref.zero_grad(set_to_none=True)
    _, recon, series, prior = ref.encode(x)
    ref.minimax_losses(x, recon, series, prior)[1].backward()
    for (name, p), r in zip(model.named_parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad, r.grad, msg=name)


def test_the_step_trains_the_head_through_the_objective_in_both_schedules():
    for minimax in ("joint", "alternating"):
        model, x = small(minimax=minimax)
        center = nn.Parameter(torch.zeros(8))
        optimizers = model.configure_optimizers([center], lr=1e-2, weight_decay=0.0)
        before = copy.deepcopy(model.state_dict())
        model.training_step(x, lambda out, c=center: out.loss + (out.h - c).pow(2).mean(), optimizers)
        assert float(center.detach().abs().sum()) > 0
        assert any(not torch.equal(before[k], v) for k, v in model.state_dict().items())


def test_unknown_schedule_and_bad_heads_are_refused():
    with pytest.raises(ValueError, match="minimax"):
        AnomalyTransformer(3, minimax="both")
    with pytest.raises(ValueError, match="divisible"):
        AnomalyTransformer(3, d_model=10, n_heads=4)


# ---------------------------------------------------------------------------- learning rate
def test_model_lr_is_1e4_halved_after_each_epoch_and_the_head_keeps_its_own():
    model, _ = small()
    head = nn.Parameter(torch.zeros(8))
    (opt,) = model.configure_optimizers([head], lr=1e-3, weight_decay=0.0)
    own, head_group = opt.param_groups
    assert own["lr"] == pytest.approx(1e-4) and head_group["lr"] == pytest.approx(1e-3)
    for epoch, expected in ((1, 5e-5), (2, 2.5e-5), (2, 2.5e-5), (3, 1.25e-5)):
        model.on_epoch_end(epoch)
        assert own["lr"] == pytest.approx(expected)
        assert head_group["lr"] == pytest.approx(1e-3)
    none_model = AnomalyTransformer(3, lr=None, **SMALL)
    (opt,) = none_model.configure_optimizers([], lr=3e-3, weight_decay=0.0)
    assert opt.param_groups[0]["lr"] == pytest.approx(3e-3)


# ---------------------------------------------------------------------------- h and the score
def test_h_is_the_normalised_encoder_output_and_the_score_is_discrepancy_times_error():
    model, x = small(n_layers=2)
    model.eval()
    with torch.no_grad():
        out = model(x)
        h, recon, series, prior = model.encode(x)
    assert out.h.shape == (4, 12, 8)
    torch.testing.assert_close(out.h, h)
    torch.testing.assert_close(model.projection(out.h), recon)  # h is the projection's input
    torch.testing.assert_close(out.h.mean(-1), torch.zeros(4, 12), atol=1e-5, rtol=0)  # LayerNorm
    error = ((x - recon) ** 2).mean(-1)
    weight = torch.softmax(-50.0 * step_discrepancy(series, prior), dim=-1)
    torch.testing.assert_close(out.score, weight * error)
    torch.testing.assert_close(out.loss, error.mean())
    torch.testing.assert_close((out.score / error).sum(-1), torch.ones(4))
    assert float((out.score / error).std(-1).min()) > 0  # per step, not the constant 1/L


def test_no_device_is_hard_coded():
    """The whole forward runs on the meta device: every tensor it makes follows the input."""
    model = AnomalyTransformer(3, **SMALL).to("meta")
    out = model(torch.empty(2, 12, 3, device="meta"))
    assert out.h.device.type == out.score.device.type == "meta"


def test_paper_size_within_one_percent():
    """4.86M parameters / 485.2M MACs at D = 55, L = 100 (the paper's table), counted by ptflops as
    benchmarks/tables/compute_table.py does."""
    torch.manual_seed(0)
    model = build_embedder("anomaly_transformer", 55, window_size=100).eval()

    class Score(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.model(x).score

    macs, params = get_model_complexity_info(
        Score(),
        (100, 55),
        input_constructor=lambda shape: {"x": torch.zeros(1, *shape)},
        as_strings=False,
        print_per_layer_stat=False,
        backend="pytorch",
    )
    assert params == pytest.approx(4.86e6, rel=0.01)
    assert macs == pytest.approx(485.2e6, rel=0.01)


@pytest.mark.parametrize("mode", ["base-only", "full"])
def test_huge_values_stay_finite_through_the_estimator(mode):
    x = make_series(300, 3) * 1e8 + 1e9
    x[150] *= 1e4  # a test-time outlier far outside the training range
    model = MADCluster(
        embedder="anomaly_transformer", embedder_params=SMALL, window_size=16, stride=4,
        epochs=2, batch_size=32, random_state=0, mode=mode,
    ).fit(x[:140])
    scores = model.decision_function(x)
    assert np.isfinite(scores).all() and np.isfinite(model.history_["train_loss"]).all()
