"""The score plot's channels come from the attribution when it is given."""

import numpy as np

from madcluster.viz import channels_to_show, plot_scores


def test_attribution_beats_deviation():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    X[100:110, 0] += 10.0  # channel 0 deviates most ...
    contributions = np.zeros_like(X)
    contributions[100:110, 2] = 5.0  # ... but the model's score comes from channel 2
    contributions[100:110, 0] = 1.0
    focus = np.zeros(200, dtype=bool)
    focus[100:110] = True
    picked, caption = channels_to_show(X, focus, 2, contributions)
    assert [j for j, _ in picked] == [2, 0] and "contributing most" in caption
    assert picked[0][1]("cpu") == "cpu\n83%, top on 10 rows"
    picked, caption = channels_to_show(X, focus, 2, None)
    assert picked[0][0] == 0 and "deviating" in caption


def test_plot_scores_titles_the_channel_panel_by_attribution():
    X = np.random.default_rng(1).normal(size=(120, 3))
    scores = np.zeros(120)
    scores[60] = 5.0
    contributions = np.zeros_like(X)
    contributions[60, 1] = 5.0
    fig = plot_scores(scores, 1.0, X=X, contributions=contributions, top_k=1)
    assert "contributing most" in fig.axes[0].get_title(loc="left")
    assert fig.axes[0].get_ylabel().startswith("channel 1")


def test_the_top_channel_of_a_short_anomaly_is_shown():
    """A long anomaly on channels 0-2 dominates the mean over all flagged rows; channel 3 is the
    top channel of every row of a short one and must still be shown (with a non-zero share)."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(400, 5))
    contributions = np.zeros_like(X)
    contributions[0:300, 0:3] = [6.0, 5.0, 4.0]
    contributions[0:300, 3] = -1.0  # negative on the long anomaly: its clipped mean was 0
    contributions[0:300, 4] = 0.5
    contributions[330:397, 3] = 3.0  # the short one: channel 3 alone
    focus = np.zeros(400, dtype=bool)
    focus[0:300] = focus[330:397] = True
    picked, _ = channels_to_show(X, focus, 3, contributions)
    assert 3 in [j for j, _ in picked]
    label = dict(picked)[3]("disk_io_mb")
    assert "top on 67 rows" in label and "\n0%" not in label


def test_caption_fits_the_figure_and_huge_scores_get_a_log_axis():
    X = np.random.default_rng(3).normal(size=(300, 4))
    scores = np.abs(np.random.default_rng(4).normal(size=300))
    scores[150:160] = 600.0
    contributions = np.zeros_like(X)
    contributions[150:160, 2] = 5.0
    fig = plot_scores(scores, 4.4, X=X, contributions=contributions, top_k=2)
    fig.canvas.draw()
    title = fig.axes[0].title if fig.axes[0].get_title(loc="center") else fig.axes[0]._left_title
    assert title.get_window_extent().x1 <= fig.bbox.x1
    assert fig.axes[-1].get_yscale() == "symlog"
    small = plot_scores(np.linspace(0, 8, 300), 4.4)
    assert small.axes[-1].get_yscale() == "linear"
