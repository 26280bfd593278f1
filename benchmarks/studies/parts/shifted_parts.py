"""Issue 34's "shifted normal": each part of the fitted default on a test series as it is and with
a new normal (some channels moved for good after the training rows), dumped for the rule study.

Why: on a held-out set whose test data had moved, one part's values grew on every normal row and
drowned the others. No development series had that, so this makes it: the default is fitted once
per series, and its parts (each standardised by its training statistics, unweighted) are read on
the test rows and on a copy whose channels with more than three levels are, for every row after
the training rows, moved by ``--shift`` training deviations (half of them, at least one).

    python benchmarks/studies/parts/shifted_parts.py --bundle /tmp/dev_bundle.npz --out /tmp/shifted \\
        --series chaotic-0 drift-0 point-0 server-0 rhythm-0 demo suite-sines 002_MSL 144_SMAP 060_SMD
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: benchlib
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/studies/: lib
from benchlib import write_npz


def shifted(train: np.ndarray, test: np.ndarray, shift: float, seed: int) -> np.ndarray:
    """``test`` with half of its many-level channels (at least one) moved by ``shift`` training
    deviations after the training rows (a TSB-AD series' test starts with its training rows)."""
    rng = np.random.default_rng(seed)
    levels = np.asarray([len(np.unique(train[:, j])) for j in range(train.shape[1])])
    candidates = np.flatnonzero(levels > 3)
    if len(candidates) == 0:
        candidates = np.arange(train.shape[1])
    chosen = rng.choice(candidates, size=max(1, len(candidates) // 2), replace=False)
    start = len(train) if len(test) > len(train) and np.array_equal(test[: len(train)], train) else 0
    out = np.array(test, dtype=np.float32, copy=True)
    out[start:, chosen] += shift * train[:, chosen].std(axis=0)
    return out


def part_readings(model, rows: np.ndarray) -> dict[str, np.ndarray]:
    """Each part's standardised final reading (before weights and rule) on ``rows``."""
    fitted = model.model_
    combination = fitted.combination
    checked = fitted.inputs.check_rows(rows)
    own = fitted.own_scores(fitted.inputs.model_input(checked))
    readings = combination.readings(checked, own)
    out = {}
    for part in combination.parts:
        mean, std = combination.stats[part.name]
        out[part.name] = (readings[part.name] - mean) / std
    return out


def main() -> None:
    import torch
    from lib import read_bundle

    from madcluster import MADCluster

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--series", nargs="+", required=True, help="name prefixes")
    parser.add_argument("--shift", type=float, default=3.0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    bundle = read_bundle(args.bundle)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for prefix in args.series:
        name = next(k for k in sorted(bundle) if k.startswith(prefix))
        path = out / f"{name}.npz"
        if path.exists():
            continue
        a = bundle[name]
        t0 = time.perf_counter()
        model = MADCluster(random_state=0, device="cpu").fit(a["train"])
        moved = shifted(a["train"], a["test"], args.shift, seed=0)
        arrays = {f"test/{k}": v for k, v in part_readings(model, a["test"]).items()}
        arrays |= {f"shifted/{k}": v for k, v in part_readings(model, moved).items()}
        arrays |= {"labels": a["labels"], "first": np.asarray(a["test"])[:, 0],
                   "family": a["family"]}
        write_npz(path, arrays)
        print(f"{name}: {time.perf_counter() - t0:.0f}s", flush=True)


if __name__ == "__main__":
    main()
