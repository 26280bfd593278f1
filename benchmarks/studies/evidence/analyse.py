"""Turn evidence into weights: every candidate rule on every development series, and the rule
chosen with each family left out (``benchmarks/results/parts/evidence.md``).

Reads the dumps of ``fit_dump.py`` (the network's own score on the test rows and on the injected
copies of the held-out training rows) and refits the cheap parts as the default fits them: the
final parts on all training rows (their test contributions) and the probe parts on the rows before
the holdout (their contributions on the copies). A score is then ``sum_p w_p c_p`` for any weights
``w`` (the default rule's total), so every rule is tried without a new fit.

    python benchmarks/studies/evidence/analyse.py --bundle BUNDLE.npz --dumps DUMPS/ \
        --cache CACHE/ --json benchmarks/results/parts/evidence.json > evidence.md

The first table is each family's mean VUS-PR (TSB-AD's protocol) per rule and part; the second
chooses a rule on all families but one (the worst family's shortfall against its best single part,
then the mean) and reports it on the family left out.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

Weights = dict[str, float]
Reading = dict[str, np.ndarray]


def series_readings(name: str, arrays: dict, dump: dict, cache: Path | None,
                    probe_on: str = "start") -> dict:
    """{test: part -> contribution, copies: part -> list, labels, copy_labels, kinds, family};
    ``probe_on``: the cheap parts read on the copies are fitted on the rows before the holdout
    (``start``, what the fit does) or on all training rows (``all``: in-sample for them)."""
    if cache is not None and (cache / f"{name}.npz").exists():
        with np.load(cache / f"{name}.npz", allow_pickle=False) as f:
            flat = {k: f[k] for k in f.files}
        return unflatten(flat)
    from madcluster import MADCluster
    from madcluster.score.combination import Combination
    from madcluster.score.evidence import contributions, holdout_start
    from madcluster.score.input_terms import DEFAULT_INPUT_TERMS
    from madcluster.score.parts import FitContext
    from madcluster.score.smoothing import resolve_part_smoothing

    params = MADCluster().get_params()
    widths = resolve_part_smoothing(params["part_smoothing"], params["window_size"])
    rule = "positive-zscore-sum"
    scale_rows = params["series_scale_rows"]
    context = FitContext(params["window_size"], 0)
    train = np.asarray(arrays["train"], dtype=np.float32)
    test = np.asarray(arrays["test"], dtype=np.float32)
    out: dict = {"family": str(dump["family"]), "labels": np.asarray(dump["labels"]), "test_rows": test}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        final = Combination.fit(DEFAULT_INPUT_TERMS, train, dump["own_train"], context, {}, widths,
                                rule, scale_rows)
        out["test"] = contributions(final, test, dump["own_test"])
        start = holdout_start(len(train), int(dump["n_validation"]), params["window_size"])
        copies = sorted({k.split("/")[0] for k in dump if k.startswith("copy")})
        out["copies"] = {p: [] for p in out["test"]}
        out["copy_labels"], out["kinds"], out["starts"], out["ends"] = [], [], [], []
        if start is not None and copies:
            probe = final if probe_on == "all" else Combination.fit(
                DEFAULT_INPUT_TERMS, train[:start], dump["own_train"][:start], context, {}, widths,
                rule, scale_rows)
            for c in copies:
                values = contributions(probe, dump[f"{c}/rows"], dump[f"{c}/own"])
                for p, v in values.items():
                    out["copies"][p].append(v)
                out["copy_labels"].append(dump[f"{c}/labels"])
                out["kinds"].append(dump[f"{c}/kinds"])
                out["starts"].append(dump[f"{c}/starts"])
                out["ends"].append(dump[f"{c}/ends"])
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(cache / f"{name}.npz", **flatten(out))
    return out


def flatten(out: dict) -> dict[str, np.ndarray]:
    flat = {"family": np.asarray(out["family"]), "labels": out["labels"], "test_rows": out["test_rows"]}
    for p, v in out["test"].items():
        flat[f"test/{p}"] = v
    for p, vs in out["copies"].items():
        for i, v in enumerate(vs):
            flat[f"copies/{p}/{i}"] = v
    for key in ("copy_labels", "kinds", "starts", "ends"):
        for i, v in enumerate(out[key]):
            flat[f"{key}/{i}"] = v
    return flat


def unflatten(flat: dict[str, np.ndarray]) -> dict:
    out: dict = {"family": str(flat["family"]), "labels": flat["labels"], "test_rows": flat["test_rows"],
                 "test": {}, "copies": {}, "copy_labels": [], "kinds": [], "starts": [], "ends": []}
    def order(key: str) -> tuple[str, int]:
        head, _, tail = key.rpartition("/")
        return (head, int(tail)) if tail.isdigit() else (key, 0)

    for key in sorted(flat, key=order):
        parts = key.split("/")
        if parts[0] == "test" and len(parts) == 2:
            out["test"][parts[1]] = flat[key]
        elif parts[0] == "copies":
            out["copies"].setdefault(parts[1], []).append(flat[key])
        elif parts[0] in ("copy_labels", "kinds", "starts", "ends"):
            out[parts[0]].append(flat[key])
    return out


# ---------------------------------------------------------------------------------------- rules
#: The weights by column kind as they were chosen before this study's last table: the discrete
#: end (which stays) and the continuous end it replaced (written here, so that the tables stay
#: reproducible whatever the library's constants say).
DISCRETE_END: Weights = {"own": 0.5, "kmeans": 1.5, "ar": 1.0, "discord": 0.5}
FORMER_CONTINUOUS_END: Weights = {"own": 0.5, "kmeans": 1.5, "ar": 2.0, "discord": 1.5}


def column_weights(r: dict) -> Weights:
    """The former weights by column kind (``columns (before)``)."""
    from madcluster.score.input_terms import continuous_share

    if "train_rows" not in r:
        return {}
    share = continuous_share(r["train_rows"])
    return {p: low + share * (FORMER_CONTINUOUS_END[p] - low) for p, low in DISCRETE_END.items()}


def copy_precision(r: dict) -> tuple[dict[str, float], float]:
    from madcluster.metrics.pointwise import auc_pr

    labels = np.concatenate(r["copy_labels"]) if r["copy_labels"] else np.zeros(0)
    chance = float(labels.mean()) if len(labels) else 0.0
    return {p: (auc_pr(np.concatenate(v), labels) if len(v) else chance)
            for p, v in r["copies"].items()}, chance


def power_rule(power: float) -> Callable[[dict], Weights | None]:
    def rule(r: dict) -> Weights | None:
        if not r["copy_labels"]:
            return None
        precision, chance = copy_precision(r)
        excess = {n: max(0.0, (p - chance) / (1.0 - chance)) ** power for n, p in precision.items()}
        top = max(excess.values())
        return {n: 2.0 * e / top for n, e in excess.items()} if top > 0 else None
    return rule


GRID = (0.0, 0.5, 1.0, 2.0)


def search_rule(top: int) -> Callable[[dict], Weights | None]:
    """The weights (of a grid) whose combined score ranks the copies' events best; the mean of
    the ``top`` best."""
    def rule(r: dict) -> Weights | None:
        from madcluster.metrics.pointwise import auc_pr

        if not r["copy_labels"]:
            return None
        names = list(r["copies"])
        labels = np.concatenate(r["copy_labels"])
        stacked = np.stack([np.concatenate(r["copies"][p]) for p in names])
        scored = []
        for w in itertools.product(GRID, repeat=len(names)):
            if not any(w):
                continue
            scored.append((auc_pr(np.asarray(w) @ stacked, labels), w))
        scored.sort(key=lambda x: -x[0])
        mean = np.mean([w for _, w in scored[:top]], axis=0)
        return {p: float(v) for p, v in zip(names, mean, strict=True)}
    return rule


def best_part_rule(r: dict) -> Weights | None:
    if not r["copy_labels"]:
        return None
    precision, _ = copy_precision(r)
    best = max(precision, key=precision.get)
    return {p: float(p == best) for p in precision}


def plain_rule(r: dict) -> Weights:
    return {p: 1.0 for p in r["test"]}


def hybrid_rule(power: float) -> Callable[[dict], Weights | None]:
    """The weights by column kind times each part's precision excess over the best's, to the
    ``power`` (what the columns say, corrected by what the holdout shows)."""
    def rule(r: dict) -> Weights | None:
        if not r["copy_labels"]:
            return None
        precision, chance = copy_precision(r)
        excess = {p: max(0.0, (v - chance) / (1 - chance)) for p, v in precision.items()}
        top = max(excess.values())
        if top <= 0:
            return None
        columns = column_weights(r)
        return {p: columns[p] * (excess[p] / top) ** power for p in excess}
    return rule


def veto_rule(base: Callable[[dict], Weights], margin: float) -> Callable[[dict], Weights | None]:
    """``base``'s weights, but 0 for a part whose precision on the copies is within ``margin`` of
    chance (evidence that it does not see this series' injected anomalies); unchanged when that
    would leave no part."""
    def rule(r: dict) -> Weights | None:
        if not r["copy_labels"]:
            return None
        precision, chance = copy_precision(r)
        weights = base(r)
        kept = {p: (w if precision[p] > chance + margin * (1 - chance) else 0.0)
                for p, w in weights.items()}
        return kept if any(kept.values()) else weights
    return rule


def shrunk_rule(share: float) -> Callable[[dict], Weights | None]:
    """``share`` of the evidence's weights (precision^2, best 2) and the rest by column kind."""
    def rule(r: dict) -> Weights | None:
        evidence = power_rule(2)(r)
        if evidence is None:
            return None
        columns = column_weights(r)
        return {p: share * evidence[p] + (1 - share) * columns[p] for p in evidence}
    return rule


def trusted_rule(low: float, high: float) -> Callable[[dict], Weights | None]:
    """``columns x evidence^1``, trusted in proportion to how well the best part finds the
    injected anomalies: the column weights alone while the best part's precision excess is at most
    ``low``, the evidence's fully from ``high`` on, linearly between (weak evidence, where no part
    finds the injected events, says nothing about which part sees the series)."""
    return prior_trusted_rule(column_weights, low, high)


def plain_end_weights(r: dict) -> Weights:
    """Weights by column kind whose all-continuous end is the plain average (every part 1): the
    discrete end as before."""
    from madcluster.score.input_terms import continuous_share

    share = continuous_share(r["train_rows"])
    return {p: low + share * (1.0 - low) for p, low in DISCRETE_END.items()}


def prior_trusted_rule(prior: Callable[[dict], Weights], low: float, high: float
                       ) -> Callable[[dict], Weights | None]:
    """:func:`trusted_rule` on another prior."""
    def rule(r: dict) -> Weights | None:
        if not r["copy_labels"]:
            return None
        precision, chance = copy_precision(r)
        excess = {p: max(0.0, (v - chance) / (1 - chance)) for p, v in precision.items()}
        top = max(excess.values())
        if top <= 0:
            return None
        trust = min(1.0, max(0.0, (top - low) / (high - low)))
        base = prior(r)
        return {p: base[p] * (1 - trust + trust * excess[p] / top) for p in excess}
    return rule


def floor_rule(floor: float) -> Callable[[dict], Weights | None]:
    """``columns x evidence^1`` with no part's factor below ``floor``."""
    def rule(r: dict) -> Weights | None:
        weights = hybrid_rule(1)(r)
        if weights is None:
            return None
        columns = column_weights(r)
        return {p: max(w, floor * columns[p]) for p, w in weights.items()}
    return rule


def kind_balanced_rule(
    floor: float, power: float = 1.0, trusted: tuple[float, float] | None = None
) -> Callable[[dict], Weights | None]:
    """The plain end times each part's evidence counted per injected kind, not pooled: per kind
    that some part finds (best excess at least ``floor``), the part's excess over the best
    part's, averaged over those kinds, to the ``power``, over the best part's average. A part
    that alone finds a rare kind (the discord part's shapes) then counts as much as one finding
    the long, easy kinds every part finds. ``trusted``: as :func:`prior_trusted_rule`, by the
    best part's pooled excess."""
    def rule(r: dict) -> Weights | None:
        if not r["copy_labels"]:
            return None
        trust = 1.0
        if trusted is not None:
            precision, chance = copy_precision(r)
            top = max(max(0.0, (v - chance) / (1 - chance)) for v in precision.values())
            trust = min(1.0, max(0.0, (top - trusted[0]) / (trusted[1] - trusted[0])))
        excess = per_kind_excess(r)
        kinds = sorted({k for k, _ in excess})
        parts = list(r["copies"])
        found = [k for k in kinds if max(excess[(k, p)] for p in parts) >= floor]
        if not found:
            return None
        evidence = {p: float(np.mean([max(0.0, excess[(k, p)]) / max(excess[(k, q)] for q in parts)
                                      for k in found])) ** power for p in parts}
        top = max(evidence.values())
        base = plain_end_weights(r)
        if top <= 0:
            return None
        return {p: base[p] * (1 - trust + trust * evidence[p] / top) for p in parts}
    return rule


def tail_rule(q: float, power: float = 1.0, clip: float = 1e9, only: tuple[str, ...] = (),
              down_only: bool = False) -> Callable[[dict], Weights | None]:
    """Table 6: the plain end's weights times (the median part's false-alarm tail / this part's)
    ^ ``power``, clipped to ``[1/clip, clip]``; a part's tail is the ``q`` quantile of its
    contributions on held-out normal rows (``r["tail_rows"]``, :func:`copies_tail` or
    :func:`holdout_tail`): every part then fires about as often on normal rows it did not fit."""
    def rule(r: dict) -> Weights | None:
        tails = r.get("tail_rows") or {}
        base = plain_end_weights(r)
        if not tails or any(len(v) == 0 for v in tails.values()):
            return base  # too few rows held out: the default's weights
        t = {p: float(np.quantile(v, q)) for p, v in tails.items()}
        middle = float(np.median(list(t.values())))
        high = 1.0 if down_only else clip
        return {p: base[p] * (float(np.clip(middle / max(t[p], 1e-9), 1 / clip, high)) ** power
                              if not only or p in only else 1.0)
                for p in t}
    return rule


def copies_tail(r: dict, pad: int) -> dict[str, np.ndarray]:
    """Each part's contributions on the injected copies' rows at least ``pad`` rows from any
    event (the copies read by parts fitted before the holdout: ``--probe-on start``)."""
    out: dict[str, list[np.ndarray]] = {p: [] for p in r["copies"]}
    for i, labels in enumerate(r["copy_labels"]):
        keep = np.ones(len(labels), dtype=bool)
        for at in np.flatnonzero(labels):
            keep[max(0, at - pad) : at + pad + 1] = False
        for p, values in out.items():
            values.append(r["copies"][p][i][keep])
    return {p: np.concatenate(v) for p, v in out.items() if v}


def holdout_tail(name: str, dump: dict, train: np.ndarray, cache: Path) -> dict[str, np.ndarray]:
    """Each part's contributions on the held-out training rows themselves, read as one fresh
    series by the parts fitted on the rows before them (no injection; cached per series)."""
    path = cache / f"{name}.npz"
    if path.exists():
        with np.load(path) as f:
            return {k: f[k] for k in f.files if k != "start"}
    from madcluster import MADCluster
    from madcluster.score.combination import Combination
    from madcluster.score.evidence import contributions, holdout_start
    from madcluster.score.input_terms import DEFAULT_INPUT_TERMS
    from madcluster.score.parts import FitContext
    from madcluster.score.smoothing import resolve_part_smoothing

    params = MADCluster().get_params()
    window = params["window_size"]
    start = holdout_start(len(train), int(dump["n_validation"]), window)
    out: dict[str, np.ndarray] = {}
    if start is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            probe = Combination.fit(
                DEFAULT_INPUT_TERMS, train[:start], dump["own_train"][:start],
                FitContext(window, 0), {}, resolve_part_smoothing(params["part_smoothing"], window),
                "positive-zscore-sum", params["series_scale_rows"])
            out = contributions(probe, train[start:], dump["own_train"][start:])
    cache.mkdir(parents=True, exist_ok=True)
    np.savez(path, start=np.asarray(-1 if start is None else start), **out)
    return out


def peak_rule(measure: str, power: float, rows: int | None) -> Callable[[dict], Weights | None]:
    """Table 7: the plain end's weights times each part's peakedness on the *scored* series
    (``"q999/q90"`` or ``"max/q90"`` of its contributions; on the first ``rows`` steps, what a
    stream can read, or the whole series) over the median part's, to the ``power``, clipped to
    [1/3, 3]: an internal measure, no labels and no holdout."""
    def rule(r: dict) -> Weights | None:
        base = plain_end_weights(r)
        peaks = {}
        for p, v in r["test"].items():
            v = v[:rows] if rows else v
            top = v.max() if measure == "max/q90" else np.quantile(v, 0.999)
            peaks[p] = float(top / (np.quantile(v, 0.9) + 1e-3))
        middle = float(np.median(list(peaks.values())))
        if not np.isfinite(middle) or middle <= 0:
            return base
        return {p: base[p] * float(np.clip(peaks[p] / middle, 1 / 3, 3)) ** power for p in peaks}
    return rule


def order_rule(low: float, high: float, share: float = 1.0) -> Callable[[dict], Weights | None]:
    """Table 8: the plain end times each part's precision excess on the whole-row events alone
    (``reorder``, ``transplant``: the rows normal, their order not) over the best part's, trusted
    as :func:`prior_trusted_rule` by the best part's excess there; ``share`` < 1 mixes that
    factor with the pooled one of every kind (``share`` of the order factor)."""
    def rule(r: dict) -> Weights | None:
        excess = per_kind_excess(r)
        parts = list(r["copies"])
        order = {p: float(np.mean([max(0.0, excess[(k, p)]) for k in ("reorder", "transplant")
                                   if (k, p) in excess] or [0.0])) for p in parts}
        top = max(order.values(), default=0.0)
        if top <= 0:
            return None
        trust = min(1.0, max(0.0, (top - low) / (high - low)))
        factor = {p: 1 - trust + trust * order[p] / top for p in parts}
        if share < 1:
            pooled = prior_trusted_rule(lambda _: {p: 1.0 for p in parts}, 0.6, 0.8)(r) or {}
            factor = {p: share * factor[p] + (1 - share) * pooled.get(p, 1.0) for p in parts}
        base = plain_end_weights(r)
        return {p: base[p] * factor[p] for p in parts}
    return rule


TAIL_SHAPES = {"": (1.0, 1e9), ", clip 3": (1.0, 3.0), ", clip 2": (1.0, 2.0), ", sqrt": (0.5, 1e9)}


RULES: dict[str, Callable[[dict], Weights | None]] = {
    "columns (before)": column_weights,
    "plain average": plain_rule,
    "evidence: best part": best_part_rule,
    **{f"evidence: precision^{g:g}": power_rule(g) for g in (0.5, 1, 2, 4)},
    **{f"evidence: search top {k}": search_rule(k) for k in (1, 5, 20)},
    **{f"columns x evidence^{g:g}": hybrid_rule(g) for g in (1, 2, 4)},
    **{f"{a:g} evidence + {1 - a:g} columns": shrunk_rule(a) for a in (0.5,)},
    **{f"columns, veto within {m:g}": veto_rule(column_weights, m) for m in (0.02, 0.05, 0.1)},
    **{f"plain, veto within {m:g}": veto_rule(plain_rule, m) for m in (0.02, 0.05, 0.1)},
    "columns, plain at the continuous end (now)": plain_end_weights,
    **{f"plain end x evidence, trusted {a:g}-{b:g}": prior_trusted_rule(plain_end_weights, a, b)
       for a, b in ((0.5, 0.7), (0.6, 0.8))},
    **{f"columns x evidence, floor {f:g}": floor_rule(f) for f in (0.25, 0.5)},
    **{f"plain end x per-kind evidence, floor {f:g}^{g:g}": kind_balanced_rule(f, g)
       for f in (0.1, 0.25) for g in (1, 2)},
    "plain end x per-kind evidence, floor 0.1, trusted 0.6-0.8": kind_balanced_rule(
        0.1, 1, (0.6, 0.8)),
    **{f"columns x evidence, trusted {a:g}-{b:g}": trusted_rule(a, b)
       for a, b in ((0.3, 0.5), (0.4, 0.6), (0.5, 0.6), (0.5, 0.7), (0.55, 0.65), (0.6, 0.7))},
    **{f"tail q{q:g}{shape}": tail_rule(q, *TAIL_SHAPES[shape])
       for q in (0.9, 0.95, 0.98, 0.99, 0.995) for shape in TAIL_SHAPES},
    **{f"tail-{who} q{q:g}{shape}{', down only' if down else ''}": tail_rule(
        q, *TAIL_SHAPES[shape], only=parts, down_only=down)
       for who, parts in (("ar", ("ar",)), ("all", ())) for q in (0.95, 0.98, 0.99)
       for shape in (", clip 3", ", sqrt") for down in (True, False) if who == "ar" or down},
    **{f"order evidence, trusted {a:g}-{b:g}{', half' if h < 1 else ''}": order_rule(a, b, h)
       for a, b in ((0.0, 0.2), (0.1, 0.3), (0.2, 0.4)) for h in (1.0, 0.5)},
    **{f"peak {m}^{g:g}, {'first 3000' if n else 'whole series'}": peak_rule(m, g, n)
       for m in ("q999/q90", "max/q90") for g in (0.5, 1) for n in (None, 3000)},
}


#: Rules to evaluate (substrings of their names; all when empty): ``--rules``.
ONLY: list[str] = []


def vus_pr(score: np.ndarray, labels: np.ndarray, rows: np.ndarray) -> float:
    from madcluster.metrics.tsbad import tsbad_vus

    return float(tsbad_vus(score, labels, rows)[1])


def evaluate(r: dict) -> dict[str, float]:
    """VUS-PR of each part alone and of each rule's score on one series, and of the average of
    the parts' ranks on the series (another transform: TSB-AutoAD's kind of ensemble)."""
    row = {f"part: {p}": vus_pr(v, r["labels"], r["test_rows"]) for p, v in r["test"].items()}
    ranks = [np.argsort(np.argsort(v, kind="stable"), kind="stable") for v in r["test"].values()]
    row["rank average"] = vus_pr(np.mean(ranks, axis=0), r["labels"], r["test_rows"])
    if not ONLY or any(o in "largest part, two largest parts" for o in ONLY):
        # other combiners of the same positive terms: the largest part's, the two largest's sum
        stacked = np.sort(np.stack(list(r["test"].values())), axis=0)
        row["largest part"] = vus_pr(stacked[-1], r["labels"], r["test_rows"])
        row["two largest parts"] = vus_pr(stacked[-2:].sum(axis=0), r["labels"], r["test_rows"])
    for name, rule in RULES.items():
        if ONLY and name not in ONLY and not any(o in name for o in ONLY):
            continue
        w = rule(r) or column_weights(r)
        score = sum(w.get(p, 1.0) * v for p, v in r["test"].items())
        row[name] = vus_pr(score, r["labels"], r["test_rows"])
    return row


def family_means(table: dict[str, dict[str, float]], families: dict[str, str]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, list[float]]] = {}
    for name, row in table.items():
        for k, v in row.items():
            out.setdefault(k, {}).setdefault(families[name], []).append(v)
    return {k: {f: float(np.mean(v)) for f, v in fams.items()} for k, fams in out.items()}


def shortfall(means: dict[str, dict[str, float]], rule: str, fams: list[str]) -> float:
    """The worst family's shortfall of ``rule`` against that family's best single part."""
    parts = [k for k in means if k.startswith("part: ")]
    return min(means[rule][f] - max(means[p][f] for p in parts) for f in fams)


def per_kind_excess(r: dict) -> dict[tuple[str, str], float]:
    """Per (kind, part): the part's precision excess over chance on the copies' events of that
    kind alone (the other events' rows left out), where the pooled precision the weights read is
    dominated by the long, easy kinds."""
    from madcluster.metrics.pointwise import auc_pr

    out = {}
    for kind in kinds_present(r):
        labels, kept = [], []
        for i, copy_labels in enumerate(r["copy_labels"]):
            label, keep = np.zeros(len(copy_labels)), np.ones(len(copy_labels), dtype=bool)
            for k, start, end in zip(r["kinds"][i], r["starts"][i], r["ends"][i], strict=True):
                if str(k) == kind:
                    label[start:end] = 1
                else:
                    keep[start:end] = False
            labels.append(label[keep])
            kept.append(keep)
        y = np.concatenate(labels) if labels else np.zeros(0)
        if y.sum() == 0:
            continue
        for p, values in r["copies"].items():
            x = np.concatenate([v[k] for v, k in zip(values, kept, strict=True)])
            out[(kind, p)] = (auc_pr(x, y) - y.mean()) / (1 - y.mean())
    return out


def kinds_present(r: dict) -> list[str]:
    """The injected kinds of a reading's copies: the fit's eight in their order, then any other
    (the whole-row kinds of ``fit_dump.py --kinds``)."""
    from madcluster.score.injection import KINDS

    seen = {str(k) for kinds in r["kinds"] for k in kinds}
    return [k for k in KINDS if k in seen] + sorted(seen - set(KINDS))


def per_kind_table(cache: Path) -> str:
    """Each family's mean :func:`per_kind_excess`, a row per kind, a column per part."""
    found: dict[str, dict[tuple[str, str], list[float]]] = {}
    kinds: list[str] = []
    for path in sorted(cache.glob("*.npz")):
        with np.load(path, allow_pickle=False) as f:
            r = unflatten({k: f[k] for k in f.files})
        if r["copy_labels"]:
            kinds += [k for k in kinds_present(r) if k not in kinds]
            for key, v in per_kind_excess(r).items():
                found.setdefault(r["family"], {}).setdefault(key, []).append(v)
    parts = sorted({p for fam in found.values() for _, p in fam})
    lines = ["| family | kind | " + " | ".join(parts) + " |", "|---|---|" + "---|" * len(parts)]
    for fam in sorted(found):
        for kind in kinds:
            cells = [found[fam].get((kind, p)) for p in parts]
            lines.append(f"| {fam} | {kind} | " + " | ".join(
                f"{np.mean(c):.2f}" if c else "" for c in cells) + " |")
    return "\n".join(lines)


def diagnose(cache: Path, families: list[str]) -> str:
    """Per series of ``families``: each part's median contribution on the anomaly rows and its
    99th percentile on the normal rows (at least 50 rows from any anomaly), from the cached test
    contributions: which part adds only false alarms to the sum."""
    lines = ["| series | part | median on anomalies | q .99 on normal rows |", "|---|---|---|---|"]
    for path in sorted(cache.glob("*.npz")):
        if not any(path.stem.startswith(f"{f}-") for f in families):
            continue
        with np.load(path, allow_pickle=False) as f:
            r = unflatten({k: f[k] for k in f.files})
        anomaly = r["labels"].astype(bool)
        normal = np.convolve(anomaly, np.ones(101), "same") == 0
        for p, v in r["test"].items():
            lines.append(f"| {path.stem} | {p} | {np.median(v[anomaly]):.2f} | "
                         f"{np.quantile(v[normal], 0.99):.2f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", required=True)
    parser.add_argument("--dumps", required=True)
    parser.add_argument("--cache")
    parser.add_argument("--json")
    parser.add_argument("--cached-only", action="store_true", help="only series already cached")
    parser.add_argument("--series-from", help="only the series cached in this folder")
    parser.add_argument("--sampled-discord", action="store_true",
                        help="the discord part as before it was exact (SampledDiscord)")
    parser.add_argument("--probe-on", choices=("start", "all"), default="start",
                        help="the cheap parts read on the copies: fitted before the holdout (the "
                             "fit's) or on all training rows")
    parser.add_argument("--names", nargs="*", default=[],
                        help="only the series whose names contain one of these")
    parser.add_argument("--rules", nargs="*", default=[],
                        help="evaluate only the rules whose names contain one of these")
    parser.add_argument("--tail-from", choices=("copies", "holdout"), default="copies",
                        help="the tail rules' normal rows: the copies away from their events "
                             "(--pad rows), or the held-out rows themselves (--holdout-cache)")
    parser.add_argument("--pad", type=int, default=20)
    parser.add_argument("--holdout-cache", default="holdout_tail")
    parser.add_argument("--diagnose", nargs="*", metavar="FAMILY",
                        help="only each part's contribution on these families' anomaly and "
                             "normal rows, from the cached readings (--cache)")
    parser.add_argument("--per-kind", action="store_true",
                        help="only each family's precision excess per injected kind and part, "
                             "from the cached readings (--cache)")
    args = parser.parse_args()
    ONLY.extend(args.rules)
    if args.diagnose:
        print(diagnose(Path(args.cache), args.diagnose))
        return
    if args.per_kind:
        print(per_kind_table(Path(args.cache)))
        return
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: benchlib
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/studies/: lib
    from lib import bundle_series, generated_series

    if args.sampled_discord:
        from madcluster.score.discord_sampled import SampledDiscord
        from madcluster.score.parts import PART_KINDS

        PART_KINDS["discord"] = SampledDiscord
    arrays = dict(bundle_series(args.bundle, None))
    arrays.update({n: a for n, a in generated_series(None) if n not in arrays})
    table, families = {}, {}
    for path in sorted(Path(args.dumps).glob("*.npz")):
        name = path.stem
        if args.cached_only and not (Path(args.cache) / f"{name}.npz").exists():
            continue
        if args.names and not any(n in name for n in args.names):
            continue
        if args.series_from and not (Path(args.series_from) / f"{name}.npz").exists():
            continue
        with np.load(path) as f:
            dump = {k: f[k] for k in f.files}
        fitted = ({"train": dump["train"], "test": dump["test"]} if "train" in dump
                  else arrays[name])
        r = series_readings(name, fitted, dump, Path(args.cache) if args.cache else None,
                            args.probe_on)
        r["train_rows"] = np.asarray(fitted["train"])
        if any(o.startswith("tail") for o in ONLY):
            r["tail_rows"] = (copies_tail(r, args.pad) if args.tail_from == "copies" else
                              holdout_tail(name, dump, np.asarray(fitted["train"], dtype=np.float32),
                                           Path(args.holdout_cache)))
        table[name], families[name] = evaluate(r), r["family"]
        print(f"{name}: " + ", ".join(f"{k}={v:.3f}" for k, v in table[name].items()), file=sys.stderr)
    report(table, families)
    if args.json:
        Path(args.json).write_text(json.dumps({"vus_pr": table, "family": families}, indent=1))


def report(table: dict[str, dict[str, float]], families: dict[str, str]) -> None:
    means = family_means(table, families)
    fams = sorted(set(families.values()))
    tsbad = [n for n, f in families.items() if f.startswith("tsbad")]
    print("| rule | " + " | ".join(fams) + " | 46 TSB-AD | worst shortfall |")
    print("|---" * (len(fams) + 3) + "|")
    for k in means:
        all46 = np.mean([table[n][k] for n in tsbad]) if tsbad else float("nan")
        worst = "" if k.startswith("part: ") else f"{shortfall(means, k, fams):+.3f}"
        print(f"| {k} | " + " | ".join(f"{means[k][f]:.3f}" for f in fams) + f" | {all46:.3f} | {worst} |")
    print("\nLeft out in turn: the rule chosen on the other families (best worst-family shortfall, "
          "then mean), and on the family left out its mean, its best single part and the shortfall.\n")
    print("| left out | chosen | its VUS-PR | best part | shortfall | columns before |")
    print("|---|---|---|---|---|---|")
    rules = [k for k in means if not k.startswith("part: ")]
    parts = [k for k in means if k.startswith("part: ")]
    for f in fams:
        others = [g for g in fams if g != f]
        chosen = max(rules, key=lambda k: (round(shortfall(means, k, others), 3),
                                             np.mean([means[k][g] for g in others])))
        best = max(parts, key=lambda p: means[p][f])
        print(f"| {f} | {chosen} | {means[chosen][f]:.3f} | {best[6:]} {means[best][f]:.3f} | "
              f"{means[chosen][f] - means[best][f]:+.3f} | {means.get('columns (before)', {}).get(f, float('nan')):.3f} |")


if __name__ == "__main__":
    main()
