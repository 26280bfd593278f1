"""The training figure calls a run collapsed only when it is."""

from madcluster.method.diagnostics import collapse_diagnosis
from madcluster.viz import plot_history

# the demo run's history (madcluster demo, 10 epochs): q -> 1 and shrinking spreads, and it detects
HEALTHY = {
    "epoch": list(range(1, 11)),
    "q_mean": [0.914, 0.960, 0.983, 0.994, 0.994, 0.996, 0.996, 0.997, 0.998, 0.998],
    "q_std": [0.0212, 0.0076, 0.0042, 0.0034, 0.0023, 0.0019, 0.0018, 0.0016, 0.0011, 0.0009],
    "h_spread": [0.026, 0.0215, 0.019, 0.0171, 0.0142, 0.0122, 0.0116, 0.0101, 0.0086, 0.0078],
    "distance_term_std": [0.0669, 0.0482, 0.031, 0.0134, 0.0076, 0.007, 0.0068, 0.0041, 0.0025, 0.0019],
}


def test_healthy_default_run_is_not_called_collapsed():
    collapsed, verdict = collapse_diagnosis(HEALTHY)
    assert not collapsed and verdict.startswith("healthy")
    fig = plot_history(HEALTHY)
    titles = [ax.get_title() for ax in fig.axes] + [fig._suptitle.get_text()]
    assert not any("collapse:" in t or "COLLAPSED" in t for t in titles)
    assert "by design" in " ".join(titles)


def test_collapsed_run_is_flagged_in_red():
    history = {**HEALTHY, "h_spread": [0.026] + [1e-6] * 9, "distance_term_std": [0.06] + [1e-8] * 9}
    collapsed, verdict = collapse_diagnosis(history)
    assert collapsed and verdict.startswith("COLLAPSED")
    fig = plot_history(history)
    assert "COLLAPSED" in fig._suptitle.get_text() and fig._suptitle.get_color() == "#d62728"


def test_base_model_alone_has_no_verdict():
    assert collapse_diagnosis({"epoch": [1]}) == (False, "no collapse diagnostics recorded (base model alone, or k > 1)")
