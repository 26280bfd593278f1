"""The appendix's multi-cluster head (k > 1): Eq. 8-11 on hand-sized cases and end to end."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from series_helpers import make_series

from madcluster import MADCluster
from madcluster.method import MethodConfig, build_head
from madcluster.method.multi_cluster import (
    MultiClusterHead,
    dec_target,
    kl_terms,
    student_t_assignment,
)


def test_student_t_assignment_by_hand():
    h = torch.tensor([[[0.0, 0.0], [2.0, 0.0]]])  # one window, two steps
    centers = torch.tensor([[0.0, 0.0], [1.0, 0.0]])
    q = student_t_assignment(h, centers)
    # step 0: kernels 1 and 1/2 -> 2/3, 1/3; step 1: kernels 1/5 and 1/2 -> 2/7, 5/7
    assert torch.allclose(q[0, 0], torch.tensor([2 / 3, 1 / 3]))
    assert torch.allclose(q[0, 1], torch.tensor([2 / 7, 5 / 7]))


def test_dec_target_sharpens_and_normalises():
    q = torch.tensor([[[0.6, 0.4], [0.7, 0.3], [0.2, 0.8]]])
    p = dec_target(q)
    f = q.sum(dim=1, keepdim=True)  # cluster frequencies over the window's steps
    expected = (q**2 / f) / (q**2 / f).sum(-1, keepdim=True)
    assert torch.allclose(p, expected) and torch.allclose(p.sum(-1), torch.ones(1, 3))
    assert not p.requires_grad
    kl = kl_terms(p, q, 1e-12)
    assert kl.shape == (1, 3) and torch.all(kl >= 0)
    assert torch.allclose(kl_terms(q, q, 1e-12), torch.zeros(1, 3), atol=1e-7)


def test_build_head_picks_the_variant():
    assert isinstance(build_head(4, MethodConfig(n_clusters=3)), MultiClusterHead)
    with pytest.raises(ValueError, match="n_clusters"):
        MethodConfig(n_clusters=0)


def test_score_is_kl_plus_distance_to_assigned_center():
    head = MultiClusterHead(2, MethodConfig(n_clusters=2))
    with torch.no_grad():
        head.centers.copy_(torch.tensor([[0.0, 0.0], [3.0, 0.0]]))
    h = torch.tensor([[[0.5, 0.0], [2.0, 1.0], [10.0, 0.0]]])
    terms = head.score_terms(h)
    assert torch.allclose(terms["distance"], torch.tensor([[0.25, 2.0, 49.0]]))
    q = student_t_assignment(h, head.centers)
    assert torch.allclose(terms["cluster"], kl_terms(dec_target(q), q, head.config.eps))
    assert torch.allclose(head.score(h), terms["cluster"] + terms["distance"])


def test_k3_end_to_end_save_load(tmp_path):
    x = make_series(900, 3)
    model = MADCluster(n_clusters=3, window_size=20, stride=4, epochs=2, random_state=0,
                       embedder_params={"hidden_size": 8, "n_layers": 2}).fit(x)
    assert model.net_.head.centers.shape == (3, 8)
    assert {"smallest_cluster", "assignment_entropy"} <= set(model.history_)
    scores = model.decision_function(x)
    assert scores.shape == (900,) and np.isfinite(scores).all()
    model.save(tmp_path / "k3.mcz")
    again = MADCluster.load(tmp_path / "k3.mcz")
    np.testing.assert_allclose(again.decision_function(x), scores, rtol=1e-6)
