"""Benchmark grids: expansion into rows and tasks, resume, failures, atomic task files, the CLI."""

from __future__ import annotations

import argparse
import json

import pytest
from grid_data import TINY, write_dataset

from madcluster.benchmark import fit_score
from madcluster.benchmark.config import BenchmarkConfig, parse_key_value
from madcluster.benchmark.grid import expand_grid, load_grid_file
from madcluster.benchmark.runner import run_grid
from madcluster.cli.benchmark import configs_from_args
from madcluster.cli.benchmark_options import add_benchmark_arguments
from madcluster.parallel.executors import SequentialExecutor, guarded_call


@pytest.fixture()
def dataset(tmp_path):
    return write_dataset(tmp_path / "tiny")


def _rows(dataset, out, **kw):
    spec = {"dataset": str(dataset), "out": str(out), **TINY, **kw}
    return expand_grid(spec)


@pytest.fixture()
def count_fits(monkeypatch):
    """Number of detectors described (one per fit) in this process."""
    calls = []
    original = fit_score.detector_params

    def counting(config, seed, **kw):
        calls.append((config.result_name(), seed))
        return original(config, seed, **kw)

    monkeypatch.setattr(fit_score, "detector_params", counting)
    return calls


# ------------------------------------------------------------------------------ expansion
def test_expand_grid_crosses_axes_and_dedupes_baselines():
    rows = expand_grid(
        {
            "dataset": ["MSL", "SMAP"],
            "embedder": ["drnn", "pca"],
            "mode": ["full", "distance-only"],
            "seeds": [0, 1],
        }
    )
    names = [r.result_name() for r in rows]
    # pca ignores the mode: its two modes are one row
    assert names == [
        "MSL_drnn_full",
        "MSL_drnn_distance-only",
        "MSL_pca_baseline",
        "SMAP_drnn_full",
        "SMAP_drnn_distance-only",
        "SMAP_pca_baseline",
    ]
    assert all(r.seeds == (0, 1) for r in rows)


def test_grid_file_rows_and_command_line_override(tmp_path):
    spec = {
        "dataset": "MSL",
        "mode": ["full", "cluster-only"],
        "epochs": 3,
        "rows": [{"embedder": "kmeans", "seeds": [5]}],
    }
    path = tmp_path / "grid.json"
    path.write_text(json.dumps(spec))
    assert load_grid_file(path) == spec
    parser = argparse.ArgumentParser()
    add_benchmark_arguments(parser)
    args = parser.parse_args(["--grid", str(path), "--seeds", "1", "2", "--embedder-param", "x=2"])
    rows = configs_from_args(args)
    assert [r.result_name() for r in rows] == [
        "MSL_drnn_full",
        "MSL_drnn_cluster-only",
        "MSL_kmeans_baseline",
    ]
    assert rows[0].epochs == 3 and rows[0].seeds == (1, 2)  # the file's epochs, the CLI's seeds
    assert rows[2].seeds == (5,)  # a row's own setting wins over the top level
    assert rows[0].embedder_params == {"x": 2}
    assert rows[0].resolved_embedder_params() == {"hidden_size": 64, "n_layers": 3, "x": 2}

    yaml = pytest.importorskip("yaml", reason="YAML grid files need PyYAML")
    ypath = tmp_path / "grid.yaml"
    ypath.write_text(yaml.safe_dump(spec))
    assert load_grid_file(ypath) == spec


def test_lists_on_the_command_line_and_key_values():
    parser = argparse.ArgumentParser()
    add_benchmark_arguments(parser)
    args = parser.parse_args(
        ["--dataset", "MSL", "SMD", "--mode", "full", "distance-only", "--per-entity", "--quiet"]
    )
    rows = configs_from_args(args)
    assert len(rows) == 4 and all(r.per_entity and not r.verbose for r in rows)
    assert parse_key_value("hidden_size=32") == ("hidden_size", 32)
    assert parse_key_value("name=gru") == ("name", "gru")
    assert parse_key_value("flag=True") == ("flag", True)
    assert parse_key_value("sizes=[1, 2]") == ("sizes", [1, 2])
    with pytest.raises(ValueError, match="KEY=VALUE"):
        parse_key_value("oops")
    with pytest.raises(ValueError, match="dataset"):
        configs_from_args(parser.parse_args([]))
    with pytest.raises(ValueError, match="unknown grid keys"):
        expand_grid({"dataset": "MSL", "epoch": 3})


def test_benchmark_defaults_train_what_the_detector_trains():
    """A benchmark row without training flags measures ``MADCluster()``, not an older budget."""
    from madcluster import MADCluster
    from madcluster.embedders.drnn import DilatedRNN

    parser = argparse.ArgumentParser()
    add_benchmark_arguments(parser)
    (row,) = configs_from_args(parser.parse_args(["--dataset", "MSL"]))
    default = MADCluster()
    for name in ("epochs", "window_size", "lr", "weight_decay", "validation_size", "patience"):
        assert getattr(row, name) == getattr(default, name), name
    assert row.batch_size == 128  # every window in batches of 128 (Table 1), not "auto"
    drnn = DilatedRNN(n_features=3)
    assert row.resolved_embedder_params() == {
        "hidden_size": DilatedRNN.paper_params["hidden_size"],  # Table 1's 64 units, not the default's 32
        "n_layers": len(drnn.dilations),
    }
    assert drnn.out_features == 32


def test_tasks_per_seed_and_entity_and_fingerprint(dataset, tmp_path):
    (config,) = _rows(dataset, tmp_path / "out", embedder="pca", seeds=[0, 1], per_entity=True)
    grid = run_grid([config], progress=False)
    assert grid.n_tasks == 4 and grid.n_run == 4 and grid.ok
    folder = tmp_path / "out" / "tasks" / f"tiny_pca_baseline_per-entity-{config.fingerprint()}"
    assert sorted(p.name for p in folder.iterdir()) == [
        "seed0_a.json",
        "seed0_b.json",
        "seed1_a.json",
        "seed1_b.json",
    ]
    # settings that do not change a result do not change the fingerprint; the others do
    with pytest.raises(ValueError, match="no entity 'zz'"):
        run_grid(_rows(dataset, tmp_path, embedder="pca", per_entity=True, entities=["zz"]))
    with pytest.raises(ValueError, match="different tags"):
        run_grid([config, BenchmarkConfig(**{**config.settings(), "window_size": 30})])
    same = BenchmarkConfig(**{**config.settings(), "threads": 2, "verbose": True, "out": None})
    other = BenchmarkConfig(**{**config.settings(), "window_size": 30})
    assert same.fingerprint() == config.fingerprint() != other.fingerprint()


# ------------------------------------------------------------------------------ resume
@pytest.mark.slow
def test_rerun_skips_finished_tasks(dataset, tmp_path, count_fits):
    out = tmp_path / "out"
    rows = _rows(dataset, out, embedder=["drnn", "pca"], seeds=[0, 1])
    first = run_grid(rows, progress=False)
    assert len(count_fits) == 4 and first.n_run == 4
    before = {r.name: r.to_dict()["protocols"] for r in first.results}

    second = run_grid(rows, progress=False)
    assert len(count_fits) == 4  # nothing refitted
    assert second.n_resumed == 4 and second.n_run == 0
    assert {r.name: r.to_dict()["protocols"] for r in second.results} == before

    # one more seed: only its tasks run
    more = _rows(dataset, out, embedder=["drnn", "pca"], seeds=[0, 1, 2])
    third = run_grid(more, progress=False)
    assert len(count_fits) == 6 and third.n_resumed == 4
    assert all(len(r.runs) == 3 for r in third.results)

    run_grid(rows, progress=False, resume=False)
    assert len(count_fits) == 10


def test_interrupted_grid_keeps_finished_tasks(dataset, tmp_path, count_fits):
    class InterruptAfterTwo(SequentialExecutor):
        def run(self, fn, jobs, data, on_done, progress=None):
            for i, job in enumerate(jobs):
                if i == 2:
                    raise KeyboardInterrupt
                on_done(job, guarded_call(fn, job.payload, data[job.data_key]))

    out = tmp_path / "out"
    rows = _rows(dataset, out, embedder="pca", seeds=[0, 1, 2])
    with pytest.raises(KeyboardInterrupt):
        run_grid(rows, executor=InterruptAfterTwo(), progress=False)
    # the rows were written from what had finished, marked partial
    partial = json.loads((out / "tiny_pca_baseline.json").read_text())
    assert partial["tasks"]["complete"] is False and partial["seeds"] == [0, 1]
    assert "partial: 2/3 tasks" in (out / "results.md").read_text()
    assert not list(out.rglob("*.tmp"))  # nothing half-written

    grid = run_grid(rows, progress=False)
    assert grid.n_resumed == 2 and grid.n_run == 1 and len(count_fits) == 3
    assert grid.results[0].complete and [r["seed"] for r in grid.results[0].runs] == [0, 1, 2]


def test_unreadable_task_file_is_recomputed(dataset, tmp_path, count_fits):
    out = tmp_path / "out"
    rows = _rows(dataset, out, embedder="pca", seeds=[0])
    run_grid(rows, progress=False)
    (task_file,) = (out / "tasks").rglob("seed0.json")
    record = json.loads(task_file.read_text())
    assert record["status"] == "ok" and record["schema"] == "madcluster-task/1"
    task_file.write_text(task_file.read_text()[:50])  # as if cut off (cannot happen via store)
    grid = run_grid(rows, progress=False)
    assert grid.n_run == 1 and len(count_fits) == 2
    assert json.loads(task_file.read_text())["status"] == "ok"


# ------------------------------------------------------------------------------ failures
def test_failing_task_is_recorded_and_others_finish(dataset, tmp_path, monkeypatch):
    original = fit_score.detector_params

    def flaky(config, seed, **kw):
        if seed == 1 and config.embedder == "pca":
            raise MemoryError("pretend the fit ran out of memory")
        return original(config, seed, **kw)

    monkeypatch.setattr(fit_score, "detector_params", flaky)
    out = tmp_path / "out"
    rows = _rows(dataset, out, embedder=["pca", "kmeans"], seeds=[0, 1], n_centroids=3)
    grid = run_grid(rows, progress=False)
    assert not grid.ok and len(grid.failures) == 1
    failure = grid.failures[0]
    assert failure["seed"] == 1 and "MemoryError" in failure["error"] and failure["traceback"]
    pca, kmeans = grid.results
    assert not pca.complete and [r["seed"] for r in pca.runs] == [0]
    assert kmeans.complete and len(kmeans.runs) == 2
    stored = json.loads((out / "tiny_pca_baseline.json").read_text())
    assert stored["tasks"]["failures"][0]["error"].startswith("MemoryError")

    monkeypatch.setattr(fit_score, "detector_params", original)  # the cause is gone: rerun
    again = run_grid(rows, progress=False)
    assert again.ok and again.n_run == 1 and again.results[0].complete


def test_cli_grid_exit_status_and_summary(dataset, tmp_path, capsys):
    from madcluster.cli import main

    out = tmp_path / "cli"
    base = ["benchmark", "--dataset", str(dataset), "--seeds", "0", "1", "--window-size", "20"]
    base += ["--metric-window", "20", "--out", str(out), "--quiet", "--executor", "sequential"]
    assert main([*base, "--embedder", "pca", "kmeans", "--n-centroids", "3"]) == 0
    text = capsys.readouterr().out
    assert "4 tasks in 2 row(s): 4 run, 0 resumed" in text and "best-f1 (ORACLE)" in text
    assert main([*base, "--embedder", "pca", "kmeans", "--n-centroids", "3"]) == 0
    assert "0 run, 4 resumed" in capsys.readouterr().out
    # a detector option the detector does not have: each of its tasks fails, the command says so
    assert main([*base, "--embedder", "pca", "--detector-param", "bogus=1"]) == 1
    err = capsys.readouterr().err
    assert "FAILED tiny_pca_baseline/seed0" in err and "bogus" in err


@pytest.mark.slow
def test_no_ray_at_import():
    import subprocess
    import sys

    code = (
        "import sys, madcluster, madcluster.cli, madcluster.fleet, madcluster.benchmark.runner\n"
        "madcluster.cli.build_parser()\n"
        "assert 'ray' not in sys.modules, 'ray imported at module import time'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_default_results_folder_is_in_the_current_directory_not_the_repository():
    from madcluster.benchmark.config import BenchmarkConfig

    out = BenchmarkConfig(dataset="MSL").out
    assert out == "madcluster-results" and "benchmarks" not in out


def test_detector_is_chosen_apart_from_the_embedder():
    """--detector picks MADCluster or a baseline; the older --embedder pca means the same row."""
    parser = argparse.ArgumentParser()
    add_benchmark_arguments(parser)
    args = parser.parse_args(
        ["--dataset", "MSL", "--detector", "madcluster", "pca", "kmeans", "--embedder", "drnn",
         "--mode", "full", "distance-only", "--quiet"]
    )
    names = [r.result_name() for r in configs_from_args(args)]
    assert names == ["MSL_drnn_full", "MSL_drnn_distance-only", "MSL_pca_baseline", "MSL_kmeans_baseline"]
    new = BenchmarkConfig(dataset="MSL", detector="pca")
    old = BenchmarkConfig(dataset="MSL", embedder="pca")
    assert new.is_baseline and old.detector == "pca"
    assert new.result_name() == old.result_name() and new.fingerprint() == old.fingerprint()
    assert "--detector pca" in new.command() and "--embedder" not in new.command()
    assert fit_score.detector_params(new, 0) == fit_score.detector_params(old, 0)
    with pytest.raises(ValueError, match="unknown detector"):
        BenchmarkConfig(dataset="MSL", detector="lof")


def test_import_modules_reports_the_ones_that_fail():
    from madcluster.parallel.jobs import import_modules

    assert import_modules(["json", "madcluster.benchmark.fit_score"]) == []
    assert import_modules(["json", "no_such_module_here"]) == ["no_such_module_here"]
