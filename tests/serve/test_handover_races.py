"""A swap's handover while the stream keeps moving: more rows than the tail holds sent during the
replay (replayed again from the tail), exactly a tail's worth (caught up on the first replay), and
a stream closed during the handover (the others still move, measured again). The swap tests
sent a few rows meanwhile only (the mutation run's survivors)."""

from __future__ import annotations

import numpy as np
import pytest
from series_helpers import three_channels

from madcluster.serve import versions
from madcluster.serve.footprint import stream_bytes
from madcluster.serve.registry import StreamStore
from madcluster.serve.streams import handover_rows

WINDOW = 12


@pytest.fixture(scope="module")
def models(swap_models):
    return swap_models


@pytest.mark.parametrize("meanwhile", [1100, 1024])
def test_rows_sent_during_a_replay_are_caught_up_however_many(models, monkeypatch, meanwhile):
    before, after = models
    capacity = handover_rows(after)
    assert capacity == 1024
    store = StreamStore({"m": before}, idle_seconds=0)
    x = three_channels(300 + meanwhile + 50, 10)
    store.update("s", None, x[:300].tolist(), None)
    real = versions.handover

    def handover_while_rows_arrive(detector, rows, steps):
        out = real(detector, rows, steps)
        if steps == 300:
            store.update("s", None, x[300 : 300 + meanwhile].tolist(), None)
        return out

    monkeypatch.setattr(versions, "handover", handover_while_rows_arrive)
    assert store.swap_model("m", after) == (2, 1)
    stream = store.get("s")
    end = 300 + meanwhile
    assert (stream.steps_seen, stream.version) == (end, 2)
    rest = store.update("s", None, x[end:].tolist(), None).result
    np.testing.assert_array_equal(rest.steps, np.arange(end, end + 50))
    # more than the tail: the last 1,024 rows replayed; else the first replay goes on
    first = end - capacity if meanwhile > capacity else 0
    fresh = after.stream().update(x[first:]).scores[-50:]
    np.testing.assert_allclose(rest.scores, fresh, rtol=0, atol=1e-12)
    store.stop()


def test_a_stream_closed_during_the_handover_leaves_the_others_moving(models, monkeypatch):
    before, after = models
    store = StreamStore({"m": before}, idle_seconds=0)
    for stream_id in ("a", "b"):
        store.update(stream_id, None, three_channels(40, 3).tolist(), None)
    real = versions.handover

    def close_a_meanwhile(detector, rows, steps):
        out = real(detector, rows, steps)
        if "a" in store._streams:
            store.close("a")
        return out

    monkeypatch.setattr(versions, "handover", close_a_meanwhile)
    held_before = store.get("b").held
    assert store.swap_model("m", after) == (2, 1)
    assert len(store) == 1 and store.get("b").version == 2
    # the moved stream measured again, and the store's sum with it (the budget's count)
    b = store.get("b")
    assert b.held == stream_bytes(b.scorer, b.tail) != held_before
    assert store.stream_memory == b.held
    store.stop()


def test_no_stream_of_the_model_expires_during_its_handover(models, monkeypatch):
    before, after = models
    store = StreamStore({"m": before}, idle_seconds=10)
    store.update("s", None, three_channels(40, 3).tolist(), None)
    real, expired = versions.handover, []

    def expire_meanwhile(detector, rows, steps):
        expired.append(store.expire_idle(now=1e12))
        return real(detector, rows, steps)

    monkeypatch.setattr(versions, "handover", expire_meanwhile)
    assert store.swap_model("m", after) == (2, 1)
    assert expired == [0] and store.get("s").version == 2
    assert store.expire_idle(now=1e12) == 1  # after the swap it may
    store.stop()


def test_the_models_parked_streams_are_read_back_and_moved_others_stay(models, tmp_path):
    before, after = models
    store = StreamStore({"m": before, "o": before}, tmp_path, idle_seconds=10)
    store.update("s", "m", three_channels(40, 3).tolist(), None)
    store.update("t", "o", three_channels(40, 4).tolist(), None)
    assert store.expire_idle(now=1e12) == 2 and store.parked == 2
    assert store.swap_model("m", after) == (2, 1)
    assert len(store) == 1 and store.parked == 1  # "t" of the other model stays parked
    assert store.get("s").version == 2 and store.get("s").steps_seen == 40
    assert store.expire_idle(now=2e12) == 1  # parked under the new model, and read back
    assert store.get("s").version == 2 and store.get("s").steps_seen == 40
    store.stop()
