"""The network's own score as a part (:mod:`madcluster.score.own`): its values are given, in
float64, and a stream without them is refused. Found by the mutation run of ``docs/mutation.md``."""

from __future__ import annotations

import numpy as np
import pytest

from madcluster.score.own import OwnScore
from madcluster.score.parts import FitContext


def test_the_own_parts_values_are_given_in_float64():
    part = OwnScore.fit(np.zeros((10, 2), dtype=np.float32), FitContext(4))
    stream = part.stream()
    given = np.linspace(0.0, 1.0, 10, dtype=np.float32)
    got = stream.append(np.zeros((10, 2), dtype=np.float32), given)
    assert got.dtype == np.float64 and np.array_equal(got, given.astype(np.float64))
    assert part.to_arrays() == {} and stream.state() == {}
    assert not part.reads_ahead and part.point_wise


def test_the_own_parts_values_arrive_with_the_rows_and_cannot_be_computed_from_them():
    part = OwnScore()
    with pytest.raises(TypeError, match="the network's"):
        part.values(np.zeros((5, 2)))
    given = np.arange(5, dtype=np.float32)
    bound = part.bind(given)
    assert np.array_equal(bound.values(np.zeros((5, 2))), given) and bound == part
    with pytest.raises(TypeError, match="the network's"):  # scores of other rows
        bound.values(np.zeros((4, 2)))
    with pytest.raises(TypeError, match="needs the network's scores"):
        part.stream().append(np.zeros((5, 2)))


def test_a_point_wise_parts_stream_leaves_its_values_to_its_kept_stream():
    stream = OwnScore().stream()
    with pytest.raises(NotImplementedError, match="OwnStream: a point-wise part's values are kept"):
        stream.values(np.arange(3))
    assert stream.final_before(7) == 7  # final at once
