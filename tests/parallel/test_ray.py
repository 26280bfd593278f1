"""The Ray executor on a local Ray with two CPUs: same results as sequential, failures, retries."""

from __future__ import annotations

import json
import os

import pytest
from grid_data import TINY, write_dataset, write_fleet

ray = pytest.importorskip(
    "ray",
    reason="Ray is not installed (pip install 'madcluster[distributed]'); .ci/run installs it",
)

from madcluster.benchmark.grid import expand_grid
from madcluster.benchmark.runner import run_grid
from madcluster.parallel.executors import Job, make_executor
from madcluster.parallel.ray_executor import RayExecutor


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    """One local Ray for the module (starting one costs seconds); executors reuse it."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _protocols(grid):
    return {r.name: r.to_dict()["protocols"] for r in grid.results}


def test_same_results_as_sequential_and_data_put_once(tmp_path, monkeypatch):
    dataset = write_dataset(tmp_path / "tiny")
    spec = {"dataset": str(dataset), **TINY, "seeds": [0, 1], "per_entity": True}
    rows = expand_grid({**spec, "embedder": ["drnn", "pca"]})
    sequential = run_grid(
        [r.__class__(**{**r.settings(), "out": str(tmp_path / "seq")}) for r in rows],
        executor="sequential",
        progress=False,
    )
    puts = []
    original_put = ray.put
    monkeypatch.setattr(ray, "put", lambda value: puts.append(1) or original_put(value))
    on_ray = run_grid(
        [r.__class__(**{**r.settings(), "out": str(tmp_path / "ray")}) for r in rows],
        executor="ray",
        progress=False,
    )
    assert on_ray.ok and on_ray.n_run == 8 and on_ray.executor["executor"] == "ray"
    assert len(puts) == 1  # one dataset: one copy in the object store for all 8 tasks
    assert _protocols(on_ray) == _protocols(sequential)
    records = [json.loads(p.read_text()) for p in (tmp_path / "ray" / "tasks").rglob("*.json")]
    assert len(records) == 8 and all(r["pid"] != os.getpid() for r in records)

    # resume works across executors: the sequential rerun finds every task done
    again = run_grid(
        [r.__class__(**{**r.settings(), "out": str(tmp_path / "ray")}) for r in rows],
        executor="sequential",
        progress=False,
    )
    assert again.n_run == 0 and again.n_resumed == 8 and _protocols(again) == _protocols(on_ray)
    # and on Ray: a lost task file means exactly that task runs again
    next((tmp_path / "ray" / "tasks").rglob("seed1_b.json")).unlink()
    third = run_grid(
        [r.__class__(**{**r.settings(), "out": str(tmp_path / "ray")}) for r in rows],
        executor="ray",
        progress=False,
    )
    assert third.n_run == 1 and third.n_resumed == 7 and _protocols(third) == _protocols(on_ray)


def test_failing_task_reported_while_others_finish(tmp_path):
    dataset = write_dataset(tmp_path / "tiny")
    good = {"dataset": str(dataset), **TINY, "embedder": "pca", "seeds": [0, 1]}
    bad = {**good, "tag": "bad", "detector_params": {"no_such_option": 1}}
    grid = run_grid(
        [*expand_grid({**good, "out": str(tmp_path)}), *expand_grid({**bad, "out": str(tmp_path)})],
        executor="ray",
        progress=False,
    )
    assert len(grid.failures) == 2 and all("TypeError" in f["error"] for f in grid.failures)
    assert [r.name for r in grid.results] == ["tiny_pca_baseline"] and grid.results[0].complete
    assert "tiny_pca_baseline_bad" in grid.row_errors


def test_killed_worker_is_retried(tmp_path):
    marker = tmp_path / "died-once"

    def die_once(payload, data):  # a nested function travels by value to the worker
        if not marker.exists():
            marker.write_text("x")
            os._exit(1)  # the worker process dies, as when killed or out of memory
        return payload + data

    done = {}
    RayExecutor(max_retries=2).run(
        die_once, [Job("a", 1, "d")], {"d": 41}, lambda job, out: done.update({job.key: out})
    )
    assert marker.exists() and done["a"].ok and done["a"].value == 42

    marker.unlink()
    done.clear()
    RayExecutor(max_retries=0).run(
        die_once, [Job("a", 1, "d")], {"d": 41}, lambda job, out: done.update({job.key: out})
    )
    assert not done["a"].ok and "after 0 retries" in done["a"].error


def test_fleet_on_ray(tmp_path):
    from madcluster.fleet import fit_fleet, score_fleet

    data = write_fleet(tmp_path / "fleet", 3, bad=True)
    params = {"window_size": 20, "stride": 10, "epochs": 1, "random_state": 0}
    params["embedder_params"] = {"hidden_size": 8, "n_layers": 2}
    fitted = fit_fleet(data, tmp_path / "models", params=params, executor="ray", progress=False)
    assert sorted(fitted.outputs) == ["srv0", "srv1", "srv2"] and list(fitted.failures) == ["bad"]
    local = fit_fleet(
        data, tmp_path / "models-seq", params=params, executor="sequential", progress=False
    )
    scored = score_fleet(tmp_path / "models", data, tmp_path / "s", executor="ray", progress=False)
    scored_seq = score_fleet(tmp_path / "models-seq", data, tmp_path / "s2", executor="sequential")
    assert local.outputs.keys() == fitted.outputs.keys()
    for entity in fitted.outputs:  # same seed, one thread each: same model, same scores
        assert scored.outputs[entity].read_text() == scored_seq.outputs[entity].read_text()


def test_auto_executor_choice():
    assert make_executor("auto", n_jobs=1).name == "sequential"
    assert make_executor("auto", n_jobs=5).name == "ray"


def test_ctrl_c_cancels_what_runs_and_keeps_what_finished(tmp_path):
    import time

    def slow(payload, data):
        time.sleep(0.05 if payload == 0 else 30)
        return payload

    finished = []

    def on_done(job, outcome):
        finished.append(job.key)
        raise KeyboardInterrupt  # as if Ctrl-C arrived right after the first result was written

    started = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        RayExecutor().run(slow, [Job(str(i), i) for i in range(4)], {}, on_done)
    assert finished == ["0"] and time.perf_counter() - started < 25  # the rest were cancelled
    assert ray.is_initialized()  # a Ray this executor did not start is left running


def test_largest_jobs_are_submitted_first(monkeypatch):
    """Submission order is ours to set (Ray's queue order is not: a test on start times flaked
    when another test's cancelled worker was still being replaced), so record what is submitted."""
    from madcluster.parallel.jobs import Outcome

    submitted = []

    class FakeRemote:
        def options(self, **kwargs):
            return self

        def remote(self, fn, payload, data_ref):
            submitted.append(payload)
            return ray.put(Outcome(ok=True, value=payload))

    monkeypatch.setattr(ray, "remote", lambda fn: FakeRemote())
    sizes = [1.0, 5.0, 3.0, 4.0, 2.0, 0.5, 3.0]
    done = []
    RayExecutor().run(
        None, [Job(f"j{i}", (s, i), size=s) for i, s in enumerate(sizes)], {},
        lambda job, out: done.append(out.value),
    )
    assert submitted == sorted(submitted, key=lambda p: (-p[0], p[1]))  # equal sizes keep order
    assert sorted(done) == sorted(submitted) and len(done) == len(sizes)


def test_warm_up_imports_in_the_workers_and_leaves_a_joined_ray_running(tmp_path):
    executor = RayExecutor()
    executor.warm_up(["madcluster.benchmark.fit_score", "no_such_module_here"])
    assert [ray.get(ref) for ref in executor._warming] == [["no_such_module_here"]] * 2
    executor.close()
    assert ray.is_initialized()  # the module's Ray was joined, not started: still running

    def broken_loader(name, data_dir=None):
        raise FileNotFoundError(f"no dataset {name}")

    with pytest.raises(FileNotFoundError):
        run_grid(expand_grid({"dataset": "X", **TINY}), executor="ray", loader=broken_loader)
    assert ray.is_initialized()
