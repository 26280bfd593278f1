"""API-level checks: scikit-learn's NotFittedError, PyOD's predict_proba /
predict_confidence, feature names recorded at fit and matched by name, one-line errors for
values too large to scale and unavailable devices, atomic writes with normal file modes."""

from __future__ import annotations

import os
import stat
import warnings

import numpy as np
import pandas as pd
import pytest
import sklearn.exceptions
import torch
from scipy.special import erf
from scipy.stats import binom
from series_helpers import make_series

import madcluster
from madcluster import DataError, MADCluster, PCADetector
from madcluster.atomic import atomic_path, atomic_write_text, check_output_path
from madcluster.data.validation import check_device, check_series
from madcluster.exceptions import DeviceError, OutputPathError

SMALL = {
    "window_size": 20,
    "stride": 4,
    "epochs": 1,
    "batch_size": 32,
    "embedder_params": {"hidden_size": 8, "n_layers": 1},
    "random_state": 0,
}


@pytest.fixture(scope="module")
def pca() -> PCADetector:
    return PCADetector(window_size=20).fit(make_series(400))


# ---------------------------------------------------------------------------- NotFittedError
@pytest.mark.parametrize("detector", [MADCluster(), PCADetector()])
def test_not_fitted_is_sklearns_not_fitted_error(detector):
    assert madcluster.NotFittedError is madcluster.exceptions.NotFittedError
    assert issubclass(madcluster.NotFittedError, sklearn.exceptions.NotFittedError)
    with pytest.raises(sklearn.exceptions.NotFittedError, match="not fitted"):
        detector.decision_function(make_series(100))
    with pytest.raises(madcluster.MADClusterError):
        detector.predict_proba(make_series(100))


# ------------------------------------------------------------ predict_proba / predict_confidence
def test_predict_proba_linear_is_min_max_of_training_scores(pca):
    x = make_series(300, seed=4)
    x[100:110] += 4
    scores = pca.decision_function(x)
    train = pca.decision_scores_
    expected = np.clip((scores - train.min()) / (train.max() - train.min()), 0, 1)
    probs = pca.predict_proba(x)
    assert probs.shape == (300, 2)
    np.testing.assert_allclose(probs[:, 1], expected)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    assert probs[100:110, 1].min() == 1.0  # far above every training score: clipped to 1


def test_predict_proba_unify_is_erf_of_standardised_training_scores(pca):
    x = make_series(300, seed=4)
    scores = pca.decision_function(x)
    train = pca.decision_scores_
    expected = np.clip(erf((scores - train.mean()) / (train.std() * np.sqrt(2))), 0, 1)
    np.testing.assert_allclose(pca.predict_proba(x, method="unify")[:, 1], expected)
    with pytest.raises(ValueError, match="unknown method 'softmax'"):
        pca.predict_proba(x, method="softmax")


def test_predict_confidence_matches_pyods_definition(pca):
    x = make_series(300, seed=4)
    x[100:110] += 4
    scores = pca.decision_function(x)
    train = pca.decision_scores_
    n = len(train)
    # PyOD's BaseDetector.predict_confidence, written out one row at a time
    expected = []
    for s in scores:
        p = (1 + np.count_nonzero(train <= s)) / (2 + n)
        c = 1 - binom.cdf(n - int(n * pca.contamination), n, p)
        expected.append(c if s > pca.threshold_ else 1 - c)
    confidence = pca.predict_confidence(x)
    np.testing.assert_allclose(confidence, expected)
    assert confidence.shape == (300,) and ((confidence >= 0) & (confidence <= 1)).all()
    assert confidence[100:110].min() > 0.95  # clear anomalies: confidently flagged
    probs, conf2 = pca.predict_proba(x, return_confidence=True)
    np.testing.assert_allclose(conf2, confidence)
    np.testing.assert_allclose(probs, pca.predict_proba(x))


def test_madcluster_has_predict_proba_after_load(tmp_path):
    det = MADCluster(**SMALL).fit(make_series(300))
    det.save(tmp_path / "m.mcz")
    back = MADCluster.load(tmp_path / "m.mcz")
    x = make_series(120, seed=1)
    np.testing.assert_allclose(back.predict_proba(x), det.predict_proba(x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(back.predict_confidence(x), det.predict_confidence(x), rtol=1e-5)


# -------------------------------------------------------------------------- feature names
def _frame(n: int = 300, seed: int = 0) -> pd.DataFrame:
    return pd.DataFrame(make_series(n, 3, seed=seed), columns=["a", "b", "c"])


def test_feature_names_recorded_only_for_named_input(pca):
    assert not hasattr(pca, "feature_names_in_")
    det = PCADetector(window_size=20).fit(_frame())
    assert list(det.feature_names_in_) == ["a", "b", "c"]
    det.fit(make_series(300))  # refit on an array forgets the names, as scikit-learn does
    assert not hasattr(det, "feature_names_in_")


@pytest.mark.parametrize("make", [lambda: PCADetector(window_size=20), lambda: MADCluster(**SMALL)])
def test_reordered_columns_are_matched_by_name(make):
    det = make().fit(_frame())
    test = _frame(200, seed=3)
    test.loc[90:100, "b"] += 5
    expected = det.decision_function(test)
    np.testing.assert_allclose(det.decision_function(test[["c", "a", "b"]]), expected, rtol=1e-6)
    np.testing.assert_allclose(det.decision_function(test.to_numpy()), expected, rtol=1e-6)


def test_renamed_or_extra_columns_are_refused_by_name():
    det = PCADetector(window_size=20).fit(_frame())
    with pytest.raises(DataError, match=r"missing \['c'\].*not seen at fit time \['C'\].*renamed"):
        det.decision_function(_frame().rename(columns={"c": "C"}))
    labelled = _frame().assign(label=0)
    with pytest.raises(DataError, match=r"not seen at fit time \['label'\].*label column"):
        det.decision_function(labelled)


def test_feature_names_survive_save_and_load(tmp_path):
    det = MADCluster(**SMALL).fit(_frame())
    det.save(tmp_path / "m.mcz")
    back = MADCluster.load(tmp_path / "m.mcz")
    assert list(back.feature_names_in_) == ["a", "b", "c"]
    with pytest.raises(DataError, match="renamed"):
        back.decision_function(_frame().rename(columns={"a": "x"}))
    plain = MADCluster(**SMALL).fit(make_series(300))
    plain.save(tmp_path / "p.mcz")
    assert not hasattr(MADCluster.load(tmp_path / "p.mcz"), "feature_names_in_")


# ---------------------------------------------------------------- values and devices
def test_huge_finite_values_are_too_large_to_scale_not_nan():
    x = make_series(200)
    x = x.astype(np.float64)
    x[7, 2] = 1e300
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy overflow warning on the way
        with pytest.raises(
            DataError, match=r"too large to scale \(first: 1e\+300 at row 7, column 2"
        ):
            check_series(x)
        with pytest.raises(DataError, match="too large to scale"):
            PCADetector(window_size=20).fit(pd.DataFrame(x))
    x[7, 2] = np.inf
    with pytest.raises(DataError, match="NaN/inf"):
        check_series(x)


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_cuda_without_cuda_is_a_device_error():
    with pytest.raises(DeviceError, match="'cuda' is not available.*use cpu"):
        check_device("cuda")
    with pytest.raises(DeviceError, match="not available"):
        MADCluster(device="cuda", **SMALL).fit(make_series(200))


def test_unknown_device_and_auto():
    with pytest.raises(DeviceError, match="unknown device 'gpu'"):
        check_device("gpu")
    assert check_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    assert check_device("cpu") == torch.device("cpu")


# ------------------------------------------------------------------------------ writes
def test_written_files_follow_the_umask_not_the_temp_file_mode(tmp_path):
    old = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "a.txt", "x")
        assert stat.S_IMODE((tmp_path / "a.txt").stat().st_mode) == 0o644
        os.umask(0o027)
        atomic_write_text(tmp_path / "b.txt", "x")
        assert stat.S_IMODE((tmp_path / "b.txt").stat().st_mode) == 0o640
        os.chmod(tmp_path / "a.txt", 0o600)  # replacing a file keeps its mode
        atomic_write_text(tmp_path / "a.txt", "y")
        assert stat.S_IMODE((tmp_path / "a.txt").stat().st_mode) == 0o600
    finally:
        os.umask(old)


def test_save_into_a_directory_names_the_path_not_a_temp_file(tmp_path):
    det = PCADetector(window_size=20).fit(make_series(300))
    model = MADCluster(**SMALL).fit(make_series(300))
    for bad in (tmp_path, str(tmp_path) + "/"):
        with pytest.raises(OutputPathError, match="is a directory") as info:
            model.save(bad)
        assert ".tmp" not in str(info.value)
    assert det is not None
    assert list(tmp_path.iterdir()) == []


def test_output_path_checks(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputPathError, match="is a file, not a folder"):
        check_output_path(tmp_path / "file" / "m.mcz")
    with pytest.raises(OutputPathError, match="also an input file"):
        check_output_path(tmp_path / "file", not_same_as=[tmp_path / "file"])
    assert check_output_path(tmp_path / "new" / "sub" / "m.mcz").name == "m.mcz"
    assert not (tmp_path / "new").exists()  # checking creates nothing

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(tmp_path / ".m.mcz.abc.tmp"))

    monkeypatch.setattr("tempfile.mkstemp", refuse)
    with pytest.raises(OutputPathError, match="Permission denied") as info:
        check_output_path(tmp_path / "m.mcz")
    assert ".tmp" not in str(info.value)
    with (
        pytest.raises(OutputPathError, match=r"cannot write .*m\.mcz.*Permission denied"),
        atomic_path(tmp_path / "m.mcz"),
    ):
        pass


def test_feature_count_off_by_one_hints_at_a_label_column(pca):
    frame = pd.DataFrame(make_series(200, 3, seed=1), columns=["a", "b", "c"]).assign(label=0)
    with pytest.raises(DataError, match=r"has 4 features but .* 3.*'label' looks like labels"):
        pca.decision_function(frame)
