"""The refit child's side (``python -m madcluster.serve.swap``) run in this process: what it
refits (warm, for the epochs asked or the refit default, or from scratch), on rows under the
model's column names, the checks it writes beside the model, and the priority it drops to.

The serve tests reach the child only through a subprocess, where mutmut's record of which test
runs which function cannot follow: all 92 mutants of ``_child`` and ``below_the_server`` ran no
test. Here the scheduling calls are recorded instead of made (the test process must not drop to
the idle class)."""

from __future__ import annotations

import copy
import json
import os

import numpy as np
import pandas as pd
import pytest
from series_helpers import three_channels

from madcluster import MADCluster
from madcluster.serve import swap
from madcluster.serve.refit_checks import measure

COLUMNS = ["a", "b", "c"]


@pytest.fixture(scope="module")
def model():
    rows = pd.DataFrame(three_channels(240, 0), columns=COLUMNS)
    return MADCluster(input_terms=None, window_size=12, epochs=1, random_state=0).fit(rows)


def _child(model, epochs, mode, recent, tmp_path, monkeypatch):
    """``_child`` on ``model`` and new rows; returns the refitted model, its checks, the rows and
    the scheduling calls made."""
    import torch

    calls: list[object] = []
    monkeypatch.setattr(swap, "below_the_server", lambda: calls.append("below"))
    monkeypatch.setattr(torch, "set_num_threads", calls.append)
    rows = three_channels(200, 5, 0.5)
    model.save(tmp_path / "m.mcz")
    np.save(tmp_path / "rows.npy", rows)
    np.savez(tmp_path / "recent.npz", *recent)
    out = tmp_path / "new.mcz"
    args = (tmp_path / "m.mcz", tmp_path / "rows.npy", out, epochs, mode, tmp_path / "recent.npz")
    swap._child(*map(str, args))
    checks = json.loads((tmp_path / "new.mcz.json").read_text(encoding="utf-8"))
    return MADCluster.load(out), checks, rows, calls


def _same_scores(got: MADCluster, expected: MADCluster) -> None:
    x = three_channels(120, 9, 0.5)
    assert list(got.feature_names_in_) == COLUMNS
    np.testing.assert_allclose(got.decision_function(x), expected.decision_function(x), atol=1e-9)


@pytest.mark.parametrize(
    "epochs, mode, refit",
    [
        ("-", "warm", {}),
        ("2", "warm", {"epochs": 2}),
        ("-", "scratch", {"from_scratch": True}),
    ],
)
def test_the_child_refits_as_asked_and_writes_the_checks(
    model, tmp_path, monkeypatch, epochs, mode, refit
):
    recent = [three_channels(n, 10 + n, 0.5) for n in (30, 20, 40)]
    got, checks, rows, calls = _child(model, epochs, mode, recent, tmp_path, monkeypatch)
    assert calls == ["below", swap.REFIT_THREADS]
    frame = pd.DataFrame(rows, columns=COLUMNS)
    expected = copy.deepcopy(model).refit(frame, **refit)
    _same_scores(got, expected)
    want = measure(model, expected, rows, recent)
    assert checks.keys() == want.keys() and checks["recent_rows"] == 90
    for key, value in want.items():
        assert checks[key] == pytest.approx(value, rel=1e-9), key


def test_a_warm_refit_is_not_a_fresh_fit(model, tmp_path, monkeypatch):
    got, checks, rows, _ = _child(model, "-", "warm", [], tmp_path, monkeypatch)
    fresh = copy.deepcopy(model).refit(pd.DataFrame(rows, columns=COLUMNS), from_scratch=True)
    x = three_channels(120, 9, 0.5)
    assert np.abs(got.decision_function(x) - fresh.decision_function(x)).max() > 1e-3
    assert checks["recent_rows"] == 0 and checks["recent_flag_rate"] is None


def test_a_model_without_column_names_is_refitted_on_the_bare_rows(tmp_path, monkeypatch):
    bare = MADCluster(input_terms=None, window_size=12, epochs=1, random_state=0)
    bare.fit(three_channels(240, 0))
    got, _, rows, _ = _child(bare, "-", "warm", [], tmp_path, monkeypatch)
    assert getattr(got, "feature_names_in_", None) is None
    x = three_channels(120, 9, 0.5)
    expected = copy.deepcopy(bare).refit(rows).decision_function(x)
    np.testing.assert_allclose(got.decision_function(x), expected, atol=1e-9)


@pytest.mark.parametrize("pickled", ["rows", "recent"])
def test_the_child_never_unpickles_its_rows(model, tmp_path, monkeypatch, pickled):
    import torch

    monkeypatch.setattr(swap, "below_the_server", lambda: None)
    monkeypatch.setattr(torch, "set_num_threads", lambda n: None)
    model.save(tmp_path / "m.mcz")
    objects = np.array([{"rows": 1}], dtype=object)
    rows = objects if pickled == "rows" else three_channels(200, 5)
    np.save(tmp_path / "rows.npy", rows, allow_pickle=True)
    np.savez(tmp_path / "recent.npz", *([objects] if pickled == "recent" else []))
    args = (tmp_path / "m.mcz", tmp_path / "rows.npy", tmp_path / "new.mcz", "-", "warm")
    with pytest.raises(ValueError, match="allow_pickle"):
        swap._child(*map(str, args), str(tmp_path / "recent.npz"))
    assert not (tmp_path / "new.mcz").exists()


def test_the_child_runs_below_the_server(monkeypatch):
    seen: list[tuple] = []

    def scheduler(pid, policy, param):
        seen.append((pid, policy, param.sched_priority))

    monkeypatch.setattr(os, "sched_setscheduler", scheduler, raising=False)
    monkeypatch.setattr(os, "nice", lambda n: seen.append(("nice", n)), raising=False)
    swap.below_the_server()
    assert seen == [(0, os.SCHED_IDLE, 0)]  # the idle class, for this process

    def refused(pid, policy, param):
        raise OSError("operation not permitted")

    monkeypatch.setattr(os, "sched_setscheduler", refused)
    swap.below_the_server()
    assert seen[1:] == [("nice", swap.REFIT_NICENESS)]
    monkeypatch.delattr(os, "sched_setscheduler")
    swap.below_the_server()
    assert seen[2:] == [("nice", swap.REFIT_NICENESS)]
    monkeypatch.delattr(os, "nice")
    swap.below_the_server()  # neither: nothing to do, no error
    assert len(seen) == 3
