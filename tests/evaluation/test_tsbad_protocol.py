"""TSB-AD's protocol (``evaluation/tsbad.py``) and ``benchmarks/tsbad.py`` end to end on tiny series."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from madcluster.baselines import KMeansDetector
from madcluster.data.train_test import Dataset
from madcluster.data.tsbad_rebuild import write_tsbad_csv
from madcluster.estimator.detector import MADCluster
from madcluster.evaluation.tsbad import build_detector, evaluate_series
from madcluster.exceptions import DataError
from madcluster.metrics.tsbad import tsbad_vus

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "tsbad.py"


def _series(n: int = 600, n_train: int = 250, seed: int = 0) -> Dataset:
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    x = np.stack([np.sin(2 * np.pi * t / 30), np.cos(2 * np.pi * t / 30)], axis=1) + 0.05 * rng.normal(size=(n, 2))
    y = np.zeros(n, dtype=np.uint8)
    y[400:420] = 1
    x[400:420] += 3.0
    x = x.astype(np.float32)
    return Dataset(name=f"00{seed}_Toy_id_{seed}_S_tr_{n_train}_1st_400", train=x[:n_train], test=x, labels=y)


def test_build_detector_from_configurations() -> None:
    det = build_detector({"preset": "paper", "epochs": 1}, seed=3)
    assert isinstance(det, MADCluster) and det.random_state == 3 and det.score_scaling == "raw"
    assert isinstance(build_detector({"detector": "kmeans", "n_centroids": 2}, 0), KMeansDetector)
    with pytest.raises(DataError, match="unknown detector"):
        build_detector({"detector": "lstm"}, 0)
    with pytest.raises(DataError, match="n_clusters"):
        build_detector({"detector": "kmeans", "n_clusters": 2}, 0)
    with pytest.raises(DataError, match="unknown preset"):
        build_detector({"preset": "best"}, 0)


def test_evaluate_series_scores_the_whole_series() -> None:
    series = _series()
    config = {"detector": "kmeans", "window_size": 20, "n_centroids": 3}
    result = evaluate_series(config, series)
    det = build_detector(config, 0).fit(series.train)
    expected = tsbad_vus(det.decision_function(series.test), series.labels, series.test)[1]
    assert result.vus_pr == pytest.approx(expected) and result.vus_pr > 0.5  # an obvious level shift
    assert result.window == 30 and result.epochs is None
    bad = Dataset(name="x", train=series.test[1:251], test=series.test, labels=series.labels)
    with pytest.raises(DataError, match="first N points"):
        evaluate_series(config, bad)


def test_script_runs_resumes_and_summarises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(SCRIPT.parent))  # benchmarks/benchlib.py, as when run as a script
    spec = importlib.util.spec_from_file_location("tsbad_script", SCRIPT)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    folder = tmp_path / "series"
    folder.mkdir()
    for seed in (1, 2):
        s = _series(seed=seed)
        write_tsbad_csv(s, folder / f"{s.name}.csv")
    out = tmp_path / "r.json"
    args = ["--tsbad-dir", str(folder), "--out", str(out), "--config", '{"detector":"kmeans","window_size":20}',
            "--config", '{"epochs":1,"window_size":20,"embedder_params":{"hidden_size":8,"n_layers":1}}']
    script.main(args)
    record = json.loads(out.read_text())
    assert len(record["results"]) == 4 and set(record["summary"]) == set(record["configs"])
    assert record["results"][0]["dataset"] == "Toy" and "tsb-ad" == record["protocol"]
    assert "| `{\"detector\":\"kmeans\",\"window_size\":20}` |" in out.with_suffix(".md").read_text()
    before = [r["vus_pr"] for r in record["results"]]
    script.main(args)  # everything is there: nothing reruns
    again = json.loads(out.read_text())
    assert [r["vus_pr"] for r in again["results"]] == before
    assert again["stamp"]["results_from_an_earlier_run"] == 4
    # a configuration that resolves otherwise today (the default's parameters changed): its results
    # are measured again, the other configuration's kept
    name = next(iter(again["configs"]))
    again["stamp"]["measured"][name] = "another configuration"
    out.write_text(json.dumps(again))
    script.main(args)
    assert json.loads(out.read_text())["stamp"]["results_from_an_earlier_run"] == 2


def test_ensemble_sums_standardised_member_scores() -> None:
    series = _series()
    members = [{"detector": "kmeans", "window_size": 20, "n_centroids": 3}, {"detector": "pca", "window_size": 20}]
    ens = build_detector({"detector": "ensemble", "members": members}, 0).fit(series.train)
    total = np.zeros(len(series.test))
    for member in members:
        det = build_detector(member, 0).fit(series.train)
        train = det.decision_function(series.train)
        total += (det.decision_function(series.test) - train.mean()) / train.std()
    np.testing.assert_allclose(ens.decision_function(series.test), total)
    assert evaluate_series({"detector": "ensemble", "members": members}, series).vus_pr > 0.5
    with pytest.raises(DataError, match="an ensemble is"):
        build_detector({"detector": "ensemble"}, 0)


def test_results_table_puts_ours_beside_the_published_rows(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("tsbad_table", SCRIPT.parent / "tables" / "tsbad_table.py")
    table = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(table)
    stems = ["002_MSL_id_1_Sensor_tr_500_1st_900", "145_SMAP_id_2_Sensor_tr_2133_1st_5400"]
    ours = tmp_path / "ours.json"
    ours.write_text(json.dumps({"results": [{"config": "default", "series": s, "vus_pr": 0.5} for s in stems]}))
    peers = tmp_path / "peers.json"
    peers.write_text(json.dumps({"results": [{"detector": "PCA", "file": stems[0] + ".csv", "vus_pr": 0.25}]}))
    text = table.build([ours], [f"{peers}:rerun"])
    assert "| madcluster `default` | 0.500 | 0.500 |  | 0.500 |" in text
    assert "| PCA (rerun) | 0.250 |  |  | (1/2) |" in text
    assert "| KMeansAD (published) | 0.996 |" in text  # 002_MSL's published value, the only MSL series here
