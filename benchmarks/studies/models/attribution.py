"""Does ``MADCluster.explain`` name the channel an anomaly was injected into? (issue 21 item 1)

On the synthetic suite (``make_anomaly_suite``: seven anomaly kinds, each injected into known
channels), every anomalous segment's channels are ranked by their mean ``MADCluster.explain``
contribution over the segment (occlusion drop plus input deviation, each standardised on
training); a hit is a top-ranked channel among those injected (a spike can hit several channels;
a broken correlation replays one channel, breaking its link to the others). Reports the hit rate
per anomaly kind, for ``explain`` and for the raw occlusion drop it used before (same fits), and
the cost of ``explain`` relative to ``decision_function`` in the same process.

    python benchmarks/studies/models/attribution.py --bases sines random-walk seasonal --seeds 0 1
    python benchmarks/studies/models/attribution.py --bases sines random-walk seasonal --seeds 2 3  # held out
    python benchmarks/studies/models/attribution.py --embedders usad anomaly_transformer --epochs 5 --seeds 0

One torch thread, fixed seeds: the same command gives the same numbers.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict

import numpy as np
import torch

from madcluster import MADCluster
from madcluster.atomic import atomic_write_text
from madcluster.data.synthetic import BASE_SIGNALS, SUITE_KINDS, make_anomaly_suite
from madcluster.estimator.attribution import channel_ranking

#: The two rankings compared: ``explain``'s (occlusion drop plus input deviation, standardised on
#: training) and the raw occlusion drop it used before (what a model file without the baseline gives).
METHODS = ("standardised", "raw-occlusion")


def hits_of(contributions: np.ndarray, segments: list) -> list[dict]:
    out = []
    for seg in segments:
        ranking = channel_ranking(contributions, slice(seg.start, seg.end))
        out.append({"kind": seg.kind, "hit": bool(ranking[0] in seg.affected), "n_affected": len(seg.affected)})
    return out


def evaluate(embedder: str, base: str, seed: int, epochs: int | None) -> dict:
    data = make_anomaly_suite(base, seed=seed)
    params = {"embedder": embedder, "window_size": 100, "random_state": seed}
    if epochs is not None:
        params["epochs"] = epochs
    start = time.perf_counter()
    model = MADCluster(**params).fit(data.train)
    fit_s = time.perf_counter() - start
    start = time.perf_counter()
    model.decision_function(data.test)
    score_s = time.perf_counter() - start
    start = time.perf_counter()
    contributions = model.explain(data.test)
    explain_s = time.perf_counter() - start
    model.attribution_baseline_ = None  # as a model file written before the baseline: raw drop
    raw = model.explain(data.test)
    return {"hits": hits_of(contributions, data.segments), "raw_occlusion_hits": hits_of(raw, data.segments),
            "fit_s": fit_s, "score_s": score_s, "explain_s": explain_s, "channels": data.test.shape[1]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedders", nargs="+", default=["drnn"])
    parser.add_argument("--bases", nargs="+", default=list(BASE_SIGNALS), choices=BASE_SIGNALS)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    parser.add_argument("--epochs", type=int, default=None, help="default: the detector's")
    parser.add_argument("--json", default=None, help="also write the raw results here")
    args = parser.parse_args()
    torch.set_num_threads(1)
    raw = {}
    print("| embedder | method | " + " | ".join(SUITE_KINDS) + " | all | explain / score time |")
    print("|---|---|" + "---|" * (len(SUITE_KINDS) + 2))
    for embedder in args.embedders:
        by_kind: dict[str, dict[str, list[bool]]] = {m: defaultdict(list) for m in METHODS}
        ratios = []
        for base in args.bases:
            for seed in args.seeds:
                result = evaluate(embedder, base, seed, args.epochs)
                raw[f"{embedder}/{base}/{seed}"] = result
                for method, key in zip(METHODS, ("hits", "raw_occlusion_hits")):
                    for hit in result[key]:
                        by_kind[method][hit["kind"]].append(hit["hit"])
                ratios.append(result["explain_s"] / result["score_s"])
        for method in METHODS:
            kinds = by_kind[method]
            cells = [f"{np.mean(kinds[k]):.0%} ({sum(kinds[k])}/{len(kinds[k])})" for k in SUITE_KINDS]
            every = [h for k in SUITE_KINDS for h in kinds[k]]
            cells.append(f"{np.mean(every):.0%} ({sum(every)}/{len(every)})")
            cells.append(f"{np.median(ratios):.1f}x (D = {result['channels']})")
            print(f"| {embedder} | {method} | " + " | ".join(cells) + " |", flush=True)
    if args.json:
        atomic_write_text(args.json, json.dumps(raw, indent=1))


if __name__ == "__main__":
    main()
