"""Issue 37 items 2 and 3: sizes that cannot work are refused before training with one line and
exit 2; values that mean little are warned about, naming the window count or series length; an
allocation that fails during training ends in one line too."""

from __future__ import annotations

import numpy as np
import pytest

from madcluster import MADCluster
from madcluster.cli import main
from madcluster.cli.fit_checks import check_memory, check_series_settings, estimated_bytes


@pytest.fixture
def train_csv(tmp_path):
    rng = np.random.default_rng(0)
    path = tmp_path / "train.csv"
    np.savetxt(path, rng.standard_normal((3000, 2)), delimiter=",", header="a,b", comments="")
    return path


def _fit(train_csv, capsys, *flags):
    status = main(["fit", str(train_csv), "-o", str(train_csv.with_suffix(".mcz")), "--quiet", *flags])
    err = capsys.readouterr().err
    return status, err


def test_layers_beyond_the_window_are_refused(train_csv, capsys):
    status, err = _fit(train_csv, capsys, "--layers", "40")
    assert status == 2 and "Traceback" not in err
    assert "beyond the window of 100 steps" in err and "--layers 7 or fewer" in err
    assert not train_csv.with_suffix(".mcz").exists()


def test_a_model_too_large_for_memory_is_refused_before_training(train_csv, capsys):
    status, err = _fit(train_csv, capsys, "--hidden-size", "100000")
    assert status == 2 and len(err.strip().splitlines()) == 1
    assert "out of memory before training" in err and "reduce --hidden-size" in err


def test_a_failed_allocation_during_training_is_one_line(train_csv, capsys, monkeypatch):
    def fail(self, *args, **kwargs):
        raise RuntimeError("[enforce fail at alloc_cpu.cpp:121] DefaultCPUAllocator: can't allocate memory: you tried "
                           "to allocate 120000000000 bytes")

    monkeypatch.setattr(MADCluster, "fit", fail)
    status, err = _fit(train_csv, capsys, "--epochs", "1")
    assert status == 2 and len(err.strip().splitlines()) == 1
    assert "out of memory: reduce --hidden-size" in err


@pytest.mark.parametrize("flags, words", [
    (["--stride", "100000"], ["--stride 100000", "2400 training rows", "3000 rows"]),
    (["--part-smoothing", "own=100000"], ["own=100000", "2400 training rows"]),
])
def test_meaningless_lengths_are_refused_naming_the_series(train_csv, capsys, flags, words):
    status, err = _fit(train_csv, capsys, *flags)
    assert status == 2, err
    for word in words:
        assert word in err


def test_few_windows_and_a_huge_batch_are_warned_about():
    warnings: list[str] = []
    check_series_settings(MADCluster(stride=200, batch_size=10_000_000), 3000, warnings.append)
    assert any("gives 12 training windows" in w for w in warnings), warnings
    assert any("--batch-size 10000000 is more than the 12 windows" in w for w in warnings), warnings


def test_the_default_fit_passes_the_checks_quietly():
    warnings: list[str] = []
    check_series_settings(MADCluster(), 3000, warnings.append)
    check_memory(MADCluster(), 2)
    assert warnings == []
    needed, parameters = estimated_bytes(MADCluster(), 2)
    assert 10_000 < parameters < 100_000 and needed < 1e9


def test_a_huge_batch_is_not_counted_as_memory(train_csv):
    """The batch holds at most the windows an epoch draws: --batch-size 10000000 is a warning, not
    an out-of-memory refusal."""
    detector = MADCluster(batch_size=10_000_000)
    check_memory(detector, 2, n_rows=3000)
    needed, _ = estimated_bytes(detector, 2, n_rows=3000)
    assert needed < 2e9
