"""Every registered embedder through the Base Embedder contract and the MADCluster estimator.

Each embedder class may carry ``test_params`` (a small configuration); a new registered model gets
these tests without writing any.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
from series_helpers import make_series

from madcluster import MADCluster
from madcluster.embedders import EMBEDDERS, ModuleEmbedder, build_embedder, embedder_name
from madcluster.estimator.fitted import score_terms
from madcluster.method.config import MethodConfig
from madcluster.method.heads import build_head
from madcluster.score.input_terms import DEFAULT_INPUT_TERMS

NAMES = sorted(EMBEDDERS)
L, D, B = 16, 3, 4


def params_of(name: str) -> dict:
    return dict(getattr(EMBEDDERS[name], "test_params", {}))


def make(name: str):
    torch.manual_seed(0)
    return build_embedder(name, D, window_size=L, **params_of(name))


def windows(n: int = B, seed: int = 0) -> torch.Tensor:
    x = torch.from_numpy(make_series(n * L, D, seed=seed)).reshape(n, L, D)
    return (x - x.mean()) / x.std()


def has_own_loss(name: str) -> bool:
    """Whether the embedder is a detector in its own right (base-only mode needs its loss/score)."""
    with torch.no_grad():
        return make(name)(windows()).loss is not None


def detector(name: str, **kw) -> MADCluster:
    settings = {"embedder": name, "embedder_params": params_of(name), "window_size": L, "epochs": 1}
    settings.update(stride=4, random_state=0, batch_size=32)
    settings.update(kw)
    return MADCluster(**settings)


@pytest.mark.parametrize("name", NAMES)
def test_class_attributes_describe_the_constructor(name):
    """What the estimator reads from the class instead of special-casing names is true of it."""
    cls = EMBEDDERS[name]
    signature = inspect.signature(cls).parameters
    assert cls.window_dependent == ("window_size" in signature)
    assert set(cls.paper_params) <= set(signature) and set(cls.size_options) <= set(signature)
    assert isinstance(cls.default_roughness_window, int) and cls.default_roughness_window >= 0


@pytest.mark.parametrize("name", NAMES)
def test_output_shapes_and_finite_loss(name):
    emb = make(name)
    x = windows()
    emb.init_from_data(lambda: iter([x]))
    for training in (True, False):
        emb.train(training)
        out = emb(x)
        assert out.h.shape == (B, L, emb.out_features)
        assert torch.isfinite(out.h).all()
        if out.loss is not None:
            assert out.loss.dim() == 0 and torch.isfinite(out.loss)
        if out.score is not None:
            assert out.score.shape == (B, L) and torch.isfinite(out.score).all()


@pytest.mark.parametrize("name", NAMES)
def test_causal_flag_holds(name):
    """A causal embedder's h_t must not change when steps after t change."""
    emb = make(name).eval()
    if not emb.causal:
        pytest.skip("not causal")
    x = windows()
    y = x.clone()
    y[:, 10:] += 3.0
    with torch.no_grad():
        torch.testing.assert_close(emb(x).h[:, :10], emb(y).h[:, :10])


@pytest.mark.parametrize("name", NAMES)
def test_gradients_reach_the_head_center_and_the_step_moves_it(name):
    emb = make(name)
    x = windows()
    emb.init_from_data(lambda: iter([x]))
    head = build_head(emb.out_features, MethodConfig())
    head.start(lambda: iter([emb.eval()(x).h.detach()]))
    emb.train()
    out = emb(x)
    head.loss(out.h, out.loss).total.backward()
    assert head.center.grad is not None and head.center.grad.abs().sum() > 0

    emb.zero_grad(set_to_none=True)
    head.zero_grad(set_to_none=True)
    optimizers = emb.configure_optimizers(head.parameters(), lr=1e-2, weight_decay=0.0)
    before = head.center.detach().clone()
    calls = []

    def objective(output):
        calls.append(1)
        return head.loss(output.h, output.loss).total

    loss = emb.training_step(x, objective, optimizers, epoch=2)
    assert torch.isfinite(loss) and not loss.requires_grad
    assert len(calls) == 1, "the MADCluster objective goes into exactly one phase"
    assert not torch.equal(before, head.center.detach()), "head params in the objective's optimiser"


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_one_epoch_through_the_estimator(name, tmp_path):
    x = make_series(400, D)
    model = detector(name).fit(x)
    scores = model.decision_function(x)
    assert scores.shape == (400,) and np.isfinite(scores).all()
    assert all(np.isfinite(v) for k, v in model.history_.items() if k != "val_loss" for v in v)

    path = tmp_path / f"{name}.madcluster"
    model.save(path)
    np.testing.assert_array_equal(MADCluster.load(path).decision_function(x), scores)

    again = detector(name).fit(x)
    np.testing.assert_array_equal(again.decision_function(x), scores)
    np.testing.assert_array_equal(again.decision_function(x), scores)  # scoring is repeatable


@pytest.mark.parametrize("name", NAMES)
def test_base_only_mode_uses_the_models_own_score(name):
    if not has_own_loss(name):
        with pytest.raises(ValueError, match="base-only"):
            detector(name, mode="base-only").fit(make_series(400, D))
        return
    x = make_series(400, D)
    model = detector(name, mode="base-only", input_terms=None).fit(x)  # the base model alone
    terms = score_terms(model.model_, x)
    assert set(terms) == {"base"}
    # causal models calibrate their warm-up rows (madcluster.estimator.warmup); the rest is the base score
    steady = model.window_size - model.model_.grid.score_stride if model.net_.embedder.causal else 0
    np.testing.assert_array_equal(model.decision_function(x)[steady:], terms["base"][steady:])
    assert np.isfinite(model.history_["train_loss"]).all()


def test_base_only_and_full_add_the_same_input_terms():
    """Table 1's two sides differ by MADCluster alone: both fit the same input terms on the rows."""
    x = make_series(400, D)
    alone, full = (detector("usad", mode=mode).fit(x) for mode in ("base-only", "full"))
    names = [t.name for t in full.input_terms_]
    assert [t.name for t in alone.input_terms_] == names == list(DEFAULT_INPUT_TERMS)
    for a, b in zip(alone.input_terms_, full.input_terms_):
        np.testing.assert_allclose(a.values(x), b.values(x))
    assert alone.part_weights_ == full.part_weights_

@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("kind", ["all-one-value", "constant-channel"])
def test_no_nan_on_adversarial_series(name, kind):
    x = make_series(300, D)
    if kind == "all-one-value":
        x = np.full_like(x, 7.0)
    else:
        x[:, 1] = -3.0
    for mode in ("full", "base-only") if has_own_loss(name) else ("full",):
        model = detector(name, mode=mode, epochs=2).fit(x)
        assert np.isfinite(model.decision_function(x)).all()
        assert np.isfinite(model.history_["train_loss"]).all()


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_bfloat16_mixed_precision_trains_and_scores_like_float32(name):
    """``precision="bfloat16"``: every embedder fits and scores under autocast, the scores are
    finite float64 and rank the steps as the float32 model of the same seed does."""
    series = make_series(400, D, seed=1)
    scores = {}
    for precision in ("float32", "bfloat16"):
        model = detector(name, precision=precision, mode="full").fit(series)
        scores[precision] = model.decision_function(series)
        assert scores[precision].dtype == np.float64 and np.isfinite(scores[precision]).all()
    ranks = [np.argsort(np.argsort(s)) for s in scores.values()]
    assert np.corrcoef(*ranks)[0, 1] > 0.5


def test_every_embedder_is_named_as_registered_and_a_custom_module_by_its_class():
    """Messages name a fitted model's embedder by its registered name (the name the user gave)."""
    for name in EMBEDDERS:
        assert embedder_name(build_embedder(name, 3, window_size=100)) == name
    assert embedder_name(ModuleEmbedder(torch.nn.Linear(3, 4), out_features=4)) == "Linear"
