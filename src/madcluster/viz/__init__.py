"""The paper's figures for any trained model: scores with the input channels, training curves,
the center's path over the epochs in a 2-D projection of h, and sigma bands of ||h - c||.

Each function returns a matplotlib Figure and writes a PNG when given ``path=``.
"""

from madcluster.viz.channels import channels_to_show, top_deviating_channels
from madcluster.viz.model_figures import (
    distance_to_center,
    plot_distance_bands,
    plot_embedding,
    project_2d,
)
from madcluster.viz.plots import plot_history, plot_scores, save_figure

__all__ = [
    "channels_to_show",
    "distance_to_center",
    "plot_distance_bands",
    "plot_embedding",
    "plot_history",
    "plot_scores",
    "project_2d",
    "save_figure",
    "top_deviating_channels",
]
