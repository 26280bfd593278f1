"""What a served stream holds, part by part: the objects walked for a stream of the default parts
and of the network alone, what each holds, a buffer counted once, the model's arrays never (the
fifth mutation run's survivors: the budget tests compared totals with totals)."""

from __future__ import annotations

import numpy as np
import pytest
from series_helpers import three_channels

from madcluster import MADCluster
from madcluster.serve.footprint import _bytes, _holders, compact, held_by_part, held_bytes


@pytest.fixture(scope="module")
def streamed():
    """A stream of the default parts (window 12) after 40 rows."""
    model = MADCluster(window_size=12, epochs=1, random_state=0).fit(three_channels(300, 0))
    scorer = model.stream()
    scorer.update(three_channels(40, 1))
    return scorer


def test_every_holder_of_a_default_stream_is_walked(streamed):
    assert [(label, type(h).__name__) for label, h in _holders(streamed)] == [
        ("scorer", "StreamScorer"),
        ("stepper", "DilatedRNNSteps"),
        ("terms", "CombinationStream"),
        ("incidents", "StreamIncidents"),
        ("own", "KeptStream"),
        ("own reading", "SmoothedStream"),
        ("own", "OwnStream"),
        ("kmeans", "KMeansStream"),
        ("kmeans", "PrefixStream"),
        ("ar", "KeptStream"),
        ("ar reading", "SmoothedStream"),
        ("ar", "AutoRegressiveStream"),
        ("discord", "JoinsStream"),
        ("discord", "DiscordStream"),
        ("discord", "DiscordStream"),
        ("cross", "KeptStream"),
        ("cross reading", "SmoothedStream"),
        ("cross", "AutoRegressiveStream"),
    ]


def test_each_part_holds_its_own_arrays_counted_once(streamed):
    by_part = held_by_part(streamed)
    assert list(by_part) == [
        "scorer", "stepper", "terms", "incidents", "own", "own reading", "kmeans", "ar",
        "ar reading", "discord", "cross", "cross reading",
    ]  # fmt: skip
    for label in ("scorer", "incidents", "own reading", "kmeans", "ar", "discord", "cross"):
        assert by_part[label] > 0, label
    assert held_bytes(streamed) == sum(by_part.values())  # no buffer shared between holders
    extra = np.zeros(100)
    assert held_bytes(streamed, extra, extra[10:]) == held_bytes(streamed) + 800


def test_a_stream_of_the_network_alone_is_counted():
    model = MADCluster(input_terms=None, window_size=12, epochs=1, random_state=0).fit(
        three_channels(200, 0)
    )
    scorer = model.stream()
    scorer.update(three_channels(20, 1))
    assert held_bytes(scorer) == sum(held_by_part(scorer).values()) > 0


def test_a_read_only_array_is_the_models_and_not_counted():
    shared = np.ones(50)
    shared.flags.writeable = False
    own = np.ones(50)
    view = own[5:]
    view.flags.writeable = False  # a read-only view of the stream's own array: counted
    assert _bytes([shared, own, view]) == 400
    assert _bytes([shared]) == 0


def test_compact_copies_the_views_of_a_large_update_and_scores_the_same():
    model = MADCluster(window_size=12, epochs=1, random_state=0).fit(three_channels(300, 0))
    x = three_channels(260, 1)
    compacted, plain = model.stream(), model.stream()
    compacted.update(x[:200])
    plain.update(x[:200])
    before = held_bytes(compacted)
    freed = compact(compacted)
    assert freed > 0 and held_bytes(compacted) == before - freed
    assert compact(compacted) == 0  # nothing left to copy
    np.testing.assert_array_equal(compacted.update(x[200:]).scores, plain.update(x[200:]).scores)
