"""CI: the torch-free install scores an ONNX file (docs/export.md: "The torch-free install").

Run with the python of a virtualenv that has this package installed with ``pip install --no-deps``
plus numpy and onnxruntime only (``.ci/run`` makes it). Scores the committed export of the default
model (``tests/fixtures/bb28e52/default.onnx``) on its test series with ``madcluster score`` and
checks: torch, pandas, scikit-learn and matplotlib are absent; exit status 0; the plot skipped with a
note; the scores equal the ``.mcz`` model's recorded ones.
"""

from __future__ import annotations

import csv
import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "bb28e52"


def main() -> int:
    present = [m for m in ("torch", "pandas", "sklearn", "matplotlib", "scipy") if importlib.util.find_spec(m)]
    assert not present, f"this check needs a venv without {present}"
    expected = np.load(FIXTURES / "expected.npz")
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "test.csv"
        with open(data, "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["a", "b", "c"])  # the fixture models were fitted on an unnamed array
            writer.writerows(expected["test"].tolist())
        out = Path(tmp) / "test.scores.csv"
        command = [str(Path(sys.executable).with_name("madcluster")), "score", str(FIXTURES / "default.onnx"),
                   str(data), "-o", str(out)]
        done = subprocess.run(command, check=False, capture_output=True, text=True, timeout=300)
        print(done.stdout, done.stderr, sep="\n")
        assert done.returncode == 0, f"exit status {done.returncode}"
        assert "skipped: matplotlib is not installed" in done.stderr
        with open(out, newline="") as handle:
            scores = np.array([float(row["score"]) for row in csv.DictReader(handle)])
    np.testing.assert_allclose(scores, expected["default_scores"], rtol=1e-6, atol=1e-6)
    print(f"torch-free ONNX scoring: {len(scores)} rows equal the .mcz model's scores (max abs diff "
          f"{np.abs(scores - expected['default_scores']).max():.2e})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
