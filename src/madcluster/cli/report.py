"""``madcluster report``: an HTML or Markdown report from a folder of benchmark results."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from madcluster.atomic import check_output_path
from madcluster.cli.console import say
from madcluster.exceptions import DataError

REPORT_INPUTS = (".json", ".jsonl", ".md")  # what `report` reads: results, image runs and tables


def cmd_report(args: argparse.Namespace) -> int:
    output = args.output or str(Path(args.results_dir) / "report.html")
    if not Path(args.results_dir).is_dir():
        raise FileNotFoundError(2, "results folder not found", args.results_dir)
    check_output_path(output, what="report")
    if not any(
        p.is_file() and p.suffix in REPORT_INPUTS for p in Path(args.results_dir).rglob("*")
    ):
        raise DataError(
            f"{args.results_dir!r} holds no result files (JSON from `madcluster benchmark`, or an "
            "output folder of `madcluster benchmark --images`): nothing to report, no report "
            "written"
        )
    from madcluster.reporting.render import report_format, write_report  # seconds: after the checks

    kind = report_format(output, args.format)
    content = write_report(
        args.results_dir,
        output,
        fmt=kind,
        protocol=args.protocol,
        decomposition=args.decomposition,
        compute_table=args.compute_table,
        recursive=args.recursive,
        title=args.title,
    )
    n_tables = len(content.tables)
    if not content.results and not n_tables:
        print(
            f"madcluster report: error: no benchmark results in {args.results_dir!r} (its JSON "
            "files are not result "
            f"files{'' if args.recursive else '; --recursive reads the folders below'}): {output} "
            "holds no tables",
            file=sys.stderr,
        )
        return 2
    say(
        f"{kind} report of {len(content.results)} result files ({n_tables} tables) written to "
        f"{output}"
    )
    say(content.read_note)
    for note in content.notes:
        if note.rstrip(".") != content.read_note:
            say(f"note: {note}")
    return 0
