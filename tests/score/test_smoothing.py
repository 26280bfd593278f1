"""Centred means of the point-wise parts (:mod:`madcluster.score.smoothing`), against a direct loop."""

from __future__ import annotations

import numpy as np
import pytest

from madcluster import MADCluster
from madcluster.exceptions import ParameterError
from madcluster.score.smoothing import (
    SmoothedStream,
    causal_width,
    centred_means,
    check_part_smoothing,
    final_before,
    resolve_part_smoothing,
    trailing_means,
)


def _reference(values: np.ndarray, width: int) -> np.ndarray:
    """Step t: the mean of the `width` values centred on it, the block shifted inside the series at its ends."""
    n = len(values)
    span = min(width, n)
    out = np.empty(n)
    for t in range(n):
        start = min(max(t - (width - 1) // 2, 0), n - span)
        out[t] = np.mean(values[start : start + span])
    return out


@pytest.mark.parametrize("width", [1, 2, 3, 10, 11, 50])
@pytest.mark.parametrize("n", [1, 7, 60, 200])
def test_centred_means_match_a_direct_loop(width, n):
    values = np.random.default_rng(width * 1000 + n).normal(size=n)
    assert np.allclose(centred_means(values, width), _reference(values, width), rtol=0, atol=1e-12)


def test_every_step_averages_as_many_values_so_the_ends_swing_no_more_than_the_middle():
    noise = np.random.default_rng(0).normal(size=(4000, 300))
    means = np.stack([centred_means(row, 20) for row in noise])
    spread = means.std(axis=0)
    assert spread[0] == pytest.approx(spread[150], rel=0.1) and spread[-1] == pytest.approx(spread[150], rel=0.1)


def test_a_steps_mean_is_final_once_its_block_cannot_move():
    values = np.random.default_rng(1).normal(size=300)
    width = 10
    whole = centred_means(values, width)
    for n in (10, 11, 57, 299):
        prefix = centred_means(values[:n], width)
        fixed = final_before(width, n)
        assert np.array_equal(prefix[:fixed], whole[:fixed])
        assert fixed == n or prefix[fixed] != whole[fixed]  # the next one still moves
    assert final_before(width, 9) == 0 and final_before(1, 9) == 9


def test_stream_gives_the_whole_series_bits_with_forgetting():
    values = np.random.default_rng(2).normal(size=500)
    stream, got = SmoothedStream(25), {}
    rng, start = np.random.default_rng(3), 0
    while start < len(values):
        end = min(len(values), start + int(rng.choice([1, 3, 40])))
        stream.append(values[start:end])
        fixed = stream.final_before()
        steps = np.arange(len(got), fixed)
        got.update(zip(steps.tolist(), stream.means(steps)))
        stream.forget_before(fixed)
        start = end
    assert len(stream.values) < 60  # only the block a pending step reads is kept
    whole = centred_means(values, 25)
    steps = np.arange(len(got))
    assert np.array_equal(np.asarray([got[t] for t in steps]), whole[steps])
    rest = np.arange(len(got), len(values))
    assert np.array_equal(stream.means(rest), whole[rest])


def test_options_are_checked_and_default_from_the_window():
    assert resolve_part_smoothing(None, 100) == {"own": 50, "ar": 10}
    assert resolve_part_smoothing({"own": 1}, 100) == {"own": 1, "ar": 10}
    assert resolve_part_smoothing(None, 5) == {"own": 2, "ar": 1}
    for bad in ({"kmeans": 5}, {"own": 0}, {"own": 2.5}, [("own", 3)], {"ar": True}):
        with pytest.raises(ParameterError, match="part_smoothing"):
            check_part_smoothing(bad)
    with pytest.raises(ParameterError, match="part_smoothing"):
        MADCluster(part_smoothing={"kmeans": 3}).fit(np.zeros((300, 2), dtype=np.float32))


def test_without_input_terms_nothing_is_smoothed():
    rows = np.sin(np.arange(400)[:, None] / 4 + np.arange(2)).astype(np.float32)
    model = MADCluster(input_terms=None, window_size=20, epochs=1, epoch_windows=32, random_state=0).fit(rows)
    assert model.part_smoothing_ == {}


@pytest.mark.parametrize("width", [1, 3, 25])
def test_trailing_means_match_a_direct_loop_and_the_stream(width):
    values = np.random.default_rng(width).normal(size=120)
    direct = np.array([values[max(0, t - width + 1) : t + 1].mean() for t in range(len(values))])
    assert np.allclose(trailing_means(values, width), direct, rtol=0, atol=1e-12)
    stream = SmoothedStream(2 * width - 1)  # a centred block of 2w - 1 cut at t: the w newest values
    assert causal_width(stream.width) == width
    got = []
    for lo in range(0, 120, 7):
        stream.append(values[lo : lo + 7])
        steps = np.arange(lo, min(lo + 7, 120))
        got.extend(stream.trailing(steps, width))
        stream.forget_before(stream.final_before())
    assert np.array_equal(np.asarray(got), trailing_means(values, width))


def test_model_files_keep_the_widths_and_older_files_mean_none(tmp_path):
    import json
    import zipfile

    from model_file_helpers import as_format_2

    rows = np.sin(np.arange(500)[:, None] / 4 + np.arange(2)).astype(np.float32)
    model = MADCluster(window_size=20, epochs=1, epoch_windows=32, random_state=0, part_smoothing={"ar": 3}).fit(rows)
    assert model.part_smoothing_ == {"own": 10, "ar": 3}
    model.save(tmp_path / "m.mcz")
    loaded = MADCluster.load(tmp_path / "m.mcz")
    assert loaded.part_smoothing_ == {"own": 10, "ar": 3} and loaded.get_params()["part_smoothing"] == {"ar": 3}
    assert np.array_equal(loaded.decision_function(rows[:200]), model.decision_function(rows[:200]))
    # a file from before part smoothing: no widths recorded, so none apply
    with zipfile.ZipFile(tmp_path / "m.mcz") as zf:
        files = {name: zf.read(name) for name in zf.namelist()}
    config = as_format_2(json.loads(files["config.json"]))
    del config["fitted"]["part_smoothing_"], config["params"]["part_smoothing"]
    files["config.json"] = json.dumps(config).encode()
    with zipfile.ZipFile(tmp_path / "old.mcz", "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    old = MADCluster.load(tmp_path / "old.mcz")
    assert old.part_smoothing_ == {} and old.get_params()["part_smoothing"] == {"own": 1, "ar": 1}
