"""The development families: the first five unchanged (studies measured on them), the five more
of the left-out study well formed: shapes, determinism, labels on a sensible share of the test
rows, none on the training rows, finite values."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from madcluster.data.families import ALL_FAMILIES, FAMILIES, make_family
from madcluster.data.families_plant import _schedule
from madcluster.exceptions import ParameterError

NEW = [f for f in ALL_FAMILIES if f not in FAMILIES]
CHANNELS = {"states": None, "accelerometer": 9, "dailydrops": 6, "water": 33, "chaotic20": 1}

# seed 1 of each first family as it was before the five more: label digest, sums of |train|, |test|
BEFORE = {
    "chaotic": ("28395c47bfe6", 3973.8, 3971.5),
    "rhythm": ("698e49741c94", 13138.8, 13141.8),
    "server": ("5df2833b1901", 12572.4, 12534.8),
    "point": ("aae77f4b4e9b", 16886.2, 16962.7),
    "drift": ("eff3b0de7290", 12557.1, 14506.4),
}


def test_the_first_five_are_as_they_were():
    assert FAMILIES == ("chaotic", "rhythm", "server", "point", "drift")
    assert ALL_FAMILIES[:5] == FAMILIES
    for name, (digest, train, test) in BEFORE.items():
        s = make_family(name, 1)
        assert hashlib.sha256(s.labels.tobytes()).hexdigest()[:12] == digest, name
        assert np.abs(s.train.astype(np.float64)).sum() == pytest.approx(train, abs=0.2), name
        assert np.abs(s.test.astype(np.float64)).sum() == pytest.approx(test, abs=0.2), name


@pytest.mark.parametrize("name", NEW)
def test_a_new_family_is_well_formed(name):
    for seed in (0, 3):
        s = make_family(name, seed)
        assert s.name == f"{name}-{seed}"
        assert s.train.shape == (5000, s.test.shape[1]) and s.test.shape[0] == 5000
        assert CHANNELS[name] in (None, s.train.shape[1])
        assert s.train.dtype == np.float32 and s.labels.dtype == np.uint8
        assert np.isfinite(s.train).all() and np.isfinite(s.test).all()
        assert set(np.unique(s.labels)) == {0, 1}
        assert 0.01 <= s.labels.mean() <= 0.10, s.labels.mean()
        assert not s.labels[:500].any()  # none in the first tenth
        # the training rows are normal rows: no channel leaves the range of the test's normal rows
        # by more than a few of its deviations (an anomaly injected there would)
        normal = s.test[s.labels == 0]
        width = s.train.std(axis=0) + 1e-6
        assert (s.train.max(axis=0) <= normal.max(axis=0) + 2 * width).all()
        assert (s.train.min(axis=0) >= normal.min(axis=0) - 2 * width).all()


@pytest.mark.parametrize("name", NEW)
def test_a_new_family_is_the_same_from_the_same_seed(name):
    a, b, other = (
        make_family(name, 2, 800, 1500),
        make_family(name, 2, 800, 1500),
        make_family(name, 1, 800, 1500),
    )
    for field in ("train", "test", "labels"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    assert not np.array_equal(a.test, other.test)


def test_the_states_cycle_in_order_unless_broken():
    rng, mean = np.random.default_rng(0), np.array([30.0, 40.0, 25.0, 50.0, 35.0])
    states, flags, _ = _schedule(rng, 3000, mean, {})
    runs = states[np.r_[True, np.diff(states) != 0]]
    lengths = np.diff(np.flatnonzero(np.r_[True, np.diff(states) != 0, True]))
    assert (np.diff(runs) % len(mean) == 1).all() and not flags.any()
    assert (lengths[:-1] <= 1.26 * mean[runs[:-1]]).all()
    for kind in ("skipped", "repeated", "swapped", "held"):
        states, flags, _ = _schedule(np.random.default_rng(1), 3000, mean, {2: kind})
        runs = states[np.r_[True, np.diff(states) != 0]]
        assert flags.any(), kind
        lengths = np.diff(np.flatnonzero(np.r_[True, np.diff(states) != 0, True]))
        too_long = (lengths > 1.3 * mean[runs]).any()  # normal states last 0.75-1.25 of theirs
        broken = (np.diff(runs) % len(mean) != 1).any() or too_long
        assert broken == (kind != "held") or kind == "held" and too_long, kind
        assert broken, kind


def test_an_unknown_family_is_named():
    with pytest.raises(ParameterError, match="unknown family 'nope'.*chaotic20"):
        make_family("nope", 0)
