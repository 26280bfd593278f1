"""The README's first command: the demo trains in well under a minute and detects the injected anomalies."""

from __future__ import annotations

import json

import numpy as np
import pytest

from madcluster.cli import main
from madcluster.data.synthetic import ANOMALY_KINDS, make_demo_data


def test_demo_data_is_deterministic_and_has_every_kind():
    a, b = make_demo_data(), make_demo_data()
    np.testing.assert_array_equal(a.test, b.test)
    assert {s.kind for s in a.segments} == set(ANOMALY_KINDS)
    assert a.labels.sum() == sum(s.end - s.start for s in a.segments)
    assert np.isfinite(a.train).all() and a.train.shape[1] == a.test.shape[1] == 8


@pytest.mark.slow
def test_demo_reaches_roc_auc_0_9(tmp_path, capsys):
    assert main(["demo", "--output-dir", str(tmp_path), "--quiet"]) == 0
    printed = capsys.readouterr().out
    for name in ("demo_scores.png", "demo_training.png", "demo_model.mcz", "demo_metrics.json"):
        assert name in printed  # the printout lists every file the demo writes
    metrics = json.loads((tmp_path / "demo_metrics.json").read_text())
    assert metrics["auc_roc"] >= 0.9, metrics
    for name in ("demo_scores.png", "demo_training.png", "demo_model.mcz"):
        assert (tmp_path / name).stat().st_size > 1000


@pytest.mark.slow
def test_demo_runs_with_a_head_that_records_no_nu(tmp_path, monkeypatch, capsys):
    """base-only (and k > 1) heads record no nu: the demo's training line names what they did record
    instead of ending in a KeyError."""
    from madcluster.data import synthetic

    small = synthetic.make_demo_data(n_train=600, n_test=1000)
    monkeypatch.setattr(synthetic, "make_demo_data", lambda: small)
    argv = ["demo", "--mode", "base-only", "--embedder", "usad", "--epochs", "1", "--quiet"]
    assert main([*argv, "--output-dir", str(tmp_path), "--window-size", "20"]) == 0
    line = next(s for s in capsys.readouterr().out.splitlines() if s.startswith("trained "))
    assert "loss " in line and "nu " not in line
    assert (tmp_path / "demo_model.mcz").is_file()
