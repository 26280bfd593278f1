"""The report's content from a folder of ``madcluster benchmark`` results: every Table 1, the
evaluation decomposition and the compute tables, with the sources and notes."""

from __future__ import annotations

import os
from pathlib import Path

from madcluster.reporting.compute_tables import compute_table_file, results_cost_table
from madcluster.reporting.decomposition import read_decomposition
from madcluster.reporting.loading import load_folder_results, results_below
from madcluster.reporting.tables import ReportContent, decomposition_table, source_of, table1

PROTOCOL_ORDER = ("test-ratio", "train-quantile", "train-pot", "combined", "best-f1")


def build_content(
    folder: str | os.PathLike,
    *,
    protocol: str = "test-ratio",
    decomposition: str | os.PathLike | None = None,
    compute_table: str | os.PathLike | None = None,
    recursive: bool = False,
    title: str | None = None,
) -> ReportContent:
    """Everything the report shows, from a folder of ``madcluster benchmark`` result JSONs.

    ``decomposition`` / ``compute_table`` default to ``decomposition.json`` and
    ``compute_table.{json,md}`` in the folder; each section is left out (with a note) when absent.
    """
    root = Path(folder)
    results = load_folder_results(root, recursive=recursive)
    content = ReportContent(
        title=title or f"MADCluster benchmark report: {root.resolve().name}",
        folder=os.fspath(folder),
        protocol=protocol,
        results=results,
    )
    more = 0 if recursive else results_below(root)
    content.read_note = f"{len(results)} result files read from {os.fspath(folder)!r}" + (
        f"; {more} more in the folders below it are not included (pass --recursive to read them)"
        if more
        else ""
    )
    if more:
        content.notes.append(content.read_note + ".")
    if not results:
        content.notes.append(
            f"No benchmark result JSON (schema madcluster-benchmark/*) in {os.fspath(folder)!r}."
        )
    for r in results:
        src = source_of(r)
        content.sources[src.key] = src
    content.datasets = list(dict.fromkeys(r["dataset"] for r in results))
    protocols_present = {p for r in results for p in r["protocols"]}
    if results and protocol not in protocols_present:
        raise ValueError(
            f"protocol {protocol!r} is in none of the results; present: "
            f"{', '.join(sorted(protocols_present))}"
        )
    for dataset in content.datasets:
        for p in [protocol, *(q for q in PROTOCOL_ORDER if q != protocol)]:
            table = table1(content, dataset, p)
            if table is not None:
                content.tables.append(table)

    dec_path = Path(decomposition) if decomposition else root / "decomposition.json"
    content.decomposition_records = read_decomposition(dec_path)
    dec_table, dec_sources = decomposition_table(content.decomposition_records)
    if dec_table is not None:
        content.tables.append(dec_table)
        for s in dec_sources:
            content.sources[s.key] = s
    else:
        content.notes.append(
            f"No evaluation decomposition: {dec_path} not found "
            "(written by benchmarks/decomposition.py)."
        )

    cost = results_cost_table(content)
    if cost is not None:
        content.tables.append(cost)
    candidates = (
        [Path(compute_table)]
        if compute_table
        else [root / "compute_table.json", root / "compute_table.md"]
    )
    file_table = next(
        (t for t in (compute_table_file(p) for p in candidates) if t is not None), None
    )
    if file_table is not None:
        content.tables.append(file_table)
    else:
        content.notes.append(
            "No compute table file (compute_table.md / .json) in the folder; "
            "the compute table of this report comes from the result files alone."
        )
    return content
