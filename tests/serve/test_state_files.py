"""A stream's state and record on their own: a state file from before model versions, the saver's
failure in the log, the rows a handover keeps, room made at the stream limit (the fifth mutation
run's survivors: an old file without a tail was never read, no test made the background save
fail, the handover's rows were only ever the minimum, and idle streams were tested at 1 s and
more)."""

from __future__ import annotations

import logging
import time
from types import SimpleNamespace

import pytest
from series_helpers import three_channels

from madcluster import MADCluster
from madcluster.serve.registry import StreamStore
from madcluster.serve.streams import MIN_HANDOVER_ROWS, StateFolder, TooManyStreams, handover_rows


@pytest.fixture(scope="module")
def model():
    return MADCluster(input_terms=None, window_size=12, epochs=1, random_state=0).fit(
        three_channels(200, 0)
    )


def test_a_state_file_from_before_model_versions_has_no_tail_and_offset_0(model, tmp_path):
    scorer = model.stream()
    scorer.update(three_channels(30, 1))
    scorer.save(tmp_path / "s.mcs")  # no "served" record, no tail
    stream = StateFolder(tmp_path).read("s", "m", model, 4)
    assert (stream.model, stream.version, stream.offset, stream.steps_seen) == ("m", 4, 0, 30)
    assert stream.tail.rows().shape == (0, 3)


def test_a_failed_background_save_is_logged_with_the_folder(model, tmp_path, monkeypatch, caplog):
    store = StreamStore({"m": model}, tmp_path, save_interval=0.02)

    def full() -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store, "flush", full)
    with caplog.at_level(logging.ERROR, logger="madcluster.serve.registry"):
        deadline = time.monotonic() + 5
        while not caplog.records and time.monotonic() < deadline:
            time.sleep(0.02)
    assert caplog.records[0].getMessage() == f"saving stream states to {tmp_path} failed"


def test_stop_waits_for_each_thread_at_most_30_s_then_saves(model, tmp_path):
    """A thread stuck in a save cannot hold a shutdown forever."""

    class Stuck:
        def __init__(self) -> None:
            self.timeouts: list[float | None] = []

        def join(self, timeout: float | None = None) -> None:
            self.timeouts.append(timeout)

    store = StreamStore({"m": model}, tmp_path, idle_seconds=60)
    store.update("s", None, three_channels(20, 1).tolist(), None)
    store.stop()  # the real threads end
    saver, janitor = Stuck(), Stuck()
    store._saver, store._janitor = saver, janitor
    store.update("t", None, three_channels(20, 2).tolist(), None)
    store.stop()
    assert saver.timeouts == [30] and janitor.timeouts == [30]
    assert sorted(StateFolder(tmp_path).stream_ids()) == ["s", "t"]


def test_a_handover_keeps_rows_for_the_slowest_part_and_two_windows():
    combination = SimpleNamespace(final_after=lambda: 600)
    detector = SimpleNamespace(
        window_size=100,
        model_=SimpleNamespace(grid=SimpleNamespace(causal=True), combination=combination),
    )
    assert handover_rows(detector) == 2 * 600 + 2 * 100
    detector.model_.grid.causal = False  # every score final at once
    assert handover_rows(detector) == MIN_HANDOVER_ROWS


def test_at_the_stream_limit_streams_idle_under_a_second_are_expired_first(model):
    store = StreamStore({"m": model}, max_streams=1, idle_seconds=0.5)
    store.update("a", None, three_channels(20, 1).tolist(), None)
    store._streams["a"].last_used -= 1.0  # idle for a second
    store.update("b", None, three_channels(20, 2).tolist(), None)
    assert list(store._streams) == ["b"]


def test_a_stream_opened_while_room_was_made_is_updated_not_replaced(model, monkeypatch):
    store = StreamStore({"m": model})
    x = three_channels(30, 1)
    store.update("s", None, x[:20].tolist(), None)
    with store._lock:
        opened = store._remove("s")

    def make_room(stream_id: str) -> None:  # another request opened it meanwhile
        store._add(stream_id, opened)

    monkeypatch.setattr(store, "_make_room", make_room)
    assert store.update("s", None, x[20:].tolist(), None).result.steps[0] == 20
    assert store.get("s") is opened


def test_at_the_stream_limit_with_idle_expiry_the_refusal_says_to_wait(model):
    store = StreamStore({"m": model}, max_streams=1, idle_seconds=30)
    store.update("a", None, three_channels(20, 1).tolist(), None)
    with pytest.raises(TooManyStreams) as refused:
        store.update("b", None, three_channels(20, 2).tolist(), None)
    assert str(refused.value) == (
        "cannot open stream 'b': 1 streams are open, the limit is 1 (--max-streams); close "
        "streams with DELETE /streams/ID or wait for idle ones to expire "
        "(--stream-idle-seconds 30)"
    )
