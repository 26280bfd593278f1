"""Faults while serving: a process killed while it saves stream states, a disk that takes no more
(a file-size limit), a refit whose model cannot be kept. The server keeps answering or comes
back, no state file is left half-written, and a failed refit leaves the served model."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from madcluster import MADCluster
from madcluster.serve import swap
from madcluster.serve.registry import StreamStore

WINDOW = 12


def _series(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n)[:, None]
    return np.sin(t / np.array([3.0, 7.0, 11.0])) + 0.1 * rng.standard_normal((n, 3))


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "m.mcz"
    MADCluster(window_size=WINDOW, epochs=1, random_state=0).fit(_series(300, 0)).save(path)
    return path


def _child(code: str, *args: str) -> subprocess.Popen:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


SAVER = """
    import sys, numpy as np
    from madcluster import MADCluster
    from madcluster.serve.registry import StreamStore
    store = StreamStore({"m": MADCluster.load(sys.argv[1])}, sys.argv[2], save_interval=0)
    rng = np.random.default_rng(0)
    print("ready", flush=True)
    step = 0
    while True:  # every update saves its stream's state: killed mid-write sooner or later
        store.update(f"s{step % 8}", None, rng.standard_normal((20, 3)).tolist(), None)
        step += 1
"""


@pytest.mark.slow  # subprocesses
def test_kill_9_while_states_are_saved_leaves_every_file_whole(model_file, tmp_path):
    state = tmp_path / "state"
    for attempt in range(2):
        saver = _child(SAVER, str(model_file), str(state))
        assert saver.stdout.readline().strip() == "ready", saver.stderr.read()
        time.sleep(1.0 + 0.37 * attempt)
        saver.send_signal(signal.SIGKILL)
        saver.wait(timeout=30)
        store = StreamStore({"m": MADCluster.load(model_file)}, state)  # reads every file back
        assert len(store) >= 1 and not list(state.glob(".*.tmp"))
        steps = {sid: store.get(sid).steps_seen for sid in store._streams}
        assert all(n > 0 and n % 20 == 0 for n in steps.values()), steps
        store.stop()


LIMITED = """
    import resource, signal, sys, numpy as np
    from madcluster import MADCluster
    from madcluster.serve.registry import StreamStore
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # over the limit a write fails (EFBIG)
    store = StreamStore({"m": MADCluster.load(sys.argv[1])}, sys.argv[2], save_interval=3600)
    resource.setrlimit(resource.RLIMIT_FSIZE, (2000, 2000))  # a disk that takes no more
    rng = np.random.default_rng(0)
    answered = 0
    for step in range(30):
        store.update(f"s{step % 3}", None, rng.standard_normal((5, 3)).tolist(), None)
        answered += 1
    try:
        store.flush()
        print("saved")
    except OSError as exc:
        print("save failed:", exc)
    print("answered", answered, "dirty", len(store._dirty), flush=True)
"""


@pytest.mark.slow  # subprocesses
def test_a_disk_that_takes_no_more_fails_the_save_not_the_answers(model_file, tmp_path):
    state = tmp_path / "state"
    done = _child(LIMITED, str(model_file), str(state))
    out, err = done.communicate(timeout=120)
    assert done.returncode == 0, err
    # every stream still to save, not only the one whose write failed
    assert "save failed:" in out and "answered 30 dirty 3" in out, out
    assert not list(state.glob("*.mcs")) and not list(state.glob(".*.tmp"))  # nothing half-written


def test_a_refit_whose_model_cannot_be_kept_fails_and_the_served_model_stays(
    model_file, tmp_path, monkeypatch
):
    served = MADCluster.load(model_file)
    store = StreamStore({"m": served}, tmp_path)
    store.update("a", None, _series(50, 1).tolist(), None)
    refitted = MADCluster(window_size=WINDOW, epochs=1, random_state=1).fit(_series(300, 2))
    monkeypatch.setattr(swap, "refit_in_child", lambda *args: (refitted, {}))

    def full_disk(path):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(refitted, "save", full_disk)
    job = swap.Refits(store).start("m", _series(100, 3))
    assert job.done.wait(30) and job.state == "failed"
    assert "No space left on device" in job.error
    assert store.models["m"] is served and store.versions["m"] == 1
    assert store.update("a", None, _series(1, 4).tolist(), None).version == 1
    store.stop()
    assert StreamStore({"m": MADCluster.load(model_file)}, tmp_path).get("a").steps_seen == 51
