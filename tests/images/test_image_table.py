"""The image table end to end on the tiny set: runs resume, tables carry the paper's rows, figures."""

from __future__ import annotations

import json

import pytest

from madcluster.images.report import write_figures, write_tables
from madcluster.images.table import Run, run_table


@pytest.mark.slow
def test_table_runs_resume_and_write_tables_and_figures(tiny_root, tmp_path):
    settings = {"image_size": 32, "epochs": 1, "batch_size": 4}
    params = {"pyramidflow": {"blocks": 1, "hidden": 8}}
    runs = [Run("disc", "pyramidflow", config, 0) for config in ("alone", "paper")]
    rows = run_table(tiny_root, tmp_path, runs, settings, params, n_train=4, log=lambda line: None)
    assert set(rows) == {r.key for r in runs}
    stored = [json.loads(line) for line in (tmp_path / "runs.jsonl").read_text().splitlines()]
    assert [r["config"] for r in stored] == ["alone", "paper"] and all(r["n_train"] == 4 for r in stored)
    assert all(0.0 <= r["image_auroc"] <= 1.0 and 0.0 <= r["pixel_auroc"] <= 1.0 for r in stored)

    again = run_table(tiny_root, tmp_path, runs, settings, params, log=lambda line: None)  # resumes: no refit
    assert again == rows and len((tmp_path / "runs.jsonl").read_text().splitlines()) == 2

    text = write_tables(rows, tmp_path, ["pyramidflow"], ["disc"], "## header").read_text()
    disc = next(line for line in text.splitlines() if line.startswith("| disc"))
    assert f"{rows['disc/pyramidflow/alone/0']['image_auroc']:.3f}" in disc
    assert "0.810 → 0.834 (pill)" in disc  # the paper's PyramidFlow row for the MVTec class disc imitates
    figures = write_figures(tiny_root, tmp_path, ["pyramidflow"], ["disc"], 32, 0)
    assert [p.name for p in figures] == ["disc-pyramidflow.png"] and figures[0].stat().st_size > 0


def test_goal_counts_count_classes_where_madcluster_is_at_least_alone():
    from madcluster.images.report import goal_counts

    def row(cls, config, seed, image, pixel):
        return {"cls": cls, "model": "rd4ad", "config": config, "seed": seed, "image_auroc": image, "pixel_auroc": pixel}

    rows = [row("a", "alone", 0, .6, .5), row("a", "paper", 0, .7, .4),     # image above, pixel below
            row("b", "alone", 0, .6, .5), row("b", "paper", 0, .6, .5),     # ties count as matching
            row("c", "alone", 0, .8, .5), row("c", "paper", 0, .5, .9),
            row("c", "alone", 1, .8, .5), row("c", "paper", 1, .7, .9)]     # mean over seeds: .6 < .8
    text = goal_counts({f"{r['cls']}/{r['config']}/{r['seed']}": r for r in rows}, ["rd4ad"], ["a", "b", "c"])
    assert "| rd4ad, image_auroc | 2/3 |" in text and "| rd4ad, pixel_auroc | 2/3 |" in text
    assert "| base, metric | paper |" in text
