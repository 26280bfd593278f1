"""The ridge next-step part's stream (:class:`~madcluster.score.autoregressive.AutoRegressiveStream`)
restored from its state at every point of its first steps: the steps before the first ``lags``
take the part's start value, so the steps seen must survive the state. Found by the mutation run of
``docs/mutation.md`` (the restore tests restored later in the series)."""

from __future__ import annotations

import numpy as np
import pytest
from series_helpers import two_sines

from madcluster.score.autoregressive import AutoRegressive


@pytest.fixture(scope="module")
def part() -> AutoRegressive:
    return AutoRegressive.fit(two_sines(300, 0))


@pytest.mark.parametrize("cut", [0, 1, 2, 3, 4, 5, 6, 9])
def test_a_stream_restored_after_any_number_of_rows_goes_on_as_the_whole_series(part, cut):
    rows = two_sines(40, 1)
    whole = part.values(rows)
    assert part.lags >= 4 and np.any(whole[: part.lags] != whole[part.lags])
    first = part.stream()
    head = first.append(rows[:cut]) if cut else np.empty(0)
    restored = part.stream()
    restored.load({k: np.array(v, copy=True) for k, v in first.state().items()})
    tail = restored.append(rows[cut:])
    assert np.allclose(np.concatenate([head, tail]), whole, rtol=0, atol=1e-12)
