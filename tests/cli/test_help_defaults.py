"""Issue 37 item 10: `madcluster fit --help` shows the embedder's and the image detector's
defaults without importing torch (it took 5-7 s), and the defaults it reads from the source are
the ones the code uses."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from madcluster.cli import build_parser
from madcluster.cli.help_defaults import NOT_FOUND, source_default
from madcluster.cli.options import signature_default

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _dotted_params() -> list[str]:
    parser = build_parser({"fit"})
    fit = next(a for a in parser._subparsers._group_actions[0].choices.values() if a.prog.endswith(" fit"))
    return sorted({a.estimator_param for a in fit._actions if "." in getattr(a, "estimator_param", "")})


def test_defaults_read_from_the_source_are_the_signature_defaults():
    params = _dotted_params()
    assert {"drnn.hidden_size", "drnn.n_layers", "image.image_size", "image.layout", "image.head_weight"} <= set(params)
    for param in params:
        found = source_default(param)
        assert found is not NOT_FOUND, param
        assert found == signature_default(param), param


@pytest.mark.parametrize("command", ["fit", "demo"])
def test_training_help_imports_no_torch(command):
    code = (f"import sys\nfrom madcluster.cli import main\ntry:\n    main([{command!r}, '--help'])\nexcept SystemExit:\n"
            "    pass\nprint('LOADED:', *(m for m in ('torch', 'sklearn', 'pandas') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": SRC})
    assert done.returncode == 0, done.stderr
    assert "(default: 32)" in done.stdout or command == "demo"
    assert done.stdout.rsplit("LOADED:", 1)[1].split() == []
