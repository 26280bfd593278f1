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
    assert picked[0][1]("cpu") == "cpu\n83%"
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
