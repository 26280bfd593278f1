"""Speed against a peer library: madcluster's base models vs DeepOD 0.4.1, same model, same data.

    /work/venv-peer/bin/python benchmarks/studies/speed/peer_speed.py                       # usad deepsvdd [+ AT]
    /work/venv-peer/bin/python benchmarks/studies/speed/peer_speed.py --models usad --repeats 1   # quicker

For each model (``usad``, ``deepsvdd`` and, once registered, ``anomaly_transformer``) the SAME
configuration is built in both libraries: MSL train / test (``madcluster.data.datasets``), window
100, training stride 10, batch 128, one torch thread, the same layer sizes (the matching is written
in ``MATCHED`` below and in the report). Measured, each in a fresh subprocess (peak RSS is
``resource.getrusage(RUSAGE_SELF).ru_maxrss``; tracemalloc does not see torch's allocations),
ours and the peer alternating, ``--repeats`` times (median reported):

* seconds per full training pass (epoch) over the 5,822 windows: the first ``--batches`` batches
  are trained on a training series cut to exactly that many batches of windows, timed as one
  epoch and extrapolated per window to the full pass (the report says so). Only the epoch loop is
  timed: not the model construction, not the initial pass over the data (DeepSVDD's center, USAD's
  min-max range), and not the scoring of the training set that both ``fit`` methods end with:
  that trailing scoring is timed separately (the peer's on its first ``--trail-points`` points,
  since it scores every stride-1 window, extrapolated to the whole training series);
* scoring points/s: ``decision_function`` on test data. The peer scores one stride-1 window per
  point, so it is timed on the first ``--score-points`` test points (throughput is linear in
  the length); ours on the whole test set (73,729 points);
* a "full" run per model (``--full``, default usad and deepsvdd): one real full training pass on
  the whole training series, then both libraries score the first ``--sanity-points`` test points;
  ROC-AUC, VUS-PR and the Spearman correlation of the two score series are the sanity check.
  In that run the peer's USAD scores under ``torch.no_grad()`` (its own code keeps the autograd
  graph of every scored window, about 200 KB per point, which on 10,000 points is GBs): that
  throughput is reported on its own row, as the peer's best case.

Fairness notes (also in the report): DeepOD's USAD holds out 20% of the windows for validation by
default: ``train_val_pc=0`` here, and ours ``validation_size=0``, so both train on the same 5,822
windows. DeepOD defaults to ``device='cuda'``: ``device='cpu'`` is passed. Its
AnomalyTransformer "epoch" is ``epoch_steps`` + 2 batches (22 by default), not a full pass; here
both libraries are timed per batch and extrapolated to the full pass. The peer gets the same
input scaling ours applies inside ``fit`` (USAD: min-max with the training range; DeepSVDD and
Anomaly Transformer: z-score with the training mean / std), done before any timer starts.

Benchmark venv (OUTSIDE the repo; DeepOD is never a dependency of madcluster): its own pins would
downgrade torch, so it goes in with ``--no-deps`` and its import-time needs are installed by hand::

    python3 -m venv /work/venv-peer
    /work/venv-peer/bin/pip install torch==2.13.0
    /work/venv-peer/bin/pip install --no-deps deepod==0.4.1
    /work/venv-peer/bin/pip install numpy==2.4.6 scikit-learn==1.9.1 scipy==1.17.1 \\
        pandas==3.1.1 tqdm matplotlib                    # versions as the project venv; torch kept
    /work/venv-peer/bin/pip install --no-deps -e /work/main
    /work/venv-peer/bin/python -c "import torch; print(torch.__version__)"   # still 2.13.0

Outputs ``benchmarks/results/peer_speed.md`` (table) and ``peer_speed.json`` (every measurement).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

WINDOW, STRIDE, BATCH, SEED = 100, 10, 128, 0
RESULT_TAG = "PEER_SPEED_RESULT "
OUT_DEFAULT = Path(__file__).resolve().parents[2] / "results" / "peer_speed"
ALL_MODELS = ("usad", "deepsvdd", "anomaly_transformer")
DEFAULT_BATCHES = {"usad": 4, "deepsvdd": 10, "anomaly_transformer": 3}
DEFAULT_SCORE_POINTS = {"usad": 3000, "deepsvdd": 10000, "anomaly_transformer": 1000}
PEER_CLASS = {"usad": "USAD", "deepsvdd": "DeepSVDDTS(network='GRU')",
              "anomaly_transformer": "AnomalyTransformer"}
MATCHED = {
    "usad": "both: window flattened to w = 100 x 55 = 5500, encoder 5500 -> 2750 -> 1375 -> "
    "z = 100 x 100 (ReLU), two decoders z -> 1375 -> 2750 -> 5500 (sigmoid), two Adams at 1e-3 without weight decay, "
    "two phases per batch with fresh forwards (ours: hidden=100; DeepOD: hidden_dims=100); "
    "score alpha = beta = 0.5",
    "deepsvdd": "both: 3 GRU layers of 64 units without biases, center = mean of an initial "
    "pass with the +-0.1 guard, one-class loss, Adam lr 1e-3, weight decay 1e-5. Ours: D-RNN "
    "(dilations 1, 2, 4; h per step); DeepOD: plain stacked GRU (hidden_dims='64,64,64') + a "
    "Linear(64, 64) on the last step (rep_dim=64; its lr default 1e-5 set to 1e-3)",
    "anomaly_transformer": "both: DataEmbedding (circular Conv1d k3 + position), 3 layers, "
    "d_model 512, 8 heads, d_ff 512, k = 3, lr 1e-4 (ours Adam, DeepOD AdamW wd 1e-5). Ours: "
    "joint minimax (one backward of both phases' gradients); DeepOD: two backward passes "
    "(retain_graph) then one step; DeepOD epoch_steps=-1, so its epoch is a full pass over the "
    "windows it is given, not its default 22 batches; batch 128 and stride 10 in both",
}


# ---------------------------------------------------------------------------------- child side
def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def _hwm_mb() -> float:
    """VmHWM of this process's own address space (ru_maxrss also keeps the RSS that the parent
    had when it spawned us: Linux carries it over exec; the parent is kept small for that)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return float(line.split()[1]) / 1024.0
    return float("nan")


def _load(n_train_batches: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from madcluster.data.datasets import load_dataset

    data = load_dataset("MSL")
    train = data.train
    if n_train_batches:  # exactly n_train_batches * BATCH windows at stride STRIDE
        rows = (n_train_batches * BATCH - 1) * STRIDE + WINDOW
        train = train[:rows]
    return train, data.test, data.labels


def _ours(model: str, train: np.ndarray, test: np.ndarray, spec: dict) -> dict[str, Any]:
    from madcluster import MADCluster
    from madcluster.estimator.fitted import FittedModel

    params = {"usad": {"hidden": 100}, "deepsvdd": {}, "anomaly_transformer": {}}[model]
    det = MADCluster(embedder=model, embedder_params=params, mode="base-only", window_size=WINDOW,
                     stride=STRIDE, batch_size=BATCH, epochs=1,
                     lr=1e-4 if model == "anomaly_transformer" else 1e-3,
                     weight_decay=0.0 if model == "usad" else 1e-5,  # as DeepOD: USAD plain Adam
                     validation_size=0.0, random_state=SEED, device="cpu",
                     precision=spec.get("precision", "float32"))
    timings: dict[str, float] = {}
    inner = FittedModel.outputs

    def timed_point_outputs(self, *args):  # its first call is fit's trailing scoring of the train set
        t0 = time.perf_counter()
        out = inner(self, *args)
        timings.setdefault("trail_s", time.perf_counter() - t0)
        return out

    FittedModel.outputs = timed_point_outputs  # type: ignore[method-assign]
    t0 = time.perf_counter()
    try:
        det.fit(train)
    finally:
        FittedModel.outputs = inner  # type: ignore[method-assign]
    fit_s = time.perf_counter() - t0
    rss_train = _rss_mb()
    t0 = time.perf_counter()
    scores = det.decision_function(test)
    score_s = time.perf_counter() - t0
    return {
        "params": sum(p.numel() for p in det.net_.parameters()),
        "epoch_s": float(det.history_["seconds"][0]), "fit_s": fit_s,
        "trail_s": timings["trail_s"], "trail_points": len(train), "trail_points_full": None,
        "score_s": score_s, "score_points": len(test), "rss_train_mb": rss_train,
        "scores": scores,
    }


def _peer(model: str, train: np.ndarray, test: np.ndarray, spec: dict) -> dict[str, Any]:
    import torch

    try:
        from deepod.models.time_series import USAD, AnomalyTransformer, DeepSVDDTS
    except ImportError as exc:  # pragma: no cover - depends on the benchmark venv
        raise SystemExit(f"deepod is not importable ({exc}): see this script's docstring for the venv") from None

    lo, hi = train.min(axis=0), train.max(axis=0)
    mean, std = train.mean(axis=0), train.std(axis=0)
    if model == "usad":  # the same scaling ours does inside fit (standardise, then training min-max)
        span = np.where(hi - lo > 1e-8, hi - lo, 1.0)
        prep = lambda a: ((a - lo) / span).astype(np.float32)
    else:
        scale = np.where(std > 1e-8, std, 1.0)
        prep = lambda a: ((a - mean) / scale).astype(np.float32)
    train_p, test_p = prep(train), prep(test)
    common = {"seq_len": WINDOW, "stride": STRIDE, "batch_size": BATCH, "epochs": 1,
              "device": "cpu", "verbose": 0, "random_state": SEED}
    if model == "usad":
        det = USAD(hidden_dims=100, lr=1e-3, train_val_pc=0, **common)
        loop_name = "training"
    elif model == "deepsvdd":
        det = DeepSVDDTS(network="GRU", hidden_dims="64,64,64", rep_dim=64, bias=False, lr=1e-3,
                         **common)
        loop_name = "_training"
    else:
        det = AnomalyTransformer(lr=1e-4, epoch_steps=-1, **common)
        loop_name = "training"

    timings: dict[str, float] = {}
    loop = getattr(det, loop_name)

    def timed_loop(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        out = loop(*args, **kwargs)
        timings["epoch_s"] = time.perf_counter() - t0
        return out

    score = det.decision_function
    cap = spec["trail_points"]

    def capped_trailing_scoring(x: np.ndarray, *args: Any, **kwargs: Any) -> np.ndarray:
        n = min(len(x), max(cap, 2 * BATCH + WINDOW))  # DeepOD's USAD fails on one batch
        t0 = time.perf_counter()
        head = score(x[:n], *args, **kwargs)
        timings["trail_s"] = time.perf_counter() - t0
        timings["trail_points"] = n
        return np.concatenate([head, np.zeros(len(x) - n)])

    setattr(det, loop_name, timed_loop)
    det.decision_function = capped_trailing_scoring
    t0 = time.perf_counter()
    det.fit(train_p)
    fit_s = time.perf_counter() - t0
    delattr(det, loop_name)
    del det.decision_function
    rss_train = _rss_mb()
    net = det.model if model == "usad" else det.net
    n_score = min(len(test_p), spec["score_points"])
    t0 = time.perf_counter()
    if spec.get("no_grad"):
        with torch.no_grad():
            scores = det.decision_function(test_p[:n_score])
    else:
        scores = det.decision_function(test_p[:n_score])
    score_s = time.perf_counter() - t0
    return {
        "params": sum(p.numel() for p in net.parameters()),
        "epoch_s": timings["epoch_s"], "fit_s": fit_s,
        "trail_s": timings["trail_s"], "trail_points": int(timings["trail_points"]),
        "trail_points_full": len(train),
        # its first L - 1 scores are padding (0): count only the points that got a real score
        "score_s": score_s, "score_points": n_score - WINDOW + 1, "rss_train_mb": rss_train,
        "scores": np.asarray(scores, dtype=np.float64),
    }


def child(spec: dict) -> None:
    """One measurement in this (fresh) process; prints one JSON line tagged RESULT_TAG."""
    import torch
    from torch.optim.optimizer import register_optimizer_step_post_hook

    torch.set_num_threads(1)
    rss_start = _rss_mb()
    train, test, _labels = _load(spec["batches"])
    rss_data = _rss_mb()
    run = _ours if spec["library"] == "madcluster" else _peer
    # every optimiser step of either library is stamped (a global torch hook, no library edited):
    # the stamps of each batch's last step give per-batch times without the first batch's warm-up
    stamps: list[float] = []
    hook = register_optimizer_step_post_hook(lambda *_: stamps.append(time.perf_counter()))
    result = run(spec["model"], train, test, spec)
    hook.remove()
    n_batches = -(-((len(train) - WINDOW) // STRIDE + 1) // BATCH)
    per_batch = len(stamps) // n_batches  # USAD: two steps (phases) per batch
    ends = stamps[per_batch - 1 :: per_batch][:n_batches]
    result["batch_s"] = list(np.diff(ends))  # batches 2..N
    result["steps"] = len(stamps)
    result["rss_peak_mb"] = _rss_mb()
    result["hwm_peak_mb"] = _hwm_mb()
    result.update(rss_start_mb=rss_start, rss_data_mb=rss_data, train_rows=len(train),
                  n_windows=(len(train) - WINDOW) // STRIDE + 1)
    scores = result.pop("scores")
    if spec.get("scores_path"):
        np.save(spec["scores_path"], scores)
    print(RESULT_TAG + json.dumps(result), flush=True)


# --------------------------------------------------------------------------------- parent side
def _run_child(spec: dict, log: list[str]) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    load_before = os.getloadavg()
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)], env=env,
                          capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(RESULT_TAG)]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr or proc.stdout)[-3000:]
        raise RuntimeError(f"measurement {spec} failed (exit {proc.returncode}):\n{tail}")
    out = json.loads(lines[-1][len(RESULT_TAG):])
    out.update(spec={k: v for k, v in spec.items() if k != "scores_path"}, wall_s=wall,
               load_before=load_before, load_after=os.getloadavg())
    msg = (f"[{time.strftime('%H:%M:%S')}] {spec['kind']:5s} {spec['model']:19s} "
           f"{spec['library']:10s} epoch {out['epoch_s']:.1f} s ({out['n_windows']} windows), "
           f"score {out['score_points'] / out['score_s']:.0f} pts/s, peak {out['rss_peak_mb']:.0f} MB, "
           f"load {load_before[0]:.2f}->{out['load_after'][0]:.2f}")
    print(msg, flush=True)
    log.append(msg)
    return out


def probe() -> None:
    """What the parent must know, found in a child so the parent never holds torch or data."""
    from importlib.metadata import version

    try:
        import deepod
    except ImportError:
        print(RESULT_TAG + json.dumps({"error": "no deepod"}), flush=True)
        return
    import torch

    from madcluster.data.datasets import load_dataset
    from madcluster.embedders import EMBEDDERS

    data = load_dataset("MSL")
    print(RESULT_TAG + json.dumps({
        "registered": [m for m in ALL_MODELS if m in EMBEDDERS],
        "train_rows": len(data.train), "test_rows": len(data.test),
        "full_windows": (len(data.train) - WINDOW) // STRIDE + 1,
        "torch": torch.__version__, "deepod": version("deepod"), "deepod_module": deepod.__name__,
    }), flush=True)


def _derived(m: dict, full_windows: int, train_rows: int) -> dict:
    """Per-measurement figures: s per full pass (extrapolated per window), points/s, trailing s."""
    steady = float(np.median(m["batch_s"])) if m["batch_s"] else m["epoch_s"] / m["n_windows"] * BATCH
    # fit's trailing scoring, per point, scaled to the whole training series (the peer: per real
    # score, its first L - 1 being padding)
    peer = m["spec"]["library"] == "deepod"
    trail_rate = m["trail_s"] / (m["trail_points"] - (WINDOW - 1 if peer else 0))
    return {
        "s_per_batch": steady,
        "first_batch_s": m["epoch_s"] - float(np.sum(m["batch_s"])),
        # the measured N-batch epoch, plus the rest of a full pass at the steady per-batch time
        "s_per_full_epoch": m["epoch_s"] + steady * (full_windows - m["n_windows"]) / BATCH,
        "points_per_s": m["score_points"] / m["score_s"],
        "trail_s_full_train": trail_rate * (train_rows - (WINDOW - 1 if peer else 0)),
        "rss_peak_mb": m["rss_peak_mb"], "rss_train_mb": m["rss_train_mb"],
        "hwm_peak_mb": m["hwm_peak_mb"],
    }


def _sanity(scores: dict[str, np.ndarray], labels: np.ndarray) -> dict:
    from scipy.stats import spearmanr

    from madcluster.metrics import auc_roc, vus_pr

    n = min(len(s) for s in scores.values())
    skip = WINDOW - 1  # the peer pads its first L - 1 points with 0: compare from point L on
    lab = labels[skip:n]
    out: dict[str, Any] = {"points": n - skip, "anomaly_ratio": float(lab.mean())}
    if 0 < lab.sum() < len(lab):
        for lib, s in scores.items():
            out[lib] = {"roc_auc": float(auc_roc(s[skip:n], lab)), "vus_pr": float(vus_pr(s[skip:n], lab))}
    a, b = (s[skip:n] for s in scores.values())
    out["spearman"] = float(spearmanr(a, b).statistic)
    return out


def _median(values: list[float]) -> float:
    return float(statistics.median(values))


def summarise(results: dict, full_windows: int, train_rows: int) -> dict:
    """Medians per model and library over the speed repeats, and the ratios peer / ours."""
    summary: dict[str, Any] = {}
    for model, block in results["models"].items():
        rows: dict[str, Any] = {}
        for lib in ("madcluster", "deepod"):
            speed = [_derived(m, full_windows, train_rows) for m in block["speed"] if m["spec"]["library"] == lib]
            if not speed:
                continue
            row = {k: _median([d[k] for d in speed]) for k in speed[0]}
            row["repeats"] = len(speed)
            row["params"] = next(m["params"] for m in block["speed"] if m["spec"]["library"] == lib)
            full = [m for m in block.get("full", []) if m["spec"]["library"] == lib]
            if full:
                row["full_pass_s"] = full[0]["epoch_s"]
                row["full_points_per_s"] = full[0]["score_points"] / full[0]["score_s"]
                row["full_rss_peak_mb"] = full[0]["rss_peak_mb"]
            rows[lib] = row
        if "madcluster" in rows and "deepod" in rows:
            ours, peer = rows["madcluster"], rows["deepod"]
            rows["ratio"] = {
                "train_speed": peer["s_per_full_epoch"] / ours["s_per_full_epoch"],
                "score_speed": ours["points_per_s"] / peer["points_per_s"],
                "peak_rss": peer["rss_peak_mb"] / ours["rss_peak_mb"],
            }
        summary[model] = rows
    return summary


def _verdict(met: bool) -> str:
    return "(met)" if met else "(**not met**)"


# Structural reasons behind the ratios (they hold whatever the load; the profile is of one
# Anomaly Transformer training step of ours, torch.profiler, 1 thread).
WHY = [
    "Why the training ratios are what they are:",
    "",
    ("- **usad**: both libraries do exactly the same work per batch (two phases, each a fresh "
    "forward through E, D1, D2, E, D2 and a backward, two Adam steps over 98M parameters); the "
    "time is the 98M-parameter matmuls and Adam, so parity is the expected result. A 2x gain "
    "would need a different algorithm (e.g. one forward shared by both phases), not a faster "
    "implementation of this one."),
    ("- **deepsvdd**: the same 3 x 64 GRU stack in both (ours dilated, folded into the batch: the "
    "same FLOPs), and the GRU matmuls dominate both: the steady per-batch times are close, and "
    "a good part of the full-pass gap is the peer's slow first batch (about 3 s; cause not "
    "investigated)."),
    ("- **anomaly_transformer**: ours takes one backward of both minimax phases' summed gradients, "
    "the peer two full backwards (its `loss2` also reaches every layer through the reconstruction "
    "term), so about 5 vs 3 passes' worth of work: 1.67x at most from that; ours also takes the "
    "logs of each layer's two maps once for both KL terms (the symmetric KL as "
    "sum (p - q)(log p - log q)), which removed 18 of 24 `log` calls per step. In float32 the "
    "rest is the same matmuls in both. `precision=\"bfloat16\"` (autocast: the matmuls in "
    "bfloat16, the attention maps, losses, head and scores in float32) is a further 1.55x here "
    "on a CPU with AVX-512 BF16; on three MSL channels it gave the same scores as float32 to a "
    "Spearman correlation of .9999 (`benchmarks/results/peer_speed_at.md`)."),
    ("- **scoring**: the peer scores one stride-1 window per point (73,630 windows for the test "
    "set) and its USAD keeps every window's autograd graph; ours scores non-overlapping windows "
    "(USAD, Anomaly Transformer: 1 window per 100 points) or, for the causal DeepSVDD, one window "
    "every 10 points (score_stride = L // 10, each point from the window with the most history): "
    "10x fewer windows than the peer at most, hence DeepSVDD's ratio below 20x. Reaching 20x "
    "there needs score_stride >= ~25, or a stateful pass of the RNN over the series."),
]


def _fmt(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{x:,.{digits}f}"


def render(results: dict) -> str:
    s, cfg = results["summary"], results["config"]
    lines = [
        "# Speed against a peer: madcluster vs DeepOD 0.4.1 (same model, same configuration)",
        "",
        "```bash",
        results["command"],
        "```",
        "",
        (f"Measured {results['started']} to {results['finished']} UTC on {results['machine']}, "
        f"torch {results['torch']}, deepod {results['deepod']}, 1 torch thread per process, one "
        "measurement process at a time (each a fresh subprocess), ours and the peer alternating."),
        (f"Load average (1 / 5 / 15 min) before: {results['load_start']}; after: "
        f"{results['load_end']} (2 cores shared with other engineers' work: absolute seconds are "
        "noisy, the ratios are from the same run and interleaved)."),
        "",
        (f"Data: MSL, train {cfg['train_rows']:,} x 55 -> {cfg['full_windows']:,} windows of "
        f"{WINDOW} at stride {STRIDE}, batch {BATCH}; test {cfg['test_rows']:,} points. "
        f"Medians over {cfg['repeats']} alternating repeats."),
        (f"Precision: madcluster **{cfg.get('precision', 'float32')}**"
         + (" (`precision=\"bfloat16\"`: autocast mixed precision for the embedder's matrix "
            "products; weights, head and scores float32)" if cfg.get("precision") == "bfloat16" else "")
         + "; DeepOD float32 (it has no such option)."),
        "",
        ("| model | library | params | s / batch | s / epoch (full pass) | scoring points/s | peak RSS MB "
        "(train / overall) | ROC-AUC / VUS-PR | peer / ours |"),
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for model, rows in s.items():
        san = results["models"][model].get("sanity")
        for lib in ("madcluster", "deepod"):
            if lib not in rows:
                continue
            r = rows[lib]
            quality = "-"
            if san and lib in san:
                quality = f"{san[lib]['roc_auc']:.3f} / {san[lib]['vus_pr']:.3f}"
                if not san["source"].startswith("after one full"):
                    quality += f" (after {cfg['batches'][model]} batches, {san['points']} points)"
            ratio = ""
            if lib == "deepod" and "ratio" in rows:
                q = rows["ratio"]
                ratio = (f"train {q['train_speed']:.2f}x slower, scoring {q['score_speed']:.1f}x "
                         f"slower, peak RSS {q['peak_rss']:.2f}x")
            name = "madcluster" if lib == "madcluster" else f"DeepOD {PEER_CLASS[model]}"
            lines.append(
                f"| {model} | {name} | {r['params']:,} | {_fmt(r['s_per_batch'], 2)} | "
                f"{_fmt(r['s_per_full_epoch'])} | {_fmt(r['points_per_s'], 0)} | "
                f"{_fmt(r['rss_train_mb'], 0)} / {_fmt(r['rss_peak_mb'], 0)} | {quality} | {ratio} |")
    lines += ["", ("## Against the goals (issues 8 and 9: >= 2x the peer's training speed per full pass, "
              ">= 20x its scoring speed, lower peak memory)"), "",
              "| model | training speed, peer / ours | scoring speed, ours / peer | peak RSS, peer / ours |",
              "|---|---:|---:|---:|"]
    for model, rows in s.items():
        if "ratio" in rows:
            q = rows["ratio"]
            lines.append(f"| {model} | {q['train_speed']:.2f}x {_verdict(q['train_speed'] >= 2)} | "
                         f"{q['score_speed']:.1f}x {_verdict(q['score_speed'] >= 20)} | "
                         f"{q['peak_rss']:.2f}x "
                         f"{'(tie, within 5%)' if abs(q['peak_rss'] - 1) < 0.05 else _verdict(q['peak_rss'] > 1)} |")
    lines += ["", *WHY, "", "## How each figure was taken", "",
              ("- **s / batch, s / epoch**: each speed run trains one epoch on a training series cut "
               "to exactly N batches of 128 windows (N per model below), timed around the epoch loop "
               "only. s / batch is the steady state: the median time between the last optimiser "
               "steps of consecutive batches (batches 2..N; a global torch optimiser-step hook, "
               "no library edited), so the first batch's warm-up is left out of it (it is shown "
               "per model below). s / epoch = the measured N-batch epoch + the remaining "
               f"{cfg['full_windows'] / BATCH:.1f} - N batches at the steady time: an extrapolation; "
               "the full-run lines below are real full passes. Excluded from the epoch time: model "
               "construction, the initial pass (centers, min-max range) and the scoring of the "
               "training set that `fit()` ends with (timed separately, below)."),
              ("- **scoring points/s**: `decision_function` on test data, wall time / points. The peer "
              "scores one stride-1 window per point (timed on a prefix of the test set); ours scores "
              "one window every 100 points (USAD, Anomaly Transformer: non-overlapping windows) or "
              "every 10 (DeepSVDD: causal, each point from the window with the most history), on the "
              "whole test set."),
              ("- **peak RSS**: `ru_maxrss` of the measurement's own fresh process (torch, data and "
               "all), after `fit` (train) and at the end (overall, after scoring). Linux carries "
               "the spawning parent's RSS over into a child's `ru_maxrss`, so the parent holds "
               f"neither torch nor data (its own peak: {results.get('parent_maxrss_mb', 0):.0f} MB); "
               "`VmHWM` of the child's address space is recorded beside it as a cross-check."),
              ("- **ROC-AUC / VUS-PR**: the full run's scores (one real full training pass, then the "
              f"first {cfg['sanity_points']:,} test points, from point {WINDOW} on) with the "
              "library's own per-point score; a sanity check of both, not a quality race "
              "(one epoch)."), ""]
    lines += ["## Per model: what was matched, N, and the extra rows", ""]
    for model, rows in s.items():
        block = results["models"][model]
        lines.append(f"### {model}")
        lines.append("")
        lines.append(f"- Matched: {MATCHED[model]}.")
        lines.append(f"- Speed runs: N = {cfg['batches'][model]} batches per run; the peer scored the "
                     f"first {cfg['score_points'][model]:,} test points.")
        for lib in ("madcluster", "deepod"):
            if lib in rows:
                r = rows[lib]
                lines.append(f"- {lib}: first batch (with warm-up) {_fmt(r['first_batch_s'], 2)} s; peak "
                             f"VmHWM (cross-check of peak RSS) {_fmt(r['hwm_peak_mb'], 0)} MB; medians "
                             f"over {r['repeats']} speed runs.")
                measured_on = (f"its first {max(cfg['trail_points'], 2 * BATCH + WINDOW):,} points"
                               if lib == "deepod" else "the speed runs' training series")
                lines.append(f"- {lib}: fit's trailing scoring of the training set: "
                             f"{_fmt(r['trail_s_full_train'])} s for the whole training series "
                             f"({cfg['train_rows']:,} points; timed on {measured_on}, scaled per "
                             "point; excluded from s / epoch).")
                if "full_pass_s" in r:
                    lines.append(f"- {lib}: full run, one real full pass: {_fmt(r['full_pass_s'])} s; "
                                 f"scoring {_fmt(r['full_points_per_s'], 0)} points/s; peak RSS "
                                 f"{_fmt(r['full_rss_peak_mb'], 0)} MB"
                                 + (" (peer scored under torch.no_grad())" if lib == "deepod" and
                                    model == "usad" else "") + ".")
        san = block.get("sanity")
        if san:
            lines.append(f"- Sanity ({san['source']}, {san['points']:,} points, anomaly ratio "
                         f"{san['anomaly_ratio']:.3f}): Spearman between the two libraries' scores "
                         f"{san['spearman']:.3f}.")
        lines.append("")
    lines += ["## Log", "", "```", *results["log"], "```", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--probe", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--sanity", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--models", nargs="+", default=None, choices=ALL_MODELS,
                        help="default: usad, deepsvdd, and anomaly_transformer if registered")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batches", nargs="*", default=[], metavar="MODEL=N",
                        help=f"training batches per speed run (default {DEFAULT_BATCHES})")
    parser.add_argument("--score-points", nargs="*", default=[], metavar="MODEL=N",
                        help=f"test points the peer scores per speed run (default {DEFAULT_SCORE_POINTS})")
    parser.add_argument("--trail-points", type=int, default=500,
                        help="training points the peer's trailing fit() scoring is timed on")
    parser.add_argument("--full", nargs="*", default=["usad", "deepsvdd"], choices=ALL_MODELS,
                        help="models given one real full pass + sanity scoring")
    parser.add_argument("--sanity-points", type=int, default=10000)
    parser.add_argument("--precision", default="float32", choices=("float32", "bfloat16"),
                        help="madcluster's precision option (the peer has none: it stays float32)")
    parser.add_argument("--out", type=Path, default=OUT_DEFAULT, help="output stem (.md, .json)")
    parser.add_argument("--render", action="store_true",
                        help="only rewrite OUT.md from an existing OUT.json (no measurement)")
    args = parser.parse_args(argv)
    if args.render:
        saved = json.loads(args.out.with_suffix(".json").read_text())
        cfg = saved["config"]
        saved["summary"] = summarise(saved, cfg["full_windows"], cfg["train_rows"])
        args.out.with_suffix(".md").write_text(render(saved))
        return
    if args.child:
        child(json.loads(args.child))
        return
    if args.probe:
        probe()
        return
    if args.sanity:  # in a child too: the parent never loads the data
        from madcluster.data.datasets import load_dataset

        labels = load_dataset("MSL").labels
        scores = dict(zip(("madcluster", "deepod"), (np.load(p) for p in args.sanity), strict=True))
        print(RESULT_TAG + json.dumps(_sanity(scores, labels)), flush=True)
        return

    # The parent imports neither torch nor the data: a child's ru_maxrss starts at the RSS its
    # parent had when spawning it, so a small parent keeps every child's peak honest.
    probe_out = subprocess.run([sys.executable, __file__, "--probe"], capture_output=True, text=True,
                               check=False)
    found = [ln for ln in probe_out.stdout.splitlines() if ln.startswith(RESULT_TAG)]
    if not found:
        raise SystemExit(f"the probe failed:\n{probe_out.stderr[-3000:]}")
    info = json.loads(found[-1][len(RESULT_TAG):])
    if "error" in info:
        raise SystemExit("deepod is not installed in this interpreter: this benchmark runs in a separate "
                         "venv (see the docstring of benchmarks/studies/speed/peer_speed.py for how to build it)")
    models = args.models or info["registered"]
    missing = [m for m in models if m not in info["registered"]]
    if missing:
        raise SystemExit(f"not registered in madcluster.embedders.EMBEDDERS: {missing}")
    batches = {**DEFAULT_BATCHES, **{k: int(v) for k, v in (a.split("=") for a in args.batches)}}
    score_points = {**DEFAULT_SCORE_POINTS,
                    **{k: int(v) for k, v in (a.split("=") for a in args.score_points)}}
    full_windows = info["full_windows"]
    log: list[str] = []
    results: dict[str, Any] = {
        "command": " ".join([Path(sys.executable).as_posix(), "benchmarks/studies/speed/peer_speed.py", *sys.argv[1:]]),
        "started": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "torch": info["torch"], "deepod": info["deepod"],
        "load_start": " / ".join(f"{x:.2f}" for x in os.getloadavg()),
        "config": {"repeats": args.repeats, "batches": batches, "score_points": score_points,
                   "trail_points": args.trail_points, "sanity_points": args.sanity_points,
                   "train_rows": info["train_rows"], "test_rows": info["test_rows"],
                   "full_windows": full_windows, "precision": args.precision},
        "models": {m: {"speed": [], "full": []} for m in models},
        "log": log,
    }

    def save() -> None:
        results["finished"] = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
        results["load_end"] = " / ".join(f"{x:.2f}" for x in os.getloadavg())
        results.setdefault("parent_maxrss_mb", _rss_mb())  # before it loads anything itself
        results["summary"] = summarise(results, full_windows, info["train_rows"])
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.with_suffix(".json").write_text(json.dumps(results, indent=1) + "\n")
        args.out.with_suffix(".md").write_text(render(results))

    with tempfile.TemporaryDirectory() as tmp:

        def sanity(model: str, kind: str, source: str) -> None:
            paths = [f"{tmp}/{model}_{lib}_{kind}.npy" for lib in ("madcluster", "deepod")]
            proc = subprocess.run([sys.executable, __file__, "--sanity", *paths], capture_output=True,
                                  text=True, check=False)
            found = [ln for ln in proc.stdout.splitlines() if ln.startswith(RESULT_TAG)]
            if not found:
                print(f"sanity check of {model} failed:\n{proc.stderr[-2000:]}", flush=True)
                return
            results["models"][model]["sanity"] = {"source": source,
                                                  **json.loads(found[-1][len(RESULT_TAG):])}
            save()

        for rep in range(args.repeats):
            for model in models:
                libs = ("madcluster", "deepod") if rep % 2 == 0 else ("deepod", "madcluster")
                for lib in libs:
                    spec = {"kind": "speed", "model": model, "library": lib,
                            "batches": batches[model], "score_points": score_points[model],
                            "trail_points": args.trail_points, "precision": args.precision,
                            "scores_path": f"{tmp}/{model}_{lib}_speed.npy"}
                    results["models"][model]["speed"].append(_run_child(spec, log))
                save()
        for model in models:
            if model not in args.full:  # the last speed run's scores: after N batches only
                sanity(model, "speed", f"after only N = {batches[model]} training batches")
        for model in sorted(models, key=("deepsvdd", "usad", "anomaly_transformer").index):
            if model in args.full:  # the cheap full run first
                for lib in ("madcluster", "deepod"):
                    spec = {"kind": "full", "model": model, "library": lib, "batches": None,
                            "score_points": args.sanity_points, "trail_points": args.trail_points,
                            "no_grad": model == "usad", "precision": args.precision,
                            "scores_path": f"{tmp}/{model}_{lib}_full.npy"}
                    results["models"][model]["full"].append(_run_child(spec, log))
                    save()
                sanity(model, "full", "after one full training pass")
        save()
    print(f"wrote {args.out.with_suffix('.md')} and .json")


if __name__ == "__main__":
    main()
