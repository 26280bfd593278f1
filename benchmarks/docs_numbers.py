"""The numbers the README and docs/ quote, from one generated file, never retyped (issue 37 item 11).

``benchmarks/results/numbers.json`` is generated from the result records below (each with the
command that made it). In README.md and docs/*.md a quoted number carries an invisible marker
right after it, ``.985<!--n:demo.auc_roc-->``; the number is written with as many decimals as the
text wants, and the check compares it with the generated value rounded the same way::

    python benchmarks/docs_numbers.py           # check: exit 1 naming every stale number
    python benchmarks/docs_numbers.py --write   # regenerate numbers.json, rewrite the marked numbers

``tests/test_docs_numbers.py`` runs the check, so a new result record that changes a number fails
the tests until the docs are rewritten from it.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
NUMBERS = RESULTS / "numbers.json"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
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
    **{
        f"tsbad.{config}.{source}": (record, lambda r, c=config, s=source: r["summary"][c][s])
        for config, record in (("default", "parts/default_hidden32_seed0.json"), ("paper", "tsbad/paper_seed0.json"))
        for source in ("MSL", "SMAP", "SMD", "all")
    },
}


def _model(record: dict, prefix: str) -> dict:
    return next(r for r in record["results"] if r["model"].startswith(prefix))


def generate() -> dict[str, dict[str, Any]]:
    """Every key's value with the record and command it comes from."""
    out = {}
    for key, (name, read) in SOURCES.items():
        record = json.loads((RESULTS / name).read_text())
        out[key] = {"value": read(record), "record": f"benchmarks/results/{name}", "command": record.get("command", "")}
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="regenerate numbers.json and rewrite the docs' numbers")
    args = parser.parse_args(argv)
    numbers = generate()
    if args.write:
        NUMBERS.write_text(json.dumps(numbers, indent=2) + "\n")
        print(f"{NUMBERS.relative_to(ROOT)}: {len(numbers)} numbers; {rewrite(numbers)} marked numbers rewritten")
        return 0
    saved = json.loads(NUMBERS.read_text()) if NUMBERS.is_file() else {}
    problems = [f"{NUMBERS.relative_to(ROOT)} is out of date: run with --write"] if saved != numbers else []
    problems += stale(numbers)
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
