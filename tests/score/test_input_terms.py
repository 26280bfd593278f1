"""MADCluster's input terms (window KMeans, ridge next-step error) added to its score (the default)."""

from __future__ import annotations

import numpy as np
import pytest

from madcluster import MADCluster
from madcluster.baselines import KMeansDetector
from madcluster.exceptions import ParameterError
from madcluster.score.autoregressive import AutoRegressive
from madcluster.score.input_terms import (
    CONTINUOUS_PART_WEIGHTS,
    DISCRETE_PART_WEIGHTS,
    at_once_weights,
    check_part_weights,
    continuous_share,
    default_at_once_weights,
)
from madcluster.score.legacy import KMeansCoveringMeans, kmeans_from_arrays
from madcluster.score.parts import FitContext
from madcluster.score.scoring import standardize
from madcluster.score.smoothing import centred_means
from madcluster.score.window_kmeans import WindowKMeans

TINY = {"window_size": 20, "epochs": 1, "epoch_windows": 64, "batch_size": 32, "random_state": 0}


def _series(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (
        np.sin(np.arange(n)[:, None] / 5 + np.arange(3)) + 0.05 * rng.normal(size=(n, 3))
    ).astype(np.float32)


@pytest.fixture(scope="module")
def train_test():
    test = _series(300, 1)
    test[200:215] += 2.0  # a level shift the windows have never seen
    return _series(600, 0), test


@pytest.fixture(scope="module")
def with_terms(train_test):
    # the plain z-sum of the two terms this file checks formula by formula, on the training
    # scales alone (the default adds the discord part, sums positive parts and reads each part's
    # spread on the scored series: tests/score/test_discord.py, test_default_rule below)
    return MADCluster(
        input_terms=("kmeans", "ar"), part_rule="zscore-sum", series_scale_rows=0, **TINY
    ).fit(train_test[0])


def test_default_has_both_terms_and_none_turns_them_off(train_test, with_terms):
    assert MADCluster().input_terms == ("kmeans", "ar", "discord", "cross")
    assert [t.name for t in with_terms.input_terms_] == ["kmeans", "ar"]
    plain = MADCluster(input_terms=None, **TINY).fit(train_test[0])
    assert plain.input_terms_ == [] and not plain.model_.combination.stats
    assert MADCluster.from_preset("paper").input_terms is None  # the paper's score alone


def test_score_is_the_weighted_z_sum_of_madcluster_and_each_term_smoothed(train_test, with_terms):
    train, test = train_test
    plain = MADCluster(input_terms=None, **TINY).fit(train)  # same seed: the same network
    kmeans, ar = with_terms.input_terms_
    baseline = KMeansDetector(window_size=TINY["window_size"], random_state=0).fit(train)
    middle = slice(
        TINY["window_size"] - 1, len(test) - TINY["window_size"] + 1
    )  # the ends: balanced_window_means
    assert np.allclose(
        kmeans.values(test)[middle], baseline.decision_function(test)[middle], rtol=1e-4, atol=1e-4
    )
    stats, w = with_terms.model_.combination.stats, with_terms.part_weights_
    assert continuous_share(train) == 1.0 and w == {"own": 1.0, "kmeans": 1.0, "ar": 1.0}
    smooth = with_terms.part_smoothing_
    assert smooth == {"own": TINY["window_size"] // 2, "ar": TINY["window_size"] // 10}
    expected = (
        w["own"]
        * standardize(centred_means(plain.decision_function(test), smooth["own"]), stats["own"])
        + w["kmeans"] * standardize(kmeans.values(test), stats["kmeans"])
        + w["ar"] * standardize(centred_means(ar.values(test), smooth["ar"]), stats["ar"])
    )
    scores = with_terms.decision_function(test)
    assert np.allclose(scores, expected)
    assert scores[200:215].mean() > np.percentile(scores[:150], 99)
    assert abs(with_terms.decision_scores_.mean()) < 1e-6  # a weighted sum of training z-scores


def test_part_weights_weigh_each_standardised_part(train_test, with_terms):
    """Equal weights give the plain z-sum; a part at 0 drops out; bad tables are refused."""
    train, test = train_test
    raw = {"own": 1, "ar": 1}  # no smoothing: the parts as they are
    plain = {
        "input_terms": ("kmeans", "ar"),
        "part_rule": "zscore-sum",
        "part_smoothing": raw,
        "series_scale_rows": 0,
    }
    equal = MADCluster(part_weights={"own": 1, "kmeans": 1, "ar": 1}, **plain, **TINY).fit(train)
    no_ar = MADCluster(part_weights={"ar": 0}, **plain, **TINY).fit(train)
    stats = equal.model_.combination.stats
    own = standardize(
        MADCluster(input_terms=None, **TINY).fit(train).decision_function(test), stats["own"]
    )
    kmeans, ar = (standardize(t.values(test), stats[t.name]) for t in equal.input_terms_)
    assert np.allclose(equal.decision_function(test), own + kmeans + ar)
    assert np.allclose(no_ar.decision_function(test), own + kmeans)
    assert no_ar.part_weights_ == {
        "own": 1.0,
        "kmeans": 1.0,
        "ar": 0.0,
    }  # the others: their defaults
    for bad in (
        {"own": -1},
        {"window": 1},
        [1.0],
        {"ar": float("inf")},
        {"own": 0, "kmeans": 0, "ar": 0, "discord": 0},
    ):
        with pytest.raises(ParameterError):
            MADCluster(part_weights=bad, **TINY).fit(train)
    assert with_terms.threshold_ == pytest.approx(
        np.quantile(with_terms.decision_scores_, 1 - with_terms.contamination)
    )


def test_kmeans_ends_average_as_many_windows_as_the_middle():
    """Each step of a balanced term averages the same number of window distances (the covering
    windows in the middle, the nearest block at the ends); terms from older files keep the
    covering mean, so their scores do not move."""

    from madcluster.baselines import window_scores_to_points
    from madcluster.data.windows import window_starts
    from madcluster.score.window_kmeans import balanced_window_means

    starts = window_starts(200, 20, 2)
    ones = balanced_window_means(np.ones(len(starts)), starts, 20, 200)
    np.testing.assert_allclose(ones, 1.0)
    index = balanced_window_means(np.arange(len(starts), dtype=float), starts, 20, 200)
    covering = window_scores_to_points(np.arange(len(starts), dtype=float), starts, 20, 200)
    np.testing.assert_allclose(index[19:181], covering[19:181])
    assert index[0] == index[19] and index[-1] == index[-20]  # the first / last full block
    rng = np.random.default_rng(0)
    rows = rng.normal(size=(300, 2))
    term = WindowKMeans(np.zeros(2), np.ones(2), rng.normal(size=(3, 40)).astype(np.float32), 20, 2)
    old = KMeansCoveringMeans(term.scaler_mean, term.scaler_scale, term.centroids, 20, 2)
    assert not np.allclose(term.values(rows)[:5], old.values(rows)[:5])
    assert type(kmeans_from_arrays(old.to_arrays())) is KMeansCoveringMeans  # a file from before
    assert type(kmeans_from_arrays(term.to_arrays())) is WindowKMeans


def test_ar_term_is_a_ridge_next_step_error():
    rng = np.random.default_rng(0)
    x = np.zeros((400, 2))
    for t in range(1, 400):  # an AR(1) series: the predictor should learn 0.9
        x[t] = 0.9 * x[t - 1] + 0.1 * rng.normal(size=2)
    term = AutoRegressive.fit(x, None, lags=1, ridge=1e-6)
    assert np.allclose(np.diag(term.coef[:2]), 0.9, atol=0.05)
    spiked = x.copy()
    spiked[300] += 5.0
    errors = term.values(spiked)
    assert errors.argmax() in (300, 301) and errors[300] > 50 * np.median(errors)


def test_save_load_round_trip_gives_identical_scores(tmp_path, train_test, with_terms):
    path = tmp_path / "model.mcz"
    with_terms.save(path)
    loaded = MADCluster.load(path)
    assert loaded.input_terms == ("kmeans", "ar")
    assert isinstance(loaded.input_terms_[0], WindowKMeans) and isinstance(
        loaded.input_terms_[1], AutoRegressive
    )
    assert np.array_equal(
        loaded.decision_function(train_test[1]), with_terms.decision_function(train_test[1])
    )
    assert loaded.threshold_ == with_terms.threshold_


def test_one_term_alone(train_test):
    model = MADCluster(input_terms="ar", **TINY).fit(train_test[0])
    assert [t.name for t in model.input_terms_] == ["ar"]
    assert set(model.model_.combination.stats) == {"own", "ar"}


def test_the_default_exports_and_scores_without_torch(tmp_path, train_test, with_terms):
    """An ONNX file of a model with input terms carries them: onnxruntime + numpy give the .mcz
    model's scores (in a process where importing torch fails)."""
    pytest.importorskip("onnxruntime")
    import os
    import subprocess
    import sys

    from madcluster.estimator.export import export_onnx

    export_onnx(with_terms.model_, tmp_path / "m.onnx")
    test = train_test[1]
    np.save(tmp_path / "x.npy", test)
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "import numpy as np\nfrom madcluster import OnnxScorer\n"
        f"np.save({str(tmp_path / 's.npy')!r}, OnnxScorer({str(tmp_path / 'm.onnx')!r}).decision_function(np.load({str(tmp_path / 'x.npy')!r})))"
    )
    src = str(__import__("pathlib").Path(__file__).resolve().parents[2] / "src")
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONPATH": src, "OMP_NUM_THREADS": "1"},
    )
    assert proc.returncode == 0, proc.stderr
    expected = with_terms.decision_function(test)
    assert np.max(np.abs(np.load(tmp_path / "s.npy") - expected)) <= 1e-9 * np.abs(expected).max()


@pytest.mark.parametrize("value", ["pca", "KMeans", 1, True, ("ar", "ar")])
def test_bad_values_are_parameter_errors(train_test, value):
    with pytest.raises(ParameterError, match="input_terms"):
        MADCluster(input_terms=value, **TINY).fit(train_test[0])


def test_ar_term_skips_columns_with_few_levels():
    rng = np.random.default_rng(1)
    smooth = np.sin(np.arange(500) / 7)[:, None] + 0.05 * rng.normal(size=(500, 1))
    command = rng.integers(0, 2, size=(500, 1)).astype(
        float
    )  # a binary channel: unpredictable steps
    term = AutoRegressive.fit(np.hstack([smooth, command]))
    assert list(term.columns) == [0]
    flipped = np.hstack(
        [smooth, 1 - command]
    )  # every command flipped: nothing the term reads changed
    assert np.allclose(term.values(flipped), term.values(np.hstack([smooth, command])))
    only_binary = AutoRegressive.fit(command)
    assert len(only_binary.columns) == 0 and not only_binary.values(command).any()


def test_streaming_preset_is_the_default_without_terms_and_streams(train_test):
    model = MADCluster.from_preset("streaming", **TINY).fit(train_test[0])
    assert model.input_terms is None and model.input_terms_ == []
    scorer = model.stream()
    streamed = np.concatenate(
        [scorer.update(chunk).scores for chunk in np.array_split(train_test[1], 5)]
    )
    assert np.allclose(streamed, model.decision_function(train_test[1]), atol=1e-5)
    default = MADCluster(**TINY).get_params()
    assert {k: v for k, v in model.get_params().items() if v != default[k]} == {"input_terms": None}


def test_a_model_file_written_with_window_term_loads_as_the_kmeans_term(tmp_path, train_test):
    import io
    import json
    import zipfile

    model = MADCluster(
        input_terms=("kmeans",), part_rule="zscore-sum", series_scale_rows=0, **TINY
    ).fit(train_test[0])  # files from before series scales
    new, old = tmp_path / "new.mcz", tmp_path / "old.mcz"
    model.save(new)
    with zipfile.ZipFile(new) as zf:  # rewrite it the way files were written before input terms
        payload = json.loads(zf.read("config.json"))
        arrays = dict(np.load(io.BytesIO(zf.read("arrays.npz"))))
    from model_file_helpers import as_format_2

    as_format_2(payload)
    params = payload["config"]["params"] if "config" in payload else payload["params"]
    fitted = payload["config"]["fitted"] if "config" in payload else payload["fitted"]
    payload["format_version"] = 1  # window_term files were format 1
    del params["input_terms"]
    params["window_term"] = "kmeans"
    stats = fitted["score_stats_"]
    stats["before_window_term"], stats["window_term"] = (
        stats.pop("before_input_terms"),
        stats.pop("input_term/kmeans"),
    )
    arrays = {k.replace("input_terms/kmeans/", "window_term/"): v for k, v in arrays.items()}
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    with zipfile.ZipFile(old, "w") as zf:
        zf.writestr("config.json", json.dumps(payload))
        zf.writestr("arrays.npz", buffer.getvalue())
    loaded = MADCluster.load(old)
    assert loaded.input_terms == ("kmeans",)
    assert np.array_equal(
        loaded.decision_function(train_test[1]), model.decision_function(train_test[1])
    )


def test_ar_term_uses_fewer_lags_on_wide_data():
    rng = np.random.default_rng(2)
    wide = rng.normal(size=(300, 400))
    term = AutoRegressive.fit(wide)
    assert term.lags == 2 and term.coef.shape == (2 * 400 + 1, 400)
    assert term.values(wide).shape == (300,)


def test_kmeans_term_leaves_out_binary_columns_but_keeps_constant_ones():
    rng = np.random.default_rng(3)
    smooth = np.sin(np.arange(600) / 7)[:, None] + 0.05 * rng.normal(size=(600, 1))
    command = (rng.random((600, 1)) < 0.02).astype(float)  # a rarely toggling command channel
    constant = np.zeros((600, 1))
    train = np.hstack([smooth, command, constant])
    term = WindowKMeans.fit(train, FitContext(20, 0))
    assert list(term.columns) == [0, 2]
    toggled = train.copy()
    toggled[300:305, 1] = 1 - toggled[300:305, 1]  # toggles: not read
    assert np.allclose(term.values(toggled), term.values(train))
    moved = train.copy()
    moved[300:305, 2] = 3.0  # the constant column moves: read
    assert term.values(moved)[300:305].min() > term.values(train)[300:305].max()
    only_binary = WindowKMeans.fit(command, FitContext(20, 0))  # nothing else to read: every column
    assert list(only_binary.columns) == [0]


def test_the_tail_excess_rule_keeps_its_tails_through_a_model_file(tmp_path, train_test):
    """``part_rule="tail-excess-sum"``: each part's statistics gain its tail (its training
    z-scores' q .98), the file keeps them and the loaded model scores the same; a file's part
    statistics without a deviation are refused."""
    from madcluster.score.schema import _stats

    train, test = train_test
    model = MADCluster(part_rule="tail-excess-sum", **TINY).fit(train)
    stats = model.model_.combination.stats
    assert all(len(s) == 3 and s[2] >= 0 for s in stats.values())
    assert any(s[2] > 0 for s in stats.values())
    model.save(tmp_path / "m.mcz")
    loaded = MADCluster.load(tmp_path / "m.mcz")
    assert loaded.model_.combination.stats == stats
    np.testing.assert_array_equal(loaded.decision_function(test), model.decision_function(test))
    with pytest.raises(ValueError, match="a mean and a deviation"):
        _stats([0.5])


def test_default_rule_adds_each_parts_positive_excess(train_test):
    """The default (``part_rule=None``) on continuous columns: ``sum of w_p max(z_p, 0)`` over own,
    kmeans, ar, discord (``cross`` adds to the at-once score alone); its rule mixes in the tail
    excess by the share of few-valued columns, here none."""
    train, test = train_test
    model = MADCluster(**TINY).fit(train)
    combination = model.model_.combination
    assert combination.names == ["own", "kmeans", "ar", "discord", "cross"]
    assert [p.name for p in combination.final_parts] == ["own", "kmeans", "ar", "discord"]
    assert combination.rule == "few-valued-tail-excess"
    assert all(s[3] == 0.0 for s in combination.stats.values())
    plain = MADCluster(input_terms=("kmeans", "ar", "discord"), part_rule="zscore-sum", **TINY).fit(
        train
    )
    checked = model.model_.inputs.check_rows(test)
    own = model.model_.own_scores(model.model_.inputs.model_input(checked))
    readings = combination.readings(checked, own)
    scales = combination.series_scales(readings)
    terms = [
        combination.contribution(p, readings[p.name], scale=scales[p.name])
        for p in combination.final_parts
    ]
    assert all(t.min() >= 0.0 for t in terms)
    assert np.allclose(model.decision_function(test), np.sum(terms, axis=0), rtol=1e-9, atol=1e-9)
    # the plain sum of the same parts is lower wherever a part sits below its training mean
    assert (plain.decision_function(test) <= model.decision_function(test) + 1e-9).all()
    with pytest.raises(ParameterError, match="part_rule"):
        MADCluster(part_rule="median", **TINY).fit(train)


def test_default_weights_follow_the_share_of_continuous_training_columns():
    """Few-valued columns (commands, states): the discrete table; sensors: the continuous one;
    between them linearly; a user's weights replace only the parts they name."""
    assert DISCRETE_PART_WEIGHTS == {
        "own": 0.5, "kmeans": 1.5, "ar": 1.0, "discord": 0.5, "cross": 1.5
    }  # fmt: skip
    assert CONTINUOUS_PART_WEIGHTS == {
        "own": 1.0, "kmeans": 1.0, "ar": 1.0, "discord": 2.5, "cross": 1.5
    }  # fmt: skip
    rng = np.random.default_rng(0)
    sensors = rng.standard_normal((500, 4))
    commands = rng.integers(0, 2, (500, 4)).astype(float)
    three = rng.integers(0, 3, (500, 4)).astype(float)  # 3 levels: still few
    assert continuous_share(sensors) == 1.0 and continuous_share(commands) == 0.0
    assert continuous_share(three) == 0.0
    half = np.hstack([sensors, commands])
    assert continuous_share(half) == 0.5
    assert check_part_weights(None, continuous_share(half)) == {
        "own": 0.75, "kmeans": 1.25, "ar": 1.0, "discord": 1.5, "cross": 1.5
    }  # fmt: skip
    mine = check_part_weights({"kmeans": 2.0}, 1.0)
    assert mine == {**CONTINUOUS_PART_WEIGHTS, "kmeans": 2.0}
    fitted = MADCluster(**TINY).fit(half[:300])
    assert fitted.part_weights_ == {
        "own": 0.75, "kmeans": 1.25, "ar": 1.0, "discord": 1.5, "cross": 1.5
    }  # fmt: skip
    # at once the discord part keeps the weight it had before its final weight rose: 1 to 2
    assert default_at_once_weights(0.0) == {"discord": 1.0}
    assert default_at_once_weights(1.0) == {"discord": 2.0}
    assert fitted.model_.combination.at_once_weights == {"discord": 1.5}
    assert at_once_weights({"discord": 3.0}, 0.5) == {}  # a weight given: it follows that
    assert at_once_weights({"kmeans": 3.0}, 0.5) == {"discord": 1.5}
