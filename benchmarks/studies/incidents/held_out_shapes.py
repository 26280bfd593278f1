"""Every policy shape that holds the false-incident budget on every development family, on the two
held-out server series: what the choice of ``benchmarks/incidents.py`` could have caught there
(``benchmarks/results/parts/tail_excess.md``, the at-once section: read with the tail-excess
rule, every such shape missed an anomaly there).

Reads a record of ``benchmarks/incidents.py`` (its ``grid``: each shape's rows per family) and the
held-out series' cached scores of the commit it names (no new fit), and prints per shape at the
calibrated level (``higher``) the worst family's false incidents per 10,000 normal rows and, per
held-out series, anomalies caught, false incidents and the median delay.

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/studies/incidents/held_out_shapes.py \\
        --record benchmarks/results/incidents_excess_at_once.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: benchlib, incidents

import incidents as rule
from benchlib import incident_events


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", required=True, help="a record of benchmarks/incidents.py")
    parser.add_argument("--cache", default=str(Path.home() / ".cache" / "madcluster-incidents"))
    args = parser.parse_args()
    record = json.loads(Path(args.record).read_text())
    os.environ["INCIDENTS_COMMIT"] = str(record["commit"])  # that commit's cached scores
    held = {
        f"{f}-{s}": rule.series_scores(f, s, n, Path(args.cache), False)
        for f, s, n in rule.HELD_OUT
    }
    names = list(held)
    print("| shape | worst family, false per 10,000 | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))
    rows = []
    for shape in (s for s in itertools.product(*rule.SHAPES.values()) if s[0] <= s[1]):
        name = rule.shape_name("higher", shape)
        families = record["grid"].get(name)
        if not families or any(v["false_per_10k"] > rule.BUDGET for v in families.values()):
            continue
        cells = []
        for arrays in held.values():
            spans = rule.policy_spans(arrays, shape, "higher")
            r = rule.summary([incident_events(spans, arrays["labels"])])
            cells.append(
                f"{r['caught']} of {r['anomalies']}, {r['false']} false, delay {r['median_delay']}"
            )
        worst = max(v["false_per_10k"] for v in families.values())
        rows.append((worst, f"| {name} | {worst:.2f} | " + " | ".join(cells) + " |"))
    for _, line in sorted(rows):
        print(line)


if __name__ == "__main__":
    main()
