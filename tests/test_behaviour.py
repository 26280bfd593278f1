"""Behaviour kept across refactors: the parts of ``benchmarks/behaviour_check.py`` that need no
training (the CLI's detector parameters, benchmark detectors and the fingerprints of every stored
result, the resume key) and one small fit, against the reference recorded before the layout refactors.
The whole check: ``PYTHONPATH=src python benchmarks/behaviour_check.py``."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# estimator parameters added after the reference was recorded, off by default (None): they appear
# as "new (not in the reference)", which is no change of behaviour; the reference is not re-recorded
ADDED_SINCE_REFERENCE: tuple[str, ...] = ()


def _changes(differences: list[str]) -> list[str]:
    added = tuple(f"/{name}: new (not in the reference)" for name in ADDED_SINCE_REFERENCE)
    return [d for d in differences if not d.endswith(added)]


def _check():
    spec = importlib.util.spec_from_file_location("behaviour_check", ROOT / "benchmarks" / "behaviour_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_parameters_and_fingerprints_match_the_reference():
    check = _check()
    reference = json.loads(check.REFERENCE.read_text())
    current = json.loads(json.dumps({"cli": check.cli_results(), "benchmark": check.benchmark_results()}))
    check.only_recorded(reference, current)  # result files added since are no change of behaviour
    assert _changes(check.differences({k: reference[k] for k in current}, current)) == []
    assert len(current["benchmark"]["stored_results"]) > 100  # the committed result files were read


def test_default_detector_scores_match_the_reference():
    check = _check()
    reference = json.loads(check.REFERENCE.read_text())["detectors"]["default_drnn"]
    train, test = check._series(0, 400), check._series(1, 200)
    detector = check._detector_cases()["default_drnn"]().fit(train)
    current = {"scores": check._digest(detector.decision_function(test)), "threshold": float(detector.threshold_)}
    assert check.differences({k: reference[k] for k in current}, current, rtol=check.PORTABLE_RTOL) == []


def test_the_tolerance_catches_a_change_of_behaviour():
    """A score moved by a thousandth of its scale fails at the portable tolerance; the reference
    records the environment it was recorded in."""
    check = _check()
    scores = [1.0, -2.0, 6.0]
    moved = [1.0, -2.0 + 6e-3, 6.0]
    assert check.differences(scores, moved, rtol=check.PORTABLE_RTOL) != []
    assert check.differences(scores, [1.0, -2.0 + 1e-5, 6.0], rtol=check.PORTABLE_RTOL) == []
    assert check.environment_changes({"environment": check.environment()}) == []
    assert set(json.loads(check.REFERENCE.read_text())["environment"]) == set(check.environment())
