"""The TSB-AD results table: every published detector, the reruns and madcluster, per dataset and series.

Reads TSB-AD's published per-series VUS-PR (``benchmarks/results/tsbad/published_vus_pr.csv``)
restricted to the series rebuilt here, the reruns of TSB-AD's code (``benchmarks/tsbad_peers.py``
JSONs) and madcluster's runs (``benchmarks/tsbad.py`` JSONs), and writes one markdown file.

    python benchmarks/tables/tsbad_table.py --ours benchmarks/results/tsbad/madcluster.json \\
        --peers benchmarks/results/tsbad/peers_tsbad1.5.json:"rerun, tsb-ad 1.5" \\
                benchmarks/results/tsbad/peers_tsbad_35ba9c3.json:"rerun, TSB-AD at 35ba9c3" \\
        --out benchmarks/results/tsbad/table.md
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from madcluster.atomic import atomic_write_text
from madcluster.data.tsbad_rebuild import read_published_table

HERE = Path(__file__).resolve().parents[1]  # benchmarks/
PUBLISHED = HERE / "results" / "tsbad" / "published_vus_pr.csv"
DATASETS = ("MSL", "SMAP", "SMD")


def _rows(ours: list[Path], peers: list[str], configs: list[str] | None) -> dict[str, dict[str, float]]:
    """{row name: {series stem: VUS-PR}} for our configurations and the reruns."""
    rows: dict[str, dict[str, float]] = {}
    for path in ours:
        record = json.loads(path.read_text())
        for r in record["results"]:
            if configs and r["config"] not in configs:
                continue
            rows.setdefault(f"madcluster `{r['config']}`", {})[r["series"]] = r["vus_pr"]
    for spec in peers:
        path, _, label = spec.partition(":")
        record = json.loads(Path(path).read_text())
        for r in record["results"]:
            stem = r["file"][: -len(".csv")]
            rows.setdefault(f"{r['detector']} ({label or Path(path).stem})", {})[stem] = r["vus_pr"]
    return rows


def build(ours: list[Path], peers: list[str], configs: list[str] | None = None) -> str:
    published = read_published_table(PUBLISHED)
    extra = _rows(ours, peers, configs)
    stems = sorted({s for row in extra.values() for s in row})
    kept = [p for p in published if p.name.stem in stems]
    by_stem = {p.name.stem: p for p in kept}
    table: dict[str, dict[str, float]] = {}
    for det in kept[0].vus_pr:
        table[f"{det} (published)"] = {p.name.stem: p.vus_pr[det] for p in kept}
    table.update(extra)

    def mean(row: dict[str, float], dataset: str | None) -> str:
        vals = [v for s, v in row.items() if s in by_stem and (dataset is None or by_stem[s].name.dataset == dataset)]
        n = sum(1 for s in by_stem if dataset is None or by_stem[s].name.dataset == dataset)
        return f"{np.mean(vals):.3f}" if len(vals) == n and n else (f"({len(vals)}/{n})" if vals else "")

    counts = {d: sum(p.name.dataset == d for p in kept) for d in DATASETS}
    order = sorted(table, key=lambda k: -np.mean(list(table[k].values())))
    lines = [
        "| detector | " + " | ".join(f"{d} ({counts[d]})" for d in DATASETS) + f" | all {len(kept)} |",
        "|---|---|---|---|---|",
    ]
    for name in order:
        lines.append(f"| {name} | " + " | ".join(mean(table[name], d) for d in (*DATASETS, None)) + " |")
    lines += ["", "Per series (VUS-PR; columns: TSB-AD file index, source dataset, TSB-AD id):", ""]
    lines.append("| detector | " + " | ".join(f"{s.split('_id_')[0]}_{s.split('_')[3]}" for s in by_stem) + " |")
    lines.append("|---|" + "---|" * len(by_stem))
    for name in order:
        lines.append(f"| {name} | " + " | ".join(
            f"{table[name][s]:.3f}" if s in table[name] else "" for s in by_stem) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ours", nargs="*", type=Path, default=[])
    parser.add_argument("--peers", nargs="*", default=[], help="JSON[:label] from tsbad_peers.py")
    parser.add_argument("--configs", nargs="*", help="only these configurations of the --ours files")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--title", default="TSB-AD-M series rebuilt from MSL, SMAP and SMD: mean VUS-PR")
    args = parser.parse_args(argv)
    body = build(args.ours, args.peers, args.configs)
    atomic_write_text(args.out, f"# {args.title}\n\n{body}")
    print(body.split("\n\n")[0])


if __name__ == "__main__":
    main()
