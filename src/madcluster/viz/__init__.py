"""Plots people would rather look at than read: scores over time, training curves."""

from madcluster.viz.plots import plot_history, plot_scores

__all__ = ["plot_history", "plot_scores"]
