"""CI's pytest session leaves with pytest's own exit status before the interpreter's teardown
(``tests/conftest.py``): a crash in native libraries' teardown cannot fail a passing suite, and a
failing suite still fails."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

# a test module whose process crashes at exit, as native teardown once did in CI
CRASH_AT_EXIT = """
import atexit, os, signal
atexit.register(lambda: os.kill(os.getpid(), signal.SIGSEGV))

def test_outcome():
    assert {outcome}
"""


def run_session(tmp_path: Path, passing: bool, ci: bool) -> int:
    (tmp_path / "test_outcome.py").write_text(CRASH_AT_EXIT.format(outcome=passing))
    env = {key: value for key, value in os.environ.items() if key != "CI"}
    env["PYTHONPATH"] = str(TESTS) + os.pathsep + env.get("PYTHONPATH", "")
    if ci:
        env["CI"] = "true"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "conftest", "-p", "no:cacheprovider",
               "-p", "no:faulthandler", "test_outcome.py"]
    return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, timeout=300, check=False).returncode


@pytest.mark.parametrize("passing, status", [(True, 0), (False, 1)])
def test_ci_session_exits_with_pytests_status_before_teardown(tmp_path, passing, status):
    assert run_session(tmp_path, passing, ci=True) == status


def test_outside_ci_the_interpreter_tears_down_as_usual(tmp_path):
    assert run_session(tmp_path, True, ci=False) == -11  # the planted crash at exit is seen
