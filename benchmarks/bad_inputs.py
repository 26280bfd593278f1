"""Bad inputs to the command line, each run as a user would: exit status, seconds, one line, no
traceback, and no file left where a failed command was to write.

Fits a tiny streaming model and a default one (input terms: does not export) in a temporary
folder, then runs each bad command in a subprocess (``python -m madcluster ...``). Writes
``benchmarks/results/bad_inputs.json``::

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/bad_inputs.py
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from madcluster import MADCluster
from madcluster.atomic import atomic_write_text

SRC = str(Path(__file__).resolve().parents[1] / "src")


def _series(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    return np.stack([np.sin(t / 5), np.cos(t / 7), np.sin(t / 11)], axis=1) + 0.1 * rng.standard_normal((n, 3))


def run(argv: list[str], cwd: Path, expect_absent: list[str]) -> dict:
    env = {**os.environ, "PYTHONPATH": SRC, "OMP_NUM_THREADS": "1"}
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "madcluster", *argv], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    seconds = time.perf_counter() - start
    err = proc.stderr.strip().splitlines()
    lines = [line for line in err if not line.startswith(("see `", "warning:"))]
    return {
        "command": "madcluster " + " ".join(argv), "exit": proc.returncode, "seconds": round(seconds, 2),
        "message": lines[-1] if lines else "", "traceback": "Traceback" in proc.stderr,
        "one_line": len(lines) == 1, "left_files": [p for p in expect_absent if (cwd / p).exists()],
    }


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cols = ["cpu", "mem_pct", "disk_io_mb"]
        pd.DataFrame(_series(400, 0), columns=cols).to_csv(folder / "train.csv", index=False)
        MADCluster.from_preset("streaming", window_size=16, epochs=1, random_state=0).fit(
            pd.DataFrame(_series(400, 0), columns=cols)).save(folder / "stream.mcz")
        MADCluster(window_size=16, epochs=1, random_state=0).fit(_series(400, 0)).save(folder / "default.mcz")
        bad = pd.DataFrame(_series(100, 1), columns=cols)
        bad.iloc[5, 1] = np.nan
        bad.to_csv(folder / "nan.csv", index=False)
        (folder / "empty").mkdir()
        images = folder / "pictures"
        images.mkdir()
        from PIL import Image

        Image.new("RGB", (16, 16)).save(images / "a.png")
        busy = socket.socket()
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        cases = [
            (["serve", "stream.mcz", "--port", "-1"], []),
            (["serve", "stream.mcz", "--port", "99999"], []),
            (["serve", "stream.mcz", "--max-body-bytes", "-5"], []),
            (["serve", "stream.mcz", "--port", str(port)], []),
            (["serve", "stream.mcz", "--max-rows", "0"], []),
            (["fit", "train.csv", "-o", "m.mcz", "--seed", "-5"], ["m.mcz"]),
            (["fit", "train.csv", "-o", "m.mcz", "--lr", "1e9"], ["m.mcz"]),
            (["fit", "train.csv", "-o", "m.mcz", "--image-size", "0", "--embedder", "rd4ad"], ["m.mcz"]),
            (["fit", "train.csv", "-o", "m.mcz", "--threads", "0"], ["m.mcz"]),
            (["fit", "pictures", "-o", "models"], ["models"]),
            (["score", "stream.mcz", "nan.csv", "-o", "nan.scores.csv"], ["nan.scores.csv"]),
            (["export", "default.mcz", "-o", "default.onnx"], ["default.onnx"]),
            (["export", "missing.mcz", "-o", "missing.onnx"], ["missing.onnx"]),
            (["report", "empty"], ["empty/report.html"]),
            (["benchmark", "--dataset", "MSL", "--epochs", "0"], []),
        ]
        results = [run(argv, folder, absent) for argv, absent in cases]
        busy.close()
    summary = {
        "command": "PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/bad_inputs.py",
        "cases": len(results), "tracebacks": sum(r["traceback"] for r in results),
        "left_files": sum(len(r["left_files"]) for r in results),
        "not_exit_2": [r["command"] for r in results if r["exit"] != 2],
        "slowest_seconds": max(r["seconds"] for r in results), "results": results,
    }
    print(json.dumps(summary, indent=2))
    out = Path("benchmarks/results/bad_inputs.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out, json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
