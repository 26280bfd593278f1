"""How ``MADCluster.explain``'s method was chosen (issue 21 item 1): candidate attributions on the
development seed of the synthetic suite, hit rate per anomaly kind.

Candidates: occlusion with the training mean (the raw score drop ``explain`` used before) or with
a centred running median of the channel (9 or 31 steps: a local reference that removes a spike or
a burst but keeps the level), each raw or as a z-score against the same channel's values on the
training series, and each z-score plus the input deviation's z-score (``max |scaled input|`` over
the channel's value and roughness columns). A hit is as in ``benchmarks/studies/models/attribution.py``.

    python benchmarks/studies/models/attribution_choice.py --seeds 0

Seed 0 chose ``occlusion-mean/z+deviation``; ``benchmarks/studies/models/attribution.py`` reports it on seeds
0 1 and on the held-out seeds 2 3. One torch thread, fixed seeds: the same command gives the same
numbers.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from collections.abc import Iterator

import numpy as np
import torch
from scipy.ndimage import median_filter

from madcluster import MADCluster
from madcluster.data.scaling import model_input
from madcluster.data.synthetic import BASE_SIGNALS, SUITE_KINDS, make_anomaly_suite
from madcluster.estimator.attribution import (
    channel_groups,
    channel_ranking,
    input_deviation,
    spread_with_floor,
)

MEDIAN_LENGTHS = (9, 31)


def occlusion_terms(model: MADCluster, X: np.ndarray) -> dict[str, np.ndarray]:
    """Per-step, per-channel score drops for each occlusion reference, and the input deviation."""
    full = model.decision_function(X)
    terms = {"occlusion-mean": model.explain(X)}  # the model has no baseline: the raw drop
    for length in MEDIAN_LENGTHS:
        reference = median_filter(X, size=(length, 1), mode="nearest")
        drops = np.empty(X.shape)
        for j in range(X.shape[1]):
            occluded = X.copy()
            occluded[:, j] = reference[:, j]
            drops[:, j] = full - model.decision_function(occluded)
        terms[f"occlusion-median{length}"] = drops
    inputs = model_input(X, model.scaler_mean_, model.scaler_scale_, model.roughness_window_)
    terms["deviation"] = input_deviation(inputs, channel_groups(X.shape[1], inputs.shape[1]))
    return terms


def candidates(test: dict[str, np.ndarray], train: dict[str, np.ndarray]) -> Iterator[tuple[str, np.ndarray]]:
    def z(name: str) -> np.ndarray:
        return (test[name] - train[name].mean(axis=0)) / spread_with_floor(train[name])

    for name, values in test.items():
        if name != "deviation":
            yield name, values
        yield f"{name}/z", z(name)
        if name != "deviation":
            yield f"{name}/z+deviation", z(name) + z("deviation")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bases", nargs="+", default=list(BASE_SIGNALS), choices=BASE_SIGNALS)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    args = parser.parse_args()
    torch.set_num_threads(1)
    table: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for base in args.bases:
        for seed in args.seeds:
            data = make_anomaly_suite(base, seed=seed)
            model = MADCluster(window_size=100, random_state=seed).fit(data.train)
            model.attribution_baseline_ = None  # explain gives the raw occlusion drop
            test, train = occlusion_terms(model, data.test), occlusion_terms(model, data.train)
            for name, contributions in candidates(test, train):
                for seg in data.segments:
                    table[name][seg.kind].append(channel_ranking(contributions, slice(seg.start, seg.end))[0] in seg.affected)
    print("| candidate | " + " | ".join(SUITE_KINDS) + " | all |")
    print("|---|" + "---|" * (len(SUITE_KINDS) + 1))
    for name, kinds in table.items():
        every = [h for k in SUITE_KINDS for h in kinds[k]]
        cells = [f"{np.mean(kinds[k]):.0%}" for k in SUITE_KINDS] + [f"{np.mean(every):.0%} ({sum(every)}/{len(every)})"]
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
