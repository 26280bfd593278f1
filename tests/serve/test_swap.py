"""A served model replaced while streams run: refits in a child process, streams handed over."""

from __future__ import annotations

import threading

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient
from series_helpers import three_channels

from madcluster import MADCluster
from madcluster.exceptions import DataError
from madcluster.serve import swap
from madcluster.serve.app import create_app
from madcluster.serve.registry import StreamStore
from madcluster.serve.streams import Conflict, RowTail, handover_rows

WINDOW = 12


@pytest.fixture(scope="module")
def models(swap_models):
    return swap_models


@pytest.mark.parametrize("chunks", [[1] * 9, [4, 4, 4], [10, 3], [2, 7, 1, 5]])
def test_row_tail_keeps_the_last_rows_in_order(chunks):
    rows = np.arange(3 * sum(chunks), dtype=float).reshape(-1, 3)
    tail, sent = RowTail(7, 3), 0
    for size in chunks:
        tail.append(rows[sent : sent + size])
        sent += size
        np.testing.assert_array_equal(tail.rows(), rows[max(0, sent - 7) : sent])
    assert len(tail) == min(7, sent)


def test_a_swap_hands_open_streams_over_and_their_steps_go_on(models):
    before, after = models
    store = StreamStore({"m": before})
    x = np.concatenate([three_channels(200, 3), three_channels(150, 4, 2.0)])
    for i in range(0, 200, 7):
        assert store.update("s", None, x[i : min(i + 7, 200)].tolist(), None).version == 1
    assert store.swap_model("m", after) == (2, 1)
    finals, steps = {}, []
    for i in range(200, len(x), 5):
        outcome = store.update("s", None, x[i : i + 5].tolist(), None)
        assert outcome.version == 2
        steps.extend(outcome.result.steps.tolist())
        finals.update(zip(outcome.result.final_steps.tolist(), outcome.result.final_scores))
    assert steps == list(range(200, len(x)))  # the stream's numbering, not the new scorer's
    stream = store.get("s")
    pending = stream.shifted(stream.scorer.pending())
    finals.update(zip(pending.steps.tolist(), pending.scores))
    # from the first replayed row on, the stream's scores are the new model's on the series
    start = 200 - min(200, handover_rows(before))
    assert start == stream.offset == 0
    whole = after.decision_function(x[start:])
    got = np.array([finals[s] for s in sorted(finals)])
    assert min(finals) <= 200 - after.model_.combination.final_after()  # old pending steps too
    np.testing.assert_allclose(
        got, whole[min(finals) - start :], rtol=0, atol=1e-9 * np.abs(whole).max()
    )


def test_a_long_stream_replays_only_its_tail_and_is_numbered_on(models):
    before, after = models
    store = StreamStore({"m": before})
    x = three_channels(1500, 5)
    store.update("s", None, x[:1400].tolist(), None)
    store.swap_model("m", after)
    stream = store.get("s")
    kept = handover_rows(after)
    assert stream.offset == 1400 - kept and stream.steps_seen == 1400
    outcome = store.update("s", None, x[1400:].tolist(), None)
    np.testing.assert_array_equal(outcome.result.steps, np.arange(1400, 1500))
    # at once: a fresh stream of the new model fed the kept rows and the new ones
    fresh = after.stream().update(x[1400 - kept :]).scores[kept:]
    np.testing.assert_allclose(outcome.result.scores, fresh, rtol=0, atol=1e-12)


def test_a_swap_refuses_other_columns_and_a_state_folder_keeps_the_numbering(models, tmp_path):
    before, after = models
    store = StreamStore({"m": before}, tmp_path, save_interval=0)
    other = MADCluster(window_size=WINDOW, epochs=1, random_state=0).fit(
        three_channels(300, 0)[:, :2]
    )
    with pytest.raises(DataError, match="takes 3 columns"):
        store.swap_model("m", other)
    x = three_channels(400, 6)
    store.update("s", None, x[:300].tolist(), None)
    store.swap_model("m", after)
    store.update("s", None, x[300:350].tolist(), None)  # saved after each update (interval 0)
    again = StreamStore({"m": after}, tmp_path, save_interval=0)
    rest = again.update("s", None, x[350:].tolist(), None).result
    reference = store.update("s", None, x[350:].tolist(), None).result
    np.testing.assert_array_equal(rest.steps, np.arange(350, 400))
    np.testing.assert_allclose(rest.scores, reference.scores, rtol=0, atol=1e-12)


def test_a_second_refit_of_a_model_waits_for_the_first(models, monkeypatch):
    before, after = models
    store = StreamStore({"m": before})
    release = threading.Event()
    monkeypatch.setattr(swap, "refit_in_child", lambda *args: (release.wait(10) and after, {}))
    refits = swap.Refits(store)
    job = refits.start("m", three_channels(50, 7))
    with pytest.raises(Conflict, match="being refitted"):
        refits.start("m", three_channels(50, 7))
    with pytest.raises(DataError, match="at least one window"):
        swap.Refits(StreamStore({"m": before})).start("m", three_channels(5, 7))
    release.set()
    assert job.done.wait(10) and job.state == "done" and job.version == 2
    assert store.models["m"] is after


def test_the_refit_endpoint_refits_in_a_child_and_streams_say_which_model(models, tmp_path):
    before, _ = models
    path = tmp_path / "m.mcz"
    before.save(path)
    served = MADCluster.load(path)
    client = TestClient(create_app(StreamStore({"m": served}), model_files={"m": path}))
    x = three_channels(300, 8, 2.0)  # the stream already at the new normal (else the checks refuse)
    assert client.post("/streams/s", json={"rows": x[:100].tolist()}).json()["model_version"] == 1
    recent = three_channels(200, 9, 2.0)
    answer = client.post(
        "/models/m/refit", json={"rows": recent.tolist(), "wait": True, "save": True}
    )
    assert answer.status_code == 200, answer.text
    job = answer.json()["refit"]
    assert (job["state"], job["version"], job["streams_moved"], job["rows"]) == ("done", 2, 1, 200)
    assert client.get("/models").json()["models"]["m"]["version"] == 2
    body = client.post("/streams/s", json={"rows": x[100:101].tolist()}).json()
    assert body["model_version"] == 2 and body["steps"] == [100]
    expected = served.refit(recent)  # the same warm-started refit, in this process
    np.testing.assert_allclose(
        MADCluster.load(path).decision_function(x), expected.decision_function(x), atol=1e-6
    )
    failed = client.post("/models/m/refit", json={"rows": x[:5].tolist(), "wait": True})
    assert failed.status_code == 400 and "at least one window" in failed.json()["error"]
    assert client.get("/models/m/refit").json()["refit"]["state"] == "done"


def test_rows_sent_during_a_handover_are_caught_up(models, monkeypatch):
    """The replay runs without the stream's lock (updates keep coming); the rows sent meanwhile
    are fed to the new scorer before it takes over, so none is lost or counted twice."""
    from madcluster.serve import versions

    before, after = models
    store = StreamStore({"m": before})
    x = three_channels(400, 10)
    store.update("s", None, x[:300].tolist(), None)
    real = versions.handover

    def handover_while_rows_arrive(detector, rows, steps):
        out = real(detector, rows, steps)
        if steps == 300:  # the first replay: two updates land before the new scorer takes over
            store.update("s", None, x[300:305].tolist(), None)
            store.update("s", None, x[305:310].tolist(), None)
        return out

    monkeypatch.setattr(versions, "handover", handover_while_rows_arrive)
    store.swap_model("m", after)
    stream = store.get("s")
    assert stream.steps_seen == 310 and stream.version == 2
    rest = store.update("s", None, x[310:].tolist(), None).result
    np.testing.assert_array_equal(rest.steps, np.arange(310, 400))
    fresh = after.stream().update(x[:400]).scores[310:]  # all 300 kept rows replayed, then on
    np.testing.assert_allclose(rest.scores, fresh, rtol=0, atol=1e-12)
