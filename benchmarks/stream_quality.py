"""What a stream of the default model detects, at once and L rows later, on the 46 TSB-AD series.

For each series: fit ``MADCluster(random_state=seed)`` (the default) on the training points, then
feed the test points to ``detector.stream()`` one row at a time, as a live feed would. Each row
gets its at-once score (every part read from steps <= t, the KMeans part from the covering
windows' prefixes, :mod:`madcluster.score.kmeans_prefix`) and its final score L rows later (:mod:`madcluster.score.combination`). Reported, TSB-AD's
VUS-PR of:

* ``final``: the final scores (with the last rows' pending ones), checked equal to
  ``decision_function`` on the whole test series;
* ``at once``: the score each row got when it arrived (what an alert at once sees), checked
  equal to :meth:`~madcluster.score.combination.Combination.at_once_score` of the whole test series;
* ``own``: MADCluster's own score alone, the network (what ``--preset streaming`` scores at once);
* ``own + ar``: the two causal parts, weighted as in the default (an at-once score without the KMeans term).

Writes a JSON and a Markdown table::

    PYTHONPATH=src python benchmarks/stream_quality.py --data-dir ../shared/datasets --jobs 2 \\
        --out benchmarks/results/stream_quality.json
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

DATASETS = ("MSL", "SMAP", "SMD")
KINDS = ("final", "at once", "own", "own + ar")


def _init() -> None:
    import torch

    torch.set_num_threads(1)


def run_series(source: str, series: Any, seed: int) -> dict[str, Any]:
    from madcluster import MADCluster
    from madcluster.metrics.tsbad import tsbad_vus

    detector = MADCluster(random_state=seed, verbose=False).fit(series.train)
    model = detector.model_
    scorer = detector.stream()
    provisional, final, latencies = [], [], []
    for row in series.test:
        start = time.perf_counter()
        result = scorer.update(row)
        latencies.append(time.perf_counter() - start)
        provisional.append(result.scores)
        final.append(result.final_scores)
    final.append(scorer.pending().scores)
    from dataclasses import replace

    final_scores, first_scores = np.concatenate(final), np.concatenate(provisional)
    whole = detector.decision_function(series.test)
    rows = model.inputs.check_rows(series.test)
    own = model.own_scores(model.inputs.model_input(rows))
    combination = model.combination
    own_and_ar = replace(combination, parts=tuple(p for p in combination.parts if p.name in ("own", "ar")))
    own_ar = own_and_ar.at_once_score(rows, own)  # both read causally
    at_once = combination.at_once_score(rows, own)
    scores = {"final": final_scores, "at once": first_scores, "own": own, "own + ar": own_ar}
    ms = np.asarray(latencies) * 1e3
    return {
        "series": series.name, "dataset": source,
        "vus_pr": {k: float(tsbad_vus(v, series.labels, series.test)[1]) for k, v in scores.items()},
        "final_vs_decision_function": float(np.abs(final_scores - whole).max()),
        "final_vs_decision_function_relative": float(np.abs(final_scores - whole).max() / np.abs(whole).max()),
        "at_once_vs_batch_relative": float(np.abs(first_scores - at_once).max() / np.abs(at_once).max()),
        "p50_ms": float(np.percentile(ms, 50)), "p99_ms": float(np.percentile(ms, 99)), "rows": len(series.test),
    }


def markdown(record: dict[str, Any]) -> str:
    lines = ["# The default model streamed one row at a time: VUS-PR on the 46 TSB-AD series", "",
             f"Command: `{record['command']}`", "",
             "| score | when | MSL | SMAP | SMD | all |", "|---|---|---|---|---|---|"]
    when = {"final": "L rows later", "at once": "at once", "own": "at once (`--preset streaming`)", "own + ar": "at once"}
    results = record["results"]
    for kind in KINDS:
        cells = [np.mean([r["vus_pr"][kind] for r in results if r["dataset"] == d]) for d in DATASETS]
        lines.append(f"| {kind} | {when[kind]} | {' | '.join(f'{c:.3f}' for c in cells)} | "
                     f"{np.mean([r['vus_pr'][kind] for r in results]):.3f} |")
    diff = max(r["final_vs_decision_function"] for r in results)
    relative = max(r["final_vs_decision_function_relative"] for r in results)
    lines += ["", (f"Largest |final - decision_function| over all series: {diff:.2e} ({relative:.1e} of the "
              "series' largest |score|). Per-row update latency "
              f"(one thread, median over series): p50 {np.median([r['p50_ms'] for r in results]):.2f} ms, "
              f"p99 {np.median([r['p99_ms'] for r in results]):.2f} ms (worst series p99 "
              f"{max(r['p99_ms'] for r in results):.2f} ms)."), ""]
    return "\n".join(lines)


def main() -> None:
    from benchlib import add_series_arguments, load_series, write_record

    from madcluster.atomic import atomic_write_text

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_series_arguments(parser)
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (one torch thread each)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, type=Path, help="results JSON (a .md is written beside it)")
    args = parser.parse_args()
    found = load_series(args)
    results = []
    with ProcessPoolExecutor(args.jobs, initializer=_init) as pool:
        futures = [pool.submit(run_series, source, series, args.seed) for source, _, series in found]
        for done, future in enumerate(futures, start=1):
            row = future.result()
            results.append(row)
            print(f"[{done}/{len(futures)}] {row['series']}: " + ", ".join(f"{k} {v:.3f}" for k, v in row["vus_pr"].items()), flush=True)
    record = {"command": "PYTHONPATH=src python " + " ".join(sys.argv), "seed": args.seed, "results": results}
    write_record(args.out, record, configs={"default": {"preset": "default", "random_state": args.seed}}, indent=1)
    atomic_write_text(args.out.with_suffix(".md"), markdown(record))
    print(markdown(record))


if __name__ == "__main__":
    main()
