"""The recent rows a refitted model is checked on: the kept rows of the model's most recently
updated streams, newest first, at most so many streams and rows, each at least a window (the
mutation run's survivors: the refit tests had one stream, so the order, the caps and the other
models' streams were never in question)."""

from __future__ import annotations

import numpy as np
import pytest
from series_helpers import three_channels

from madcluster import MADCluster
from madcluster.serve.registry import StreamStore

WINDOW = 12


@pytest.fixture(scope="module")
def store():
    model = MADCluster(input_terms=None, window_size=WINDOW, epochs=1, random_state=0)
    model.fit(three_channels(200, 0))
    store = StreamStore({"m": model, "o": model}, idle_seconds=0)
    sent = {}
    # (stream, model, rows, last used): s4 the newest but shorter than a window
    for stream_id, name, n, used in [
        ("s1", "m", 30, 4.0),
        ("s2", "m", 40, 2.0),
        ("s3", "m", 50, 3.0),
        ("s4", "m", 5, 5.0),
        ("x", "o", 60, 9.0),
    ]:
        sent[stream_id] = three_channels(n, n)
        store.update(stream_id, name, sent[stream_id].tolist(), None)
        store.get(stream_id).last_used = used
    yield store, {k: v.astype(np.float32) for k, v in sent.items()}
    store.stop()


def _lengths(got: list[np.ndarray]) -> list[int]:
    return [len(rows) for rows in got]


def test_the_newest_streams_of_the_model_come_first(store):
    store, sent = store
    got = store.recent_rows("m", streams=16, rows=1000)
    assert _lengths(got) == [30, 50, 40]  # s1, s3, s2: s4 is shorter than a window, x another model
    for rows, stream_id in zip(got, ["s1", "s3", "s2"]):
        np.testing.assert_array_equal(rows, sent[stream_id])


def test_at_most_so_many_streams(store):
    store, _ = store
    assert _lengths(store.recent_rows("m", streams=1, rows=1000)) == [30]
    assert _lengths(store.recent_rows("m", streams=2, rows=1000)) == [30, 50]


def test_at_most_so_many_rows_each_part_at_least_a_window(store):
    store, sent = store
    got = store.recent_rows("m", streams=16, rows=42)  # 30, then the last 12 of s3
    assert _lengths(got) == [30, WINDOW]
    np.testing.assert_array_equal(got[1], sent["s3"][-WINDOW:])
    assert _lengths(store.recent_rows("m", streams=16, rows=41)) == [30]  # 11 left: no window
    assert _lengths(store.recent_rows("m", streams=16, rows=20)) == [20]
