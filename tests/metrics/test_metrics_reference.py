"""Every metric against the published implementations, through the committed fixture.

``reference_values.json`` was written by ``make_reference.py`` with ``vus`` 0.0.6, TSB-AD 1.5 and
scikit-learn; this test needs none of them.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from metric_cases import Case, all_cases, paper_example

from madcluster.metrics import (
    affiliation_precision_recall,
    auc_pr,
    auc_roc,
    evaluate,
    point_adjusted_f1,
    precision_recall_f1,
    range_auc,
    vus,
)
from madcluster.metrics.affiliation import _individual

TOL = 1e-9  # the brief asks for 1e-6; we match to round-off
FIXTURE = json.loads((Path(__file__).parent / "reference_values.json").read_text())
CASES = all_cases()
RANGE_KEYS = ("range_auc_roc", "range_auc_pr", "vus_roc", "vus_pr")


def _close(ours: float, ref: float | None, what: str) -> None:
    if ref is None:
        assert math.isnan(ours), f"{what}: reference is undefined (NaN), ours is {ours}"
    else:
        assert ours == pytest.approx(ref, abs=TOL), f"{what}: ours {ours!r} vs reference {ref!r}"


@pytest.fixture(params=sorted(CASES), scope="module")
def case(request: pytest.FixtureRequest) -> tuple[Case, dict[str, float | None]]:
    c = CASES[request.param]
    entry = FIXTURE["cases"][c.name]
    assert entry["sha256"] == c.digest(), (
        f"inputs of case {c.name!r} changed (metric_cases.py or numpy's generator): "
        "regenerate the fixture with tests/metrics/make_reference.py"
    )
    return c, entry["values"]


def test_every_case_is_in_the_fixture() -> None:
    assert sorted(FIXTURE["cases"]) == sorted(CASES)


def test_pointwise(case: tuple[Case, dict]) -> None:
    c, ref = case
    p, r, f = precision_recall_f1(c.predictions, c.labels)
    _close(p, ref["precision"], "precision")
    _close(r, ref["recall"], "recall")
    _close(f, ref["f1"], "f1")
    _close(auc_roc(c.scores, c.labels), ref["auc_roc"], "auc_roc")
    _close(auc_pr(c.scores, c.labels), ref["auc_pr"], "auc_pr")


def test_affiliation(case: tuple[Case, dict]) -> None:
    c, ref = case
    p, r = affiliation_precision_recall(c.predictions, c.labels)
    _close(p, ref["aff_precision"], "aff_precision")
    _close(r, ref["aff_recall"], "aff_recall")


def test_range_and_vus_on_scores(case: tuple[Case, dict]) -> None:
    c, ref = case
    ours = range_auc(c.scores, c.labels, window=c.window) + vus(c.scores, c.labels, window=c.window)
    for key, value in zip(RANGE_KEYS, ours):
        _close(value, ref[key], key)


def test_range_and_vus_on_predictions(case: tuple[Case, dict]) -> None:
    c, ref = case
    pred = c.predictions
    ours = range_auc(pred, c.labels, window=c.window) + vus(pred, c.labels, window=c.window)
    for key, value in zip(RANGE_KEYS, ours):
        _close(value, ref[f"{key}@predictions"], f"{key} on predictions")


def test_range_and_vus_other_windows(case: tuple[Case, dict]) -> None:
    c, ref = case
    for w in c.extra_windows:
        ours = range_auc(c.scores, c.labels, window=w) + vus(c.scores, c.labels, window=w)
        for key, value in zip(RANGE_KEYS, ours):
            _close(value, ref[f"{key}@window={w}"], f"{key} at window {w}")


def test_point_adjusted_f1(case: tuple[Case, dict]) -> None:
    c, ref = case
    ours = point_adjusted_f1(c.predictions, c.labels)
    _close(ours, ref["point_adjusted_f1"], "point_adjusted_f1")
    # TSB-AD's loop never credits index 0 (range(i, 0, -1)); it can only differ there.
    if ref["pa_f1_tsb_raw"] != ref["point_adjusted_f1"]:
        assert c.labels[0] == 1 and c.predictions[0] == 0
        assert ours > ref["pa_f1_tsb_raw"]


def test_evaluate_matches_reference(case: tuple[Case, dict]) -> None:
    c, ref = case
    for range_on, suffix in (("scores", ""), ("predictions", "@predictions")):
        out = evaluate(
            c.scores, c.labels, threshold=c.threshold, window=c.window, range_on=range_on
        )
        for key, value in out.items():
            ref_key = key + suffix if key in RANGE_KEYS else key
            _close(value, ref[ref_key], f"evaluate[{key}] range_on={range_on}")


def test_huet_paper_example() -> None:
    """The worked example of Huet et al. (KDD 2022); values from the reference code, whose own
    test asserts individual precision 0.672222 and recall 0.944444 for the second event."""
    pred, lab = paper_example()
    ref = FIXTURE["huet_paper_example"]
    ind_p, ind_r = _individual(pred.astype(bool), lab.astype(bool))
    np.testing.assert_allclose(ind_p, ref["individual_precision"], atol=TOL)
    np.testing.assert_allclose(ind_r, ref["individual_recall"], atol=TOL)
    assert ind_p[1] == pytest.approx(0.672222222, abs=1e-9)
    assert ind_r[1] == pytest.approx(0.944444444, abs=1e-9)
    p, r = affiliation_precision_recall(pred, lab)
    _close(p, ref["aff_precision"], "aff_precision")
    _close(r, ref["aff_recall"], "aff_recall")
