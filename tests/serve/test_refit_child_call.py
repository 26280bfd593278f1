"""How the server starts its refit child: the command, the output captured, a failure's last line
as the refit's error (the fifth mutation run's survivor: the one test that ran a child succeeded,
so output not captured passed)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from series_helpers import three_channels

from madcluster import MADCluster
from madcluster.exceptions import MADClusterError
from madcluster.serve import swap


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
