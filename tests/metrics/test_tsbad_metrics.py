"""TSB-AD's window rule and VUS against the ``tsb-ad`` 1.5 package, through a committed fixture.

``data/tsbad_fixture.npz`` was written by ``make_tsbad_fixture.py`` (its docstring says how) with
the package in a side venv; this test needs only the fixture.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from madcluster.exceptions import DataError
from madcluster.metrics.tsbad import DEFAULT_PERIOD, find_length_rank, tsbad_vus

FIXTURE = np.load(Path(__file__).parent / "data" / "tsbad_fixture.npz")
CASES = range(len(FIXTURE["window"]))


@pytest.mark.parametrize("case", CASES)
def test_find_length_rank_matches_tsb_ad(case: int) -> None:
    channel = FIXTURE[f"channel_{case}"]
    assert find_length_rank(channel, rank=1) == int(FIXTURE["window"][case])
    assert find_length_rank(channel.reshape(-1, 1), rank=1) == int(FIXTURE["window"][case])


@pytest.mark.parametrize("case", CASES)
def test_tsbad_vus_matches_get_metrics(case: int) -> None:
    channel = FIXTURE[f"channel_{case}"]
    scores = FIXTURE[f"scores_{case}"].astype(np.float64)
    labels = FIXTURE[f"labels_{case}"]
    roc, pr = tsbad_vus(scores, labels, channel)
    assert abs(pr - FIXTURE["vus_pr"][case]) < 1e-6
    assert abs(roc - FIXTURE["vus_roc"][case]) < 1e-6


def test_fixture_covers_periodic_and_fallback_windows() -> None:
    windows = set(FIXTURE["window"].tolist())
    assert DEFAULT_PERIOD in windows and len(windows - {DEFAULT_PERIOD}) >= 4
    assert str(FIXTURE["tsb_ad_version"]) == "1.5"


def test_find_length_rank_rejects_bad_input() -> None:
    with pytest.raises(DataError, match="one channel"):
        find_length_rank(np.zeros((10, 2)))
    with pytest.raises(DataError, match="rank"):
        find_length_rank(np.zeros(10), rank=2)
    assert find_length_rank(np.arange(50.0), rank=0) == 1
    assert find_length_rank(np.ones(3)) == DEFAULT_PERIOD
