"""A stream's state file read back on its own, and the saver's failure in the log (the fifth
mutation run's survivors: a state file from before model versions, with no tail, was never read;
no test made the background save fail)."""

from __future__ import annotations

import logging
import time

import pytest
from series_helpers import three_channels

from madcluster import MADCluster
from madcluster.serve.registry import StreamStore
from madcluster.serve.streams import StateFolder


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
