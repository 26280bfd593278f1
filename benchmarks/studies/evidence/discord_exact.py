"""The discord part alone, the sampled reading of older model files against the exact one at
several subsequence lengths, per development family and on chaotic series with 20-row shape
anomalies generated here.

Why: the sampled reading (each subsequence averaged to 32 segments, against 1,024 sampled
training subsequences) found nothing on chaotic data, where every subsequence is far from its
nearest of 1,024 samples. The exact part compares with every training subsequence; which length
it should read (the dominant period, as the sampled one did, or shorter, so that a 20-row
anomaly is not diluted in a subsequence of 60) is measured here, not guessed.

Each part is fitted on a series' training rows and read on its test rows as the default reads
it (per step, the least distance of the subsequences covering it); VUS-PR is TSB-AD's
(:func:`madcluster.metrics.tsbad.tsbad_vus`). No variant reads a test label.

    OMP_NUM_THREADS=1 python benchmarks/studies/evidence/discord_exact.py \\
        --json /tmp/discord_exact.json > benchmarks/results/parts/discord_exact.md
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from itertools import pairwise
from pathlib import Path

import numpy as np

WINDOW = 100  # the default window: the fallback length where no period is found
SEEDS = 8  # chaotic series with 20-row anomalies generated here
ANOMALY = 20


def variants(train: np.ndarray) -> dict[str, object]:
    """Name -> fitted part: the sampled reading; the exact one at the period, raw and with the
    sampled reading's segment means (``paa``: ceil(m / 32) rows each), at fixed lengths, and
    as two joins (the period's with segment means and a short raw one, each standardised with
    its training reading, the larger per step: the default, :func:`join_shapes`)."""
    from madcluster.score.discord import Discord
    from madcluster.score.discord_sampled import SampledDiscord
    from madcluster.score.parts import FitContext

    context = FitContext(WINDOW, 0)
    period = _period(train)
    paa = -(-period // 32)
    out: dict[str, object] = {"sampled": SampledDiscord.fit(train, context)}
    out["exact@period"] = Discord.fit(train, context, lengths=(period,))
    out["exact-paa@period"] = Discord.fit(train, context, lengths=(period,), segments=(paa,))
    for length in (32, 48):
        out[f"exact@{length}"] = Discord.fit(train, context, lengths=(length,))
    for length in (32, 48):
        out[f"exact-paa@period + exact@{length}"] = Discord.fit(
            train, context, lengths=(period, length), segments=(paa, 1)
        )
    return out


def _period(train: np.ndarray) -> int:
    """The dominant period the part's fit reads (:func:`subsequence_length`)."""
    from madcluster.score.discord import shape_columns, subsequence_length

    data = np.asarray(train, dtype=np.float64)
    read = data[:, shape_columns(data)]
    scale = read.std(axis=0)
    read = (read - read.mean(axis=0)) / np.where(scale > 1e-12, scale, 1.0)
    return subsequence_length(read, min(WINDOW, len(data) // 4))


# ---------------------------------------------------------------------- chaotic, 20-row anomalies
def _rk4(deriv, state: np.ndarray, n: int, dt: float, every: int) -> np.ndarray:
    """``n`` samples (first coordinate) of an ODE integrated with RK4, one every ``every`` steps
    after 2,000 steps of transient."""
    out = np.empty(n)
    x = state.astype(np.float64)
    for i in range(2000 + n * every):
        k1 = deriv(x)
        k2 = deriv(x + 0.5 * dt * k1)
        k3 = deriv(x + 0.5 * dt * k2)
        k4 = deriv(x + dt * k3)
        x = x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        j = i - 2000
        if j >= 0 and j % every == 0:
            out[j // every] = x[0]
    return out


def _lorenz(x: np.ndarray) -> np.ndarray:
    return np.array([10 * (x[1] - x[0]), x[0] * (28 - x[2]) - x[1], x[0] * x[1] - 8 / 3 * x[2]])


def _rossler(x: np.ndarray) -> np.ndarray:
    return np.array([-x[1] - x[2], x[0] + 0.2 * x[1], 0.2 + x[2] * (x[0] - 5.7)])


def _mackey_glass(n: int, rng: np.random.Generator, tau: int, step: int) -> np.ndarray:
    x = np.empty(step * n + 500 + tau)
    x[: tau + 1] = 1.2 + 0.1 * rng.normal(size=tau + 1)
    for t in range(tau, len(x) - 1):
        x[t + 1] = x[t] + 0.2 * x[t - tau] / (1 + x[t - tau] ** 10) - 0.1 * x[t]
    return x[tau + 500 :: step][:n]


def chaotic_short(seed: int, coarse: bool = False, n_test: int = 5000):
    """Train, test and labels of one chaotic series (Lorenz, Rossler, Mackey-Glass with tau 17
    or 30, by ``seed % 4``) with 10 anomalies of 20 rows that change its shape: played
    backwards, mirrored about their mean, time-warped, or a stretch from elsewhere.

    ``coarse``: 20,000 training rows sampled twice as coarsely (fewer rows per cycle, so a
    subsequence shifted by one row is no longer a near copy) with more noise (.05 instead of
    .02): the sampled reading's 1,024 neighbours are then about 20 rows apart, and none is near
    any subsequence, anomalous or not."""
    rng = np.random.default_rng([44, seed, int(coarse)])
    n_train = 20_000 if coarse else 5000
    n = n_train + 2 * n_test
    kind, thin = seed % 4, 2 if coarse else 1
    if kind == 0:
        signal = _rk4(_lorenz, rng.normal(size=3) + [1, 1, 20], n, 0.01, 2 * thin)
    elif kind == 1:
        signal = _rk4(_rossler, rng.normal(size=3) + [1, 1, 0], n, 0.05, 2 * thin)
    else:
        signal = _mackey_glass(n, rng, 17 if kind == 2 else 30, 3 * thin)
    signal = (signal - signal.mean()) / signal.std()
    train, test = signal[:n_train].copy(), signal[n_train : n_train + n_test].copy()
    spare = signal[n_train + n_test :]
    labels = np.zeros(n_test, dtype=np.uint8)
    edges = np.linspace(n_test // 10, n_test - ANOMALY, 11).astype(int)
    for i, (lo, hi) in enumerate(pairwise(edges)):
        start = int(rng.integers(lo, hi - ANOMALY))
        segment = test[start : start + ANOMALY].copy()
        how = i % 4
        if how == 0:
            new = segment[::-1]
        elif how == 1:
            new = 2 * segment.mean() - segment
        elif how == 2:
            src = np.linspace(0, ANOMALY - 1, int(ANOMALY * 1.6))[:ANOMALY]
            new = np.interp(src, np.arange(ANOMALY), segment)
        else:
            at = int(rng.integers(0, len(spare) - ANOMALY))
            new = spare[at : at + ANOMALY] - spare[at] + segment[0]
        test[start : start + ANOMALY] = new
        labels[start : start + ANOMALY] = 1
    noise = 0.05 if coarse else 0.02
    train = train + rng.normal(scale=noise, size=n_train)
    test = test + rng.normal(scale=noise, size=n_test)
    return train[:, None].astype(np.float32), test[:, None].astype(np.float32), labels


def series(only: list[str] | None):
    """(family, name, train, test, labels) of every series of the study (``only``: of these
    families), made when reached."""
    from madcluster.data import families

    for family in getattr(families, "ALL_FAMILIES", families.FAMILIES):
        for seed in range(families.SERIES_PER_FAMILY if not only or family in only else 0):
            s = families.make_family(family, seed)
            yield family, s.name, s.train, s.test, s.labels
    for coarse, family in ((False, "chaotic-short"), (True, "chaotic-coarse")):
        for seed in range(SEEDS if not only or family in only else 0):
            train, test, labels = chaotic_short(seed, coarse)
            yield f"{family} (here)", f"{family[8:]}-{seed}", train, test, labels


def main() -> None:
    from madcluster.metrics.tsbad import tsbad_vus

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", default=None, help="write every series' numbers here")
    parser.add_argument("--families", nargs="*", default=None, help="only these families")
    args = parser.parse_args()
    rows: list[dict] = []
    for family, name, train, test, labels in series(args.families):
        row: dict = {"family": family, "series": name, "vus_pr": {}, "seconds": {}}
        parts, values = variants(train), {}
        for variant, part in parts.items():
            began = time.perf_counter()
            values[variant] = part.values(test)
            row["seconds"][variant] = time.perf_counter() - began
            row["vus_pr"][variant] = tsbad_vus(values[variant], labels, test[:, 0])[1]
        row["period"] = parts["exact@period"].length
        rows.append(row)
        print(
            f"{name}: " + " ".join(f"{k} {v:.3f}" for k, v in row["vus_pr"].items()),
            file=sys.stderr,
            flush=True,
        )
    if args.json:
        Path(args.json).write_text(json.dumps(rows))
    report(rows)


def report(rows: list[dict]) -> None:
    """Markdown: mean VUS-PR per family and variant, the lengths the period gave, the cost."""
    names = list(rows[0]["vus_pr"])
    families = list(dict.fromkeys(r["family"] for r in rows))
    print("| family | period m | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))
    for family in [*families, "mean of families"]:
        if family == "mean of families":
            means = [
                np.mean(
                    [np.mean([r["vus_pr"][v] for r in rows if r["family"] == f]) for f in families]
                )
                for v in names
            ]
            lengths = ""
        else:
            mine = [r for r in rows if r["family"] == family]
            means = [np.mean([r["vus_pr"][v] for r in mine]) for v in names]
            lengths = ", ".join(str(r["period"]) for r in mine)
        best = max(means)
        cells = [f"**{x:.3f}**" if x == best else f"{x:.3f}" for x in means]
        print(f"| {family} | {lengths} | " + " | ".join(cells) + " |")
    seconds = [np.sum([r["seconds"][v] for r in rows]) for v in names]
    print("| seconds scoring, all series | | " + " | ".join(f"{s:.0f}" for s in seconds) + " |")


if __name__ == "__main__":
    main()
