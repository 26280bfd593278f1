"""Figure: what part smoothing does to a series' score, on the largest gain and the largest loss.

For each named TSB-AD series: the network part (own) and the next-step part (ar) as z-scores,
read step by step and through their centred means (L / 2 and L / 10), and the default's score
before and after, with the labelled anomalies shaded. Reads ``benchmarks/studies/archive/first_parts/part_scores.py``'s dumps
and refits the cheap parts as ``part_combination.py`` does.

    python benchmarks/studies/archive/first_parts/part_smoothing_figure.py --dumps /tmp/parts --data-dir ../shared/datasets \\
        --series 162_SMAP 005_MSL --out benchmarks/results/parts/smoothing.png
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # benchmarks/: benchlib
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/studies/: lib

WINDOW = 100
WEIGHTS = {"net": 0.5, "kmeans": 1.5, "ar": 1.0}
WIDTHS = {"net": WINDOW // 2, "ar": WINDOW // 10, "kmeans": 1}


def z_parts(parts: dict, smooth: bool) -> dict[str, np.ndarray]:
    """Each part's test scores standardised on its training scores, smoothed or not."""
    from madcluster.score.smoothing import centred_means

    out = {}
    for name, (test, train, *_) in parts.items():
        width = WIDTHS[name] if smooth else 1
        test, train = centred_means(test, width), centred_means(train, width)
        out[name] = (test - train.mean()) / (train.std() or 1.0)
    return out


def shade(ax, labels: np.ndarray) -> None:
    edges = np.flatnonzero(np.diff(np.concatenate([[0], labels.astype(int), [0]])))
    for start, end in zip(edges[::2], edges[1::2]):
        ax.axvspan(start, end, color="tab:red", alpha=0.15, lw=0)


def main() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from benchlib import add_series_arguments, load_series
    from lib import series_parts

    from madcluster.metrics.tsbad import tsbad_vus

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dumps", required=True)
    add_series_arguments(parser, series_required=True)
    parser.add_argument("--out", default="smoothing.png")
    args = parser.parse_args()
    found = load_series(args)
    fig, axes = plt.subplots(3, len(found), figsize=(7 * len(found), 7.5), squeeze=False, sharex="col")
    for col, (_, _, series) in enumerate(found):
        parts = series_parts(series, dict(np.load(Path(args.dumps) / f"{series.name}.npz")), 0, ("kmeans", "ar"))
        raw, smooth = z_parts(parts, False), z_parts(parts, True)
        before = sum(WEIGHTS[n] * raw[n] for n in WEIGHTS)
        after = sum(WEIGHTS[n] * smooth[n] for n in WEIGHTS)
        vus = [tsbad_vus(s, series.labels, series.test)[1] for s in (before, after)]
        rows = [("own (the network), z", "net"), ("next-step error (ar), z", "ar")]
        for row, (title, name) in enumerate(rows):
            ax = axes[row, col]
            ax.plot(raw[name], lw=0.6, color="0.6", label="step by step")
            ax.plot(smooth[name], lw=1.2, color="tab:blue", label=f"centred mean of {WIDTHS[name]}")
            ax.set_ylabel(title)
            shade(ax, series.labels)
        axes[0, col].set_title(series.name)
        axes[0, col].legend(loc="upper left", fontsize=8)
        ax = axes[2, col]
        ax.plot(before, lw=0.6, color="0.6", label=f"default before (VUS-PR {vus[0]:.3f})")
        ax.plot(after, lw=1.2, color="tab:green", label=f"default now (VUS-PR {vus[1]:.3f})")
        ax.set_ylabel("score")
        ax.set_xlabel("test step (labelled anomalies shaded)")
        ax.legend(loc="upper left", fontsize=8)
        shade(ax, series.labels)
        print(f"{series.name}: VUS-PR {vus[0]:.3f} -> {vus[1]:.3f}")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
