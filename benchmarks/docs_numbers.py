"""The numbers the README and docs/ quote, from one generated file, never retyped, each with
whether its record measured today's code.

``benchmarks/results/numbers.json`` is generated from the result records below (each with the
command that made it). In README.md and docs/*.md a quoted number carries an invisible marker
right after it, ``.985<!--n:demo.auc_roc-->``; the number is written with as many decimals as the
text wants, and the check compares it with the generated value rounded the same way::

    python benchmarks/docs_numbers.py --check    # exit 1 naming every number that differs from its
                                                 # record; each record current, stale or unknown
    python benchmarks/docs_numbers.py --write    # regenerate numbers.json, rewrite the marked numbers
    python benchmarks/docs_numbers.py --rerun    # make every stale record again, then --write
    python benchmarks/docs_numbers.py --rerun all    # every record (the README's tables from scratch)

A record is *current* when its stamp (``benchlib.stamp``: commit, dirty files, the fingerprint of
each configuration it measured) has the fingerprint today's code gives the same configuration,
*stale* when it differs (or the record is known to come from an earlier default), *unknown* when
it carries no fingerprint (records made before stamps). ``--strict`` fails on a stale record.
``tests/test_docs_numbers.py`` runs the text check, so a new record that changes a number fails
the tests until the docs are rewritten from it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
NUMBERS = RESULTS / "numbers.json"
#: the pages whose marked numbers must match their records (history quotes earlier defaults)
DOCS = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "history.md")]
MARKED = re.compile(r"(?P<number>-?\d*\.?\d+)(?P<between>\**)<!--n:(?P<key>[\w.]+)-->")

#: key -> (record file under benchmarks/results, how to read the value from it)
SOURCES: dict[str, tuple[str, Any]] = {
    "demo.auc_roc": ("demo_metrics.json", lambda r: r["metrics"]["auc_roc"]),
    "demo.vus_roc": ("demo_metrics.json", lambda r: r["metrics"]["vus_roc"]),
    "demo.vus_pr": ("demo_metrics.json", lambda r: r["metrics"]["vus_pr"]),
    "demo.before_smoothing.auc_roc": ("demo_metrics_variants.json", lambda r: r["before_smoothing"]["metrics"]["auc_roc"]),
    "demo.before_smoothing.vus_pr": ("demo_metrics_variants.json", lambda r: r["before_smoothing"]["metrics"]["vus_pr"]),
    "demo.equal_weights.auc_roc": ("demo_metrics_variants.json", lambda r: r["equal_weights"]["metrics"]["auc_roc"]),
    "demo.equal_weights.vus_pr": ("demo_metrics_variants.json", lambda r: r["equal_weights"]["metrics"]["vus_pr"]),
    "stream.default.p50_ms": ("stream_latency.json", lambda r: _model(r, "default")["p50_ms"]),
    "stream.default.p99_ms": ("stream_latency.json", lambda r: _model(r, "default")["p99_ms"]),
    "stream.streaming.p50_ms": ("stream_latency.json", lambda r: _model(r, "streaming preset (")["p50_ms"]),
    "stream.streaming.p99_ms": ("stream_latency.json", lambda r: _model(r, "streaming preset (")["p99_ms"]),
    "stream.rerun.p50_ms": ("stream_latency.json", lambda r: _model(r, "streaming preset, stepper off")["p50_ms"]),
    "stream.rerun.p99_ms": ("stream_latency.json", lambda r: _model(r, "streaming preset, stepper off")["p99_ms"]),
    "serve.stream_kib_new": ("serve_stream_memory.json", lambda r: r["new_streams"]["rss_kib_per_stream"]),
    "serve.stream_kib_long": ("serve_stream_memory.json", lambda r: r["long_streams"]["rss_kib_per_stream"]),
    "serve.stream_counted_kib_long": (
        "serve_stream_memory.json", lambda r: r["long_streams"]["counted_kib_per_stream"]),
    "serve.stream_counted_kib_peak": (
        "serve_stream_memory.json", lambda r: r["held_by_rows"]["2900"]["counted_kib"]),
    "serve.stream_counted_kib_settled": (
        "serve_stream_memory.json", lambda r: r["held_by_rows"]["3100"]["counted_kib"]),
    **{
        f"tsbad.{config}.{source}": (record, lambda r, c=config, s=source: r["summary"][c][s])
        for config, record in (("default", "tsbad/default_seed0.json"), ("paper", "tsbad/paper_seed0.json"))
        for source in ("MSL", "SMAP", "SMD", "all")
    },
}


PYTHON = sys.executable
TSBAD = [PYTHON, "benchmarks/tsbad.py", "--seed", "0", "--jobs", "2", "--data-dir", "../shared/datasets"]
#: record -> (the configuration whose numbers are quoted, as the record's stamp names it; the
#: command that makes the record again, run from the repository root; None: not from here)
RECORDS: dict[str, tuple[str, list[str] | None]] = {
    "demo_metrics.json": ("default", ["demo"]),
    "demo_metrics_variants.json": ("default", None),
    "stream_latency.json": ("default (input terms: final L rows later)",
                            [PYTHON, "benchmarks/stream_latency.py"]),
    "tsbad/default_seed0.json": (
        "default", [*TSBAD, "--config", "default", "--out", "benchmarks/results/tsbad/default_seed0.json"]),
    "tsbad/paper_seed0.json": (
        "paper", [*TSBAD, "--config", "paper", "--out", "benchmarks/results/tsbad/paper_seed0.json"]),
    "serve_stream_memory.json": ("default", [PYTHON, "benchmarks/studies/speed/stream_memory.py"]),
}
#: what ``madcluster demo`` trains (its own settings over the default)
DEMO = {"preset": "default", "random_state": 0, "epochs": 10, "stride": 5, "lr": 3e-3, "rho": 0.1}


def _model(record: dict, prefix: str) -> dict:
    return next(r for r in record["results"] if r["model"].startswith(prefix))


def generate() -> dict[str, dict[str, Any]]:
    """Every key's value with the record and command it comes from."""
    out = {}
    for key, (name, read) in SOURCES.items():
        record = json.loads((RESULTS / name).read_text())
        out[key] = {"value": read(record), "record": f"benchmarks/results/{name}", "command": record.get("command") or record.get("provenance", {}).get("command", "")}
    return out


def _decimals(text: str) -> int:
    return len(text.split(".", 1)[1]) if "." in text else 0


def _formatted(value: float, like: str) -> str:
    """``value`` written as ``like`` is: its decimals, and no leading zero when it has none."""
    text = f"{value:.{_decimals(like)}f}"
    if like.lstrip("-").startswith(".") and text.lstrip("-").startswith("0."):
        text = text.replace("0.", ".", 1)
    return text


def stale(numbers: dict[str, dict[str, Any]], files: list[Path] = DOCS) -> list[str]:
    """``file: key written X, the record says Y`` for every marked number that differs."""
    problems = []
    for path in files:
        for match in MARKED.finditer(path.read_text(encoding="utf-8")):
            key, written = match["key"], match["number"]
            if key not in numbers:
                problems.append(f"{path.relative_to(ROOT)}: unknown number key {key!r}")
                continue
            expected = _formatted(numbers[key]["value"], written)
            if expected != written:
                problems.append(f"{path.relative_to(ROOT)}: {key} written {written}, the record says {expected}")
    return problems


def rewrite(numbers: dict[str, dict[str, Any]], files: list[Path] = DOCS) -> int:
    """Rewrite every marked number from ``numbers``; returns how many changed."""
    changed = 0
    for path in files:
        text = path.read_text(encoding="utf-8")

        def fresh(match: re.Match) -> str:
            nonlocal changed
            value = _formatted(numbers[match["key"]]["value"], match["number"])
            changed += value != match["number"]
            return f"{value}{match['between']}<!--n:{match['key']}-->"

        new = MARKED.sub(fresh, text)
        if new != text:
            path.write_text(new, encoding="utf-8")
    return changed


def _today(requested: dict[str, Any]) -> str:
    """The fingerprint today's code gives a configuration asked for as ``{"preset": ..., **params}``."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from benchlib import configuration, fingerprint

    params = {k: v for k, v in requested.items() if k != "preset"}
    try:
        return fingerprint(configuration(requested.get("preset", "default"), params))
    except (TypeError, ValueError, KeyError) as exc:
        return f"not resolved ({type(exc).__name__})"


def record_status(record: dict[str, Any], config: str,
                  today: Callable[[dict[str, Any]], str] = _today) -> tuple[str, str]:
    """(``current`` | ``stale`` | ``unknown``, why) for the configuration ``config`` of a record."""
    stamp = record.get("stamp")
    if not isinstance(stamp, dict):
        return "unknown", "no stamp: made before records were stamped"
    if stamp.get("earlier_default"):
        return "stale", stamp["earlier_default"]
    measured = (stamp.get("measured") or {}).get(config)
    if measured is None:
        return "unknown", stamp.get("note", f"no fingerprint for {config!r}")
    now = today(stamp["requested"][config])
    if now != measured:
        return "stale", f"measured configuration {measured}, today's {now}"
    return "current", f"commit {str(stamp.get('commit'))[:10]}" + (" (dirty tree)" if stamp.get("dirty") else "")


def statuses(today: Callable[[dict[str, Any]], str] = _today) -> dict[str, tuple[str, str]]:
    """Every record the docs quote, with its :func:`record_status`."""
    return {name: record_status(json.loads((RESULTS / name).read_text()), config, today)
            for name, (config, _) in RECORDS.items()}


def quoted_keys(files: list[Path] = DOCS) -> dict[str, int]:
    """How many times each number key is quoted in ``files``."""
    counts: dict[str, int] = {}
    for path in files:
        for match in MARKED.finditer(path.read_text(encoding="utf-8")):
            counts[match["key"]] = counts.get(match["key"], 0) + 1
    return counts


def report(states: dict[str, tuple[str, str]], files: list[Path] = DOCS) -> dict[str, int]:
    """Print each record's state and the quoted numbers it backs; returns quoted numbers per state."""
    quoted = quoted_keys(files)
    per_state = {"current": 0, "stale": 0, "unknown": 0}
    for name, (state, why) in states.items():
        count = sum(n for key, n in quoted.items() if SOURCES[key][0] == name)
        per_state[state] += count
        print(f"{state:8} {count:3} quoted  benchmarks/results/{name}: {why}")
    print(f"quoted numbers: {per_state['current']} current, {per_state['stale']} stale, "
          f"{per_state['unknown']} of unknown configuration")
    return per_state


def _rerun_demo() -> None:
    """``madcluster demo`` in a scratch folder; its metrics become the stamped demo record."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from benchlib import write_record

    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "OMP_NUM_THREADS": "1"}
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run([PYTHON, "-m", "madcluster", "demo", "--quiet", "--output-dir", scratch],
                       env=env, check=True, cwd=ROOT)
        metrics = json.loads((Path(scratch) / "demo_metrics.json").read_text())
    record = {"command": "PYTHONPATH=src OMP_NUM_THREADS=1 madcluster demo --quiet", "metrics": metrics}
    write_record(RESULTS / "demo_metrics.json", record, configs={"default": DEMO})


def rerun(which: str, states: dict[str, tuple[str, str]]) -> None:
    """Make again every record (``all``) or every stale one (``stale``: measured another
    configuration; one of unknown configuration, which may take an hour, only with ``all``)
    that has a command."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "OMP_NUM_THREADS": "1"}
    for name, (_, command) in RECORDS.items():
        if command is None or (which != "all" and states[name][0] != "stale"):
            continue
        print(f"making benchmarks/results/{name}: {' '.join(command)}", flush=True)
        if command == ["demo"]:
            _rerun_demo()
        else:
            subprocess.run(command, env=env, check=True, cwd=ROOT)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="the default: check the text, report each record")
    parser.add_argument("--write", action="store_true", help="regenerate numbers.json and rewrite the docs' numbers")
    parser.add_argument("--rerun", nargs="?", const="stale", choices=("stale", "all"),
                        help="make the records again (the stale ones, or all), then --write")
    parser.add_argument("--strict", action="store_true", help="also fail when a quoted record is stale")
    args = parser.parse_args(argv)
    if args.rerun:
        rerun(args.rerun, statuses())
        args.write = True
    numbers = generate()
    if args.write:
        NUMBERS.write_text(json.dumps(numbers, indent=2) + "\n")
        print(f"{NUMBERS.relative_to(ROOT)}: {len(numbers)} numbers; {rewrite(numbers)} marked numbers rewritten")
    saved = json.loads(NUMBERS.read_text()) if NUMBERS.is_file() else {}
    problems = [f"{NUMBERS.relative_to(ROOT)} is out of date: run with --write"] if saved != numbers else []
    problems += stale(numbers)
    per_state = report(statuses())
    if args.strict and per_state["stale"]:
        problems.append(f"{per_state['stale']} quoted numbers come from stale records")
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
