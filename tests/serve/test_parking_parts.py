"""Streams leaving memory, part by part: what ``expire_idle`` and ``keep_budget`` answer and log,
a busy stream left alone, and the sizes the messages give (the fifth mutation run's survivors:
the tests checked the streams moved, not the counts and the log lines), then a stream used
recently left alone, a one-byte budget and the refusal when every open stream is busy (its held-out
draw's)."""

from __future__ import annotations

import logging
import time

import pytest
from series_helpers import three_channels

from madcluster import MADCluster
from madcluster.serve.parking import _size
from madcluster.serve.registry import StreamStore
from madcluster.serve.streams import StreamMemoryFull

LOGGER = "madcluster.serve.registry"


@pytest.fixture(scope="module")
def model():
    return MADCluster(input_terms=None, window_size=12, epochs=1, random_state=0).fit(
        three_channels(200, 0)
    )


def _messages(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER]


def test_sizes_are_kib_below_one_mib_and_mib_from_it():
    assert _size(2**20) == "1.0 MiB"
    assert _size(2**20 - 512) == "1024 KiB"
    assert _size(3 * 2**20) == "3.0 MiB"
    assert _size(5 * 1024) == "5 KiB"


def test_an_idle_stream_expires_under_a_second_idle_and_says_so(model, caplog):
    store = StreamStore({"m": model}, idle_seconds=0.5)
    store.update("s", None, three_channels(20, 1).tolist(), None)
    with caplog.at_level(logging.INFO, logger=LOGGER):
        assert store.expire_idle(now=time.monotonic() + 1.0) == 1
    assert len(store) == 0
    assert _messages(caplog) == ["expired 1 stream(s) idle for 0.5 s or more"]


def test_a_stream_used_within_idle_seconds_is_not_expired(model):
    store = StreamStore({"m": model}, idle_seconds=60)
    store.update("s", None, three_channels(20, 1).tolist(), None)
    used = store.get("s").last_used
    assert store.expire_idle(now=used + 59.5) == 0 and len(store) == 1
    assert store.expire_idle(now=used + 60.5) == 1 and len(store) == 0


def test_a_busy_stream_is_not_expired(model):
    store = StreamStore({"m": model}, idle_seconds=60)
    store.update("s", None, three_channels(20, 1).tolist(), None)
    later = time.monotonic() + 120
    stream = store.get("s")
    with stream.lock:  # an update in progress
        assert store.expire_idle(now=later) == 0
    assert len(store) == 1
    assert store.expire_idle(now=later) == 1


def test_within_the_budget_nothing_is_parked(model, tmp_path):
    store = StreamStore({"m": model}, tmp_path, max_stream_memory=1 << 30, idle_seconds=0)
    store.update("s", None, three_channels(20, 1).tolist(), None)
    assert store.keep_budget() == 0 and len(store) == 1


def test_parking_past_the_budget_names_the_folder_and_the_limit(model, tmp_path, caplog):
    store = StreamStore({"m": model}, tmp_path, max_stream_memory=0, idle_seconds=0)
    for i in range(3):
        store.update(f"s{i}", None, three_channels(20, i).tolist(), None)
    store.max_stream_memory = 5 * 1024  # as if the streams had grown past it
    with caplog.at_level(logging.INFO, logger=LOGGER):
        assert store.keep_budget() == 3
    assert _messages(caplog) == [
        (
            f"parked 3 least recently used stream(s) in {tmp_path}: the streams held over "
            "--max-stream-memory (5 KiB)"
        )
    ]


def test_a_new_stream_past_the_budget_with_only_busy_streams_is_refused_whole(model, tmp_path):
    store = StreamStore({"m": model}, tmp_path, max_stream_memory=0, idle_seconds=0)
    store.update("a", None, three_channels(20, 1).tolist(), None)
    held = store.stream_memory
    store.max_stream_memory = held  # one more stream is past it
    with store.get("a").lock, pytest.raises(StreamMemoryFull) as refused:  # "a" cannot be parked
        store.update("b", None, three_channels(20, 2).tolist(), None)
    assert str(refused.value) == (
        f"cannot open stream 'b': the 1 open streams hold {_size(held)} (about {_size(held)} "
        f"each), the limit is {_size(held)} (--max-stream-memory); close streams with "
        "DELETE /streams/ID, or the streams in use could not be parked"
    )
    assert len(store) == 1


def test_a_budget_of_one_byte_is_a_budget(model):
    store = StreamStore({"m": model}, max_stream_memory=1)  # 0 alone means no limit
    with pytest.raises(StreamMemoryFull, match="cannot open stream 's'"):
        store.update("s", None, three_channels(20, 1).tolist(), None)
    assert len(store) == 0


def test_exactly_at_the_budget_is_within_it(model, tmp_path):
    store = StreamStore({"m": model}, tmp_path, max_stream_memory=0, idle_seconds=0)
    for i in range(2):
        store.update(f"s{i}", None, three_channels(20, i).tolist(), None)
    store.max_stream_memory = store.stream_memory
    assert store.keep_budget() == 0 and len(store) == 2
    store.max_stream_memory = store.stream_memory - 1
    assert store.keep_budget() >= 1


def test_the_background_step_expires_idle_streams(model):
    store = StreamStore({"m": model}, idle_seconds=0.1)
    store.update("s", None, three_channels(20, 1).tolist(), None)
    deadline = time.monotonic() + 5
    while len(store) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(store) == 0
