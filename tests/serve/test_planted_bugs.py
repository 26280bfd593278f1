"""Tests that catch the service bugs a mutation audit planted and the suite missed: each fails on
its bug (checked by planting it) and passes on the code as it is.

- finals not renumbered after a swap; the step offset not saved in the state file;
- a token accepted when it is a prefix of the real one; ``/metrics`` readable without it;
- the stream limit not counting streams parked in the state folder;
- a refit child that ignores ``from_scratch``;
- a stream's at-once answers divided by the series scales;
- a point-adjusted F1 that misses a segment hit only at its last row.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient

from madcluster import MADCluster
from madcluster.estimator.incident_scoring import at_once_scores
from madcluster.metrics.pointwise import point_adjusted_f1
from madcluster.serve import swap
from madcluster.serve.app import create_app
from madcluster.serve.registry import StreamStore
from madcluster.serve.streams import TooManyStreams, handover_rows

WINDOW = 12
ROWS = 1400  # past a handover's 1,024 replayed rows: the stream's offset is not 0
# rows after the swap: a handed-over stream gives final scores once its scorer has seen the
# series scales' first 3,000 steps (1,024 of them replayed)
MORE = 2200


def _series(n: int, seed: int, level: float = 0.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n)[:, None]
    return level + np.sin(t / np.array([3.0, 7.0, 11.0])) + 0.1 * rng.standard_normal((n, 3))


@pytest.fixture(scope="module")
def models():
    before = MADCluster(window_size=WINDOW, epochs=1, random_state=0).fit(_series(300, 0))
    after = MADCluster(window_size=WINDOW, epochs=1, random_state=1).fit(_series(300, 2))
    return before, after


def _swapped(models, state_dir=None) -> tuple[StreamStore, np.ndarray]:
    before, after = models
    store = StreamStore({"m": before}, state_dir, save_interval=0)
    x = _series(ROWS + MORE, 3)
    store.update("s", None, x[:ROWS].tolist(), None)
    store.swap_model("m", after)
    assert store.get("s").offset == ROWS - handover_rows(after) > 0
    return store, x


def test_final_steps_after_a_swap_are_numbered_as_the_stream(models):
    store, x = _swapped(models)
    after = models[1]
    kept = handover_rows(after)
    outcome = store.update("s", None, x[ROWS:].tolist(), None).result
    fresh = after.stream()
    fresh.update(x[ROWS - kept : ROWS])
    reference = fresh.update(x[ROWS:])  # its steps count from the first replayed row
    assert len(outcome.final_steps) > 0
    np.testing.assert_array_equal(outcome.final_steps, reference.final_steps + ROWS - kept)
    np.testing.assert_allclose(outcome.final_scores, reference.final_scores, rtol=0, atol=1e-12)
    assert outcome.final_steps[-1] < ROWS + MORE and outcome.final_steps[0] >= ROWS - kept


def test_a_restart_keeps_the_step_offset_of_a_handed_over_stream(models, tmp_path):
    store, x = _swapped(models, tmp_path)
    offset = store.get("s").offset
    store.stop()
    again = StreamStore({"m": models[1]}, tmp_path)
    assert again.get("s").offset == offset and again.get("s").steps_seen == ROWS
    rest = again.update("s", None, x[ROWS:].tolist(), None).result
    np.testing.assert_array_equal(rest.steps, np.arange(ROWS, ROWS + MORE))
    assert rest.final_steps[0] == ROWS - handover_rows(models[1])  # the first replayed row
    info = TestClient(create_app(again)).get("/streams/s").json()
    assert (info["steps_seen"], info["scored_from"]) == (ROWS + MORE, offset)


@pytest.mark.parametrize(
    "given",
    ["Bearer s3cret-tok", "Bearer s3cret-token-and-more", "Bearer S3CRET-TOKEN", "s3cret-token",
     "Bearer  s3cret-token", "Bearer ", "bearer s3cret-token"],
)  # fmt: skip
@pytest.mark.parametrize(
    ("method", "path"),
    [("get", "/models"), ("get", "/metrics"), ("post", "/streams/t"), ("get", "/streams/t"),
     ("delete", "/streams/t"), ("post", "/models/m/score"), ("post", "/models/m/refit"),
     ("get", "/models/m/refit"), ("get", "/docs")],
)  # fmt: skip
def test_only_the_exact_token_opens_any_route(models, method, path, given):
    client = TestClient(create_app(StreamStore({"m": models[0]}), token="s3cret-token"))
    body = {"json": {"rows": [[0.1, 0.2, 0.3]] * WINDOW}} if method == "post" else {}
    refused = getattr(client, method)(path, headers={"authorization": given}, **body)
    assert refused.status_code == 401, (path, given)
    missing = getattr(client, method)(path, **body)
    assert missing.status_code == 401
    right = getattr(client, method)(path, headers={"authorization": "Bearer s3cret-token"}, **body)
    assert right.status_code != 401


def test_metrics_need_the_token_and_health_does_not(models):
    client = TestClient(create_app(StreamStore({"m": models[0]}), token="s3cret-token"))
    assert client.get("/metrics").status_code == 401
    assert client.get("/health").status_code == 200
    assert (
        "madcluster_requests"
        in client.get("/metrics", headers={"authorization": "Bearer s3cret-token"}).text
    )


def test_the_stream_limit_counts_streams_parked_in_the_state_folder(models, tmp_path):
    store = StreamStore({"m": models[0]}, tmp_path, max_streams=2, idle_seconds=3600)
    for stream in ("a", "b"):
        store.update(stream, None, _series(20, 4).tolist(), None)
    assert store.expire_idle(now=1e12) == 2 and len(store) == 0 and store.parked == 2
    with pytest.raises(TooManyStreams, match="2 of them expired to the state folder"):
        store.update("c", None, _series(20, 5).tolist(), None)
    store.update("a", None, _series(1, 6).tolist(), None)  # a parked one comes back: no new one


@pytest.mark.slow  # subprocesses
def test_a_refit_from_scratch_is_a_fresh_fit_not_a_warm_start(models):
    before = models[0]
    rows = _series(300, 7, 1.0)
    scratch, _ = swap.refit_in_child(before, rows, None, True)
    warm = copy.deepcopy(before).refit(rows)  # what the child gives warm (test_swap.py)
    fresh = MADCluster(**before.get_params()).fit(rows)
    x = _series(200, 8, 1.0)
    np.testing.assert_allclose(
        scratch.decision_function(x), fresh.decision_function(x), rtol=1e-6, atol=1e-6
    )
    assert np.abs(warm.decision_function(x) - fresh.decision_function(x)).max() > 1e-3


def test_a_streams_at_once_answers_keep_the_training_scales_after_the_series_scales(models):
    """The series scales (read from a stream's first steps) divide the final scores only; a row's
    first answer keeps the training statistics, past the first scale_rows steps too."""
    model = models[0]
    scale_rows = model.model_.combination.scale_rows
    assert scale_rows > 0
    x = _series(scale_rows + 300, 9, 0.5)  # off the training level: series scales != 1
    store = StreamStore({"m": model})
    client = TestClient(create_app(store))
    scores = []
    for lo in range(0, len(x), 2000):
        scores += client.post("/streams/s", json={"rows": x[lo : lo + 2000].tolist()}).json()[
            "scores"
        ]
    expected = at_once_scores(model.model_, x)
    np.testing.assert_allclose(scores, expected, rtol=0, atol=1e-9 * np.abs(expected).max())
    scales = store.get("s").scorer._terms.scales
    assert scales is not None and any(abs(v - 1.0) > 1e-3 for v in scales.values())


@pytest.mark.parametrize("hit", [5, 7, 9])  # the first, a middle and the last row of the segment
def test_point_adjustment_credits_a_segment_hit_at_any_of_its_rows(hit):
    labels = np.zeros(20, dtype=int)
    labels[5:10] = 1
    predictions = np.zeros(20, dtype=int)
    predictions[hit] = 1
    assert point_adjusted_f1(predictions, labels) == 1.0
    predictions[10] = 1  # just after the segment: a false positive, the segment still credited
    assert point_adjusted_f1(predictions, labels) == pytest.approx(2 * 5 / (2 * 5 + 1))
