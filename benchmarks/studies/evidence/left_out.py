"""Choices checked on families left out, from a results table already written: for each family
(a row of a markdown table) in turn, the column chosen on the other rows and what it reads on the
one left out (``benchmarks/results/parts/discord_exact.md``'s left-out section).

    python benchmarks/studies/evidence/left_out.py benchmarks/results/parts/discord_exact.md \
        --skip-columns "period m" --skip-rows mean seconds

A column is chosen by its mean over the other rows (ties: the smaller worst shortfall against
each row's best column); the left-out row reports the chosen column's value, the row's best
column and the shortfall. Reading the table a study printed (rather than rerunning it) is exact
to its three decimals.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np


def read_table(path: Path, skip_columns: list[str], skip_rows: list[str]) -> dict[str, dict[str, float]]:
    """The first markdown table of ``path``: row name -> column -> value (bold marks dropped)."""
    lines = [line for line in path.read_text().splitlines() if line.startswith("|")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    table: dict[str, dict[str, float]] = {}
    for line in lines[2:]:
        cells = [c.strip().strip("*") for c in line.strip("|").split("|")]
        if len(cells) != len(head):
            break  # the table ended
        if any(cells[0].startswith(s) for s in skip_rows):
            continue
        table[cells[0]] = {h: float(v) for h, v in zip(head[1:], cells[1:], strict=True)
                           if h not in skip_columns}
    return table


def left_out(table: dict[str, dict[str, float]]) -> list[tuple[str, str, float, str, float]]:
    """Per row: (row, column chosen on the others, its value here, the best column here, its value)."""
    out = []
    columns = list(next(iter(table.values())))
    for row in table:
        others = [r for r in table if r != row]

        def merit(col: str, others: list[str] = others) -> tuple[float, float]:
            mean = float(np.mean([table[r][col] for r in others]))
            worst = min(table[r][col] - max(table[r].values()) for r in others)
            return round(mean, 4), worst

        chosen = max(columns, key=merit)
        best = max(columns, key=lambda c: table[row][c])
        out.append((row, chosen, table[row][chosen], best, table[row][best]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("table", type=Path, help="a results file whose first table has one row per family")
    parser.add_argument("--skip-columns", nargs="*", default=[], help="columns that are not candidates")
    parser.add_argument("--skip-rows", nargs="*", default=[], help="rows (by prefix) that are not families")
    args = parser.parse_args()
    table = read_table(args.table, args.skip_columns, args.skip_rows)
    print("| left out | chosen on the others | its value | best here | shortfall |")
    print("|---|---|---|---|---|")
    for row, chosen, value, best, top in left_out(table):
        print(f"| {row} | {chosen} | {value:.3f} | {best} {top:.3f} | {value - top:+.3f} |")


if __name__ == "__main__":
    main()
