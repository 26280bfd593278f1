"""Start-up cost: torch, pandas and scikit-learn load only when needed.

``fit --help`` / ``demo --help`` read the embedders' and the image detector's defaults from their
source without importing them (tests/cli/test_help_defaults.py).

Each check runs a fresh interpreter, since this test process has long imported everything.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[2] / "src")
HEAVY = ("torch", "sklearn", "pandas")


def _python(code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, env=env, timeout=120)


def _loaded_after(code: str) -> list[str]:
    report = f"import sys; print('LOADED:', *(m for m in {HEAVY!r} if m in sys.modules))"
    done = _python(f"{code}\n{report}")
    assert done.returncode == 0, done.stderr
    return done.stdout.rsplit("LOADED:", 1)[1].split()


def test_import_madcluster_loads_no_heavy_library():
    assert _loaded_after("import madcluster; madcluster.DataError; madcluster.__version__") == []


@pytest.mark.slow
def test_public_names_still_import_on_use():
    assert "torch" in _loaded_after("from madcluster import MADCluster, NotFittedError")


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["--version"], ["score", "--help"], ["report", "--help"], ["fit", "data.csv"],
     ["fit", "data.csv", "-o", "m.mcz", "--epochs", "0"], ["fitt"]],
)
def test_cli_answers_and_parsing_errors_come_before_torch(argv):
    code = f"from madcluster.cli import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass"
    assert _loaded_after(code) == []


def test_help_is_fast():
    # generous bound for a loaded CI machine; README gives the measured figure
    env = {**os.environ, "PYTHONPATH": SRC}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "madcluster", "--help"], check=False, capture_output=True, env=env, timeout=60)
    elapsed = time.perf_counter() - start
    assert done.returncode == 0 and b"COMMAND" in done.stdout
    assert elapsed < 2.5, f"madcluster --help took {elapsed:.2f} s"
