"""Per-series evidence: the injected anomalies, the weights they give, and the fit that records
them (madcluster.score.injection, madcluster.score.evidence, estimator.part_evidence)."""

from __future__ import annotations

import numpy as np
import pytest

from madcluster import MADCluster
from madcluster.estimator.part_evidence import evidence_lines
from madcluster.exceptions import ParameterError
from madcluster.score.evidence import (
    TRUST_FROM,
    TRUST_FULL,
    Evidence,
    holdout_start,
    injected_copies,
    read_evidence,
    weights_from,
)
from madcluster.score.injection import KINDS, MIN_CHANGE, WHOLE_ROW_KINDS, inject
from madcluster.score.input_terms import default_part_weights

TINY = {"window_size": 16, "epochs": 1, "epoch_windows": 64, "batch_size": 32, "random_state": 0}


def _rows(n: int = 1200, width: int = 3, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n)[:, None]
    return (
        np.sin(2 * np.pi * t / (25 + 7 * np.arange(width))) + 0.1 * rng.normal(size=(n, width))
    ).astype(np.float32)


def test_injection_is_deterministic_and_labels_exactly_what_moved() -> None:
    rows = _rows(5000)
    scale = rows.std(axis=0)
    a, b = inject(rows, scale, seed=3, skip=50), inject(rows, scale, seed=3, skip=50)
    assert np.array_equal(a.rows, b.rows) and np.array_equal(a.labels, b.labels)
    assert a.labels[:50].sum() == 0  # the warm-up rows stay clean
    assert 0.05 < a.labels.mean() < 0.2
    assert set(a.kinds) == set(KINDS)  # every kind present on a long enough series
    changed = np.abs(a.rows - rows).max(axis=1) > 1e-9
    assert not changed[a.labels == 0].any()  # nothing moves outside a labelled event
    events = np.zeros(len(rows), dtype=bool)
    for start, end in zip(a.starts, a.ends, strict=True):
        moved = np.abs(a.rows[start:end] - rows[start:end]) / scale
        assert moved.max() >= MIN_CHANGE
        events[start:end] = True
    assert np.array_equal(a.labels.astype(bool), events)  # labelled: exactly the events' rows
    assert not np.array_equal(inject(rows, scale, seed=4).rows, a.rows)


def test_whole_row_kinds_keep_every_row_a_normal_row_and_break_only_the_order() -> None:
    rows = _rows(5000)
    scale = rows.std(axis=0)
    a = inject(rows, scale, seed=3, skip=50, kinds=WHOLE_ROW_KINDS)
    assert set(a.kinds) == set(WHOLE_ROW_KINDS) and a.labels[:50].sum() == 0
    originals = {row.tobytes() for row in rows.astype(np.float64)}
    for kind, start, end in zip(a.kinds, a.starts, a.ends, strict=True):
        piece = a.rows[start:end]
        assert all(row.tobytes() in originals for row in piece)  # each row a row of the series
        assert not np.array_equal(piece, rows[start:end])  # ... in another order or place
        if kind == "reorder":  # the same rows, the second half first
            middle = (end - start) // 2
            assert np.array_equal(piece[: end - start - middle], rows[start + middle : end])
    # the kinds the fit reads draw exactly as before: whole-row kinds are only for studies
    assert not set(inject(rows, scale, seed=3, skip=50).kinds) & set(WHOLE_ROW_KINDS)
    with pytest.raises(ValueError, match="unknown injected kind"):
        inject(rows, scale, seed=3, kinds=("spike", "wobble"))
    with pytest.raises(ValueError, match="no injected kind given"):
        inject(rows, scale, seed=3, kinds=())


def test_injected_copies_hold_the_kinds_asked_for() -> None:
    rows = _rows(3000)
    copies = injected_copies(rows, rows.std(axis=0), window=16, seed=0, kinds=WHOLE_ROW_KINDS)
    assert {k for c in copies for k in c.kinds} == set(WHOLE_ROW_KINDS)
    default = injected_copies(rows, rows.std(axis=0), window=16, seed=0)
    assert {k for c in default for k in c.kinds} <= set(KINDS)


def test_weights_follow_precision_above_chance() -> None:
    prior = {"own": 0.5, "kmeans": 1.5, "ar": 2.0}
    w = weights_from({"own": 0.9, "kmeans": 0.5, "ar": 0.1}, chance=0.1, prior=prior)
    assert w["own"] == pytest.approx(0.5)  # the best part keeps its prior weight
    assert w["ar"] == 0.0  # trusted fully (excess .89 >= TRUST_FULL), no better than chance: 0
    assert w["kmeans"] == pytest.approx(1.5 * 0.4 / 0.8)
    assert weights_from({"own": 0.05, "kmeans": 0.1}, chance=0.1, prior=prior) == {
        "own": 0.5,
        "kmeans": 1.5,
    }


def test_weak_evidence_is_trusted_less() -> None:
    """Where the best part finds the injected anomalies poorly, the prior stands (SMAP's case);
    between TRUST_FROM and TRUST_FULL the weights move towards the evidence linearly."""
    prior = {"own": 0.5, "kmeans": 1.5}
    weak = weights_from({"own": 0.5, "kmeans": 0.1}, chance=0.0, prior=prior)
    assert weak == pytest.approx(prior)  # excess .5 < TRUST_FROM
    middle = (TRUST_FROM + TRUST_FULL) / 2
    half = weights_from({"own": middle, "kmeans": 0.0}, chance=0.0, prior=prior)
    assert half == pytest.approx({"own": 0.5, "kmeans": 0.75})


def test_read_evidence_finds_the_part_that_sees_the_events() -> None:
    rows = _rows()
    copies = [inject(rows, rows.std(axis=0), seed=s, skip=50) for s in range(2)]
    rng = np.random.default_rng(0)
    seeing = [c.labels * 5.0 + rng.random(len(c.labels)) for c in copies]  # high on every event
    blind = [rng.random(len(c.labels)) for c in copies]
    evidence = read_evidence({"own": seeing, "kmeans": blind}, copies)
    assert evidence.precision["own"] > 0.95
    assert evidence.precision["kmeans"] < 0.5
    assert evidence.weights["own"] == 1.0 and evidence.weights["kmeans"] < 0.1
    assert all(v == 1.0 for v in evidence.found["own"].values())
    assert Evidence.from_record(evidence.to_record()).to_record() == evidence.to_record()


def test_holdout_needs_room_for_events_and_the_probe() -> None:
    assert holdout_start(5000, 1000, 100) == 4000
    assert holdout_start(50_000, 10_000, 100) == 50_000 - 4000  # at most MAX_HOLDOUT rows read
    assert holdout_start(600, 120, 100) is None  # fewer than MIN_ROWS held out


def test_fit_weights_the_parts_by_their_evidence_and_records_it(tmp_path) -> None:
    rows = _rows(1500)
    detector = MADCluster(**TINY, part_weights="evidence").fit(rows)
    evidence = detector.model_.combination.evidence
    assert evidence and detector.part_weights_ == evidence["weights"]
    assert set(evidence["precision"]) == {"own", "kmeans", "ar", "discord"}
    lines = evidence_lines(detector.model_.combination)
    assert lines[0].startswith("weights from 300 held-out training rows")
    path = tmp_path / "model.mcz"
    detector.save(path)
    loaded = MADCluster.load(path)
    assert loaded.model_.combination.evidence == evidence
    assert np.allclose(loaded.decision_function(rows[:400]), detector.decision_function(rows[:400]))


@pytest.mark.parametrize("rule", ["columns", None])
def test_columns_default_and_given_weights_measure_no_evidence(rule) -> None:
    rows = _rows(1500)
    by_columns = MADCluster(**TINY, part_weights=rule).fit(rows)
    assert by_columns.model_.combination.evidence == {}
    assert by_columns.part_weights_ == pytest.approx(default_part_weights(1.0))
    given = MADCluster(**TINY, part_weights={"own": 3.0}).fit(rows)
    assert given.model_.combination.evidence == {} and given.part_weights_["own"] == 3.0


def test_a_short_series_keeps_the_weights_by_column_kind() -> None:
    detector = MADCluster(**TINY, part_weights="evidence").fit(_rows(400))  # 80 rows held out
    assert detector.model_.combination.evidence == {}
    assert detector.part_weights_ == pytest.approx(default_part_weights(1.0))


def test_unknown_weight_rule_is_named() -> None:
    with pytest.raises(ParameterError, match="'columns', 'evidence'"):
        MADCluster(part_weights="evidence-please").fit(_rows(400))
