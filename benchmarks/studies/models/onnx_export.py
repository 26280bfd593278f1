"""ONNX export of the default and every base model (issue 20 part 4): which export, how close.

Each model is fitted (without the input terms, which do not export) for one epoch on the demo series (each model's default window, 100; closeness does not depend on
training), exported with ``madcluster.estimator.export.export_onnx``, and scored on the demo test windows by
onnxruntime and by the model's torch scoring (float64; the graph too, except where onnxruntime has a
layer in float32 only, e.g. Conv). Writes ``benchmarks/results/onnx_export.json`` and ``.md``::

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/studies/models/onnx_export.py
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import torch

from madcluster import MADCluster
from madcluster.atomic import atomic_write_text
from madcluster.data.synthetic import make_demo_data
from madcluster.estimator.export import export_onnx
from madcluster.estimator.export_check import ExportError, check_export, model_windows, run_both

EMBEDDERS = ("drnn", "deepsvdd", "omnianomaly", "thoc", "usad", "beatgan", "anomaly_transformer", "dcdetector")


def measure(name: str, demo, folder: Path) -> dict:
    row: dict = {"embedder": name}
    model = MADCluster(embedder=name, input_terms=None, epochs=1, random_state=0).fit(demo.train)  # terms do not export
    path = folder / f"{name}.onnx"
    start = time.perf_counter()
    try:
        report = export_onnx(model.model_, path, check=False)
    except ExportError as exc:
        return {**row, "exports": False, "why": str(exc)}
    row["export_s"] = round(time.perf_counter() - start, 2)
    windows = model_windows(model.model_, demo.test)[0]
    got, expected = run_both(model.model_, path, windows)
    diff = np.abs(got - expected)
    try:  # the export check's own rule, on its probe windows
        check, passes = check_export(model.model_, path, getattr(torch, report["dtype"])), True
    except ExportError as exc:
        check, passes = {"tolerance": str(exc)}, False
    row.update(
        exports=True, windows=len(windows), dtype=report["dtype"], why_float32=report.get("why_float32"),
        max_abs_diff=float(diff.max()), max_rel_diff=float((diff / np.maximum(np.abs(expected), 1.0)).max()),
        max_abs_score=float(np.abs(expected).max()), export_check_passes=passes, tolerance=check["tolerance"],
    )
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedders", nargs="+", default=list(EMBEDDERS))
    parser.add_argument("--out", default="benchmarks/results/onnx_export")
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")  # the TorchScript exporter's tracer warnings
    demo = make_demo_data(n_train=1500, n_test=1000, seed=7)
    with tempfile.TemporaryDirectory() as tmp:
        rows = []
        for name in args.embedders:
            rows.append(measure(name, demo, Path(tmp)))
            print(json.dumps(rows[-1]), flush=True)
    command = "PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/studies/models/onnx_export.py"
    atomic_write_text(args.out + ".json", json.dumps({"command": command, "rows": rows}, indent=2) + "\n")
    lines = [f"`{command}` (torch {torch.__version__}, TorchScript exporter, opset 17, CPU)", "",
             "| embedder | exports | graph dtype | max abs diff, onnxruntime vs torch | max abs score | export check passes (its tolerance) | why not / why float32 |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["exports"]:
            lines.append(f"| {r['embedder']} | yes | {r['dtype']} | {r['max_abs_diff']:.1e} | {r['max_abs_score']:.1f} | "
                         f"{'yes' if r['export_check_passes'] else 'no'} ({r['tolerance'].replace('|', chr(92) + '|')}) | {r['why_float32'] or ''} |")
        else:
            lines.append(f"| {r['embedder']} | no | | | | | {r['why']} |")
    atomic_write_text(args.out + ".md", "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
