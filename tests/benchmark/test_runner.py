"""The benchmark runner end to end on a tiny user dataset folder (CPU, a few seconds)."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest
from grid_data import TINY, write_dataset

from madcluster.benchmark.config import BenchmarkConfig
from madcluster.benchmark.fit_score import detector_params
from madcluster.benchmark.report import markdown_from_folder
from madcluster.benchmark.runner import run_benchmark
from madcluster.cli.benchmark import run_benchmark_command
from madcluster.cli.benchmark_options import add_benchmark_arguments
from madcluster.evaluation import PROTOCOLS
from madcluster.evaluation.protocols import CONTINUOUS_METRICS, METRICS
from madcluster.factory import make_detector

N_TRAIN, N_TEST = 600, 400


def _write_folder(folder, *, entities: bool = False) -> None:
    # anomalies in both halves (the entities split test at 200)
    write_dataset(
        folder,
        n_train=N_TRAIN,
        n_test=N_TEST,
        anomalies=(70, 250, 330),
        length=15,
        entities=entities,
    )


@pytest.fixture()
def data_folder(tmp_path):
    folder = tmp_path / "tiny"
    folder.mkdir()
    _write_folder(folder)
    return folder


def _config(folder, out, **kw) -> BenchmarkConfig:
    base = {"dataset": str(folder), "embedder": "drnn", **TINY, "out": str(out) if out else None}
    base.update(kw)
    return BenchmarkConfig(**base)


def test_drnn_end_to_end_json(data_folder, tmp_path):
    out = tmp_path / "results"
    result = run_benchmark(_config(data_folder, out, seeds=(0, 1)))
    path = out / "tiny_drnn_full.json"
    assert result.path == path and path.is_file()
    data = json.loads(path.read_text())  # strict JSON: NaN would have been written as null

    for key in (
        "schema",
        "name",
        "dataset",
        "embedder",
        "mode",
        "seeds",
        "command",
        "protocols",
        "cost",
        "data",
        "settings",
        "provenance",
        "runs",
        "anomaly_ratio_note",
        "threshold_independent_metrics",
    ):
        assert key in data, key
    assert set(data["protocols"]) == set(PROTOCOLS)
    for name, proto in data["protocols"].items():
        assert proto["oracle"] is PROTOCOLS[name].oracle
        assert ("ORACLE" in proto["label"]) is PROTOCOLS[name].oracle
        assert set(proto["metrics"]) == set(METRICS)
        for stat in proto["metrics"].values():
            assert len(stat["values"]) == 2 and {"mean", "std"} <= set(stat)
    assert (
        data["protocols"]["best-f1"]["oracle"] is True
        and data["protocols"]["best-f1"]["label"] == "best-f1 (ORACLE)"
    )
    # continuous-score metrics do not depend on the protocol
    for key in CONTINUOUS_METRICS:
        values = {p["metrics"][key]["mean"] for p in data["protocols"].values()}
        assert len(values) == 1, key
    # the oracle threshold maximises point F1, so no other protocol can beat it
    for p in ("train-quantile", "test-ratio", "combined"):
        assert (
            data["protocols"][p]["metrics"]["f1"]["mean"]
            <= data["protocols"]["best-f1"]["metrics"]["f1"]["mean"] + 1e-12
        )

    cost = data["cost"]
    assert (
        cost["n_params"] > 0 and cost["macs_per_window"] > 0 and cost["train_seconds"]["mean"] > 0
    )
    assert (
        "ptflops" in cost["macs_method"] or "FlopCounterMode" in cost["macs_method"]
    ) and "history" in cost
    for run in data["runs"]:
        assert run["n_scores"] == N_TEST  # every test point scored exactly once
        assert run["history"]["epochs_run"] == 1 and 0 < run["history"]["final_nu"] < 1
        assert set(run["thresholds"]) == set(PROTOCOLS)
    assert data["data"]["anomaly_ratio_used"] == pytest.approx(45 / N_TEST)
    assert (
        data["provenance"]["git"]["commit"] is None
        or len(data["provenance"]["git"]["commit"]) == 40
    )
    assert (
        data["command"].startswith("madcluster benchmark --dataset ")
        and "--seeds 0 1" in data["command"]
    )
    assert "tiny" in (out / "results.md").read_text()


@pytest.mark.slow
def test_same_seed_same_result_and_one_score_per_point(data_folder):
    config = _config(data_folder, None, seeds=(3,))
    first, second = run_benchmark(config), run_benchmark(config)
    assert first.runs[0]["metrics"] == second.runs[0]["metrics"]
    assert first.runs[0]["thresholds"] == second.runs[0]["thresholds"]

    from madcluster.data.datasets import load_dataset

    ds = load_dataset(data_folder)
    detector = make_detector(detector_params(config, 3)).fit(ds.train)
    scores = detector.decision_function(ds.test)
    assert scores.shape == (len(ds.test),) and np.isfinite(scores).all()


@pytest.mark.parametrize("embedder", ["pca", "kmeans"])
def test_baselines(data_folder, tmp_path, embedder):
    out = tmp_path / "results"
    result = run_benchmark(_config(data_folder, out, embedder=embedder, mode="full", n_centroids=4))
    assert result.config.mode == "baseline" and (out / f"tiny_{embedder}_baseline.json").is_file()
    assert result.runs[0]["n_scores"] == N_TEST
    assert "analytic" in result.cost["macs_method"] and "history" not in result.cost
    # train-pot is left out where the tiny series' top training scores are tied (compute_thresholds)
    assert set(PROTOCOLS) - {"train-pot"} <= set(result.summary) <= set(PROTOCOLS)


def test_per_entity_mean(tmp_path):
    folder = tmp_path / "ent"
    folder.mkdir()
    _write_folder(folder, entities=True)
    result = run_benchmark(_config(folder, None, embedder="pca", per_entity=True))
    entities = result.runs[0]["entities"]
    assert [e["name"] for e in entities] == ["ent/a", "ent/b"]
    assert sum(e["n_scores"] for e in entities) == N_TEST
    for key in ("f1", "vus_pr"):
        mean = np.mean([e["metrics"]["test-ratio"][key] for e in entities])
        assert result.metric("test-ratio", key) == pytest.approx(mean)
    assert result.name == "ent_pca_baseline_per-entity"


def test_cli_functions(data_folder, tmp_path, capsys):
    parser = argparse.ArgumentParser(prog="madcluster benchmark")
    add_benchmark_arguments(parser)
    text = parser.format_help()
    for name in PROTOCOLS:
        assert name in text
    assert "ORACLE" in text and "anomaly ratio" in text
    out = tmp_path / "cli"
    args = parser.parse_args(
        [
            "--dataset",
            str(data_folder),
            "--embedder",
            "pca",
            "--window-size",
            "20",
            "--metric-window",
            "20",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    assert run_benchmark_command(args) == 0
    printed = capsys.readouterr().out
    assert "best-f1 (ORACLE)" in printed and "reproduce: madcluster benchmark" in printed
    assert (out / "tiny_pca_baseline.json").is_file()
    assert "PCA" in markdown_from_folder(out)


def test_clear_errors(data_folder, tmp_path):
    with pytest.raises(ValueError, match="unknown embedder"):
        BenchmarkConfig(dataset="MSL", embedder="transformerx")
    with pytest.raises(ValueError, match="unknown mode"):
        BenchmarkConfig(dataset="MSL", mode="half")
    with pytest.raises(ValueError, match="unknown dataset"):
        run_benchmark(
            BenchmarkConfig(dataset="NOPE", data_dir=str(tmp_path), out=None, verbose=False)
        )
