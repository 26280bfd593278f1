"""Issue 37 item 1: `madcluster score model.onnx DATA` runs where torch, pandas and matplotlib are
not installed (the torch-free install), writes the same scores, skips the plot with a note, exit 0.

The subprocess hides those packages with an import hook, as a venv without them would;
`.ci/run` also checks the real thing in such a venv (`.ci/torch_free_onnx.py`).
"""

from __future__ import annotations

import csv
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime")

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "bb28e52"
HIDDEN = ("torch", "pandas", "matplotlib", "sklearn", "scipy")

RUN_WITHOUT = textwrap.dedent(f"""
    import importlib.abc, sys
    HIDDEN = {HIDDEN!r}
    class Hide(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in HIDDEN:
                raise ModuleNotFoundError(f"No module named {{name!r}}")
            return None
    sys.meta_path.insert(0, Hide())
    import importlib.util
    _find = importlib.util.find_spec
    importlib.util.find_spec = lambda name, *a: None if name.split(".")[0] in HIDDEN else _find(name, *a)
    from madcluster.cli import main
    status = main(sys.argv[1:])
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in HIDDEN)
    assert not loaded, loaded
    sys.exit(status)
""")


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", RUN_WITHOUT, *args], check=False, capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"})


def _write_csv(path: Path, rows: np.ndarray, header: list[str], extra: dict[str, list] | None = None) -> None:
    extra = extra or {}
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t" if path.suffix == ".tsv" else ",")
        writer.writerow([*extra, *header])
        for i, row in enumerate(rows.tolist()):
            writer.writerow([*(v[i] for v in extra.values()), *row])


def _scores(path: Path) -> np.ndarray:
    with open(path, newline="") as handle:
        return np.array([float(row["score"]) for row in csv.DictReader(handle)])


@pytest.mark.slow
def test_onnx_scoring_without_torch_pandas_matplotlib(tmp_path):
    expected = np.load(FIXTURES / "expected.npz")
    data = tmp_path / "test.csv"
    stamps = [f"2024-01-01T00:{i // 60:02d}:{i % 60:02d}" for i in range(len(expected["test"]))]
    labels = [0] * len(stamps)
    labels[125] = 1
    _write_csv(data, expected["test"], ["a", "b", "c"], {"timestamp": stamps, "label": labels})
    done = _run("score", str(FIXTURES / "default.onnx"), str(data), "--label-column", "label")
    assert done.returncode == 0, done.stderr
    assert "skipped: matplotlib is not installed" in done.stderr
    assert "vus_pr" in done.stdout  # metrics from the labels, numpy only
    out = tmp_path / "test.scores.csv"
    np.testing.assert_allclose(_scores(out), expected["default_scores"], rtol=1e-6, atol=1e-6)
    with open(out, newline="") as handle:
        first = next(csv.DictReader(handle))
    assert first["timestamp"] == stamps[0] and first["label"] == "0" and first["row"] == "0"
    assert not (tmp_path / "test.scores.png").exists()


@pytest.mark.slow
def test_a_tsv_file_scores_without_pandas_too(tmp_path):
    expected = np.load(FIXTURES / "expected.npz")
    data = tmp_path / "test.tsv"
    _write_csv(data, expected["test"], ["a", "b", "c"])
    done = _run("score", str(FIXTURES / "default.onnx"), str(data), "--plot", "none", "--quiet")
    assert done.returncode == 0, done.stderr
    np.testing.assert_allclose(_scores(tmp_path / "test.scores.csv"), expected["default_scores"], rtol=1e-6, atol=1e-6)


def test_plain_reader_matches_the_pandas_reader(tmp_path):
    """The pandas-free reader gives the same table: columns, labels, timestamps, decimal commas."""
    from madcluster.data.io import read_table
    from madcluster.data.plain_table import read_plain_columns, table_from_columns

    path = tmp_path / "x.csv"
    path.write_text("time;a;b;label\n2024-01-01 00:00:00;1,5;2;0\n2024-01-01 00:01:00;2,5;3;1\n"
                    "2024-01-01 00:02:00;3,5;4;0\n")
    names, cols, header = read_plain_columns(path, "csv")
    plain = table_from_columns(names, cols, has_header=header, source=str(path), label_column="label")
    full = read_table(path, label_column="label")
    np.testing.assert_array_equal(plain.values, full.values)
    np.testing.assert_array_equal(plain.labels, full.labels)
    assert plain.columns == full.columns == ["a", "b"]
    assert plain.timestamp_column == full.timestamp_column == "time"
    assert plain.dropped == full.dropped
