"""Causal window-KMeans variants against the centred term, on the 46 TSB-AD series (VUS-PR).

Why: a default whose every part reads steps <= t would stream with final scores at once. This
measures what the window-KMeans part loses when it is made causal, alone and in the default's
weighted sum (0.5 z(network) + 1.5 z(part) + z(ar), the network part from
``benchmarks/studies/archive/first_parts/part_scores.py``'s dumps). Variants, for windows of 100, 50 and 25 steps: the
distance of the window ending at t to its nearest centroid (``trail<L>``), and the mean squared
residual of that window's last m steps against the centroid (``trail<L>_res<m>``: localised to
the newest steps). Prints a Markdown table, best first::

    python benchmarks/studies/archive/first_parts/part_scores.py --jobs 2 --out /tmp/parts
    PYTHONPATH=src python benchmarks/studies/archive/first_parts/causal_parts.py --dumps /tmp/parts --data-dir ../shared/datasets --jobs 2
"""
import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # benchmarks/: benchlib
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/studies/: lib

def trailing_resid(term, rows, ms):
    from lib import trailing_padded
    read = np.asarray(rows) if term.columns is None else np.asarray(rows)[:, term.columns]
    padded = trailing_padded(read, term.window_size)
    scaled = np.ascontiguousarray((padded - term.scaler_mean) / term.scaler_scale, dtype=np.float32)
    L, D = term.window_size, scaled.shape[1]
    win = np.lib.stride_tricks.sliding_window_view(scaled, L, axis=0).transpose(0, 2, 1)
    C = term.centroids
    csq = np.einsum("ij,ij->i", C, C)
    n = len(read)
    out = {m: np.empty(n) for m in ms}
    dist = np.empty(n)
    per = max(1, (1 << 22) // (L * D))
    Cr = C.reshape(len(C), L, D)
    for lo in range(0, n, per):
        w = win[lo:lo + per]
        flat = w.reshape(len(w), -1)
        d = csq[None, :] - 2 * flat @ C.T
        j = d.argmin(axis=1)
        dist[lo:lo + len(w)] = np.sqrt(np.maximum((flat ** 2).sum(1) + d[np.arange(len(w)), j], 0))
        r = (w - Cr[j]) ** 2  # (n, L, D)
        per_step = r.sum(axis=2)  # (n, L)
        for m in ms:
            out[m][lo:lo + len(w)] = per_step[:, L - m:].mean(axis=1)
    return dist, out

def run(item):
    name, source, train, test, labels, dumpfile, seed = item
    import warnings

    from lib import default_rows

    from madcluster.metrics.tsbad import tsbad_vus
    from madcluster.score.autoregressive import AutoRegressive
    from madcluster.score.parts import FitContext
    from madcluster.score.window_kmeans import WindowKMeans

    warnings.filterwarnings("ignore")
    train_rows = np.asarray(train, dtype=np.float64)
    test_rows = default_rows(train, test)
    dump = dict(np.load(dumpfile))
    parts = {"net": (dump["net_test"].astype(np.float64), dump["net_train"].astype(np.float64))}
    ar = AutoRegressive.fit(train_rows)
    parts["ar"] = (ar.values(test_rows), ar.values(train_rows))
    for L in (100, 50, 25):
        term = WindowKMeans.fit(train_rows, FitContext(min(L, len(train_rows)//2), seed))
        if L == 100:
            parts["kmeans"] = (term.values(test_rows), term.values(train_rows))
        ms = (1, 5, 10, 25) if L == 100 else (1, 5)
        dt, rt = trailing_resid(term, test_rows, ms)
        dr, rr = trailing_resid(term, train_rows, ms)
        parts[f"trail{L}"] = (dt, dr)
        for m in ms:
            parts[f"trail{L}_res{m}"] = (rt[m], rr[m])
    def z(p):
        t, r = parts[p]; s = r.std() or 1.0
        return (t - r.mean()) / s
    combos = {p: z(p) for p in parts}
    for p in parts:
        if p.startswith("trail"):
            combos[f"0.5net+1.5{p}+ar"] = 0.5 * z("net") + 1.5 * z(p) + z("ar")
            combos[f"{p}+ar"] = z(p) + z("ar")
    combos["default"] = 0.5 * z("net") + 1.5 * z("kmeans") + z("ar")
    res = {k: tsbad_vus(v, labels, test)[1] for k, v in combos.items()}
    return name, source, res

if __name__ == "__main__":
    from benchlib import add_series_arguments, load_series
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dumps", required=True, help="part_scores.py's output folder")
    add_series_arguments(parser)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    cli = parser.parse_args()
    items = []
    for source, _, s in load_series(cli):
        f = Path(cli.dumps) / f"{s.name}.npz"
        if f.exists():
            items.append((s.name, source, s.train, s.test, s.labels, str(f), cli.seed))
    out = {}
    with ProcessPoolExecutor(cli.jobs) as ex:
        for name, source, res in ex.map(run, items):
            out[name] = (source, res)
    keys = list(next(iter(out.values()))[1])
    rows = []
    print("| score | MSL | SMAP | SMD | all |\n|---|---|---|---|---|")
    for k in keys:
        per = {src: [r[k] for s_, (src2, r) in out.items() if src2 == src] for src in ("MSL", "SMAP", "SMD")}
        allv = [r[k] for _, r in out.values()]
        rows.append((np.mean(allv), k, per))
    for m, k, per in sorted(rows, reverse=True):
        print(f"| {k} | " + " | ".join(f"{np.mean(v):.3f}" for v in per.values()) + f" | {m:.3f} |")
