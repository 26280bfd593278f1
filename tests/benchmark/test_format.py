"""The shared table format and the decomposition file's format."""

from __future__ import annotations

import pytest

from madcluster.benchmark.format import TABLE1_METRICS, markdown_table, mean_std, metric_columns, si
from madcluster.reporting.decomposition import (
    DECOMPOSITION_STEPS,
    decomposition_row,
    read_decomposition,
    write_decomposition,
)


def test_numbers_and_tables():
    stat = {"mean": 0.5234, "std": 0.0121, "values": [0.51, 0.53]}
    assert mean_std(stat) == "0.523 ± 0.012"
    assert mean_std(stat, std=False) == mean_std({**stat, "values": [0.5]}) == "0.523"
    assert mean_std(stat, n=1) == "0.523" and mean_std(None) == mean_std({"mean": None}) == "-"
    assert [si(v) for v in (1.5e9, 2_340_000, 1200, 12, None)] == ["1.50G", "2.34M", "1.20K", "12", "-"]
    assert markdown_table(["a", "b"], [[1, "x"]]) == "| a | b |\n|---|---|\n| 1 | x |"
    assert [label for _, label in metric_columns(TABLE1_METRICS)] == ["F1", "Aff-P", "Aff-R", "R_A_R", "R_A_P", "V_ROC", "V_PR"]


def test_decomposition_rows_round_trip_and_are_checked(tmp_path):
    values = {step: 0.1 * i for i, (step, _, _) in enumerate(DECOMPOSITION_STEPS)}
    row = decomposition_row(dataset="MSL", model="drnn", config="default", metric="f1", values=values,
                            paper=0.52, command="python benchmarks/decomposition.py", commit="abc")
    path = tmp_path / "decomposition.json"
    assert read_decomposition(path) == []
    write_decomposition(path, [row])
    assert read_decomposition(path) == [row]
    with pytest.raises(ValueError, match="must name the steps"):
        decomposition_row(dataset="MSL", model="drnn", config="default", metric="f1", values={"honest": 1.0},
                          paper=None, command="", commit="")
