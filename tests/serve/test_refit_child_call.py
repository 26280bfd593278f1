"""How the server starts its refit child: the command, the output captured, a failure's last line
as the refit's error (the fifth mutation run's survivor: the one test that ran a child succeeded,
so output not captured passed)."""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
import time
from types import SimpleNamespace

import pytest
from series_helpers import three_channels

from madcluster import MADCluster
from madcluster.exceptions import MADClusterError
from madcluster.serve import swap
from madcluster.serve.registry import StreamStore


def test_a_failed_child_is_the_refits_error_in_its_last_line(monkeypatch):
    model = MADCluster(input_terms=None, window_size=12, epochs=1, random_state=0).fit(
        three_channels(200, 0)
    )
    calls = []

    def run(command, **kwargs):
        calls.append((command, kwargs))
        return subprocess.CompletedProcess(
            command, 1, "", "Traceback ...\n  ...\nValueError: boom\n\n"
        )

    monkeypatch.setattr(swap.subprocess, "run", run)
    with pytest.raises(MADClusterError) as failed:
        swap.refit_in_child(model, three_channels(40, 1), 3, False)
    assert str(failed.value) == "ValueError: boom"
    ((command, kwargs),) = calls
    assert command[:3] == [sys.executable, "-m", "madcluster.serve.swap"]
    assert command[6:8] == ["3", "warm"]
    assert kwargs["capture_output"] is True and kwargs["text"] is True and kwargs["check"] is False


def test_a_saved_refit_runs_in_its_named_thread_says_where_and_how_long(
    monkeypatch, tmp_path, caplog
):
    served, refitted = (
        MADCluster(input_terms=None, window_size=12, epochs=1, random_state=seed).fit(
            three_channels(200, seed)
        )
        for seed in (0, 1)
    )
    path = tmp_path / "m.mcz"
    served.save(path)
    threads = []

    def child(*args):
        threads.append(threading.current_thread().name)
        return refitted, {}

    monkeypatch.setattr(swap, "refit_in_child", child)
    clock = [100.0, 102.5, 103.0]  # the refit's start, its log line, its end
    monkeypatch.setattr(
        swap, "time", SimpleNamespace(time=time.time, perf_counter=lambda: clock.pop(0))
    )
    store = StreamStore({"m": served})
    with caplog.at_level(logging.INFO, logger="madcluster.serve.swap"):
        job = swap.Refits(store, {"m": path}).start("m", three_channels(100, 3), save=True)
        assert job.done.wait(30) and job.state == "done", job.error
    assert threads == ["refit-m"] and job.saved_to == str(path)
    assert [r.getMessage() for r in caplog.records] == [
        "model 'm' refitted on 100 rows in 2.5 s: version 2, 0 stream(s) handed over"
    ]
    assert job.seconds == 3.0
