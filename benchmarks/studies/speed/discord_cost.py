"""What the discord part costs: the exact part beside the sampled reading it replaced and beside the
exact part's code before its streamed rows slid and its blocks went float32, in one run.

At 20,000 x 6 and 100,000 x 1 training rows: the fit (the part's fit plus its training reading,
which the model's fit reads its statistics from), scoring a test series of the same size
(:meth:`values`), and a stream fed row by row (rows per second over ``--stream-rows`` rows after a
warm start of 2 m rows, the parts' streams fed in turns). The rows are a seeded noisy cycle of 40
steps per column (phases apart), so both parts read subsequences of the same length; the cost does
not depend on the values otherwise (but for the candidates the exact part's float32 blocks leave:
few here, more on a series that repeats itself exactly). ``--before REV`` (default ``BEFORE``): the revision whose
``score/discord.py`` is measured as "exact before" (loaded from git, run on this checkout's other
modules); the record gives each of the exact part's times over the before code's.

    OMP_NUM_THREADS=1 python benchmarks/studies/speed/discord_cost.py

writes ``benchmarks/results/discord_cost.json`` and ``discord_cost.md`` beside it (atomically).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "src"))

SIZES = ((20_000, 6), (100_000, 1))
TURN = 50  # stream rows each part is fed before the next one's turn
BEFORE = "6ad4f4b"  # the last change to score/discord.py before the sliding products
PERIOD = 40.0


def rows(n: int, columns: int, seed: int) -> np.ndarray:
    """A noisy cycle of ``PERIOD`` steps per column, float32."""
    rng = np.random.default_rng(seed)
    t = np.arange(n)[:, None]
    phase = 2 * np.pi * t / PERIOD + np.arange(columns)
    wave = np.sin(phase) + 0.5 * np.sin(2 * phase + 1.0)
    return (wave + 0.1 * rng.normal(size=(n, columns))).astype(np.float32)


def joins(part) -> str:
    """The subsequence lengths a part reads, with their segments where longer than a row."""
    shapes = (
        zip(part.lengths, part.segments)
        if hasattr(part, "lengths")
        else [(part.length, part.segment)]
    )
    return " + ".join(f"{m}" if p == 1 else f"{m} (segments of {p})" for m, p in shapes)


def module_at(revision: str) -> types.ModuleType:
    """``score/discord.py`` as it was at ``revision``, as a module of its own."""
    source = subprocess.run(
        ["git", "show", f"{revision}:src/madcluster/score/discord.py"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    ).stdout
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "discord_before.py"
        path.write_text(source)
        spec = importlib.util.spec_from_file_location("discord_before", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # its dataclasses look their module up
        spec.loader.exec_module(module)
    return module


def measure(
    kinds: tuple[str, ...], n: int, columns: int, stream_rows: int, before, repeats: int
) -> list[dict]:
    """Per part of ``kinds``: seconds to fit and to score a series of ``n`` rows (the least of
    ``repeats``, the parts in turns), and stream rows per second, the parts' streams fed in turns
    of ``TURN`` rows (a load that comes and goes on the shared machine falls on each alike)."""
    from madcluster.score.discord import Discord
    from madcluster.score.discord_sampled import SampledDiscord
    from madcluster.score.parts import FitContext

    classes = {"exact": Discord, "sampled": SampledDiscord, "exact before": before.Discord}
    train, test = rows(n, columns, 0), rows(n, columns, 1)
    fit_s, score_s, parts = {}, {}, {}
    for _ in range(repeats):
        for kind in kinds:
            began = time.perf_counter()
            part = parts[kind] = classes[kind].fit(train, FitContext(100, 0))
            part.reference_values(train)
            fit_s[kind] = min(fit_s.get(kind, np.inf), time.perf_counter() - began)
            began = time.perf_counter()
            part.values(test)
            score_s[kind] = min(score_s.get(kind, np.inf), time.perf_counter() - began)
            print(kind, n, columns, fit_s[kind], score_s[kind], file=sys.stderr, flush=True)
    records, streams = [], []
    for kind in kinds:
        part = parts[kind]
        record = {
            "part": kind,
            "training_rows": n,
            "columns": columns,
            "joins": joins(part),
            "fit_s": round(fit_s[kind], 3),
            "score_s": round(score_s[kind], 3),
            "repeats": repeats,
        }
        stream = part.stream()
        stream.append(test[: 2 * part.length])  # a warm start
        records.append(record)
        streams.append([stream, 2 * part.length, 0.0])
    warm = max(at for _, at, _ in streams)
    for lo in range(warm, warm + stream_rows, TURN):
        for entry in streams:
            stream, at, spent = entry
            began = time.perf_counter()
            for i in range(at, at + TURN):
                stream.append(test[i : i + 1])
                stream.forget_before(stream.final_before(i + 1))
            entry[1], entry[2] = at + TURN, spent + time.perf_counter() - began
    for record, (_, _, spent) in zip(records, streams, strict=True):
        record["stream_rows_per_s"] = round(stream_rows // TURN * TURN / spent, 1)
        record["stream_rows"] = stream_rows // TURN * TURN
    return records


def markdown(result: dict) -> str:
    lines = [
        "# The discord part's cost: exact beside sampled and beside the exact code before",
        "",
        "Written by `benchmarks/studies/speed/discord_cost.py` (one run, three parts; command below).",
        (
            f"Commit `{result['commit']}`, {result['machine']}, numpy {result['numpy']}, "
            f"OMP_NUM_THREADS={result['threads']}."
        ),
        "The fit is the part's fit plus its training reading (what the model's fit adds for it);",
        (
            "scoring is one test series as long as the training rows (each the least of "
            f"{result['runs'][0]['repeats']} tries,"
        ),
        f"the parts in turns); the stream is fed row by row, the parts' streams in turns of {TURN}",
        "rows.",
        "",
        f'"exact before" is `score/discord.py` at `{result["before"]}` (every training',
        "subsequence's values read by a float64 product, a streamed row's too), run beside it.",
        "",
        "| training rows x columns | part | subsequences | fit s | scoring s | stream rows/s |",
        "|---|---|---|---|---|---|",
    ]
    for r in result["runs"]:
        lines.append(
            f"| {r['training_rows']:,} x {r['columns']} | {r['part']} | {r['joins']} | "
            f"{r['fit_s']:.2f} | {r['score_s']:.2f} | {r['stream_rows_per_s']:,.0f} |"
        )
    lines += [
        "",
        "The exact part's time over the code before's, same run (below 1: faster):",
        "",
        "| training rows x columns | fit | scoring | a streamed row |",
        "|---|---|---|---|",
    ]
    for size, ratio in result["ratios"].items():
        lines.append(
            f"| {size} | {ratio['fit']:.2f} | {ratio['score']:.2f} | {ratio['stream_row']:.3f} |"
        )
    lines += ["", "```bash", result["command"], "```", ""]
    return "\n".join(lines)


def main() -> None:
    from madcluster.atomic import atomic_write_text

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "discord_cost.json"))
    parser.add_argument("--stream-rows", type=int, default=1000)
    parser.add_argument("--before", default=BEFORE)
    parser.add_argument("--repeats", type=int, default=2, help="fits and scorings per part")
    args = parser.parse_args()
    before = module_at(args.before)
    runs, ratios = [], {}
    for n, columns in SIZES:
        kinds = ("sampled", "exact before", "exact")
        runs += measure(kinds, n, columns, args.stream_rows, before, args.repeats)
        old, new = runs[-2], runs[-1]
        ratios[f"{n:,} x {columns}"] = {
            "fit": round(new["fit_s"] / old["fit_s"], 3),
            "score": round(new["score_s"] / old["score_s"], 3),
            "stream_row": round(old["stream_rows_per_s"] / new["stream_rows_per_s"], 4),
        }
        print("new / before:", json.dumps(ratios[f"{n:,} x {columns}"]), file=sys.stderr)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    ).stdout.strip()
    result = {
        "commit": commit,
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores (shared)",
        "numpy": np.__version__,
        "threads": os.environ.get("OMP_NUM_THREADS", "unset"),
        "command": "OMP_NUM_THREADS=1 python benchmarks/studies/speed/discord_cost.py",
        "before": args.before,
        "runs": runs,
        "ratios": ratios,
    }
    out = Path(args.out)
    atomic_write_text(out, json.dumps(result, indent=1) + "\n")
    atomic_write_text(out.with_suffix(".md"), markdown(result))


if __name__ == "__main__":
    main()
