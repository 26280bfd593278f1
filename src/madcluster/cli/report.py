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


def add_report_parser(sub, help_text: str) -> None:
    """The ``report`` command's options (``madcluster report --help``)."""
    report = sub.add_parser(
        "report",
        help=help_text,
        description="Build a report from the `madcluster benchmark` result JSONs in RESULTS_DIR: "
        "per dataset a figure and Table 1 (each model alone and + MADCluster, mean ± std over "
        "seeds, the paper's row beside it) under every threshold protocol, the evaluation "
        "decomposition (decomposition.json: a waterfall figure of what each step adds, and its "
        "table) and compute table (compute_table.md / .json) when present, the image tables and "
        "anomaly-map figures of `madcluster benchmark --images` (an output folder of it in "
        "RESULTS_DIR or directly below), and the command and commit of every number. Oracle "
        "protocols (best-f1) and test-data leaks are marked in red / amber. HTML embeds its "
        "figures; Markdown writes them to <OUTPUT>_figures/.",
    )
    report.add_argument("results_dir", metavar="RESULTS_DIR", help="folder of result JSON files")
    report.add_argument(
        "-o",
        "--output",
        default=None,
        help="report file (default: RESULTS_DIR/report.html); a .md suffix writes Markdown",
    )
    report.add_argument(
        "--format",
        choices=["html", "md"],
        default=None,
        help="html or md (default: from the --output suffix, else html)",
    )
    report.add_argument(
        "--protocol",
        default="test-ratio",
        help="threshold protocol of the main Table 1 and the F1 bars (default: test-ratio, the "
        "paper's text); every other protocol is shown too, oracles marked",
    )
    report.add_argument(
        "--decomposition",
        default=None,
        help="decomposition JSON (default: RESULTS_DIR/decomposition.json, skipped if absent)",
    )
    report.add_argument(
        "--compute-table",
        default=None,
        help="compute table .md or .json (default: RESULTS_DIR/compute_table.{json,md} if present)",
    )
    report.add_argument(
        "--recursive",
        action="store_true",
        help="also read result JSONs in the folders below RESULTS_DIR",
    )
    report.add_argument("--title", default=None, help="page title (default: from RESULTS_DIR)")
    report.set_defaults(func=cmd_report)
