"""DCdetector: patch-size validation, the dual attention maps and their upsampling, which branch
each half of the contrastive loss trains, h, the per-step score, and the peak memory figure."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from series_helpers import make_series
from torch import nn

from madcluster import MADCluster
from madcluster.embedders import DCdetector, build_embedder
from madcluster.embedders.attention import discrepancy_losses, step_discrepancy, symmetric_kl
from madcluster.embedders.dcdetector import (
    DualAttentionLayer,
    check_patch_sizes,
    instance_normalise,
)

SMALL = {"d_model": 8, "n_layers": 2, "patch_sizes": (2, 4)}


def small(seed: int = 0, **kw) -> tuple[DCdetector, torch.Tensor]:
    torch.manual_seed(seed)
    return DCdetector(3, window_size=16, **{**SMALL, **kw}), torch.randn(4, 16, 3)


# ---------------------------------------------------------------------------- validation
@pytest.mark.parametrize("sizes", [(3,), (2, 7), (1,), (16,), ()])
def test_patch_sizes_that_do_not_divide_the_window_are_refused_with_the_divisors(sizes):
    with pytest.raises(ValueError, match=r"divisors of 16: \[2, 4, 8\]"):
        check_patch_sizes(sizes, 16)


def test_default_patch_sizes_fit_l100_and_a_bad_window_fails_at_construction():
    assert build_embedder("dcdetector", 3, window_size=100).patch_sizes == (2, 5, 10)
    with pytest.raises(ValueError, match="divide window_size=16"):
        build_embedder("dcdetector", 3, window_size=16)
    with pytest.raises(ValueError, match="divide window_size=16"):
        MADCluster(embedder="dcdetector", window_size=16, epochs=1).fit(make_series(200, 3))
    with pytest.raises(ValueError, match="score"):
        DCdetector(3, window_size=16, patch_sizes=(2,), score="mean")


# ---------------------------------------------------------------------------- the maps
def test_maps_are_row_stochastic_blocky_and_periodic():
    model, x = small()
    series, prior = model.associations(instance_normalise(x))
    assert len(series) == len(prior) == 2 * 2  # layers x patch sizes
    for i, (s, p) in enumerate(zip(series, prior)):
        patch = (2, 4)[i // 2]
        assert s.shape == p.shape == (4, 1, 16, 16)
        torch.testing.assert_close(s.sum(-1), torch.ones(4, 1, 16))
        torch.testing.assert_close(p.sum(-1), torch.ones(4, 1, 16))
        # patch-wise: constant on each patch x patch block; in-patch: periodic with period p
        blocks = s.unflatten(-1, (-1, patch)).unflatten(-3, (-1, patch))
        torch.testing.assert_close(blocks, blocks[..., :1, :, :1].expand_as(blocks))
        torch.testing.assert_close(p, torch.roll(p, shifts=(patch, patch), dims=(-2, -1)))


def test_attention_is_softmax_of_q_dot_k():
    torch.manual_seed(0)
    layer = DualAttentionLayer(6, 2)
    tokens = torch.randn(3, 5, 6)
    q, k = layer.query(tokens).view(3, 5, 2, 3), layer.key(tokens).view(3, 5, 2, 3)
    expected = torch.softmax(torch.einsum("bthe,bshe->bhts", q, k) / 3**0.5, dim=-1)
    torch.testing.assert_close(layer.attend([tokens])[0], expected)


def test_one_head_maps_in_the_embedding_coordinates_equal_the_explicit_ones():
    """The default one-head path (bilinear form in 3c + T coordinates) drops only terms constant
    along a row: the maps and their gradients equal those of embedding the tokens first."""
    model, x = small()
    for layer in model.layers:
        nn.init.normal_(layer.query.bias)
        nn.init.normal_(layer.key.bias)
    z = instance_normalise(x)
    fast, slow = model.associations(z), model.associations(z, explicit=True)
    for a, b in zip(fast[0] + fast[1], slow[0] + slow[1]):
        torch.testing.assert_close(a, b)
    grads = []
    for explicit in (False, True):
        model.zero_grad(set_to_none=True)
        series, prior = model.associations(z, explicit=explicit)
        (discrepancy_losses(series, prior)[1] - discrepancy_losses(series, prior)[0]).backward()
        grads.append({n: p.grad for n, p in model.named_parameters() if p.grad is not None})
    assert grads[0].keys() <= grads[1].keys()
    for name, grad in grads[1].items():  # the key bias gets no gradient: it cancels in the softmax
        torch.testing.assert_close(grads[0].get(name, torch.zeros_like(grad)), grad, msg=name)


def test_channels_are_attended_independently_then_averaged():
    """Each channel's maps depend on that channel alone; the model's maps are their mean."""
    model, x = small()
    z = instance_normalise(x)
    per_channel = [model.associations(z[..., c : c + 1].expand(-1, -1, 3)) for c in range(3)]
    series, prior = model.associations(z)
    for k in range(len(series)):
        torch.testing.assert_close(series[k], sum(pc[0][k] for pc in per_channel) / 3)
        torch.testing.assert_close(prior[k], sum(pc[1][k] for pc in per_channel) / 3)


def test_instance_normalisation_is_safe_on_constant_and_huge_channels():
    x = torch.randn(2, 16, 3)
    x[..., 1] = 7.0
    x[..., 2] = x[..., 2] * 1e6 + 1e9
    z = instance_normalise(x)
    assert torch.isfinite(z).all() and float(z[..., 1].abs().max()) == 0.0
    assert float(z[..., 2].std(1).mean()) == pytest.approx(1.0, rel=0.05)


# ---------------------------------------------------------------------------- the objective
def test_each_half_of_the_contrastive_loss_trains_only_its_own_branch():
    """series_loss (patch-wise, in-patch detached) reaches only the patch-wise embeddings; prior_loss
    only the in-patch ones; neither reaches h's embedding. The loss is prior - series: value 0."""
    model, x = small()
    series, prior = model.associations(instance_normalise(x))
    series_loss, prior_loss = discrepancy_losses(series, prior)

    def grads(loss: torch.Tensor) -> dict[str, bool]:
        model.zero_grad(set_to_none=True)
        loss.backward(retain_graph=True)
        return {
            n: p.grad is not None and float(p.grad.abs().sum()) > 0
            for n, p in model.named_parameters()
        }

    g = grads(series_loss)
    assert g["patch_wise_embedding.0.conv.weight"] and not g["in_patch_embedding.0.conv.weight"]
    g = grads(prior_loss)
    assert g["in_patch_embedding.0.conv.weight"] and not g["patch_wise_embedding.0.conv.weight"]
    out = model(x)
    assert float(out.loss.detach()) == 0.0
    g = grads(out.loss)
    assert not g["embedding.conv.weight"] and g["layers.0.query.weight"]
    model.zero_grad(set_to_none=True)
    series_loss.backward(retain_graph=True)
    expected = -model.patch_wise_embedding[0].conv.weight.grad.clone()
    model.zero_grad(set_to_none=True)
    out.loss.backward()
    torch.testing.assert_close(model.patch_wise_embedding[0].conv.weight.grad, expected)


# ---------------------------------------------------------------------------- h and the score
def test_h_is_the_embedding_of_the_normalised_window():
    model, x = small()
    out = model(x)
    assert out.h.shape == (4, 16, 8)
    torch.testing.assert_close(out.h, model.embedding(instance_normalise(x)))


def test_score_is_a_per_step_softmax_of_the_discrepancy_not_its_window_mean():
    model, x = small()
    with torch.no_grad():
        out = model.eval()(x)
        disc = step_discrepancy(*model.associations(instance_normalise(x)))
    assert out.score.shape == (4, 16)
    torch.testing.assert_close(out.score, torch.softmax(-50.0 * disc, dim=-1))
    torch.testing.assert_close(out.score.sum(-1), torch.ones(4))
    assert float(out.score.std(-1).min()) > 1e-3  # varies across steps: not the constant 1/L
    flipped = DCdetector(3, window_size=16, score="discrepancy", **SMALL)
    flipped.load_state_dict(model.state_dict())
    with torch.no_grad():
        torch.testing.assert_close(flipped.eval()(x).score, torch.softmax(50.0 * disc, dim=-1))
    # the discrepancy sums symKL over layers and patch sizes
    series, prior = model.associations(instance_normalise(x))
    torch.testing.assert_close(disc, sum(symmetric_kl(s, p) for s, p in zip(series, prior)))


def sine_windows(n: int, length: int, seed: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    t = torch.arange(n * 5 + length, dtype=torch.float32)
    series = torch.sin(t / 3.0)[:, None] + 0.05 * torch.randn(len(t), 1, generator=gen)
    return series.unfold(0, length, 5).permute(0, 2, 1)[:n]


def spiked_scores(score: str, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Scores of 50 sine windows with a +3 spike at a random step, after 40 Adam steps on the
    clean sine (L = 100, default patch sizes, one channel); and where the spikes are."""
    torch.manual_seed(seed)
    length = 100
    train = sine_windows(300, length, seed=seed)
    model = DCdetector(1, window_size=length, d_model=8, n_layers=1, score=score)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(40):
        opt.zero_grad()
        model(train[torch.randint(0, len(train), (32,))]).loss.backward()
        opt.step()
    test = sine_windows(50, length, seed=seed + 1)
    where = torch.randint(0, length, (50,), generator=torch.Generator().manual_seed(seed + 2))
    test[torch.arange(50), where, 0] += 3.0
    with torch.no_grad():
        return model.eval()(test).score, where


def rank_auc(score: torch.Tensor, where: torch.Tensor) -> float:
    """Per window, the fraction of normal steps scored below the anomalous one (ties half), averaged."""
    n, length = score.shape
    at = score[torch.arange(n), where][:, None]
    normal = torch.ones_like(score, dtype=torch.bool)
    normal[torch.arange(n), where] = False
    others = score[normal].view(n, length - 1)
    return float(((others < at).float() + 0.5 * (others == at).float()).mean())


def test_rank_auc_by_hand():
    score = torch.tensor([[0.1, 0.5, 0.1, 0.3], [0.2, 0.2, 0.2, 0.4]])
    # window 0: 0.5 beats all three; window 1: 0.2 ties two, beats none -> (1 + 1/3) / 2
    assert rank_auc(score, torch.tensor([1, 0])) == pytest.approx((1 + 1 / 3) / 2)


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason="known limitation, measured: after brief training on a sine, DCdetector's per-step "
    "score ranks an injected spike at chance (per-window AUC 0.43-0.53 over 5 seeds, either sign); "
    "the temperature-50 softmax puts nearly all of a window's mass on one step",
)
def test_score_ranks_an_injected_spike_above_normal_steps_after_brief_training():
    score, where = spiked_scores("official")
    assert float(score.std(-1).min()) > 0  # it does vary across steps (not the constant 1/L)
    assert rank_auc(score, where) > 0.6


# ---------------------------------------------------------------------------- estimator
def test_runs_alone_and_with_madcluster_on_the_same_series():
    x = make_series(300, 3)
    for mode in ("base-only", "full"):
        model = MADCluster(
            embedder="dcdetector", embedder_params=SMALL, window_size=16, stride=4, epochs=1,
            batch_size=32, random_state=0, mode=mode,
        ).fit(x)
        scores = model.decision_function(x)
        assert np.isfinite(scores).all() and np.std(scores) > 0


def test_no_device_is_hard_coded():
    model = DCdetector(3, window_size=16, **SMALL).to("meta")
    out = model(torch.empty(2, 16, 3, device="meta"))
    assert out.h.device.type == out.score.device.type == "meta"


@pytest.mark.parametrize("mode", ["base-only", "full"])
def test_huge_values_stay_finite_through_the_estimator(mode):
    x = make_series(300, 3) * 1e8 + 1e9
    x[150] *= 1e4  # a test-time outlier far outside the training range
    model = MADCluster(
        embedder="dcdetector", embedder_params=SMALL, window_size=16, stride=4, epochs=2,
        batch_size=32, random_state=0, mode=mode,
    ).fit(x[:140])
    scores = model.decision_function(x)
    assert np.isfinite(scores).all() and np.isfinite(model.history_["train_loss"]).all()


def test_data_embedding_is_linear_in_its_unfolded_input():
    """DataEmbedding(x) = [unfold(x), one-hot steps] @ basis: what the one-head path relies on."""
    from madcluster.embedders.attention import DataEmbedding

    emb = DataEmbedding(3, 8)
    x = torch.randn(2, 5, 3)
    coords = torch.cat([emb.unfold(x), torch.eye(5).expand(2, 5, 5)], dim=-1)
    torch.testing.assert_close(coords @ emb.basis(5), emb(x))
