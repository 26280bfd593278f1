"""The streams' memory budget: what the streams in memory hold is counted, and past
``--max-stream-memory`` the least recently used are parked to the state folder, or without one a
new stream is refused (507)."""

from __future__ import annotations

import argparse

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient

from madcluster import MADCluster
from madcluster.cli.arg_types import byte_size
from madcluster.serve.app import create_app
from madcluster.serve.footprint import NEW_STREAM_BYTES, stream_bytes
from madcluster.serve.registry import StreamStore
from madcluster.serve.streams import StreamMemoryFull

WINDOW = 12


def _series(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n)[:, None]
    return np.sin(t / np.array([3.0, 7.0, 11.0])) + 0.1 * rng.standard_normal((n, 3))


@pytest.fixture(scope="module")
def model():
    return MADCluster(window_size=WINDOW, epochs=1, random_state=0).fit(_series(300, 0))


@pytest.fixture(scope="module")
def one_stream(model):
    """What a stream of 40 rows holds."""
    store = StreamStore({"m": model}, max_stream_memory=0)
    store.update("s", None, _series(40, 1).tolist(), None)
    return store.get("s").held


def _held(store: StreamStore) -> int:
    return sum(stream_bytes(s.scorer, s.tail) for s in store._streams.values())


def test_the_count_follows_opens_updates_and_closes(model):
    store = StreamStore({"m": model}, max_stream_memory=0)
    for i in range(3):
        store.update(f"s{i}", None, _series(40, i).tolist(), None)
    store.update("s0", None, _series(200, 9).tolist(), None)  # a large update: measured again
    assert store.stream_memory == _held(store) > 3 * NEW_STREAM_BYTES
    store.close("s1")
    assert store.stream_memory == _held(store)
    store.close("s0")
    store.close("s2")
    assert store.stream_memory == 0


def test_without_a_state_folder_a_new_stream_past_the_budget_gets_507(model, one_stream):
    store = StreamStore({"m": model}, max_stream_memory=int(3.5 * one_stream))
    client = TestClient(create_app(store))
    for i in range(3):
        answer = client.post(f"/streams/s{i}", json={"rows": _series(40, i).tolist()})
        assert answer.status_code == 200, answer.text
    for rows in (_series(1, 3), _series(40, 3)):  # the one-row fast path and the FastAPI route
        refused = client.post("/streams/s9", json={"rows": rows.tolist()})
        assert refused.status_code == 507
        message = refused.json()["error"]
        assert "cannot open stream 's9'" in message and "(--max-stream-memory)" in message
        assert "serve with --state-dir" in message
    assert client.post("/streams/s0", json={"rows": _series(1, 4).tolist()}).status_code == 200
    health = client.get("/health").json()
    assert health["stream_memory_bytes"] == store.stream_memory <= health["max_stream_memory"]
    assert "madcluster_stream_memory_bytes" in client.get("/metrics").text
    with pytest.raises(StreamMemoryFull):
        store.update("s9", None, _series(40, 5).tolist(), None)


def test_with_a_state_folder_the_least_recently_used_are_parked(model, one_stream, tmp_path):
    budget = int(3.5 * one_stream)
    store = StreamStore({"m": model}, tmp_path, max_stream_memory=budget, idle_seconds=0)
    x = _series(80, 6)
    for i in range(6):
        store.update(f"s{i}", None, x[:40].tolist(), None)
        assert store.stream_memory <= budget
    assert store.parked >= 3 and len(store) + store.parked == 6
    assert "s0" in store._parked and "s5" in store._streams  # the oldest went first
    assert (tmp_path / "s0.mcs").is_file()
    back = store.update("s0", None, x[40:].tolist(), None)  # read back, another one parked
    np.testing.assert_array_equal(back.result.steps, np.arange(40, 80))
    fresh = model.stream().update(x).scores[40:]
    np.testing.assert_allclose(back.result.scores, fresh, rtol=0, atol=1e-12)
    # its first discord subsequences made its sliding products (counted): the background step
    # parks for that growth, never s0, the stream just used
    store.keep_budget()
    assert store.stream_memory <= budget and "s0" in store._streams


def test_growth_past_the_budget_parks_streams_in_the_background_step(model, one_stream, tmp_path):
    store = StreamStore({"m": model}, tmp_path, max_stream_memory=0, idle_seconds=0)
    for i in range(4):
        store.update(f"s{i}", None, _series(40, i).tolist(), None)
    store.max_stream_memory = int(2.5 * one_stream)  # as if the streams had grown past it
    assert store.keep_budget() >= 2
    assert store.stream_memory <= 0.9 * store.max_stream_memory
    assert store.parked + len(store) == 4


def test_a_restart_past_the_budget_keeps_the_rest_parked(model, one_stream, tmp_path):
    store = StreamStore({"m": model}, tmp_path, max_stream_memory=0)
    for i in range(5):
        store.update(f"s{i}", None, _series(40, i).tolist(), None)
    store.stop()
    again = StreamStore({"m": model}, tmp_path, max_stream_memory=int(2.5 * one_stream))
    assert again.stream_memory <= again.max_stream_memory and again.parked >= 2
    assert again.get("s0").steps_seen == 40  # read back on use


@pytest.mark.parametrize(
    ("text", "size"),
    [("0", 0), ("4096", 4096), ("512M", 512 << 20), ("2G", 2 << 30), ("64KiB", 65536)],
)
def test_sizes_are_read_with_binary_units(text, size):
    assert byte_size(text) == size


@pytest.mark.parametrize("text", ["-1G", "lots", "G", "nan"])
def test_a_bad_size_is_refused_naming_it(text):
    with pytest.raises(argparse.ArgumentTypeError, match=repr(text).replace("(", r"\(")):
        byte_size(text)


def test_the_command_line_refuses_a_bad_size_in_one_line(capsys):
    from madcluster.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["serve", "model.mcz", "--max-stream-memory", "lots"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0] == (
        "madcluster serve: error: argument --max-stream-memory: expected a size such as "
        "1073741824, 512M or 2G, got 'lots'"
    )
