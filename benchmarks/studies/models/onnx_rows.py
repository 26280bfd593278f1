"""A normally trained model through ``madcluster export`` and ``madcluster score model.onnx``:
does it export, and how close are the ONNX row scores to the ``.mcz`` model's?

Writes the demo series as CSV, runs the commands a user runs (``fit --preset streaming`` with the
default 20 epochs, ``export``, ``score`` with each model file), and compares the two scores CSVs
row by row, the warm-up rows (the first window) apart. Writes
``benchmarks/results/onnx_rows.json``::

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/studies/models/onnx_rows.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from madcluster.atomic import atomic_write_text
from madcluster.data.synthetic import make_demo_data

SRC = str(Path(__file__).resolve().parents[3] / "src")


def madcluster(*argv: str, cwd: Path) -> str:
    env = {**os.environ, "PYTHONPATH": SRC, "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-m", "madcluster", *argv], cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"madcluster {' '.join(argv)} failed ({proc.returncode}): {proc.stderr.strip().splitlines()[-1]}")
    return proc.stdout


def main() -> None:
    demo = make_demo_data()
    names = [f"c{i}" for i in range(demo.train.shape[1])]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        pd.DataFrame(demo.train, columns=names).to_csv(folder / "train.csv", index=False)
        pd.DataFrame(demo.test, columns=names).to_csv(folder / "test.csv", index=False)
        madcluster("fit", "train.csv", "-o", "m.mcz", "--preset", "streaming", "--quiet", cwd=folder)
        exported = madcluster("export", "m.mcz", "-o", "m.onnx", cwd=folder).strip().splitlines()[0]
        madcluster("score", "m.mcz", "test.csv", "-o", "mcz.csv", "--plot", "none", "--no-explain", cwd=folder)
        madcluster("score", "m.onnx", "test.csv", "-o", "onnx.csv", "--plot", "none", cwd=folder)
        mcz, onnx = pd.read_csv(folder / "mcz.csv"), pd.read_csv(folder / "onnx.csv")
        meta = json.loads(__import__("onnx").load(str(folder / "m.onnx")).metadata_props[0].value)
    a, b = mcz["score"].to_numpy(), onnx["score"].to_numpy()
    diff = np.abs(a - b)
    threshold = meta["threshold"]
    warm = meta["window_size"] - meta["score_stride"]
    summary = {
        "command": "PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/studies/models/onnx_rows.py",
        "export": exported,
        "rows": len(a), "threshold": threshold,
        "max_abs_diff": float(diff.max()), "max_abs_diff_warmup_rows": float(diff[:warm].max()), "warmup_rows": warm,
        "max_rel_diff_to_max_abs_score_and_threshold": float((diff / np.maximum(np.abs(a), threshold)).max()),
        "max_rel_diff_to_abs_score_over_1": float((diff / np.maximum(np.abs(a), 1.0)).max()),
        "rows_within_1e-4_relative_to_abs_score": float(np.mean(diff <= 1e-4 * np.abs(a))),
        "flags_equal": int((mcz["is_anomaly"] == onnx["is_anomaly"]).sum()),
    }
    print(json.dumps(summary, indent=2))
    out = Path("benchmarks/results/onnx_rows.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out, json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
