"""A request's rows refused with the whole message: a row of the wrong length naming the model's
columns, a value past float32 with the limit said (the fifth mutation run's survivors: the tests
matched the start of these messages)."""

from __future__ import annotations

import pandas as pd
import pytest
from series_helpers import three_channels

from madcluster import MADCluster
from madcluster.exceptions import DataError
from madcluster.serve.rows import rows_array


@pytest.fixture(scope="module")
def models():
    x = three_channels(200, 0)
    named = MADCluster(input_terms=None, window_size=12, epochs=1, random_state=0).fit(
        pd.DataFrame(x, columns=["flow", "rpm", "temp"])
    )
    plain = MADCluster(input_terms=None, window_size=12, epochs=1, random_state=0).fit(x)
    return named, plain


def _refusal(model: MADCluster, rows: list, columns: list | None = None) -> str:
    with pytest.raises(DataError) as refused:
        rows_array(model, rows, columns)
    return str(refused.value)


def test_a_short_row_names_the_models_columns(models):
    named, plain = models
    assert _refusal(named, [[1.0, 2.0]]) == "each row needs 3 values (flow, rpm, temp), got 2"
    assert _refusal(plain, [[1.0, 2.0]]) == "each row needs 3 values, got 2"


def test_a_value_past_float32_says_the_limit(models):
    named, plain = models
    assert _refusal(plain, [[1.0, 2.0, 3.0], [1.0, 1e300, 3.0]]) == (
        "rows hold 1 too large value(s) (beyond 3.4e+38, the float32 range the model computes "
        "in), the first at row 1, column 1: 1e+300"
    )
    assert _refusal(named, [[1.0, float("nan"), 3.0]]) == (
        "rows hold 1 NaN or infinite value(s), the first at row 0, column 'rpm': nan"
    )


def test_columns_not_the_models_are_refused_whole(models):
    named, _ = models
    assert _refusal(named, [[1.0, 2.0]], ["flow", "rpm"]) == (
        "columns do not match the model's: missing ['temp'], unexpected []"
    )
    assert _refusal(named, [[1.0, 2.0, 3.0, 4.0]], ["flow", "rpm", "temp", "extra"]) == (
        "columns do not match the model's: missing [], unexpected ['extra']"
    )
    assert _refusal(named, [[1.0, 2.0, 3.0]], ["flow", "rpm", "flow"]) == (
        "columns name 'flow' more than once: each column once, please"
    )
