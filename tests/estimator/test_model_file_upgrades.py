"""The model-file upgrades on their own records: what a format 1 file's missing keys meant (a
``window_term`` file read as the k-means input term, its arrays and statistics renamed), the
smoothing a format 2 file had, and image model files passed through every step untouched but
for their version. The fixture files (``test_fixture_files.py``) hold none of these cases."""

from __future__ import annotations

import copy

import numpy as np

from madcluster.estimator.persistence import UPGRADES, upgrade_format_1, upgrade_format_2


def _format_1(window_term: str | None) -> tuple[dict, dict]:
    stats = {"scores": [0.5, 2.0], "before_window_term": [1.0, 3.0]}
    if window_term is not None:
        stats["window_term"] = [4.0, 5.0]
    config = {"format_version": 1, "params": {"window_term": window_term}, "fitted": {}}
    config["fitted"]["score_stats_"] = stats
    arrays = {"window_term/centers": np.arange(6.0).reshape(3, 2), "scaler_mean": np.zeros(2)}
    return config, arrays


def test_a_window_term_file_reads_as_the_kmeans_input_term() -> None:
    config, arrays = _format_1("kmeans")
    centers = arrays["window_term/centers"]
    upgrade_format_1(config, arrays)
    params, fitted = config["params"], config["fitted"]
    assert config["format_version"] == 2
    assert "window_term" not in params and params["input_terms"] == ("kmeans",)
    assert set(arrays) == {"input_terms/kmeans/centers", "scaler_mean"}
    assert arrays["input_terms/kmeans/centers"] is centers
    assert fitted["score_stats_"] == {
        "scores": [0.5, 2.0],
        "before_input_terms": [1.0, 3.0],
        "input_term/kmeans": [4.0, 5.0],
    }


def test_a_format_1_file_gets_what_its_missing_keys_meant() -> None:
    config, arrays = _format_1(None)
    upgrade_format_1(config, arrays)
    assert config["params"] == {
        "input_terms": None,
        "roughness_window": 0,
        "part_weights": {"own": 1.0, "kmeans": 1.0, "ar": 1.0},
    }
    fitted = config["fitted"]
    assert fitted["feature_names_in_"] is None
    assert fitted["constant_columns_"] == [] and fitted["part_weights_"] == {}
    assert "window_term/centers" in arrays  # nothing renamed without the term
    assert fitted["score_stats_"]["before_window_term"] == [1.0, 3.0]


def test_a_format_2_file_without_smoothing_smooths_nothing() -> None:
    config, arrays = _format_1(None)
    upgrade_format_1(config, arrays)
    config["fitted"]["score_stats_"] = {"scores": [0.5, 2.0], "before_input_terms": [1.0, 3.0]}
    upgrade_format_2(config, arrays)
    assert config["format_version"] == 3
    assert config["params"]["part_smoothing"] == {"own": 1, "ar": 1}
    assert config["fitted"]["combination"]["stats"] == {"own": (1.0, 3.0)}


def test_image_model_files_pass_every_upgrade_untouched() -> None:
    config = {"format_version": 1, "kind": "image", "params": {"embedder": "drnn"}, "fitted": {}}
    arrays = {"weights": np.ones(3)}
    before = copy.deepcopy(config)
    for version, upgrade in UPGRADES.items():
        upgrade(config, arrays)
        assert config == {**before, "format_version": version + 1}
    assert set(arrays) == {"weights"}
