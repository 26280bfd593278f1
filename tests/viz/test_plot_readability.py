"""Issue 37 item 12: a labelled one-row anomaly is visible, the sigma-band legend sits beside the
peaks it describes, and a panel whose curve is flat says its value instead of drawing a line."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from madcluster.viz import plot_distance_bands, plot_history
from madcluster.viz.plots import MIN_SPAN_FRACTION, shade_spans


def _span_widths(ax) -> list[float]:
    return [p.get_width() for p in ax.patches]


def test_a_one_row_anomaly_gets_a_visible_band():
    labels = np.zeros(10_000, dtype=int)
    labels[5_000] = 1
    labels[7_000:7_500] = 1
    ax = Figure().subplots()
    shade_spans(ax, np.arange(10_000), labels)
    widths = _span_widths(ax)
    assert len(widths) == 2
    assert min(widths) >= MIN_SPAN_FRACTION * 9_999 * 0.999  # not the 1-row band
    assert max(widths) == 500  # a long span keeps its true extent


def test_a_one_row_anomaly_on_a_time_axis_too():
    labels = np.zeros(2_000, dtype=int)
    labels[100] = 1
    x = np.datetime64("2024-01-01T00:00") + np.arange(2_000) * np.timedelta64(1, "m")
    ax = Figure().subplots()
    shade_spans(ax, x, labels)
    assert len(ax.patches) == 1


def test_the_band_legend_is_beside_the_axes(full_model, data):
    _, test, labels = data
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = plot_distance_bands(full_model, test, labels)
    FigureCanvasAgg(fig).draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        legend = ax.get_legend().get_window_extent(renderer)
        assert legend.x0 >= ax.get_window_extent(renderer).x1  # not over the curve


def test_a_flat_history_panel_states_its_value():
    history = {"epoch": [1, 2, 3], "nu": [0.5, 0.4, 0.3], "frac_p0": [0.0, 0.0, 0.0], "train_loss": [1.0, 0.8, 0.7]}
    fig = plot_history(history)
    panel = next(ax for ax in fig.axes if ax.get_title() == "fraction of steps with p = 0")
    assert not panel.lines
    assert any("0 in every epoch" in t.get_text() for t in panel.texts)
    nu = next(ax for ax in fig.axes if ax.get_title() == "one-directed threshold nu")
    assert len(nu.lines) == 1
