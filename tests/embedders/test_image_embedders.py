"""The image embedders through the Base Embedder contract: shapes, finite losses and maps, layouts,
PyramidFlow's invertibility and kept volume, RD4AD's frozen teacher and torchvision-keyed weights."""

from __future__ import annotations

import pytest
import torch

from madcluster.embedders import IMAGE_EMBEDDERS, build_image_embedder
from madcluster.embedders.resnet import ResNetEncoder
from madcluster.exceptions import ModelFileError
from madcluster.method.config import MethodConfig
from madcluster.method.heads import build_head

NAMES = sorted(IMAGE_EMBEDDERS)
SIZE, B = 32, 3


def make(name: str, channels: int = 3, **kw):
    torch.manual_seed(0)
    params = {**IMAGE_EMBEDDERS[name].test_params, **kw}
    return build_image_embedder(name, channels, params.pop("image_size"), **params)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("layout", ["channels", "pixels"])
@pytest.mark.parametrize("channels", [1, 3])
def test_shapes_layouts_and_finite_outputs(name, layout, channels):
    emb = make(name, channels, layout=layout)
    x = torch.rand(B, channels, SIZE, SIZE)
    emb.init_from_data(lambda: iter([x]))
    c, hh, ww = emb.feature_shape
    for training in (True, False):
        out = emb.train(training)(x)
        length = c if layout == "channels" else hh * ww
        assert out.h.shape == (B, length, emb.out_features)
        assert out.score.shape == (B, SIZE * SIZE) and torch.isfinite(out.score).all()
        assert out.loss.dim() == 0 and torch.isfinite(out.loss)
    terms = torch.ones(B, out.h.shape[1])
    assert (emb.head_map(terms) is None) == (layout == "channels")


@pytest.mark.parametrize("name", NAMES)
def test_h_has_unit_mean_norm_after_init_and_head_gradient_reaches_it(name):
    emb = make(name)
    x = torch.rand(B, 3, SIZE, SIZE)
    emb.init_from_data(lambda: iter([x]))
    h = emb.eval()(x).h
    assert float(h.detach().norm(dim=-1).mean()) == pytest.approx(1.0, rel=1e-4)
    head = build_head(emb.out_features, MethodConfig())
    head.start(lambda: iter([h.detach()]))
    emb.train()
    out = emb(x)
    head.loss(out.h, out.loss).total.backward()
    assert head.center.grad.abs().sum() > 0
    trained = [p for p in emb.parameters() if p.requires_grad and p.grad is not None]
    assert trained, "the head's loss reaches the embedder"


@pytest.mark.parametrize("name", NAMES)
def test_detach_h_stops_only_the_heads_gradient(name):
    x = torch.rand(B, 3, SIZE, SIZE)
    grads = []
    for detach in (False, True):
        emb = make(name, detach_h=detach).train()
        emb.h_scale.fill_(1.0)
        out = emb(x)
        (out.h.pow(2).sum() + 0.0 * out.loss).backward()  # a loss on h (the base loss only keeps a graph)
        grads.append(sum(float(p.grad.abs().sum()) for p in emb.parameters() if p.grad is not None))
    assert grads[0] > 0 and grads[1] == 0


def test_pyramidflow_is_invertible_and_keeps_volume():
    emb = make("pyramidflow", blocks=2).eval()
    with torch.no_grad():
        for p in emb.parameters():
            p.add_(0.1 * torch.randn_like(p))  # away from the identity start
    x = torch.rand(2, 3, SIZE, SIZE, dtype=torch.float64)
    emb = emb.double()
    with torch.no_grad():
        torch.testing.assert_close(emb.decode(emb.encode(x)), x, atol=1e-9, rtol=0)
    # log|det J| of the coupling blocks is 0: check on a tiny input by the full Jacobian
    small = make("pyramidflow", image_size=8, blocks=1, hidden=4).double().eval()
    with torch.no_grad():
        for p in small.parameters():
            p.add_(0.3 * torch.randn_like(p))
    bands = [b[0] for b in small.pyramid(torch.rand(1, 1 * 3, 8, 8, dtype=torch.float64))]
    shapes = [b.shape for b in bands]

    def flow(flat: torch.Tensor) -> torch.Tensor:
        parts, i = [], 0
        for s in shapes:
            parts.append(flat[i : i + s.numel()].reshape(1, *s))
            i += s.numel()
        for block in small.blocks:
            parts = block(parts)
        return torch.cat([p.flatten() for p in parts])

    jac = torch.autograd.functional.jacobian(flow, torch.cat([b.flatten() for b in bands]))
    assert torch.linalg.slogdet(jac)[1].item() == pytest.approx(0.0, abs=1e-8)


def test_rd4ad_teacher_is_frozen_and_stays_in_eval():
    emb = make("rd4ad").train()
    assert not any(p.requires_grad for p in emb.teacher.parameters())
    assert not emb.teacher.training and emb.down1.training
    x = torch.rand(B, 3, SIZE, SIZE)
    emb.init_from_data(lambda: iter([x]))  # a random teacher's batch-norm statistics are set here
    assert emb.teacher.bn1.num_batches_tracked > 0
    before = {k: v.clone() for k, v in emb.teacher.state_dict().items()}
    emb.train()(x).loss.backward()
    after = emb.teacher.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)


@pytest.mark.slow
def test_rd4ad_loads_torchvision_keyed_weights(tmp_path):
    source = ResNetEncoder("resnet18")
    state = {k: torch.randn_like(v) if v.is_floating_point() else v for k, v in source.state_dict().items()}
    state["layer4.0.conv1.weight"] = torch.zeros(512, 256, 3, 3)  # present in torchvision files: ignored
    state["fc.weight"] = torch.zeros(1000, 512)
    path = tmp_path / "resnet18.pth"
    torch.save(state, path)
    emb = make("rd4ad", weights=str(path))
    x = torch.rand(B, 3, SIZE, SIZE)
    emb.init_from_data(lambda: iter([x]))
    torch.testing.assert_close(emb.teacher.layer2[1].conv2.weight, state["layer2.1.conv2.weight"])
    torch.save({"conv1.weight": torch.zeros(3)}, path)
    with pytest.raises(ModelFileError, match="does not match the teacher"):
        make("rd4ad", weights=str(path)).init_from_data(lambda: iter([x]))
    with pytest.raises(ModelFileError, match="not found"):
        make("rd4ad", weights=str(tmp_path / "none.pth")).init_from_data(lambda: iter([x]))


def test_bad_construction_is_refused():
    with pytest.raises(ValueError, match="multiple of 32"):
        build_image_embedder("rd4ad", 3, 48)
    with pytest.raises(ValueError, match="unknown layout"):
        build_image_embedder("pyramidflow", 3, 32, layout="rows")
    with pytest.raises(ValueError, match="unknown image embedder"):
        build_image_embedder("realnet", 3, 32)


@pytest.mark.parametrize(("arch", "block", "in_planes", "width", "blocks", "torchvision_total"), [
    ("resnet18", "basic", 256, 64, 2, 11_689_512),
    ("wide_resnet50_2", "bottleneck", 1024, 128, 3, 68_883_240),
])
def test_teacher_matches_torchvision_parameter_counts(arch, block, in_planes, width, blocks, torchvision_total):
    """Stem + stages 1-3, plus a stage 4 and the 1000-class fc, count torchvision's published totals."""
    from madcluster.embedders.resnet import BLOCKS, make_stage

    count = lambda m: sum(p.numel() for p in m.parameters())
    stage4 = make_stage(BLOCKS[block], in_planes, 512, blocks, 2, width)
    fc = 512 * BLOCKS[block].expansion * 1000 + 1000
    assert count(ResNetEncoder(arch)) + count(stage4) + fc == torchvision_total
