"""``benchmarks/decomposition.py``'s bookkeeping: which sections are missing and how to add them."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from grid_data import write_dataset

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "decomposition.py"


@pytest.fixture(scope="module")
def decomposition():
    spec = importlib.util.spec_from_file_location("decomposition_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_missing_sections_skip_measured_ones_cheapest_first(decomposition):
    measured = {("MSL", "drnn", "default"), ("SMAP", "usad + MADCluster", "default"), ("SMD", "beatgan", "default")}
    missing = decomposition.missing_sections(measured)
    wanted = decomposition.wanted_sections()
    assert len(wanted) == 3 * (2 + 2 * len(decomposition.BASE_MODELS))
    assert len(missing) == len(wanted) - len(measured)
    assert ("MSL", "drnn", "full", "default") not in missing
    assert ("SMAP", "usad", "full", "default") not in missing
    assert ("SMAP", "usad", "base-only", "default") in missing
    assert ("MSL", "drnn", "full", "paper") in missing
    embedders = [s[1] for s in missing]
    assert embedders.index("beatgan") < embedders.index("usad") < embedders.index("anomaly_transformer")


def test_missing_flag_prints_runnable_commands(decomposition, tmp_path, capsys):
    rows = [{"dataset": "MSL", "model": "usad", "config": "default", "metric": "f1"}]
    out = tmp_path / "decomposition.json"
    out.write_text(json.dumps({"rows": rows}))
    assert decomposition.main(["--missing", "--out", str(out), "--device", "cuda"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == len(decomposition.wanted_sections()) - 1
    assert not any("--dataset MSL --embedder usad --mode base-only" in line for line in lines)
    assert all(line.startswith("python benchmarks/decomposition.py --dataset ") for line in lines)
    assert all(line.endswith("--device cuda") for line in lines)


@pytest.mark.slow
def test_decomposition_columns_keep_the_invariants_of_their_steps(decomposition, tmp_path):
    """End to end on a tiny dataset (two entities): the oracle threshold (c) never lowers F1 below
    the test-ratio one on the same scores (b); d changes range / VUS only; every run is written."""
    data = write_dataset(tmp_path / "tiny", n_train=1000, n_test=1200, anomalies=(250, 850), length=20)
    out = tmp_path / "decomposition.json"
    argv = ["--dataset", str(data), "--epochs", "1", "--stride", "50", "--runs", str(tmp_path / "runs"),
            "--out", str(out)]
    assert decomposition.main(argv) == 0
    rows = {r["metric"]: r["values"] for r in json.loads(out.read_text())["rows"]}
    assert set(rows) == {"f1", "aff_precision", "aff_recall", "vus_pr"}
    assert rows["f1"]["c"] >= rows["f1"]["b"] - 1e-12
    for metric in ("f1", "aff_precision", "aff_recall"):
        assert rows[metric]["d"] == rows[metric]["c"]
    assert len(list((tmp_path / "runs").glob("*.json"))) == 4  # honest, a, a b c d, a b c d e
    assert (tmp_path / "decomposition.md").read_text().count("| F1 |") == 2  # table and deltas
    assert (tmp_path / "decomposition.png").stat().st_size > 10_000


def test_gap_explained_share_and_its_edge_cases(decomposition):
    values = {"honest": 0.1, "e": 0.4}
    assert decomposition.gap_explained(values, 0.5) == "75 %"
    assert decomposition.gap_explained(values, 0.3) == "150 %"  # the steps go past the paper
    assert decomposition.gap_explained(values, 0.11) == "gap +0.010"  # no ratio of a tiny gap
    assert decomposition.gap_explained(values, None) == "-"
