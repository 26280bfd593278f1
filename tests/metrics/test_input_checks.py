"""The metrics' shared input checks, message by message: each names the argument, what is wrong,
where (the first bad index and the count) and what to do, from its first word to its last."""

from __future__ import annotations

import re

import numpy as np
import pytest

from madcluster.exceptions import DataError
from madcluster.metrics import auc_roc, evaluate, f1, range_auc

LABELS = np.array([0, 0, 1, 1, 1, 0, 0, 0, 1, 0, 0, 0])
SCORES = np.linspace(0.0, 1.0, 12)


def test_non_finite_scores_are_counted_and_located() -> None:
    scores = SCORES.copy()
    scores[[3, 7]] = [np.nan, np.inf]
    with pytest.raises(DataError) as nan:
        auc_roc(scores, LABELS)
    assert str(nan.value) == (
        "scores contains 2 non-finite value(s) (NaN at index 3): "
        "metrics are undefined on NaN/inf scores; fix or drop those points"
    )
    scores[3] = 0.5
    with pytest.raises(
        DataError, match=r"^scores contains 1 non-finite value\(s\) \(inf at index 7\)"
    ):
        evaluate(scores, LABELS, threshold=0.5)


def test_a_value_that_is_no_label_is_located() -> None:
    labels = LABELS.copy()
    labels[5] = 3
    with pytest.raises(DataError) as bad:
        f1(LABELS, labels)
    # the value as written (3, not np.int64(3)), then where and how many
    assert re.fullmatch(
        r"labels must contain only 0 and 1, found 3 at index 5 \(1 bad value\(s\)\); "
        r"binarise them first \(e\.g\. labels > 0\)",
        str(bad.value),
    )


def test_shapes_and_lengths_are_named() -> None:
    with pytest.raises(DataError) as flat:
        auc_roc(SCORES, LABELS.reshape(3, 4))
    assert str(flat.value) == (
        "labels must be 1-D (one value per time point), got shape (3, 4); "
        "flatten point-level scores/labels first"
    )
    with pytest.raises(DataError) as short:
        auc_roc(SCORES, LABELS[:5])
    assert str(short.value) == (
        "scores has 12 points but labels has 5: they must be aligned, one value per time point"
    )


def test_unreadable_input_is_named() -> None:
    with pytest.raises(DataError, match=r"^scores could not be read as a numeric array: "):
        auc_roc([[0.1, 0.2], [0.3]], LABELS)


def test_a_bad_window_is_named() -> None:
    for window in (-1, 2.5, True):
        with pytest.raises(DataError, match=r"^window must be a non-negative integer, got "):
            range_auc(SCORES, LABELS, window=window)
        with pytest.raises(DataError, match=r"^window must be a non-negative integer, got "):
            evaluate(SCORES, LABELS, threshold=0.5, window=window)
