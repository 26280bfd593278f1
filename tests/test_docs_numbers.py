"""Numbers quoted in README.md and docs/ come from benchmarks/results/numbers.json, itself generated
from the result records; a retyped number fails here, and a record made by another configuration
than today's is named stale."""

from __future__ import annotations

import importlib.util
import json
import sys
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


def test_a_record_is_current_stale_or_unknown_by_its_stamp():
    today = {"default": "aaaa", "paper": "bbbb"}.get
    requested = {"default": {"preset": "default"}}

    def status(stamp):
        record = {} if stamp is None else {"stamp": stamp}
        return docs_numbers.record_status(record, "default", lambda r: today(r["preset"]))[0]

    assert status(None) == "unknown"
    assert status({"configuration": "unknown", "note": "made before stamps"}) == "unknown"
    assert status({"earlier_default": "before series scales"}) == "stale"
    assert status({"requested": requested, "measured": {"default": "aaaa"}, "commit": "0" * 40}) == "current"
    assert status({"requested": requested, "measured": {"default": "cccc"}}) == "stale"


def test_every_record_the_docs_quote_has_a_state_and_the_quoted_count():
    states = docs_numbers.statuses(today=lambda requested: "never")
    assert set(states) == {record for record, _ in docs_numbers.SOURCES.values()}
    assert {state for state, _ in states.values()} <= {"current", "stale", "unknown"}
    quoted = docs_numbers.quoted_keys()
    assert sum(quoted.values()) >= 10 and set(quoted) <= set(docs_numbers.SOURCES)


def test_the_stamp_fingerprint_follows_the_configuration():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from benchlib import configuration, fingerprint

    default = fingerprint(configuration())
    assert default == fingerprint(configuration("default", {"random_state": 3, "n_jobs": 2}))
    assert default != fingerprint(configuration("default", {"epochs": 5}))
    assert default != fingerprint(configuration("paper"))
    assert configuration()["model_file"]["format_version"] >= 4


def test_the_fingerprint_follows_the_score_rules_too(monkeypatch):
    """A weight table is a module constant, not a parameter: a record made under another one
    measured another default."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from benchlib import configuration, fingerprint

    from madcluster.score import input_terms

    today = fingerprint(configuration())
    other = {**input_terms.CONTINUOUS_PART_WEIGHTS, "ar": 2.0}
    monkeypatch.setattr(input_terms, "CONTINUOUS_PART_WEIGHTS", other)
    assert fingerprint(configuration()) != today
