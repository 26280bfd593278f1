"""The incident policy: opening on k of n, closing with hysteresis, merging, peaks, confirmation,
and the batch reading equal to the tracker fed in any chunks."""

from __future__ import annotations

import numpy as np
import pytest

from madcluster.exceptions import ParameterError
from madcluster.incidents.policy import IncidentPolicy, IncidentTracker, track

POLICY = IncidentPolicy(open_level=1.0, close_level=0.5, k=3, n=5, close_rows=4)


def _scores(n: int, hot: dict[int, float]) -> np.ndarray:
    out = np.zeros(n)
    for step, value in hot.items():
        out[step] = value
    return out


def test_one_hot_row_never_opens_and_k_of_n_does():
    assert track(_scores(50, {10: 9.0, 20: 9.0}), POLICY) == []
    (incident,) = track(_scores(50, {10: 2.0, 12: 3.0, 13: 2.5}), POLICY)
    assert (incident.start, incident.raised, incident.peak, incident.peak_score) == (
        10,
        13,
        12,
        3.0,
    )
    assert incident.end == 13 and incident.confirmed is None


def test_hysteresis_keeps_it_open_above_the_lower_level_and_ends_at_its_last_such_row():
    scores = _scores(60, {10: 2, 11: 2, 12: 2, **{t: 0.7 for t in range(13, 30)}, 31: 0.6})
    (incident,) = track(scores, POLICY)
    assert incident.end == 31  # 30 below, 31 above the close level: not 4 quiet rows yet
    tracker = IncidentTracker(POLICY)
    changes = [tracker.update([s]) for s in scores]
    closed_at = [t for t, c in enumerate(changes) if c.closed]
    assert closed_at == [31 + POLICY.close_rows]  # announced after close_rows quiet rows


def test_bursts_closer_than_close_rows_merge_and_farther_ones_do_not():
    burst = {0: 2, 1: 2, 2: 2}
    near = {t + 10: v for t, v in burst.items()} | {t + 15: v for t, v in burst.items()}
    assert len(track(_scores(60, near), POLICY)) == 1  # 3 quiet rows between: one incident
    far = {t + 10: v for t, v in burst.items()} | {t + 20: v for t, v in burst.items()}
    first, second = track(_scores(60, far), POLICY)
    assert (first.end, second.start) == (12, 20) and second.id == first.id + 1


def test_confirmed_by_a_final_score_inside_it_refuted_when_none_is():
    at_once = _scores(80, {10: 2, 11: 2, 12: 2, 50: 2, 51: 2, 52: 2})
    final = _scores(80, {11: 5.0, 55: 5.0})  # 55 is after the second incident's end
    first, second = track(at_once, POLICY, final)
    assert first.confirmed is True and second.confirmed is False


def test_an_open_incident_is_confirmed_only_by_finals_up_to_its_last_row():
    at_once = _scores(40, {10: 2, 11: 2, 12: 2})
    at_once[13:40] = 0.7  # still open at the end of the series
    (incident,) = track(at_once, POLICY, _scores(40, {}))
    assert incident.end is None and incident.confirmed is None


def test_a_streams_first_settle_rows_never_open_and_the_rows_after_them_do():
    settling = IncidentPolicy(1.0, 0.5, k=3, n=5, close_rows=4, settle_rows=10)
    early = _scores(60, {t: 5.0 for t in range(10)})
    assert track(early, POLICY) != [] and track(early, settling) == []
    # hot rows 8..12: only 10, 11 and 12 count, so it opens on 12 and starts at 10
    (incident,) = track(_scores(60, {t: 5.0 for t in range(8, 13)}), settling)
    assert (incident.start, incident.raised) == (10, 12)


def test_one_score_above_the_spike_level_opens_at_once_and_one_below_it_does_not():
    spiking = IncidentPolicy(1.0, 0.5, k=3, n=5, close_rows=4, spike_level=4.0)
    (incident,) = track(_scores(50, {20: 4.5, 40: 3.9}), spiking)
    assert (incident.start, incident.raised, incident.peak, incident.end) == (20, 20, 20, 20)
    assert track(_scores(50, {20: 4.5}), POLICY) == []
    # a hot row just before the spike starts the incident; a settling stream ignores both
    (incident,) = track(_scores(50, {18: 2.0, 20: 9.0}), spiking)
    assert (incident.start, incident.raised) == (18, 20)
    assert (
        track(_scores(50, {3: 9.0}), IncidentPolicy.at(1.0, spike_factor=2.0, settle_rows=5)) == []
    )


def test_at_builds_the_spike_level_from_the_open_level():
    assert IncidentPolicy.at(2.0, spike_factor=3.0).spike_level == 6.0
    assert IncidentPolicy.at(2.0, spike_factor=None).spike_level is None
    with pytest.raises(ParameterError, match="spike_factor must be None or >= 1"):
        IncidentPolicy.at(2.0, spike_factor=0.5)


SETTLING_SPIKING = IncidentPolicy(1.0, 0.5, k=3, n=5, close_rows=4, settle_rows=50, spike_level=3)


@pytest.mark.parametrize("seed, policy", [(0, POLICY), (1, POLICY), (2, SETTLING_SPIKING)])
def test_the_batch_reading_is_the_tracker_fed_in_any_chunks_with_finals_interleaved(seed, policy):
    rng = np.random.default_rng(seed)
    at_once = np.abs(rng.standard_t(3, size=3000)) * 0.6
    at_once[500:540] += 2.0
    final = np.abs(rng.standard_t(3, size=3000)) * 0.6
    lag = int(rng.integers(0, 30))
    tracker, fed, finals = IncidentTracker(policy, keep=None), 0, 0
    while fed < len(at_once):
        size = int(rng.choice([1, 1, 3, 17, 100]))
        tracker.update(at_once[fed : fed + size])
        fed = min(len(at_once), fed + size)
        ready = max(finals, fed - lag)
        tracker.finals(np.arange(finals, ready), final[finals:ready])
        finals = ready
    tracker.finals(np.arange(finals, len(final)), final[finals:])
    batch = track(at_once, policy, final)
    assert len(batch) > 3 and tracker.incidents == batch


def test_state_round_trips_mid_incident():
    rng = np.random.default_rng(3)
    scores = np.abs(rng.normal(size=400)) * 0.8
    whole = IncidentTracker(POLICY)
    whole.update(scores)
    for cut in (37, 211):
        first = IncidentTracker(POLICY)
        first.update(scores[:cut])
        again = IncidentTracker.from_state(POLICY, first.state())
        again.update(scores[cut:])
        assert again.incidents == whole.incidents and again.state() == whole.state()


def test_events_name_what_changed():
    tracker = IncidentTracker(POLICY)
    opened = tracker.update([2, 2, 2])
    assert [i.raised for i in opened.opened] == [2] and not opened.closed
    tracker.finals([0, 1], [5.0, 0.0])
    closed = tracker.update([0.0] * 4)
    assert [i.end for i in closed.closed] == [2] and closed.closed[0].confirmed is True


@pytest.mark.parametrize(
    "kwargs, word",
    [
        ({"k": 6}, "at most n"),
        ({"close_level": 2.0}, "at most open_level"),
        ({"n": 0}, "n must"),
        ({"open_level": float("nan")}, "finite"),
        ({"settle_rows": -1}, "settle_rows must be an integer >= 0"),
        ({"spike_level": 0.5}, "spike_level must be None or a number >= open_level"),
    ],
)
def test_bad_policies_are_refused_by_name(kwargs, word):
    params = {"open_level": 1.0, "close_level": 0.5, "k": 3, "n": 5, "close_rows": 4} | kwargs
    with pytest.raises(ParameterError, match=word):
        IncidentPolicy(**params)


def test_finals_out_of_order_or_ahead_of_the_scores_are_refused():
    tracker = IncidentTracker(POLICY)
    tracker.update(np.zeros(10))
    with pytest.raises(ParameterError, match="in order"):
        tracker.finals([3, 4], [0.0, 0.0])
    with pytest.raises(ParameterError, match="already fed"):
        tracker.finals(np.arange(11), np.zeros(11))
