"""Each plotting function returns a Figure, writes a PNG that decodes, and draws what it says."""

from __future__ import annotations

import sys

import matplotlib.image as mpimg
import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from madcluster.viz import (
    distance_to_center,
    plot_distance_bands,
    plot_embedding,
    plot_history,
    plot_scores,
    top_deviating_channels,
)


def _png_ok(path) -> None:
    image = mpimg.imread(path)
    assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100
    assert image[..., :3].std() > 0  # not a blank canvas


def _legend_labels(ax) -> list[str]:
    legend = ax.get_legend()
    return [t.get_text() for t in legend.get_texts()] if legend else []


def test_plot_scores_returns_figure_and_saves_png(data, tmp_path):
    _, test, labels = data
    scores = np.abs(test[:, 1])
    fig = plot_scores(scores, 1.5, labels)
    assert isinstance(fig, Figure) and len(fig.axes) == 1
    assert "true anomaly" in _legend_labels(fig.axes[0])
    assert not list(tmp_path.iterdir())  # no path, no file
    plot_scores(scores, 1.5, labels, path=tmp_path / "scores.png")
    _png_ok(tmp_path / "scores.png")


def test_plot_scores_draws_the_most_deviating_channels_above_the_score(data):
    _, test, labels = data
    frame = pd.DataFrame(test, columns=["speed", "pressure", "temp"])
    scores = labels + 0.01 * np.arange(len(labels)) / len(labels)
    fig = plot_scores(scores, 0.5, labels, X=frame, top_k=2)
    assert len(fig.axes) == 3  # two channels, then the score
    assert fig.axes[0].get_ylabel() == "pressure"  # the channel with the injected shift comes first
    assert fig.axes[-1].get_ylabel() == "anomaly score"


def test_top_deviating_channels_ranks_the_shifted_channel_first(data):
    _, test, labels = data
    assert top_deviating_channels(test.astype(np.float64), labels == 1, 3)[0] == 1
    assert len(top_deviating_channels(test.astype(np.float64), labels == 1, 10)) == 3


@pytest.mark.slow
def test_plot_scores_uses_timestamps_for_the_x_axis(data, tmp_path):
    _, test, labels = data
    stamps = pd.date_range("2024-01-01", periods=len(test), freq="min").astype(str).to_numpy()
    fig = plot_scores(np.abs(test[:, 1]), 1.5, labels, X=test, timestamps=stamps, path=tmp_path / "t.png")
    x = fig.axes[-1].lines[0].get_xdata()
    assert np.issubdtype(np.asarray(x).dtype, np.datetime64)
    assert fig.axes[-1].get_xlabel() == "time"
    _png_ok(tmp_path / "t.png")
    # a DataFrame's DatetimeIndex is used too
    frame = pd.DataFrame(test, index=pd.DatetimeIndex(pd.to_datetime(stamps)))
    x = plot_scores(np.abs(test[:, 1]), None, X=frame).axes[-1].lines[0].get_xdata()
    assert np.issubdtype(np.asarray(x).dtype, np.datetime64)
    with pytest.raises(ValueError, match="timestamps"):
        plot_scores(np.zeros(10), 0.0, timestamps=stamps)


@pytest.mark.slow
def test_plot_history_draws_the_training_panels(full_model, tmp_path):
    fig = plot_history(full_model.history_, path=tmp_path / "h.png")
    assert isinstance(fig, Figure) and len(fig.axes) == 8
    nu_line = fig.axes[0].lines[0]
    np.testing.assert_allclose(nu_line.get_ydata(), full_model.history_["nu"])
    _png_ok(tmp_path / "h.png")


def test_plot_embedding_shows_the_center_path_for_each_model(full_model, base_model, data, tmp_path):
    _, test, labels = data
    fig = plot_embedding({"alone": base_model, "+ MADCluster": full_model}, test, labels,
                         method="pca", path=tmp_path / "e.png")
    assert len(fig.axes) == 2
    assert "PCA" in fig._suptitle.get_text()
    base_ax, full_ax = fig.axes
    paths = [line for line in full_ax.lines if line.get_label() == "center path (per epoch)"]
    assert len(paths) == 1 and len(paths[0].get_xdata()) == len(full_model.center_path_)
    assert not [line for line in base_ax.lines if line.get_label() == "center path (per epoch)"]
    assert "anomalous steps" in _legend_labels(full_ax)
    assert any("no learned c" in t for t in _legend_labels(base_ax))
    _png_ok(tmp_path / "e.png")


def test_plot_embedding_falls_back_to_pca_and_says_so(full_model, data, monkeypatch):
    _, test, labels = data
    monkeypatch.setitem(sys.modules, "umap", None)  # as if umap-learn were not installed
    title = plot_embedding(full_model, test, labels, max_points=100)._suptitle.get_text()
    assert "PCA" in title and "umap-learn not installed" in title
    with pytest.raises(ImportError, match="viz"):
        plot_embedding(full_model, test, labels, method="umap")


def test_plot_distance_bands_draws_sigma_bands_and_spans(full_model, base_model, data, tmp_path):
    _, test, labels = data
    fig = plot_distance_bands([base_model, full_model], test, labels, path=tmp_path / "d.png")
    assert len(fig.axes) == 2
    for ax in fig.axes:
        legend = _legend_labels(ax)
        assert {"mean ± 1σ (normal)", "mean ± 2σ (normal)", "mean ± 3σ (normal)", "true anomaly"} <= set(legend)
    d, kind = distance_to_center(full_model, test, labels)
    assert kind == "learned c" and d.shape == (len(test),) and (d >= 0).all()
    drawn = [line for line in fig.axes[1].lines if line.get_label() == "||h - c||"]
    np.testing.assert_allclose(drawn[0].get_ydata(), d)
    _png_ok(tmp_path / "d.png")
