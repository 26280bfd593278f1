"""Issue 37 item 11: numbers quoted in README.md and docs/ come from benchmarks/results/numbers.json,
itself generated from the result records; a retyped or stale number fails here."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("docs_numbers", ROOT / "benchmarks" / "docs_numbers.py")
docs_numbers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(docs_numbers)


def test_generated_numbers_match_their_records_and_the_docs():
    numbers = docs_numbers.generate()
    assert json.loads(docs_numbers.NUMBERS.read_text()) == numbers, "run python benchmarks/docs_numbers.py --write"
    assert docs_numbers.stale(numbers) == []
    marked = sum(len(docs_numbers.MARKED.findall(p.read_text())) for p in docs_numbers.DOCS)
    assert marked >= 10


def test_a_stale_number_is_named(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("ROC-AUC **.979**<!--n:demo.auc_roc--> and 0.88<!--n:stream.default.p50_ms--> ms")
    docs_numbers.ROOT = tmp_path
    numbers = {"demo.auc_roc": {"value": 0.98483}, "stream.default.p50_ms": {"value": 1.574}}
    problems = docs_numbers.stale(numbers, [page])
    assert problems == ["page.md: demo.auc_roc written .979, the record says .985",
                        "page.md: stream.default.p50_ms written 0.88, the record says 1.57"]
    assert docs_numbers.rewrite(numbers, [page]) == 2
    assert page.read_text() == "ROC-AUC **.985**<!--n:demo.auc_roc--> and 1.57<!--n:stream.default.p50_ms--> ms"
    docs_numbers.ROOT = ROOT
