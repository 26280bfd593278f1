"""A restart comes back after a refit that was not saved: the refitted model is kept in the state
folder, and each stream resumes on the version it was last answered by."""

from __future__ import annotations

import numpy as np
import pytest

from madcluster import MADCluster
from madcluster.exceptions import ModelFileError
from madcluster.serve.kept import KEPT_FOLDER, KeptModels, fingerprint
from madcluster.serve.registry import StreamStore
from madcluster.serve.swap import Refits

WINDOW = 12


def _series(n: int, seed: int, level: float = 0.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n)[:, None]
    return level + np.sin(t / np.array([3.0, 7.0, 11.0])) + 0.1 * rng.standard_normal((n, 3))


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("models")
    before = MADCluster(window_size=WINDOW, epochs=1, random_state=0).fit(_series(300, 0))
    after = MADCluster(window_size=WINDOW, epochs=1, random_state=1).fit(_series(300, 2, 2.0))
    other = MADCluster(window_size=WINDOW, epochs=1, random_state=2).fit(_series(300, 3, 1.0))
    before.save(folder / "m.mcz")
    return folder / "m.mcz", after, other


def _served(path) -> dict[str, MADCluster]:
    return {"m": MADCluster.load(path)}  # what `madcluster serve m.mcz` loads


def test_a_restart_after_an_unsaved_refit_resumes_each_stream_on_the_refit(models, tmp_path):
    path, after, _ = models
    x = _series(500, 4)
    store = StreamStore(_served(path), tmp_path)
    store.update("a", None, x[:200].tolist(), None)
    store.update("b", None, x[:50].tolist(), None)
    assert store.swap_model("m", after) == (2, 2)  # a refit without "save": the file is as it was
    store.update("a", None, x[200:300].tolist(), None)
    store.stop()  # SIGTERM: the streams are saved, under the refitted model
    again = StreamStore(_served(path), tmp_path)  # the same command again
    assert again.versions["m"] == 2 and fingerprint(again.models["m"]) == fingerprint(after)
    assert {sid: again.get(sid).version for sid in ("a", "b")} == {"a": 2, "b": 2}
    got = again.update("a", None, x[300:].tolist(), None)
    reference = store.update("a", None, x[300:].tolist(), None)  # the server that never stopped
    assert got.version == 2
    np.testing.assert_array_equal(got.result.steps, np.arange(300, 500))
    np.testing.assert_allclose(got.result.scores, reference.result.scores, rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        got.result.final_scores, reference.result.final_scores, rtol=0, atol=1e-12
    )


def test_the_kept_model_is_written_before_the_swap_and_older_versions_go(models, tmp_path):
    path, after, other = models
    store = StreamStore(_served(path), tmp_path, save_interval=0)
    store.update("a", None, _series(100, 5).tolist(), None)
    store.swap_model("m", after)
    kept = KeptModels(tmp_path)
    assert [(e.version, e.fingerprint) for e in kept.entries("m")] == [(2, fingerprint(after))]
    assert kept.entries()[0].based_on == fingerprint(MADCluster.load(path))
    store.swap_model("m", other)  # version 2 has no stream left: deleted
    assert [e.version for e in kept.entries("m")] == [3]
    assert sorted(p.name for p in (tmp_path / KEPT_FOLDER).iterdir()) == ["m.v3.json", "m.v3.mcz"]
    again = StreamStore(_served(path), tmp_path)
    assert again.versions["m"] == 3 and again.get("a").version == 3


def test_a_stream_saved_under_a_former_version_is_handed_over_at_start(models, tmp_path):
    """A crash after the refit was kept but before its streams were saved: their files name the
    file's model; they are handed over to the served refit as a swap would (steps go on)."""
    path, after, _ = models
    x = _series(400, 6)
    store = StreamStore(_served(path), tmp_path, save_interval=0)
    store.update("a", None, x[:300].tolist(), None)  # saved under version 1
    KeptModels(tmp_path).keep("m", 2, after, fingerprint(MADCluster.load(path)))
    again = StreamStore(_served(path), tmp_path)
    stream = again.get("a")
    assert (again.versions["m"], stream.version, stream.steps_seen) == (2, 2, 300)
    rest = again.update("a", None, x[300:].tolist(), None).result
    np.testing.assert_array_equal(rest.steps, np.arange(300, 400))
    fresh = after.stream().update(x[:400]).scores[300:]  # the 300 kept rows replayed, then on
    np.testing.assert_allclose(rest.scores, fresh, rtol=0, atol=1e-12)


def test_a_replaced_model_file_is_served_and_the_kept_refits_streams_move_to_it(models, tmp_path):
    path, after, other = models
    x = _series(300, 7)
    served = tmp_path / "served.mcz"
    MADCluster.load(path).save(served)
    state = tmp_path / "state"
    store = StreamStore(_served(served), state)
    store.update("a", None, x[:200].tolist(), None)
    store.swap_model("m", after)
    store.stop()
    other.save(served)  # an operator deploys another model under the same name
    again = StreamStore(_served(served), state)
    assert again.versions["m"] == 3 and fingerprint(again.models["m"]) == fingerprint(other)
    assert again.get("a").version == 3 and again.get("a").steps_seen == 200
    # no stream is saved under version 2 any more; the file's model is kept as version 3
    assert [(e.version, e.fingerprint) for e in KeptModels(state).entries("m")] == [
        (3, fingerprint(other))
    ]
    assert again.update("a", None, x[200:].tolist(), None).result.steps[0] == 200


def test_a_refit_saved_over_its_file_needs_no_kept_copy_to_come_back(models, tmp_path):
    path, after, _ = models
    served = tmp_path / "served.mcz"
    MADCluster.load(path).save(served)
    state = tmp_path / "state"
    store = StreamStore(_served(served), state)
    store.update("a", None, _series(100, 8).tolist(), None)
    after.save(served)  # what a refit with "save": true writes
    store.swap_model("m", after, saved=True)
    store.stop()
    again = StreamStore(_served(served), state)
    assert again.versions["m"] == 2 and again.get("a").version == 2


def test_a_state_of_no_model_still_names_its_file_and_the_kept_folder(models, tmp_path):
    path, after, _ = models
    store = StreamStore({"m": after}, tmp_path, save_interval=0)
    store.update("a", None, _series(50, 9).tolist(), None)
    with pytest.raises(ModelFileError, match=r"a\.mcs' belongs to none of the loaded models"):
        StreamStore(_served(path), tmp_path)


def test_the_refit_job_keeps_its_model_for_a_restart(models, tmp_path, monkeypatch):
    from madcluster.serve import swap

    path, after, _ = models
    store = StreamStore(_served(path), tmp_path)
    store.update("a", None, _series(60, 10).tolist(), None)
    monkeypatch.setattr(swap, "refit_in_child", lambda *args: (after, {}))
    job = Refits(store, {"m": path}).start("m", _series(60, 11))
    assert job.done.wait(30) and job.state == "done", job.error
    store.stop()
    assert StreamStore(_served(path), tmp_path).get("a").version == 2


def test_leftover_temporary_files_of_a_killed_server_are_removed_at_start(models, tmp_path):
    path, _, _ = models
    (tmp_path / ".a.mcs.x1y2.tmp").write_bytes(b"half a zip")
    (tmp_path / KEPT_FOLDER).mkdir()
    (tmp_path / KEPT_FOLDER / ".m.v2.mcz.abcd.tmp").write_bytes(b"half a model")
    (tmp_path / "notes.txt").write_text("kept")
    StreamStore(_served(path), tmp_path)
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == ["notes.txt"]
