"""`madcluster serve --help` answers an on-call engineer's questions; the core import stays light."""

from __future__ import annotations

import subprocess
import sys

import pytest

from madcluster.cli import main


def test_serve_help_names_endpoints_errors_signals_and_state(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["serve", "--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    for needle in ("/streams/{stream}", "/metrics", "/health", "--state-dir", "SIGTERM", "--max-body-bytes", "madcluster[serve]", "/models/{model}/refit", "--max-stream-memory"):
        assert needle in text, needle


def test_import_madcluster_does_not_pull_the_server_or_onnx_stack():
    code = (
        "import sys, madcluster, madcluster.cli; "
        "print([m for m in ('fastapi', 'uvicorn', 'starlette', 'onnx', 'onnxruntime', 'prometheus_client') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
