"""The shared thread default (madcluster.threads)."""

import pytest
import torch

from madcluster.exceptions import MADClusterError
from madcluster.threads import available_cores, resolve_threads, torch_threads


def test_resolve_follows_scikit_learn():
    assert resolve_threads(None) == 1
    assert resolve_threads(3) == 3
    assert resolve_threads(-1) == available_cores()
    assert resolve_threads(-2) == max(1, available_cores() - 1)
    assert resolve_threads(-10_000) == 1


@pytest.mark.parametrize("bad", [0, 1.5, "2", True])
def test_bad_values_name_the_problem(bad):
    with pytest.raises(MADClusterError, match="n_jobs"):
        resolve_threads(bad)


def test_context_sets_and_restores():
    before = torch.get_num_threads()
    target = 2 if before != 2 else 3
    with torch_threads(target) as threads:
        assert threads == target and torch.get_num_threads() == target
    assert torch.get_num_threads() == before
    with pytest.raises(RuntimeError), torch_threads(target):
        raise RuntimeError("boom")
    assert torch.get_num_threads() == before
