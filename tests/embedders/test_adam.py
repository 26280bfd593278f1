"""The training loop's Adam against ``torch.optim.Adam``: the same parameters to the bit, its state
saved and restored, and no ``torch._dynamo`` import on the way (the reason it exists)."""

from __future__ import annotations

import copy
import subprocess
import sys

import pytest
import torch

from madcluster.embedders.drnn import DilatedRNN
from madcluster.embedders.optim import Adam


def _groups(net: torch.nn.Module, center: torch.nn.Parameter) -> list[dict]:
    return [
        {"params": list(net.parameters()), "weight_decay": 1e-3},
        {"params": [center], "weight_decay": 0.0},
    ]


def _train(optimizer_class, net, center, batches, **options) -> None:
    optimizer = optimizer_class(_groups(net, center), lr=3e-3, **options)
    for x in batches:
        optimizer.zero_grad(set_to_none=True)
        ((net(x).h - center) ** 2).mean().backward()
        optimizer.step()


@pytest.mark.parametrize("betas", [(0.9, 0.999), (0.5, 0.99)])
def test_the_same_parameters_as_torch_adam_to_the_bit(betas):
    torch.manual_seed(0)
    net, center = DilatedRNN(3, hidden_size=8, n_layers=2), torch.nn.Parameter(torch.randn(8))
    ours, our_center = copy.deepcopy(net), torch.nn.Parameter(center.detach().clone())
    batches = [torch.randn(4, 20, 3) for _ in range(12)]
    _train(torch.optim.Adam, net, center, batches, betas=betas)
    _train(Adam, ours, our_center, batches, betas=betas)
    assert torch.equal(center, our_center)
    for theirs, mine in zip(net.parameters(), ours.parameters()):
        assert torch.equal(theirs, mine)


def test_a_restored_state_goes_on_as_the_original():
    torch.manual_seed(1)
    net, center = DilatedRNN(2, hidden_size=4, n_layers=1), torch.nn.Parameter(torch.zeros(4))
    optimizer = Adam(_groups(net, center), lr=1e-2)
    batches = [torch.randn(3, 10, 2) for _ in range(6)]
    for x in batches[:3]:
        optimizer.zero_grad()
        (net(x).h - center).pow(2).mean().backward()
        optimizer.step()
    saved = copy.deepcopy((net.state_dict(), center.detach().clone(), optimizer.state_dict()))
    copy_net, copy_center = copy.deepcopy(net), torch.nn.Parameter(center.detach().clone())
    restored = Adam(_groups(copy_net, copy_center), lr=1e-2)
    restored.load_state_dict(saved[2])
    for model, c, opt in ((net, center, optimizer), (copy_net, copy_center, restored)):
        for x in batches[3:]:
            opt.zero_grad()
            (model(x).h - c).pow(2).mean().backward()
            opt.step()
    assert torch.equal(center, copy_center)
    assert all(torch.equal(a, b) for a, b in zip(net.parameters(), copy_net.parameters()))


def test_a_state_of_other_groups_is_refused():
    net = DilatedRNN(2, hidden_size=4, n_layers=1)
    state = Adam(net.parameters()).state_dict()
    two_groups = Adam(_groups(net, torch.nn.Parameter(torch.zeros(4))))
    with pytest.raises(ValueError, match="other parameter groups"):
        two_groups.load_state_dict(state)


def test_a_default_fit_does_not_import_the_compiler():
    code = (
        "import sys, numpy as np; from madcluster import MADCluster; "
        "MADCluster(epochs=1, random_state=0).fit(np.random.default_rng(0).normal(size=(400, 2))); "
        "print('torch._dynamo' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "False"
