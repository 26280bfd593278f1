"""Incidents on the development families: the policy's defaults chosen by event-level measures.

For each series of each development family (``madcluster.data.families``, seeds 0-3) the default
detector (``random_state=0``) is fitted on the training rows; its at-once scores on the test rows
(what a stream answers each row with first), its final scores (``decision_function``) and the
at-once scores of the validation rows (the end of the training rows, which the network never
trains on) are cached per commit, so choosing a policy reruns in seconds. Two held-out server
series (seed 7, 5,000 test rows; seed 8, 10,000) are reported and never chosen on.

Event-level measures, per family (the issue's): an anomaly is *caught* when an incident overlaps
it or starts within ``INCIDENT_SLACK`` (benchlib) rows after its end; an incident is *false*
when it overlaps no anomaly widened by as many rows on either side; false incidents per 10,000
normal rows; the median *delay* from an anomaly's first row to the row that raised the first incident catching it.
Beside the policy: today's plain merged flags (rows above ``threshold_``, flags fewer than
``MERGE_GAP`` rows apart merged), of the at-once and of the final scores.

The rule a default must hold on every family: the most anomalies caught subject to at most
``BUDGET`` false incidents per 10,000 normal rows and a median delay of at most ``MAX_DELAY``
rows; among the shapes that hold on every family, the one catching the most on its worst family.
The same rule is also run with each family left out in turn: the shape it chooses on the others,
measured on the family left out (the table "each family left out").

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/incidents.py \\
        --out benchmarks/results/incidents.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import INCIDENT_SLACK, incident_events

SEEDS = range(4)
HELD_OUT = (("server", 7, 5000), ("server", 8, 10000))
MERGE_GAP = 10
BUDGET = 2.0
MAX_DELAY = 10
MAX_OPEN_SHARE = 0.05
SHAPES = {  # the candidate policies' shapes
    "k": (2, 3, 5),
    "n": (5, 10),
    "close_rows": (10, 20, 50),
    "close_fraction": (0.5, 0.8, 1.0),
    "settle_windows": (0, 1),  # no incident on a stream's first windows
    "spike_factor": (None, 2.0, 3.0),  # one score above this multiple of the open level opens
}
# open at threshold_, at the calibrated budget's level, or at the higher of the two
LEVELS = ("higher", "budget", "threshold")  # in this order on ties
# the budgets the calibrated levels are set for (``--budgets``): the default's alone unless asked
OPEN_BUDGETS = (BUDGET,)


def commit() -> str:
    """The code's commit: ``INCIDENTS_COMMIT`` (a run on an exported tree), else this checkout's."""
    if os.environ.get("INCIDENTS_COMMIT"):
        return os.environ["INCIDENTS_COMMIT"]
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, check=False
    )
    return out.stdout.decode().strip() or "unknown"


def series_scores(
    family: str, seed: int, n_test: int, cache: Path, reuse: bool = False
) -> dict[str, np.ndarray]:
    """The scores of one series, fitted once per commit (``reuse``: the newest cached fit of any
    commit); ``commit`` in the arrays names the code that made them."""
    name = f"{family}-{seed}-{n_test}"
    path = cache / f"{name}_{commit()}.npz"
    cached = sorted(cache.glob(f"{name}_*.npz"), key=lambda p: p.stat().st_mtime)
    if path.exists() or (reuse and cached):
        found = path if path.exists() else cached[-1]
        return {**np.load(found), "commit": np.asarray(found.stem.split("_")[-1])}
    from dataclasses import replace

    from benchlib import write_npz

    from madcluster import MADCluster
    from madcluster.data.families import make_family
    from madcluster.estimator.incident_scoring import (
        at_once_scores,
        incident_floor,
        validation_at_once,
    )
    from madcluster.training.loop import validation_rows

    series = make_family(family, seed, n_test=n_test)
    start = time.perf_counter()
    detector = MADCluster(random_state=0).fit(series.train)
    fit_s = time.perf_counter() - start
    n_val = validation_rows(len(series.train), detector.validation_size, detector.window_size)
    model = detector.model_
    final_parts = replace(
        model, combination=replace(model.combination, parts=model.combination.final_parts)
    )
    arrays = {
        "at_once": at_once_scores(model, series.test),
        # the at-once score of the final score's parts alone: the flags that cap how long the
        # policy may stay open (a part added at once only would otherwise loosen its own cap)
        "at_once_final_parts": at_once_scores(final_parts, series.test),
        "final": detector.decision_function(series.test),
        "validation": validation_at_once(detector.model_, series.train, n_val),
        # the last training rows (at most 2,000), in sample: the fit keeps the calibration of
        # these or of the validation rows, whichever opens higher
        "in_sample": validation_at_once(
            detector.model_, series.train, len(series.train) - 2 * detector.window_size
        ),
        "labels": series.labels,
        "threshold": np.asarray(detector.threshold_),
        # the lowest level the model's incidents open at (threshold_ in caches from before it)
        "floor": np.asarray(incident_floor(detector.model_)),
        "fit_s": np.asarray(fit_s),
        "commit": np.asarray(commit()),
    }
    cache.mkdir(parents=True, exist_ok=True)
    write_npz(path, arrays)
    print(f"{family}-{seed} ({n_test} test rows): fitted in {fit_s:.1f} s", flush=True)
    return arrays


def merged_flags(scores: np.ndarray, threshold: float) -> list[tuple[int, int, int]]:
    """Today's plain incidents: flagged rows fewer than MERGE_GAP apart merged; (start, end,
    raised = start)."""
    rows = np.flatnonzero(scores > threshold)
    out: list[tuple[int, int, int]] = []
    for row in rows.tolist():
        if out and row - out[-1][1] < MERGE_GAP:
            out[-1] = (out[-1][0], row, out[-1][2])
        else:
            out.append((row, row, row))
    return out


_CALIBRATIONS: dict = {}


def policy_spans(arrays: dict[str, np.ndarray], shape: tuple, level: str) -> list[tuple]:
    """The policy's incidents ``(start, end, raised)`` on the test rows: opening at the model's
    floor (``level`` "threshold": ``threshold_``, or where the at-once weights do not pair with
    the final ones the floor :func:`~madcluster.estimator.incident_scoring.incident_floor` gives)
    or at the level the validation rows' calibration gives for ``BUDGET`` ("budget"; the floor
    where they raise too few incidents to calibrate);
    "budget@B" and "higher@B": the level calibrated for B false incidents instead."""
    from madcluster.defaults import DEFAULT_WINDOW_SIZE
    from madcluster.estimator.incident_scoring import MAX_CALIBRATION_ROWS, kept_calibration
    from madcluster.exceptions import ParameterError
    from madcluster.incidents.calibration import IncidentCalibration
    from madcluster.incidents.policy import IncidentPolicy, track

    k, n, close_rows, fraction, settle, spike = shape
    open_level = float(arrays.get("floor", arrays["threshold"]))  # the model's floor
    level, _, target = level.partition("@")
    if level in ("budget", "higher"):
        key = (id(arrays), k, n, close_rows, fraction, spike)
        if key not in _CALIBRATIONS:  # one per series and shape, shared by levels and settling
            shape_of = {"k": k, "n": n, "close_rows": close_rows, "close_fraction": fraction}
            held = IncidentCalibration.measure(arrays["validation"], **shape_of, spike_factor=spike)
            # the fit's rule: the held-out calibration, or where its rows raised few incidents
            # the one of it and the in-sample calibration that opens higher
            # (caches from before the in-sample rows: the held-out one)
            _CALIBRATIONS[key] = (
                kept_calibration(
                    held,
                    IncidentCalibration.measure(
                        arrays["in_sample"], **shape_of, spike_factor=spike, in_sample=True
                    ),
                )
                if "in_sample" in arrays and len(arrays["validation"]) < MAX_CALIBRATION_ROWS
                else held
            )
        calibration = _CALIBRATIONS[key]
        try:
            budget = calibration.level_for(float(target) if target else BUDGET)
            open_level = budget if level == "budget" else max(open_level, budget)
        except ParameterError:
            pass
    policy = IncidentPolicy.at(
        open_level,
        k=k,
        n=n,
        close_rows=close_rows,
        close_fraction=fraction,
        settle_rows=settle * DEFAULT_WINDOW_SIZE,  # every series' model has the default window
        spike_factor=spike,
    )
    last = len(arrays["at_once"]) - 1
    return [
        (i.start, last if i.end is None else i.end, i.raised)
        for i in track(arrays["at_once"], policy)
    ]


def summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Pooled measures of a family's series."""
    caught = sum(r["caught"] for r in results)
    total = sum(r["anomalies"] for r in results)
    false = sum(r["false"] for r in results)
    normal = sum(r["normal_rows"] for r in results)
    delays = [d for r in results for d in r["delays"]]
    return {
        "caught": caught,
        "anomalies": total,
        "incidents": sum(r["incidents"] for r in results),
        "false": false,
        "false_per_10k": round(10_000 * false / max(normal, 1), 2),
        "open_share": round(
            sum(r["open_quiet_rows"] for r in results)
            / max(sum(r["quiet_rows"] for r in results), 1),
            4,
        ),
        "median_delay": float(np.median(delays)) if delays else None,
        # the goal is per set: a family's pooled median can hide series above it
        "series_delays": [float(np.median(r["delays"])) if r["delays"] else None for r in results],
    }


def holds(row: dict[str, Any], flags: dict[str, Any]) -> bool:
    """The rule on one family (``flags``: today's at-once flags of the final score's parts
    there)."""
    delay = row["median_delay"]
    longest = max(MAX_OPEN_SHARE, flags["open_share"])  # open no longer than today's flags
    return (
        row["false_per_10k"] <= BUDGET
        and (delay is None or delay <= MAX_DELAY)
        and row["open_share"] <= longest
    )


def rank(rows: dict[str, dict], flags: dict[str, dict], left_out: str | None = None) -> tuple:
    """The rule's order of one candidate (its measures per family, ``rows``; the largest is
    chosen): holding on every family, open no longer than allowed everywhere, the most families
    holding, the most caught on the worst family, the most families within the budget, the
    fewest false incidents on the worst (``left_out``: that family not counted)."""
    rows = {f: r for f, r in rows.items() if f != left_out}
    worst = min(r["caught"] / max(r["anomalies"], 1) for r in rows.values())
    holding = sum(holds(r, flags[f]) for f, r in rows.items())
    longest = max(r["open_share"] / max(MAX_OPEN_SHARE, flags[f]["open_share"])
                  for f, r in rows.items())  # fmt: skip
    return (
        holding == len(rows),
        longest <= 1.0,
        holding,
        worst,
        sum(r["false_per_10k"] <= BUDGET for r in rows.values()),
        -max(r["false_per_10k"] for r in rows.values()),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/results/incidents.json")
    parser.add_argument("--cache", default=str(Path.home() / ".cache" / "madcluster-incidents"))
    parser.add_argument("--families", nargs="*", default=None, help="default: FAMILIES")
    parser.add_argument(
        "--reuse", action="store_true", help="the newest cached fit of any commit (no new fits)"
    )
    parser.add_argument(
        "--seeds",
        type=int,
        default=len(SEEDS),
        help=f"series per family, seeds 0 to N-1 (default {len(SEEDS)}; the record's choice)",
    )
    parser.add_argument(
        "--budgets",
        nargs="+",
        type=float,
        default=list(OPEN_BUDGETS),
        help="false incidents per 10,000 normal rows the calibrated open levels are set for "
        f"(candidates; default: {BUDGET:g}, the default policy's; the rule's budget stays "
        f"{BUDGET:g})",
    )
    args = parser.parse_args()
    if not 1 <= args.seeds <= min(seed for _, seed, _ in HELD_OUT):
        parser.error(f"--seeds must be 1 to {min(s for _, s, _ in HELD_OUT)}: the held-out series")
    from benchlib import write_record

    from madcluster.data.families import FAMILIES

    families = args.families or list(FAMILIES)
    cache = Path(args.cache)
    data = {
        f: [series_scores(f, s, 5000, cache, args.reuse) for s in range(args.seeds)]
        for f in families
    }
    held = {
        f"{f}-{s} ({n} rows)": series_scores(f, s, n, cache, args.reuse) for f, s, n in HELD_OUT
    }
    scored_on = sorted({str(a["commit"]) for v in [*data.values(), [*held.values()]] for a in v})

    def measure(arrays_list: list[dict], how: str, shape: tuple | None = None) -> dict:
        results = []
        for arrays in arrays_list:
            if how.startswith("flags"):
                key = {"flags final": "final", "flags at once": "at_once"}.get(how)
                # the cap's flags: those of the final score's parts at once (caches from before
                # the key: the at-once score, which had no other parts then)
                scores = (
                    arrays[key] if key else arrays.get("at_once_final_parts", arrays["at_once"])
                )
                spans = merged_flags(scores, float(arrays["threshold"]))
            else:
                spans = policy_spans(arrays, shape, how)
            results.append(incident_events(spans, arrays["labels"]))
        return summary(results)

    shapes = [s for s in itertools.product(*SHAPES.values()) if s[0] <= s[1]]
    grid: dict[str, dict[str, dict]] = {}
    grid_keys: dict[str, tuple[str, tuple]] = {}
    levels = [
        level if budget == BUDGET or level == "threshold" else f"{level}@{budget:g}"
        for budget in args.budgets
        for level in LEVELS
    ]
    levels = list(dict.fromkeys(levels))  # threshold_ once
    for level, shape in itertools.product(levels, shapes):
        name = shape_name(level, shape)
        grid[name] = {f: measure(data[f], level, shape) for f in families}
        grid_keys[name] = (level, shape)

    flags = {f: measure(data[f], "flags at once, final parts") for f in families}

    chosen = max(grid, key=lambda name: rank(grid[name], flags))
    level, shape = grid_keys[chosen]
    left_out = {}
    for family in families if len(families) > 1 else []:  # one family: none left to choose on
        choice = max(grid, key=lambda name: rank(grid[name], flags, family))  # the first of equals
        row = grid[choice][family]
        left_out[family] = {"chosen": choice, **row, "holds": holds(row, flags[family])}
    compared = {
        "flags at once": {f: measure(data[f], "flags at once") for f in families},
        "flags final": {f: measure(data[f], "flags final") for f in families},
        f"policy ({chosen})": grid[chosen],
    }
    held_out = {
        name: {
            "flags at once": measure([arrays], "flags at once"),
            "flags final": measure([arrays], "flags final"),
            "policy": measure([arrays], level, shape),
        }
        for name, arrays in held.items()
    }
    record = {
        "commit": commit(),
        "scores_from_commits": scored_on,
        "command": "PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/incidents.py"
        + (
            ""
            if args.budgets == [BUDGET]
            else " --budgets " + " ".join(f"{b:g}" for b in args.budgets)
        )
        + ("" if args.seeds == len(SEEDS) else f" --seeds {args.seeds}"),
        "rule": f"every family: <= {BUDGET} false incidents per 10,000 normal rows, median delay "
        f"<= {MAX_DELAY} rows, open on at most {MAX_OPEN_SHARE:.0%} of the rows away from "
        "anomalies (or where larger the share of today's at-once flags of the final score's "
        "parts); else open no longer than "
        "that everywhere, the most families holding, the most caught on the worst family, "
        "the most families within the false-incident budget, the fewest false on the worst",
        "slack": INCIDENT_SLACK,
        "merge_gap": MERGE_GAP,
        "chosen": chosen,
        "chosen_holds_everywhere": rank(grid[chosen], flags)[0],
        "families": compared,
        "held_out": held_out,
        "left_out": left_out,
        "grid": grid,
    }
    write_record(args.out, record)
    Path(args.out).with_suffix(".md").write_text(markdown(record))


def shape_name(level: str, shape: tuple) -> str:
    """A candidate's name: its open level and shape."""
    k, n, close_rows, fraction, settle, spike = shape
    name = f"{level} k={k} n={n} close={close_rows} x{fraction}"
    return name + (f" settle={settle}L" if settle else "") + (f" spike={spike}" if spike else "")


def series_delays(row: dict[str, Any]) -> str:
    """Each series' median delay, as the table writes them (a record from before: -)."""
    return ", ".join(str(d) for d in row.get("series_delays", [])) or "-"


def markdown(record: dict[str, Any]) -> str:
    lines = [
        "# Incidents on the development families",
        "",
        f"Commit `{record['commit']}`; `{record['command']}`. Rule: {record['rule']}.",
        (
            f"Caught: an incident overlaps the anomaly or starts within {record['slack']} rows "
            f"after it; false: it overlaps no anomaly widened by {record['slack']} rows. Flags: "
            f"rows above `threshold_`, fewer than {record['merge_gap']} rows apart merged."
        ),
        "",
        (
            f"Chosen: **{record['chosen']}** (holds on every family: "
            f"{record['chosen_holds_everywhere']})."
        ),
        "",
    ]
    header = (
        "| family | what | incidents | caught | false | per 10,000 normal rows | median delay "
        "| per series | open, away from anomalies |"
    )
    for title, table in (("Per family", record["families"]),):
        lines += [f"## {title}", "", header, "|---|---|---|---|---|---|---|---|---|"]
        families = next(iter(table.values())).keys()
        for family in families:
            for what, rows in table.items():
                r = rows[family]
                lines.append(
                    f"| {family} | {what} | {r['incidents']} | {r['caught']} of {r['anomalies']} "
                    f"| {r['false']} | {r['false_per_10k']} | {r['median_delay']} "
                    f"| {series_delays(r)} | {r['open_share']:.1%} |"
                )
        lines.append("")
    lines += [
        "## Each family left out",
        "",
        "The rule run on the other families; its choice measured on the family left out.",
        "",
        (
            "| left out | chosen on the others | caught | false | per 10,000 normal rows "
            "| median delay | open, away from anomalies | rule holds there |"
        ),
        "|---|---|---|---|---|---|---|---|",
    ]
    for family, r in record["left_out"].items():
        lines.append(
            f"| {family} | {r['chosen']} | {r['caught']} of {r['anomalies']} | {r['false']} "
            f"| {r['false_per_10k']} | {r['median_delay']} | {r['open_share']:.1%} "
            f"| {'yes' if r['holds'] else 'no'} |"
        )
    lines.append("")
    lines += ["## Held out (never chosen on)", "", header, "|---|---|---|---|---|---|---|---|---|"]
    for name, rows in record["held_out"].items():
        for what, r in rows.items():
            lines.append(
                f"| {name} | {what} | {r['incidents']} | {r['caught']} of {r['anomalies']} "
                f"| {r['false']} | {r['false_per_10k']} | {r['median_delay']} "
                f"| {series_delays(r)} | {r['open_share']:.1%} |"
            )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
    print(json.dumps({"done": True}))
