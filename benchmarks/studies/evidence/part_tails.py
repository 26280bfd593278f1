"""Tables 9 and 11 of ``benchmarks/results/parts/evidence.md``: the parts' readings changed
before they are summed (their tails made alike; the AR part's error read against its state),
against the default's z-scores, on every development series.

Why: on the three families short of their best part the next-step (AR) part adds only false
alarms (its q .99 contribution on normal rows 2.8-6.7, its median on anomaly rows 0-1). Its
reading is a mean *squared* error, whose z-scores have a far heavier upper tail than the other
parts'; a part whose normal rows reach z = 6 outvotes one whose anomalies reach z = 4. Three
readings that change only that, no label and no new fit:

* ``sqrt-ar``: the AR part's reading through a square root (an RMS error) before it is
  standardised;
* ``normal-ar``: the AR part's reading mapped to the normal score of its training reading's
  empirical distribution, an exponential tail beyond its 0.9 quantile (its normal rows then reach
  about z = 2.3 at q .99, whatever its tail was);
* ``normal-all``: every part's reading so;
* ``excess q`` (table 10, ``../../results/parts/tail_excess.md``): the rule
  :class:`~madcluster.score.rules.TailExcessSum` at the quantile q: each part's z-score less its
  training reading's q quantile (at least 0), plus ``BELOW`` of its positive z-score;
* ``discord w`` (table 12, ``evidence.md``): the discord part weighing ``w`` at the continuous
  end of the weights by column kind (the discrete end's .5 unchanged, linear between by the
  series' share of continuous columns): 1 was the default before table 12, 2.5 after it (``z``
  is the default the cache was made with);
* ``few-valued q`` (table 13, ``evidence.md``): the rule
  :class:`~madcluster.score.rules.FewValuedTailExcessSum` at the quantile q (the default's at
  .99): each part's term ``f`` of the tail excess's and ``1 - f`` of its positive z-score, ``f``
  the series' share of few-valued columns (on series whose columns are all continuous, the
  positive sum);
* ``vol-ar`` (table 11, ``evidence.md``): the AR part refitted so that each column's squared
  error is divided by the error the training rows show *in that state*: a ridge of the training
  squared errors on the absolute values of the lags (``signed``: and the lags themselves), its
  prediction clipped to [``floor`` x the column's mean training error, its own q .99 on the
  training rows] (:func:`volatility_ar`). Service metrics whose noise grows with their level, or
  a plant whose pumps add noise while they run, then stop paging the busy hours; a floor of 1
  only ever damps. Needs the training rows (``--bundle`` where a dump lacks them); cached beside
  the part readings.

Each is then standardised with its training reading's mean and deviation, weighted by column kind,
divided by its series scale and summed positively (``z`` reproduces the default's score, the
positive sum: checked against it per series). Reads the dumps of ``fit_dump.py``
(the network's own scores and each series' rows) and refits the cheap parts as the default fits
them (the cache keeps each series' part readings: later readings need no refit).

    python benchmarks/studies/evidence/part_tails.py --dumps DUMPS --cache CACHE_TAILS \\
        --bundle BUNDLE.npz --json benchmarks/results/parts/evidence_table11_volatility.json
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/studies/: lib

EXCESS_QUANTILES = (0.9, 0.95, 0.98, 0.99, 0.995)
VOLATILITY = {"vol-ar": (False, 1.0), "vol-ar signed 0.6": (True, 0.6)}  # (signed, floor)
DISCORD_WEIGHTS = (1.0, 1.5, 2.0, 2.5, 3.0)  # the discord part's weight at the continuous end
FEW_VALUED_QUANTILES = (0.95, 0.98, 0.99)  # the tail of the few-valued columns' excess (table 13)
READINGS = (
    "z", "sqrt-ar", "normal-ar", "normal-all", *(f"excess {q:g}" for q in EXCESS_QUANTILES),
    *VOLATILITY, *(f"{v} + excess 0.98" for v in VOLATILITY),
    *(f"discord {w:g}" for w in DISCORD_WEIGHTS), "discord 2.5 + vol-ar",
    *(f"discord 2.5 + few-valued {q:g}" for q in FEW_VALUED_QUANTILES),
)
TAIL_Q = 0.9
TSBAD = ("tsbad-MSL", "tsbad-SMAP", "tsbad-SMD")


def part_readings(dump_path: Path, cache: Path) -> dict[str, np.ndarray]:
    """One series' final readings of each part on its test rows, its parts' training readings
    (as the statistics read them), weights, labels and the default's score; cached."""
    out = cache / dump_path.name
    if out.exists():
        with np.load(out) as f:
            return {k: f[k] for k in f.files}
    from madcluster import MADCluster
    from madcluster.score.combination import Combination
    from madcluster.score.input_terms import continuous_share, default_part_weights
    from madcluster.score.parts import FitContext
    from madcluster.score.smoothing import resolve_part_smoothing

    params = MADCluster().get_params()
    widths = resolve_part_smoothing(params["part_smoothing"], params["window_size"])
    with np.load(dump_path) as f:
        dump = {k: f[k] for k in f.files}
    train = np.asarray(dump["train"], dtype=np.float32)
    test = np.asarray(dump["test"], dtype=np.float32)
    weights = default_part_weights(continuous_share(train))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = Combination.fit(
            ("kmeans", "ar", "discord"),
            train,
            dump["own_train"],
            FitContext(params["window_size"], 0),
            weights,
            widths,
            "positive-zscore-sum",
            params["series_scale_rows"],
        )
        read = c.readings(test, dump["own_test"])
        arrays = {
            "labels": dump["labels"],
            "test": test,
            "family": dump["family"],
            "default": c.score(test, dump["own_test"]),
            "scale_rows": np.asarray(c.scale_rows),
        }
        for p in c.parts:
            arrays[f"read/{p.name}"] = read[p.name]
            arrays[f"ref/{p.name}"] = p.bind(dump["own_train"]).reference_values(train)
            arrays[f"w/{p.name}"] = np.asarray(c.weights[p.name])
    cache.mkdir(parents=True, exist_ok=True)
    np.savez(out, **arrays)
    return arrays


def volatility_ar(train: np.ndarray, rows: np.ndarray, signed: bool, floor: float) -> np.ndarray:
    """The AR part's values of ``rows`` with each column's squared error over the error the
    training rows show in that state (module docstring, ``vol-ar``), before smoothing."""
    from madcluster.score.autoregressive import AutoRegressive, lagged

    part = AutoRegressive.fit(train)
    if len(part.columns) == 0:
        return np.zeros(len(rows))

    def errors(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        z = part.standardise(x)
        a = lagged(z, part.lags)
        lags = a[:, :-1]
        features = np.hstack([lags] * signed + [np.abs(lags), np.ones((len(a), 1))])
        return (a @ part.coef - z) ** 2, features

    e2, features = (x[part.lags :] for x in errors(train))
    mean_error = np.maximum(e2.mean(axis=0), 1e-6)
    gram = features.T @ features + np.eye(features.shape[1])
    coef = np.linalg.solve(gram, features.T @ e2)
    low = floor * mean_error
    high = np.maximum(np.quantile(features @ coef, 0.99, axis=0), low)
    e2, features = errors(rows)
    values = (e2 / np.clip(features @ coef, low, high)).mean(axis=1)
    values[: part.lags] = 1.0  # no full history: no evidence either way
    return values


def volatility_readings(name: str, arrays: dict, bundle: dict, cache: Path) -> dict:
    """``arrays`` with each ``vol-ar`` reading's AR read and reference (``vol/<reading>/``),
    smoothed as the default smooths the AR part; cached."""
    from madcluster import MADCluster
    from madcluster.score.smoothing import centred_means, resolve_part_smoothing

    out = cache / f"{name}.volatility.npz"
    if not out.exists():
        params = MADCluster().get_params()
        width = resolve_part_smoothing(params["part_smoothing"], params["window_size"])["ar"]
        train = np.asarray(bundle[name]["train"], dtype=np.float32)
        test = np.asarray(arrays["test"], dtype=np.float32)
        found = {}
        for reading, (signed, floor) in VOLATILITY.items():
            for key, x in (("read", test), ("ref", train)):
                found[f"vol/{reading}/{key}"] = centred_means(
                    volatility_ar(train, x, signed, floor), width
                )
        np.savez(out, **found)
    with np.load(out) as f:
        return {**arrays, **{k: f[k] for k in f.files}}


def normal_scores(values: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """The normal score of ``values`` under ``reference``'s empirical distribution, beyond its
    :data:`TAIL_Q` quantile an exponential tail fitted to its excesses there."""
    from scipy.stats import norm

    ref = np.sort(reference[np.isfinite(reference)])
    upper = 1.0 - np.searchsorted(ref, values, side="right") / (len(ref) + 1)
    q = float(np.quantile(ref, TAIL_Q))
    excess = max(float(np.mean(ref[ref > q] - q)) if np.any(ref > q) else 0.0, 1e-12)
    tail = (1.0 - TAIL_Q) * np.exp(-(values - q) / excess)
    upper = np.clip(np.where(values > q, tail, upper), 1e-300, 1.0 - 1.0 / (len(ref) + 1))
    return norm.isf(upper)


def total(arrays: dict[str, np.ndarray], reading: str) -> np.ndarray:
    """The series' score with the parts read as ``reading`` says (module docstring)."""
    from madcluster.score.combination import mean_std, series_scale
    from madcluster.score.rules import TailExcessSum

    if reading.startswith("discord "):
        from madcluster.score.input_terms import DISCRETE_PART_WEIGHTS

        weight, *rest = reading[len("discord ") :].split(" + ")
        low = DISCRETE_PART_WEIGHTS["discord"]
        discord = low + float(arrays["share"]) * (float(weight) - low)
        return total({**arrays, "w/discord": np.asarray(discord)}, rest[0] if rest else "z")
    volatility = reading.split(" + ")[0]
    if volatility in VOLATILITY:
        swapped = {"read/ar": arrays[f"vol/{volatility}/read"], "ref/ar": arrays[f"vol/{volatility}/ref"]}
        rest = reading.split(" + ")[1:]
        return total({**arrays, **swapped}, rest[0] if rest else "z")
    terms = []
    for key in [k for k in arrays if k.startswith("read/")]:
        name = key.split("/", 1)[1]
        values, ref = arrays[key], arrays[f"ref/{name}"]
        if reading == "sqrt-ar" and name == "ar":
            values, ref = np.sqrt(np.maximum(values, 0.0)), np.sqrt(np.maximum(ref, 0.0))
        if reading == "normal-all" or (reading == "normal-ar" and name == "ar"):
            values, ref = normal_scores(values, ref), normal_scores(ref, ref)
        mean, std = mean_std(ref)
        z = (values - mean) / std
        scale = series_scale(z[: int(arrays["scale_rows"])])
        if reading.startswith("excess "):  # the rule at this quantile
            rule = TailExcessSum(float(reading.split()[1]))
            z = rule.part(values, rule.statistics(ref), 1.0)
        if reading.startswith("few-valued "):  # its excess in the share of few-valued columns
            rule = TailExcessSum(float(reading.split()[1]), excess=1.0 - float(arrays["share"]))
            z = rule.part(values, rule.statistics(ref), 1.0)
        terms.append(float(arrays[f"w/{name}"]) * np.maximum(z, 0.0) / scale)
    return np.sum(terms, axis=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dumps", required=True, help="fit_dump.py's folder")
    parser.add_argument("--cache", required=True, help="folder of each series' part readings")
    parser.add_argument("--bundle", default=None, help="dev_bundle.py's file (training rows)")
    parser.add_argument("--json", default=None)
    parser.add_argument(
        "--pairs", action="store_true", help="also every two parts alone, each weighing 1"
    )
    args = parser.parse_args()
    from lib import read_bundle

    from madcluster.metrics.tsbad import tsbad_vus
    from madcluster.score.input_terms import continuous_share

    bundle = read_bundle(args.bundle) if args.bundle else {}

    table: dict[str, dict[str, float]] = {}
    families: dict[str, str] = {}
    for path in sorted(Path(args.dumps).glob("*.npz")):
        arrays = part_readings(path, Path(args.cache))
        if path.stem not in bundle:
            with np.load(path) as dump:
                bundle[path.stem] = {"train": dump["train"]}
        arrays = volatility_readings(path.stem, arrays, bundle, Path(args.cache))
        arrays["share"] = np.asarray(continuous_share(bundle[path.stem]["train"]))
        z = total(arrays, "z")
        np.testing.assert_allclose(z, arrays["default"], rtol=1e-9, atol=1e-9)

        def vus(score: np.ndarray, arrays: dict = arrays) -> float:
            return float(tsbad_vus(score, arrays["labels"], arrays["test"])[1])

        row = {f"part: {k[5:]}": vus(arrays[k]) for k in arrays if k.startswith("read/")}
        row.update({r: vus(total(arrays, r)) for r in READINGS})
        row.update({f"alone: {v}": vus(arrays[f"vol/{v}/read"]) for v in VOLATILITY})
        if args.pairs:
            row.update({f"pair: {a}+{b}": vus(pair(arrays, a, b)) for a, b in part_pairs(arrays)})
        table[path.stem], families[path.stem] = row, str(arrays["family"])
    print(markdown(table, families))
    if args.json:
        Path(args.json).write_text(json.dumps({"vus_pr": table, "family": families}, indent=1))


def part_pairs(arrays: dict) -> list[tuple[str, str]]:
    """Every two of the series' parts, in their order."""
    names = [k[5:] for k in arrays if k.startswith("read/")]
    return [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]


def pair(arrays: dict, a: str, b: str) -> np.ndarray:
    """The positive sum of the parts ``a`` and ``b`` alone, each weighing 1 (which two parts see
    a family's anomalies together: table 12's probe)."""
    kept = {
        k: (np.asarray(1.0) if k.startswith("w/") else v)
        for k, v in arrays.items()
        if not k.startswith(("read/", "ref/", "w/")) or k.split("/", 1)[1] in (a, b)
    }
    return total(kept, "z")


def family_means(table: dict, families: dict) -> dict[str, dict[str, float]]:
    groups: dict[str, list[dict]] = {}
    for name, row in table.items():
        groups.setdefault(families[name], []).append(row)
        if families[name] in TSBAD:
            groups.setdefault("46 TSB-AD", []).append(row)
    return {
        f: {k: float(np.mean([r[k] for r in rows])) for k in rows[0]}
        for f, rows in sorted(groups.items())
    }


def markdown(table: dict, families: dict) -> str:
    """Each family's mean VUS-PR per reading (its shortfall against the family's best single
    part), then each reading chosen with each family left out (the worst other family's
    shortfall, then the mean)."""
    means = family_means(table, families)
    lines = [
        "| family | best part | " + " | ".join(READINGS) + " |",
        "|---|---|" + "---|" * len(READINGS),
    ]
    short = {}
    for family, m in means.items():
        parts = {k[6:]: v for k, v in m.items() if k.startswith("part: ")}
        best = max(parts, key=parts.get)
        short[family] = {r: m[r] - parts[best] for r in READINGS}
        cells = " | ".join(f"{m[r]:.3f} ({short[family][r]:+.3f})" for r in READINGS)
        lines.append(f"| {family} | {best} {parts[best]:.3f} | {cells} |")
    pairs = sorted({k for m in means.values() for k in m if k.startswith("pair: ")})
    if pairs:
        lines += ["", "| family (two parts alone) | best part | best pair |", "|---|---|---|"]
        for family, m in means.items():
            parts = {k[6:]: v for k, v in m.items() if k.startswith("part: ")}
            best, two = max(parts, key=parts.get), max(pairs, key=lambda k: m.get(k, -1.0))
            lines.append(f"| {family} | {best} {parts[best]:.3f} | {two[6:]} {m[two]:.3f} |")
    alone = ["part: ar", *(f"alone: {v}" for v in VOLATILITY)]
    lines += ["", "| family (the AR part alone) | " + " | ".join(a.split(": ")[1] for a in alone) + " |"]
    lines += ["|---|" + "---|" * len(alone)]
    lines += [f"| {f} | " + " | ".join(f"{m[a]:.3f}" for a in alone) + " |" for f, m in means.items()]
    lines += ["", "| left out | chosen on the others | its shortfall there |", "|---|---|---|"]
    scored = [f for f in short if f != "46 TSB-AD"]
    for family in scored:
        others = [f for f in scored if f != family]
        choice = max(
            READINGS,
            key=lambda r: (
                min(short[f][r] for f in others),
                np.mean([means[f][r] for f in others]),
            ),
        )
        lines.append(f"| {family} | {choice} | {short[family][choice]:+.3f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
