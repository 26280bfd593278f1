"""Fit the default once per development series and dump its network part (issue 34's studies).

Why: the network is the only expensive part of the default's score. Choosing how the parts combine
means trying many rules over the same series, so the network's standardised own score is dumped once
per series (test and training rows, float32) with the default's ``decision_function`` and its fit
time; the cheap parts are refitted by the reader (``benchmarks/studies/part_study.py``).

    python benchmarks/studies/dev_bundle.py --data-dir ../shared/datasets --out /tmp/dev_bundle.npz
    python benchmarks/studies/network_parts.py --bundle /tmp/dev_bundle.npz --out /tmp/net --jobs 2
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: benchlib
from benchlib import write_npz


def read_bundle(path: str | Path) -> dict[str, dict[str, np.ndarray]]:
    """{name: {train, test, labels, family}} from a bundle written by ``dev_bundle.py``."""
    out: dict[str, dict[str, np.ndarray]] = {}
    with np.load(path) as bundle:
        for key in bundle.files:
            name, field = key.rsplit("/", 1)
            out.setdefault(name, {})[field] = bundle[key]
    return out


def open_series(
    bundle: str, prefixes: list[str] | None, cache: str | None
) -> tuple[dict, Path | None]:
    """The bundle's series (those whose names start with one of ``prefixes``, or all) and the
    cache folder (made if missing; None without one): what every study opens first."""
    series = read_bundle(bundle)
    if prefixes:
        series = {k: v for k, v in series.items() if any(k.startswith(p) for p in prefixes)}
    folder = Path(cache) if cache else None
    if folder:
        folder.mkdir(parents=True, exist_ok=True)
    return series, folder


def study_arguments(doc: str, **folders: str) -> argparse.Namespace:
    """The command line of a study over the bundle: ``--bundle`` and one required option per
    keyword (``--name``, its help), the description from ``doc``'s first line."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--bundle", required=True)
    for name, help_text in folders.items():
        parser.add_argument(f"--{name.replace('_', '-')}", required=True, help=help_text)
    return parser.parse_args()


def family_table(rows: dict[str, dict[str, float]], families: dict[str, str], first: str) -> str:
    """Markdown: per row key (``first`` heads its column), the mean over each family's series and
    over the 46 TSB-AD ones."""
    import numpy as np

    fams = sorted(set(families.values()))
    lines = [
        f"| {first} | " + " | ".join(fams) + " | 46 TSB-AD |",
        "|---|" + "---|" * (len(fams) + 1),
    ]
    for key in next(iter(rows.values())):
        cells = [np.mean([rows[s][key] for s in rows if families[s] == f]) for f in fams]
        dev = np.mean([rows[s][key] for s in rows if families[s].startswith("tsbad")])
        lines.append(f"| {key} | " + " | ".join(f"{c:.3f}" for c in cells) + f" | {dev:.3f} |")
    return "\n".join(lines)


def dump_one(
    name: str, arrays: dict[str, np.ndarray], seed: int, out: Path, params: dict | None = None
) -> str:
    import torch

    from madcluster import MADCluster
    from madcluster.score.scoring import standardize

    torch.set_num_threads(1)
    path = out / f"{name}.npz"
    if path.exists():
        return f"{name}: exists"
    t0 = time.perf_counter()
    detector = MADCluster(random_state=seed, **(params or {})).fit(arrays["train"])
    fit_s = time.perf_counter() - t0

    def own(rows: np.ndarray) -> np.ndarray:
        checked = detector.model_.inputs.check_rows(rows)
        return standardize(
            detector.model_.own_scores(detector.model_.inputs.model_input(checked)),
            detector.model_.combination.stats["own"],
        )

    result = {
        "net_test": own(arrays["test"]).astype(np.float32),
        "net_train": own(arrays["train"]).astype(np.float32),
        "default_test": detector.decision_function(arrays["test"]).astype(np.float32),
        "fit_seconds": np.asarray(fit_s),
    }
    write_npz(path, result)
    return f"{name}: fit {fit_s:.1f}s, total {time.perf_counter() - t0:.1f}s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--series", nargs="*", default=None, help="name prefixes (default: all)")
    parser.add_argument("--params", type=json.loads, default={},
                        help='MADCluster parameters as JSON, e.g. \'{"batch_size": 32}\'')
    args = parser.parse_args()
    series = read_bundle(args.bundle)
    if args.series:
        series = {k: v for k, v in series.items() if any(k.startswith(p) for p in args.series)}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    # largest first, so the slowest fits do not start last
    order = sorted(series, key=lambda k: -series[k]["train"].size)
    with ProcessPoolExecutor(args.jobs, mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(dump_one, name, series[name], args.seed, out, args.params) for name in order]
        for i, future in enumerate(as_completed(futures), 1):
            print(f"[{i}/{len(futures)}] {future.result()}", flush=True)


if __name__ == "__main__":
    main()
