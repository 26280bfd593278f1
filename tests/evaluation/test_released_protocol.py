"""The released code's evaluation steps a..e: each option changes exactly what it says."""

from __future__ import annotations

import argparse
import hashlib
import json

import numpy as np
import pytest
import torch
from grid_data import TINY, write_dataset

from madcluster.benchmark.config import BenchmarkConfig
from madcluster.benchmark.fit_score import detector_params, run_task
from madcluster.benchmark.grid import plan_rows
from madcluster.benchmark.runner import run_grid
from madcluster.cli.benchmark import configs_from_args
from madcluster.cli.benchmark_options import add_benchmark_arguments
from madcluster.data.datasets import load_dataset
from madcluster.estimator.detector import MADCluster
from madcluster.evaluation.protocols import evaluate_protocols
from madcluster.evaluation.released_protocol import (
    check_steps,
    cumulative_steps,
    fit_arguments,
    headline_protocol,
    steps_label,
    steps_suffix,
    window_label_ratio,
    window_labels,
    window_mean,
    window_scores,
)
from madcluster.evaluation.thresholds import best_f1_threshold
from madcluster.factory import make_detector
from madcluster.metrics.pointwise import precision_recall_f1
from madcluster.metrics.range_vus import range_auc_pr, range_auc_roc, vus_pr, vus_roc
from madcluster.training.loop import TrainSettings, feature_source

L = TINY["window_size"]


@pytest.fixture()
def dataset(tmp_path):
    return write_dataset(tmp_path / "tiny")


def _config(dataset, **kw) -> BenchmarkConfig:
    return BenchmarkConfig(dataset=str(dataset), out=None, **{**TINY, **kw})


def _task(config: BenchmarkConfig, loaded, entity: int = 0):
    """The task of one entity of ``config`` and the dataset arrays it reads."""
    (row,) = plan_rows([config], {f"{config.dataset}|": loaded})
    arrays = {"train": loaded.train, "test": loaded.test, "labels": loaded.labels}
    return row.tasks[entity], arrays


# ------------------------------------------------------------------------------ naming, parsing
def test_step_sets_parse_validate_and_name_oracle_and_leak():
    assert check_steps("e,a c") == ("a", "c", "e")
    assert check_steps(["B", "a"]) == ("a", "b")
    assert check_steps(None) == check_steps("none") == check_steps([]) == ()
    with pytest.raises(ValueError, match="unknown released-protocol step 'f'"):
        check_steps(["a", "f"])
    with pytest.raises(ValueError, match="distinct"):
        check_steps(["a", "a"])
    assert cumulative_steps("c") == ("a", "b", "c")
    assert steps_suffix(()) == "" and steps_label(()) == "honest"
    assert steps_suffix(("a", "b")) == "released-ab"
    assert steps_suffix(("a", "b", "c", "d", "e")) == "released-abcde-oracle-leak"
    assert steps_label(("c", "e")) == "released steps c (ORACLE)+e (LEAK)"
    assert headline_protocol(("a", "b")) == "test-ratio"
    assert headline_protocol(("c",)) == "best-f1"


def test_config_names_fingerprint_and_command(dataset):
    honest = _config(dataset)
    # rows without steps keep the fingerprint they had before steps existed (resume still works)
    kept = {
        k: v
        for k, v in honest.settings().items()
        if k not in ("seeds", "entities", "out", "verbose", "threads", "argv", "data_dir",
                     "released_steps")
    }
    kept["n_clusters"] = kept.pop("n_centroids")  # the KMeans baseline's k, under its old name
    old = hashlib.sha256(json.dumps(kept, sort_keys=True, default=str).encode()).hexdigest()[:10]
    assert honest.fingerprint() == old
    leaky = _config(dataset, released_steps=["e", "a", "c"])
    assert leaky.per_entity  # step a is one model per entity
    assert leaky.result_name() == "tiny_drnn_full_per-entity_released-ace-oracle-leak"
    assert leaky.fingerprint() != _config(dataset, per_entity=True).fingerprint()
    assert "--released-steps a c e" in leaky.command()
    assert "released" not in honest.command()


def test_command_line_option(dataset):
    parser = argparse.ArgumentParser()
    add_benchmark_arguments(parser)
    (config,) = configs_from_args(
        parser.parse_args(["--dataset", "MSL", "--released-steps", "b", "a"])
    )
    assert config.released_steps == ("a", "b") and config.per_entity
    (honest,) = configs_from_args(parser.parse_args(["--dataset", "MSL"]))
    assert honest.released_steps == () and not honest.per_entity
    with pytest.raises(SystemExit):
        parser.parse_args(["--dataset", "MSL", "--released-steps", "x"])
    assert "ORACLE" in parser.epilog and "LEAK" in parser.epilog


# ------------------------------------------------------------------------------ step b: windows
def test_window_labels_start_each_anomaly_L_minus_1_earlier_and_never_end_later():
    y = np.zeros(30, dtype=int)
    y[10:13] = 1  # one anomaly on [10, 12]
    w = window_labels(y, 5)
    assert len(w) == 30 - 5 + 1
    assert np.flatnonzero(w).tolist() == list(range(10 - 4, 13))  # windows 6..12
    rng = np.random.default_rng(0)
    for _ in range(20):  # any labels: window s is anomalous iff y[s : s + L] has an anomaly
        y = (rng.random(60) < 0.08).astype(int)
        w = window_labels(y, 7)
        assert w.tolist() == [int(y[s : s + 7].any()) for s in range(60 - 7 + 1)]
        # never later: a window whose start is after every anomaly point is normal
        last = np.flatnonzero(y).max() if y.any() else -1
        assert not w[last + 1 :].any()
    with pytest.raises(ValueError, match="shorter than one window"):
        window_labels(np.zeros(3), 5)


def test_window_mean_and_label_ratio():
    x = np.arange(10.0)
    assert np.allclose(window_mean(x, 3), [1, 2, 3, 4, 5, 6, 7, 8])
    y = np.zeros(20, dtype=int)
    y[4] = 1
    # two parts of 10 steps, windows of 3: part one has windows 2, 3, 4 anomalous of 8; part two none
    assert window_label_ratio(y, [(0, 10), (10, 20)], 3) == pytest.approx(3 / 16)


def test_network_window_score_is_the_mean_per_step_score_inside_the_window(series, small_params):
    model = MADCluster(**small_params, device="cpu").fit(series[:300])
    scores, how = window_scores(model, series[300:400], model.window_size)
    assert how.startswith("network") and scores.shape == (100 - model.window_size + 1,)
    # window 7 alone, scored at stride 1 in isolation: the mean of its per-step scores
    # (the input of the whole series, then the window: the roughness channels look back in time)
    x = torch.from_numpy(model.model_.inputs.model_input(series[300:400])[7 : 7 + model.window_size])[None]
    terms = {k: v.double().mean(1).numpy() for k, v in model.net_.score(x).items()}
    assert scores[7] == pytest.approx(model.model_.head.combine(terms)[0], rel=1e-6)


# ------------------------------------------------------------------------------ step c: oracle
def test_oracle_threshold_maximises_f1_on_a_hand_case():
    scores = np.array([0.1, 0.9, 0.4, 0.8, 0.2, 0.7, 0.3, 0.6])
    labels = np.array([0, 1, 0, 1, 0, 0, 1, 0])
    t = best_f1_threshold(scores, labels)
    best = precision_recall_f1(scores > t, labels)[2]
    every = [precision_recall_f1(scores > c, labels)[2] for c in np.r_[scores, -1.0]]
    assert best == pytest.approx(max(every))
    assert best == pytest.approx(0.8)  # flag 0.9, 0.8 (both anomalies): P = 1, R = 2/3
    assert (scores > t).tolist() == [False, True, False, True, False, False, False, False]


# ------------------------------------------------------------------------------ step d
def test_metrics_on_predictions_equal_metrics_on_0_1_scores():
    rng = np.random.default_rng(1)
    labels = np.zeros(400, dtype=int)
    labels[100:130] = labels[300:310] = 1
    scores = rng.random(400) + labels * 0.6
    t = best_f1_threshold(scores, labels)
    on_pred = evaluate_protocols(scores, labels, {"best-f1": t}, window=20, range_on="predictions")
    on_scores = evaluate_protocols(scores, labels, {"best-f1": t}, window=20)
    binary = (scores > t).astype(float)
    r_roc, r_pr = range_auc_roc(binary, labels, window=20), range_auc_pr(binary, labels, window=20)
    v_roc, v_pr = vus_roc(binary, labels, window=20), vus_pr(binary, labels, window=20)
    got = on_pred["best-f1"]
    assert (got["range_auc_roc"], got["range_auc_pr"], got["vus_roc"], got["vus_pr"]) == (
        pytest.approx(r_roc), pytest.approx(r_pr), pytest.approx(v_roc), pytest.approx(v_pr)
    )
    # step d changes the range / VUS metrics only
    for key in ("f1", "precision", "recall", "aff_precision", "aff_recall", "auc_roc", "auc_pr"):
        assert got[key] == pytest.approx(on_scores["best-f1"][key])
    assert got["vus_pr"] != pytest.approx(on_scores["best-f1"]["vus_pr"])
    with pytest.raises(ValueError, match="range_on"):
        evaluate_protocols(scores, labels, {"best-f1": t}, range_on="points")


# ------------------------------------------------------------------------------ step a: MinMax
def test_step_a_minmax_maps_each_entity_train_part_to_0_1(dataset):
    loaded = load_dataset(str(dataset))
    config = _config(dataset, released_steps=["a"])
    assert make_detector(detector_params(config, 0)).scaling == "minmax"
    assert make_detector(detector_params(_config(dataset, per_entity=True), 0)).scaling == "standard"
    for entity in range(2):
        task, arrays = _task(config, loaded, entity)
        train = arrays["train"][slice(*task.train_slice)]
        scaled = make_detector(detector_params(config, 0)).fit(train).model_.inputs.model_input(train)
        assert np.allclose(scaled.min(axis=0), 0.0) and np.allclose(scaled.max(axis=0), 1.0)
    with pytest.raises(ValueError, match="unknown scaling"):
        MADCluster(scaling="robust").fit(np.zeros((50, 2)))


# ------------------------------------------------------------------------------ step e: the leak
@pytest.fixture()
def fit_calls(monkeypatch):
    """The keyword arguments of every ``MADCluster.fit`` call (the real fit still runs)."""
    calls: list[dict] = []
    original = MADCluster.fit
    unset = object()

    def spy(self, X, y=None, *, validation_data=unset, pool_radius=unset):
        given = {"validation_data": validation_data, "pool_radius": pool_radius}
        given = {k: v for k, v in given.items() if v is not unset}
        calls.append({"X": np.asarray(X), **given})
        return original(self, X, y, **given)

    monkeypatch.setattr(MADCluster, "fit", spy)
    return calls


@pytest.mark.slow
def test_step_e_passes_the_test_set_as_validation_and_only_with_the_flag(dataset, fit_calls):
    loaded = load_dataset(str(dataset))
    for steps in ((), ("a",), ("a", "b", "c", "d")):
        task, arrays = _task(_config(dataset, per_entity=True, released_steps=steps), loaded)
        run_task(task, arrays)
    assert len(fit_calls) == 3
    assert all(set(call) == {"X"} for call in fit_calls)  # never any validation data

    task, arrays = _task(_config(dataset, released_steps="abcde"), loaded)
    record = run_task(task, arrays)
    call = fit_calls[-1]
    test = arrays["test"][slice(*task.test_slice)]
    assert np.array_equal(call["validation_data"], test) and call["pool_radius"] is True
    assert np.array_equal(call["X"], arrays["train"][slice(*task.train_slice)])
    assert record["released_protocol"]["leak"] and record["released_protocol"]["oracle"]
    assert np.isfinite(record["history"]["val_loss"]).all()  # validated on test windows


def test_leak_fit_validates_on_test_and_pools_R_over_train_and_test(series, small_params):
    train, test = series[:300], series[300:]
    params = {**small_params, "epochs": 1, "device": "cpu"}
    honest = MADCluster(**params, validation_size=0.0).fit(train)
    leaky = MADCluster(**params).fit(train, validation_data=test, pool_radius=True)
    # same seed, all of train trained on in both, one epoch: only R (train + test pooled) differs
    for name, value in honest.net_.state_dict().items():
        if not name.endswith("radius"):
            assert torch.equal(value, leaky.net_.state_dict()[name]), name
    assert not np.isclose(float(leaky.net_.head.radius), float(honest.net_.head.radius))
    assert np.isfinite(leaky.history_["val_loss"]).all()
    assert np.isnan(honest.history_["val_loss"]).all()
    settings = TrainSettings(window_size=leaky.window_size)
    parts = [torch.from_numpy(leaky.model_.inputs.model_input(x)) for x in (train, test)]
    d = torch.cat(
        [leaky.net_.head.distances(h).flatten() for h in feature_source(leaky.net_, *parts[:1], settings, parts[1])()]
    ).double().numpy()
    expected = np.quantile(np.sqrt(d), 1.0 - leaky.rho)
    assert float(leaky.net_.head.radius) == pytest.approx(expected, rel=1e-5)
    with pytest.raises(ValueError, match="needs validation_data"):
        MADCluster(**small_params).fit(train, pool_radius=True)
    assert fit_arguments(("a", "b"), leaky, test) == {}
    assert set(fit_arguments(("e",), leaky, test)) == {"validation_data", "pool_radius"}


# ------------------------------------------------------------------------------ end to end
def test_all_steps_end_to_end_are_recorded_and_marked(dataset, tmp_path):
    out = tmp_path / "out"
    config = BenchmarkConfig(dataset=str(dataset), out=str(out), **TINY, released_steps="abcde")
    grid = run_grid([config], progress=False)
    assert grid.ok
    data = json.loads((out / f"{config.result_name()}.json").read_text())
    assert data["name"].endswith("released-abcde-oracle-leak")
    assert data["released_protocol"]["steps"] == list("abcde")
    assert data["headline_protocol"] == "best-f1"
    assert data["settings"]["released_steps"] == list("abcde")
    assert data["threshold_independent_metrics"] == ["auc_roc", "auc_pr"]
    assert all(p["leak"] and "LEAK" in p["label"] for p in data["protocols"].values())
    for entity in data["runs"][0]["entities"]:  # one score per stride-1 window
        assert entity["n_scores"] == entity["n_test"] - L + 1
        assert entity["released_protocol"]["window_scoring"].startswith("network")
    markdown = (out / "results.md").read_text()
    assert "released steps a+b+c (ORACLE)+d+e (LEAK)" in markdown and "**ORACLE and LEAK**" in markdown
    # step b's known anomaly ratio is the window labels'
    loaded = load_dataset(str(dataset))
    (row,) = plan_rows([config], {f"{config.dataset}|": loaded})
    slices = [t.test_slice for t in row.tasks]
    assert row.data["anomaly_ratio_used"] == pytest.approx(
        window_label_ratio(loaded.labels, slices, L)
    )
    assert row.data["anomaly_ratio_used"] > loaded.anomaly_ratio


def test_baselines_record_the_steps_they_cannot_take(dataset):
    loaded = load_dataset(str(dataset))
    task, arrays = _task(_config(dataset, detector="pca", released_steps="abe"), loaded)
    record = run_task(task, arrays)
    assert set(record["released_protocol"]["not_applied"]) == {"a", "e"}
    assert record["n_scores"] == task.test_slice[1] - task.test_slice[0] - L + 1
    assert record["released_protocol"]["window_scoring"].startswith("mean of the detector's point")



@pytest.mark.slow
def test_a_step_d_run_also_records_the_abc_columns_range_metrics(dataset):
    """One ``a b c d`` run gives the decomposition's columns b and c: the same model and scores as
    the ``a b c`` run, so its threshold metrics and its ``metrics_on_scores`` equal that run's."""
    abc, abcd = (
        run_grid([_config(dataset, released_steps=s)], progress=False).results[0].to_dict()
        for s in ("abc", "abcd")
    )
    assert "metrics_on_scores" not in abc
    for protocol in ("test-ratio", "best-f1"):
        for metric in ("f1", "aff_precision", "aff_recall"):
            want = abc["protocols"][protocol]["metrics"][metric]["mean"]
            assert abcd["protocols"][protocol]["metrics"][metric]["mean"] == pytest.approx(want, nan_ok=True)
    on_scores = abcd["metrics_on_scores"]
    assert set(on_scores) == set(abc["threshold_independent_metrics"])
    for metric, value in on_scores.items():
        assert value["mean"] == pytest.approx(abc["protocols"]["best-f1"]["metrics"][metric]["mean"])
    # and step d did change the range metrics of its own protocols (else the test proves nothing)
    assert abcd["protocols"]["test-ratio"]["metrics"]["vus_pr"]["mean"] != pytest.approx(on_scores["vus_pr"]["mean"])
