"""A picture of one series of each development family: the training rows' tail and the test rows
with the anomalies shaded (``benchmarks/results/parts/families_gallery.png``).

Why: a generated family is only worth choosing defaults on if it looks like its kind; this is the
check by eye (each channel scaled by its training deviation, at most six channels drawn).

    python benchmarks/studies/evidence/family_gallery.py --seed 0 \\
        --out benchmarks/results/parts/families_gallery.png
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np

TAIL, SHOWN, CHANNELS = 600, 2400, 6


def draw(seed: int, out: Path, families: list[str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from madcluster.data.families import make_family

    fig, axes = plt.subplots(len(families), 1, figsize=(14, 2.1 * len(families)))
    for ax, name in zip(np.atleast_1d(axes), families, strict=True):
        s = make_family(name, seed)
        mean, std = s.train.mean(axis=0), s.train.std(axis=0) + 1e-9
        # the test window drawn: around the first anomaly
        first = int(np.argmax(s.labels)) if s.labels.any() else 0
        lo = max(0, min(first - SHOWN // 3, len(s.test) - SHOWN))
        rows = np.vstack([s.train[-TAIL:], s.test[lo : lo + SHOWN]])
        channels = np.linspace(0, s.train.shape[1] - 1, min(CHANNELS, s.train.shape[1])).astype(int)
        x = np.arange(-TAIL, SHOWN)
        for k, c in enumerate(channels):
            ax.plot(x, (rows[:, c] - mean[c]) / std[c] + 4 * k, lw=0.5)
        labels = s.labels[lo : lo + SHOWN]
        edges = np.flatnonzero(np.diff(np.r_[0, labels, 0]))
        for a, b in zip(edges[::2], edges[1::2], strict=True):
            ax.axvspan(a, b, color="red", alpha=0.2, lw=0)
        ax.axvline(0, color="k", lw=1)
        ax.set_title(
            f"{s.name}: {s.train.shape[1]} channels, {s.labels.mean():.1%} anomalous; "
            f"train tail | test rows {lo}-{lo + SHOWN}",
            fontsize=9,
            loc="left",
        )
        ax.set_yticks([])
        ax.set_xlim(-TAIL, SHOWN)
    fig.tight_layout()
    tmp = out.with_name(out.stem + ".tmp.png")
    fig.savefig(tmp, dpi=72)
    plt.close(fig)
    os.replace(tmp, out)


def main() -> None:
    from madcluster.data.families import ALL_FAMILIES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="benchmarks/results/parts/families_gallery.png")
    parser.add_argument("--families", nargs="*", default=list(ALL_FAMILIES))
    args = parser.parse_args()
    draw(args.seed, Path(args.out), args.families)
    print(f"-> {args.out}")


if __name__ == "__main__":
    main()
