"""How the head's named terms make the own score (:class:`~madcluster.estimator.fitted.HeadScore`):
the numpy path and the torch path (what the ONNX graph holds) against the definition, for each
scaling and base combination. Found by the mutation run of ``docs/mutation.md``: the torch path's
base combination could be dropped unnoticed (every exported model with a base term standardised)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from madcluster.estimator.fitted import HeadScore

rng = np.random.default_rng(0)
TERMS = {"distance": rng.normal(2.0, 0.5, 40), "entropy": rng.normal(-1.0, 2.0, 40)}
BASE = rng.normal(5.0, 3.0, 40)
STATS = {"distance": (2.1, 0.4), "entropy": (-0.8, 1.9), "base": (4.0, 2.5)}


def _own(scaling: str) -> np.ndarray:
    if scaling == "standardized":
        return sum((TERMS[n] - STATS[n][0]) / STATS[n][1] for n in TERMS)
    return TERMS["distance"] + TERMS["entropy"]


@pytest.mark.parametrize("scaling", ["raw", "standardized"])
@pytest.mark.parametrize("base_combination", ["raw", "standardized"])
def test_the_own_score_against_its_definition_in_numpy_and_torch(scaling, base_combination):
    own = _own(scaling)
    stats = {**STATS, "own": (float(own.mean()) + 0.3, float(own.std()) * 1.7)}
    head = HeadScore(stats, scaling, base_combination)
    if base_combination == "raw":
        direct = own + BASE
    else:
        direct = (own - stats["own"][0]) / stats["own"][1] + (BASE - STATS["base"][0]) / STATS[
            "base"
        ][1]
    terms = {**TERMS, "base": BASE}
    got = head.combine(terms)
    assert got.dtype == np.float64 and np.allclose(got, direct, rtol=0, atol=1e-12)
    tensors = {n: torch.from_numpy(v) for n, v in terms.items()}
    assert np.allclose(head.combine_tensors(tensors).numpy(), direct, rtol=0, atol=1e-12)
    # without a base term the own score is the head's alone
    assert np.allclose(head.combine(TERMS), own, rtol=0, atol=1e-12)
    alone = {n: torch.from_numpy(v) for n, v in TERMS.items()}
    assert np.allclose(head.combine_tensors(alone).numpy(), own, rtol=0, atol=1e-12)
