"""`madcluster report` shows the image tables of `madcluster benchmark --images` and embeds their
anomaly-map figures (HTML inline, Markdown as files beside it)."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import numpy as np
from PIL import Image

from madcluster.cli import main
from madcluster.images.report import write_tables


def _image_results(folder: Path) -> dict[str, bytes]:
    """runs.jsonl + tables.md as the image benchmark writes them, and two figure PNGs."""
    rows = {}
    for i, (model, config) in enumerate([("pyramidflow", "alone"), ("pyramidflow", "paper")]):
        rows[f"disc/{model}/{config}/0"] = {"cls": "disc", "model": model, "config": config, "seed": 0,
                                            "image_auroc": 0.61 + 0.1 * i, "pixel_auroc": 0.52 + 0.1 * i, "pro": 0.3}
    folder.mkdir(parents=True)
    (folder / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows.values()))
    header = "## Image tables on the generated texture-defect set\n\nCommand: `madcluster benchmark --images generated`"
    write_tables(rows, folder, ["pyramidflow"], ["disc"], header)
    pngs = {}
    for k, name in enumerate(["disc-pyramidflow", "ring-pyramidflow"]):
        buffer = io.BytesIO()
        Image.fromarray(np.full((6, 9, 3), 40 * k, np.uint8)).save(buffer, format="PNG")
        (folder / "figures").mkdir(exist_ok=True)
        (folder / "figures" / f"{name}.png").write_bytes(buffer.getvalue())
        pngs[name] = buffer.getvalue()
    return pngs


def test_html_report_shows_image_tables_and_embeds_every_anomaly_map_figure(tmp_path):
    pngs = _image_results(tmp_path / "results" / "image")
    (tmp_path / "results" / "other").mkdir()
    (tmp_path / "results" / "other" / "runs.jsonl").write_text('{"row": 1}\n')  # not image runs
    (tmp_path / "results" / "other" / "tables.md").write_text("### t\n\n| a |\n|---|\n| 1 |\n")
    out = tmp_path / "report.html"
    assert main(["report", str(tmp_path / "results"), "-o", str(out)]) == 0
    page = out.read_text()
    assert 'id="image-image-image-level-auroc"' in page and 'id="image-image-pixel-level-auroc"' in page
    assert "0.610" in page and "0.710" in page and "0.810 → 0.834 (pill)" in page  # measured and the paper's
    assert "madcluster benchmark --images generated" in page
    for png in pngs.values():
        assert base64.b64encode(png).decode("ascii") in page
    assert page.index("pixel-level-auroc") < page.index(base64.b64encode(pngs["disc-pyramidflow"]).decode("ascii"))
    assert 'id="image-other' not in page


def test_markdown_report_writes_the_figures_beside_it(tmp_path):
    pngs = _image_results(tmp_path / "image")
    out = tmp_path / "report.md"
    assert main(["report", str(tmp_path / "image"), "-o", str(out)]) == 0
    text = out.read_text()
    assert "### Pixel-level AUROC" in text and "_0.943 → 0.956 (pill)_" in text  # the paper's cell, italic
    links = [line.split("](")[1].rstrip(")") for line in text.splitlines() if line.startswith("![disc-pyramidflow")]
    assert len(links) == 1 and (tmp_path / links[0]).read_bytes() == pngs["disc-pyramidflow"]
