"""The period the parts read from the training rows (:func:`~madcluster.score.scales.dominant_period`)
and the checks of the score's parameters (:mod:`madcluster.score.input_terms`). Found by the
mutation run of ``docs/mutation.md``."""

from __future__ import annotations

import numpy as np
import pytest

from madcluster.exceptions import ParameterError
from madcluster.score.input_terms import check_part_weights
from madcluster.score.scales import MAX_COLUMNS, dominant_period


def _waves(n: int, period: float, amplitude: float, count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n)[:, None]
    phases = rng.uniform(0, 2 * np.pi, count)
    return amplitude * np.sin(2 * np.pi * t / period + phases) + 0.01 * rng.normal(size=(n, count))


def test_the_period_of_one_column_and_of_the_most_variable_columns():
    one = _waves(1200, 40.0, 1.0, 1, 0)
    assert abs(dominant_period(one[:, 0], fallback=7) - 40) <= 1  # a 1-D series is one column
    # 10 loud columns of period 40, 10 quiet ones of period 12: the 16 most variable read 40
    rows = np.hstack([_waves(1200, 40.0, 5.0, 10, 1), _waves(1200, 12.0, 0.5, 10, 2)])
    assert rows.shape[1] > MAX_COLUMNS
    assert abs(dominant_period(rows, fallback=7) - 40) <= 1
    assert dominant_period(np.full((300, 3), 2.0), fallback=7) == 7  # nothing moves: the fallback


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([("ar", 1.0)], "part_weights must be None, 'columns', 'evidence' or a dict of weights by part"),
        ({"arr": 1.0}, r"part_weights: unknown part\(s\) \['arr'\]; the parts are own, kmeans"),
        ({"ar": True}, "part_weights must be finite numbers >= 0"),
        ({"ar": -1.0}, "part_weights must be finite numbers >= 0"),
        ({"ar": float("nan")}, "part_weights must be finite numbers >= 0"),
        (
            dict.fromkeys(("own", "kmeans", "ar", "discord"), 0),
            "every weight is 0, the score would",
        ),
    ],
)
def test_part_weights_are_refused_with_what_is_wrong(value, message):
    with pytest.raises(ParameterError, match=message):
        check_part_weights(value)
