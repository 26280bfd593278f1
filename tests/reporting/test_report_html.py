"""`madcluster report`: the page's content from result JSONs, and the page as a browser shows it."""

from __future__ import annotations

import base64
import io
import itertools
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from madcluster.cli import main
from madcluster.reporting.content import build_content
from madcluster.reporting.render import write_report

PROTOCOLS = {
    "test-ratio": {"oracle": False, "label": "test-ratio", "description": "the test anomaly ratio"},
    "best-f1": {"oracle": True, "label": "best-f1 (ORACLE)", "description": "ORACLE: best F1 on test labels"},
}


def _stat(mean: float, std: float = 0.01) -> dict:
    return {"mean": mean, "std": std, "values": [mean - std, mean + std]}


def _result(embedder: str, mode: str, base: float, *, settings: dict | None = None) -> dict:
    """A minimal `madcluster benchmark` result: two protocols, two seeds, cost and provenance."""
    protocols = {}
    for p, meta in PROTOCOLS.items():
        bump = 0.2 if meta["oracle"] else 0.0
        metrics = {k: _stat(base + bump) for k in ("f1", "aff_precision", "aff_recall")}
        metrics |= {k: _stat(base + 0.05) for k in ("range_auc_roc", "range_auc_pr", "vus_roc", "vus_pr")}
        protocols[p] = {**meta, "metrics": metrics}
    name = f"MSL_{embedder}_{mode}"
    command = f"madcluster benchmark --dataset MSL --embedder {embedder} --mode {mode} --seeds 0 1"
    return {
        "schema": "madcluster-benchmark/1", "name": name, "dataset": "MSL", "embedder": embedder,
        "mode": mode, "per_entity": False, "seeds": [0, 1], "command": command, "protocols": protocols,
        "cost": {"n_params": 1234, "macs_per_window": 5.6e6, "train_seconds": _stat(12.0),
                 "score_seconds": _stat(0.5)},
        "settings": settings or {"tag": None},
        "provenance": {"git": {"commit": "abcdef1234567890", "dirty": False}, "started": "2026-11-26T06:00:00"},
        "tasks": {"expected": 2, "done": 2, "failed": 0, "complete": True},
    }


DECOMPOSITION = {"rows": [
    {"dataset": "MSL", "model": "drnn", "config": "default", "metric": "f1",
     "values": {"honest": 0.26, "a": 0.30, "b": 0.35, "c": 0.44, "d": 0.46, "e": 0.50},
     "paper": 0.52, "command": "madcluster benchmark --dataset MSL --released-protocol", "commit": "0123456789ab"},
    {"dataset": "MSL", "model": "drnn", "config": "default", "metric": "vus_pr",
     "values": {"honest": 0.16, "a": 0.18, "b": 0.20, "c": 0.20, "d": 0.31, "e": 0.33},
     "paper": 0.42, "command": "madcluster benchmark --dataset MSL --released-protocol", "commit": "0123456789ab"},
]}

COMPUTE_MD = """# Compute table

| model | row | params (ours) | MACs / window (ours) |
|---|---|---|---|
| usad | alone | 98.00M | 163.42M |
| usad | + MADCluster | 98.00M | 163.42M |

Command: `python benchmarks/tables/compute_table.py --out compute_table.md`
"""


@pytest.fixture
def results_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "results"
    folder.mkdir()
    for embedder, mode, base in (("usad", "base-only", 0.10), ("usad", "full", 0.15),
                                 ("deepsvdd", "base-only", 0.12), ("deepsvdd", "full", 0.11)):
        (folder / f"MSL_{embedder}_{mode}.json").write_text(json.dumps(_result(embedder, mode, base)))
    (folder / "decomposition.json").write_text(json.dumps(DECOMPOSITION))
    (folder / "compute_table.md").write_text(COMPUTE_MD)
    (folder / "notes.json").write_text(json.dumps({"not": "a result"}))  # skipped, not an error
    return folder


def _table(content, prefix: str):
    return next(t for t in content.tables if t.title.startswith(prefix))


# ------------------------------------------------------------------------------------ content
def test_table1_has_each_model_alone_and_with_madcluster_beside_the_paper(results_dir):
    content = build_content(results_dir)
    table = _table(content, "MSL: Table 1 — protocol test-ratio")
    rows = [[c.text for c in row] for row in table.rows]
    assert [r[:2] for r in rows] == [
        ["deepsvdd", "alone"], ["", "alone (paper)"], ["deepsvdd", "+ MADCluster"], ["", "+ MADCluster (paper)"],
        ["usad", "alone"], ["", "alone (paper)"], ["usad", "+ MADCluster"], ["", "+ MADCluster (paper)"],
    ]
    assert rows[4][2:] == ["0.100 ± 0.010"] * 3 + ["0.150 ± 0.010"] * 4 + ["2", "[MSL_usad_base-only]"]
    assert rows[7][2:9] == ["0.53", "0.72", "0.97", "0.71", "0.67", "0.72", "0.43"]  # the paper's usad + MADCluster
    assert all(c.flag == "paper" for c in table.rows[7][1:9])
    # every number points at its source: command and commit
    cell = table.rows[0][2]
    assert "madcluster benchmark --dataset MSL" in cell.tooltip and "abcdef1234" in cell.tooltip
    assert table.flag is None


def test_oracle_protocol_is_marked_on_threshold_metrics_only(results_dir):
    table = _table(build_content(results_dir), "MSL: Table 1 — protocol best-f1")
    assert table.flag == "oracle"
    first = table.rows[0]
    assert [c.flag for c in first[2:5]] == ["oracle"] * 3  # F1, Aff-P, Aff-R: chosen on test labels
    assert [c.flag for c in first[5:9]] == [None] * 4  # range / VUS metrics: protocol-free


def test_decomposition_marks_the_oracle_and_the_leak_step(results_dir):
    table = _table(build_content(results_dir), "Evaluation decomposition")
    assert table.columns[4:10] == ["honest", "+ (a) per entity, MinMax", "+ (b) window labels",
                                   "+ (c) best-F1 threshold", "+ (d) range metrics on 0/1",
                                   "+ (e) test set as validation"]
    row = table.rows[0]
    assert [c.text for c in row[4:11]] == ["0.260", "0.300", "0.350", "0.440", "0.460", "0.500", "0.52"]
    assert row[7].flag == "oracle" and row[9].flag == "leak" and row[4].flag is None
    assert "--released-protocol" in row[4].tooltip and "0123456789" in row[4].tooltip


def test_decomposition_figure_draws_each_step_from_the_previous_value():
    """The waterfall's bars go from each column's value to the next (hatched when a step lowers
    it), and the paper's value is a line over the group."""
    from madcluster.reporting.figures import decomposition_figure

    rows = [dict(r) for r in DECOMPOSITION["rows"]]
    rows[1] = {**rows[1], "values": {**rows[1]["values"], "d": 0.15}}  # step d lowers V_PR
    fig = decomposition_figure(rows)
    f1_ax, vus_ax = fig.axes[:2]
    spans = [(round(p.get_y(), 3), round(p.get_y() + p.get_height(), 3)) for p in f1_ax.patches]
    assert spans == [(0.0, 0.26), (0.26, 0.30), (0.30, 0.35), (0.35, 0.44), (0.44, 0.46), (0.46, 0.50)]
    hatched = [bool(p.get_hatch()) for p in vus_ax.patches]
    assert hatched == [False, False, False, False, True, False]
    lines = f1_ax.collections[0].get_segments()
    assert np.allclose([seg[0][1] for seg in lines], 0.52)
    assert decomposition_figure([]) is None


def test_missing_decomposition_and_compute_files_are_noted_not_errors(results_dir):
    (results_dir / "decomposition.json").unlink()
    (results_dir / "compute_table.md").unlink()
    content = build_content(results_dir)
    titles = [t.title for t in content.tables]
    assert not any(t.startswith("Evaluation decomposition") for t in titles)
    assert "Compute, from the result files" in titles
    assert any("decomposition" in n for n in content.notes)


def test_compute_table_file_is_read(results_dir):
    table = _table(build_content(results_dir), "Compute table (compute_table.md)")
    assert table.columns == ["model", "row", "params (ours)", "MACs / window (ours)"]
    assert [c.text for c in table.rows[1]] == ["usad", "+ MADCluster", "98.00M", "163.42M"]
    assert "compute_table.py" in table.note


def test_a_setting_that_leaks_test_data_flags_the_row(results_dir):
    leaky = _result("usad", "full", 0.3, settings={"tag": "test-as-validation", "validation_leak": True})
    leaky["name"] = "MSL_usad_full_leak"
    (results_dir / "MSL_usad_full_leak.json").write_text(json.dumps(leaky))
    table = _table(build_content(results_dir), "MSL: Table 1 — protocol test-ratio")
    row = next(r for r in table.rows if "test-as-validation" in r[0].text)
    assert all(c.flag == "leak" for c in row[2:9])


def test_unknown_protocol_is_an_error(results_dir):
    with pytest.raises(ValueError, match="protocol 'nope'"):
        build_content(results_dir, protocol="nope")


# ------------------------------------------------------------------------------------- files
class _Page(HTMLParser):
    """Tables (rows of cell texts), image sources and external references of an HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self.images: list[str] = []
        self.external: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "img":
            self.images.append(attrs.get("src", ""))
        for key in ("src", "href"):
            if re.match(r"^(https?:)?//", attrs.get(key) or ""):
                self.external.append(attrs[key])

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def _decode_data_png(src: str) -> Image.Image:
    assert src.startswith("data:image/png;base64,")
    image = Image.open(io.BytesIO(base64.b64decode(src.split(",", 1)[1])))
    image.load()
    return image


def _check_page(text: str, *, n_tables: int) -> _Page:
    page = _Page()
    page.feed(text)
    assert not page.external, page.external  # self-contained: nothing fetched from elsewhere
    assert len(page.tables) >= n_tables
    for table in page.tables:
        assert len(table) >= 2 and all(len(row) == len(table[0]) for row in table)  # header + body
        assert any(cell not in ("", "-") for cell in table[1])
    assert page.images
    for src in page.images:
        image = _decode_data_png(src)
        assert image.width > 200 and image.height > 200
    return page


@pytest.mark.slow
def test_html_report_is_self_contained_with_decodable_figures(results_dir, tmp_path):
    out = tmp_path / "report.html"
    write_report(results_dir, out)
    text = out.read_text()
    page = _check_page(text, n_tables=5)  # 2 protocols, decomposition, 2 compute tables
    assert len(page.images) == 2  # the dataset's figure and the decomposition's
    assert 'alt="Evaluation decomposition' in text
    assert "ORACLE" in text and "LEAK" in text
    assert "madcluster benchmark --dataset MSL --embedder usad --mode full --seeds 0 1" in text


@pytest.mark.slow
def test_markdown_report_writes_its_figures_beside_it(results_dir, tmp_path):
    out = tmp_path / "report.md"
    write_report(results_dir, out)
    text = out.read_text()
    assert "| model | row | F1 | Aff-P | Aff-R | R_A_R | R_A_P | V_ROC | V_PR | seeds | source |" in text
    assert "— **ORACLE**" in text and " †" in text and " ‡" in text
    figures = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert figures == ["report_figures/MSL.png", "report_figures/table-decomposition.png"]
    for figure in figures:
        Image.open(tmp_path / figure).load()


@pytest.mark.slow
def test_cli_report_writes_html_and_md(results_dir, tmp_path, capsys):
    assert main(["report", str(results_dir), "-o", str(tmp_path / "r.html")]) == 0
    assert "html report of 4 result files" in capsys.readouterr().out
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    assert main(["report", str(results_dir), "-o", str(tmp_path / "r.txt"), "--format", "md"]) == 0
    assert (tmp_path / "r.txt").read_text().startswith("# MADCluster benchmark report")
    assert main(["report", str(tmp_path / "missing"), "-o", str(tmp_path / "x.html")]) == 2


def test_report_of_the_committed_msl_results(tmp_path):
    folder = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "base_models_msl"
    if not any(folder.glob("*.json")):
        pytest.skip(f"no committed results in {folder}")
    content = write_report(folder, tmp_path / "msl.html")
    assert {r["embedder"] for r in content.results} >= {"usad", "deepsvdd"}
    _check_page((tmp_path / "msl.html").read_text(), n_tables=4)


# ------------------------------------------------------------------------- in a real browser
def _chromium() -> str | None:
    return next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)


@pytest.mark.skipif(_chromium() is None, reason="headless Chromium not installed (Debian: apt-get install chromium); .ci/run installs it where apt is available")
def test_report_renders_in_headless_chromium(results_dir, tmp_path):
    """What a person sees: the page renders, its tables are there and filled, its images decode."""
    out = tmp_path / "report.html"
    write_report(results_dir, out)
    browser = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    shot = tmp_path / "report.png"
    subprocess.run([*browser, f"--screenshot={shot}", "--window-size=1280,1800", out.as_uri()],
                   check=True, capture_output=True, timeout=90)
    image = Image.open(shot)
    image.load()
    assert image.size == (1280, 1800)
    assert len(np.unique(np.asarray(image.convert("L")))) > 20  # text and figures, not a blank page
    dom = subprocess.run([*browser, "--dump-dom", out.as_uri()], check=True, capture_output=True,
                         timeout=90, text=True).stdout
    page = _check_page(dom, n_tables=5)  # as the browser parsed it
    assert any("+ MADCluster" in row[1] for row in page.tables[0][1:])
    assert page.tables[0][0][:3] == ["model", "row", "F1"]


# ------------------------------------------------------------- what a reader is told
def _many_models_dir(tmp_path: Path, n: int) -> Path:
    folder = tmp_path / "many"
    for i in range(n):
        sub = folder / f"variant_{i:02d}_with_a_rather_long_descriptive_folder_name"
        sub.mkdir(parents=True)
        (sub / "MSL_usad_full.json").write_text(json.dumps(_result("usad", "full", 0.1 + i / 200)))
    return folder


@pytest.mark.slow
def test_report_says_how_many_files_it_read_and_that_recursive_reads_more(results_dir, capsys, tmp_path):
    below = results_dir / "older"
    below.mkdir()
    (below / "MSL_usad_full.json").write_text(json.dumps(_result("usad", "full", 0.2)))
    assert main(["report", str(results_dir), "-o", str(tmp_path / "r.html")]) == 0
    out = capsys.readouterr().out
    assert "4 result files read" in out and "1 more in the folders below" in out and "--recursive" in out
    assert "--recursive" in (tmp_path / "r.html").read_text()
    assert main(["report", str(results_dir), "-o", str(tmp_path / "r.html"), "--recursive"]) == 0
    out = capsys.readouterr().out
    assert "5 result files read" in out and "more in the folders below" not in out


@pytest.mark.slow
def test_caption_mentions_paper_ticks_only_when_drawn(results_dir, tmp_path):
    from madcluster.reporting.figures import paper_ticks_drawn

    content = build_content(results_dir)
    text = (tmp_path / "r.html")
    write_report(results_dir, text)
    drawn = paper_ticks_drawn(content, "MSL", "test-ratio")
    assert drawn  # USAD / DeepSVDD on MSL are in the paper's Table 1
    assert "black ticks: the paper's Table 1" in text.read_text()
    for path in results_dir.glob("MSL_*.json"):
        record = json.loads(path.read_text())
        record["per_entity"] = True  # the paper's numbers are for the concatenated series: no ticks
        path.write_text(json.dumps(record))
    write_report(results_dir, text)
    assert "black ticks" not in text.read_text() and "no paper ticks" in text.read_text()


@pytest.mark.slow
def test_many_models_become_horizontal_bars_with_one_row_each(tmp_path):
    from madcluster.reporting.figures import MAX_VERTICAL_GROUPS, dataset_figure

    folder = _many_models_dir(tmp_path, 50)
    content = build_content(folder, recursive=True)
    fig = dataset_figure(content, "MSL", "test-ratio")
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert len(labels) == 50 > MAX_VERTICAL_GROUPS
    # taller than wide, with room for each label: at least 0.25 inch per model row
    assert fig.get_figheight() > fig.get_figwidth() and fig.get_figheight() / 50 >= 0.25
    fig.canvas.draw()
    boxes = [t.get_window_extent() for t in fig.axes[0].get_yticklabels()]
    assert all(a.y0 >= b.y1 - 1 or b.y0 >= a.y1 - 1 for a, b in itertools.pairwise(boxes))  # no overlap


@pytest.mark.skipif(_chromium() is None, reason="headless Chromium not installed (Debian: apt-get install chromium); .ci/run installs it where apt is available")
def test_many_model_report_in_headless_chromium(tmp_path):
    """With 50 models the figure is shown at the page's width, tall enough to read each label."""
    folder = _many_models_dir(tmp_path, 50)
    out = tmp_path / "report.html"
    write_report(folder, out, recursive=True)
    browser = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu"]
    dom = subprocess.run([*browser, "--dump-dom", out.as_uri()], check=True, capture_output=True,
                         timeout=90, text=True).stdout
    assert "50 result files read" in dom
    page = _check_page(dom, n_tables=1)
    image = _decode_data_png(page.images[0])
    assert image.height > image.width  # one row per model, not 50 squeezed columns
