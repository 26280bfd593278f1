"""From task records to one row: per-seed means over entities, then mean / std over seeds.

Works on whatever tasks have finished: a row with missing tasks is still summarised, from the
seeds and entities that are there, and says so (``tasks.complete`` false, counts, failures).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from madcluster.benchmark.schema import ANOMALY_RATIO_NOTE, RESULT_SCHEMA
from madcluster.evaluation.protocols import CONTINUOUS_METRICS, METRICS
from madcluster.evaluation.released_protocol import describe_steps, headline_protocol, is_leak
from madcluster.evaluation.thresholds import PROTOCOLS

if TYPE_CHECKING:
    from madcluster.benchmark.config import BenchmarkConfig
    from madcluster.benchmark.grid import Row

_PER_RUN_KEYS = ("thresholds", "history", "n_scores", "n_params_embedder", "n_params_head")


@dataclass
class BenchmarkResult:
    """One row; ``to_dict()`` is the JSON written to ``<out>/<name>.json``."""

    name: str
    config: BenchmarkConfig
    summary: dict[str, dict[str, Any]]  # protocol -> {"oracle", "label", "description", "metrics"}
    runs: list[dict[str, Any]]  # one per seed
    data: dict[str, Any]
    cost: dict[str, Any]
    provenance: dict[str, Any]
    path: Path | None = None
    tasks: dict[str, Any] | None = None  # expected / done / failed counts and failures

    def metric(self, protocol: str, key: str) -> float:
        """Mean over seeds of one metric under one protocol."""
        return float(self.summary[protocol]["metrics"][key]["mean"])

    @property
    def complete(self) -> bool:
        return self.tasks is None or bool(self.tasks.get("complete", True))

    def _range_on_scores(self) -> dict[str, Any]:
        """With step d: the threshold-independent metrics of the same scores without step d, so one
        run gives the decomposition's columns b and c (the model and scores are the same)."""
        if not self.runs or not all("metrics_on_scores" in r for r in self.runs):
            return {}
        out = {}
        for k in self.runs[0]["metrics_on_scores"]:
            arr = np.array([r["metrics_on_scores"][k] for r in self.runs], dtype=np.float64)
            out[k] = {
                "mean": float(np.nanmean(arr)),
                "std": float(np.nanstd(arr, ddof=1)) if len(arr) > 1 else 0.0,
                "values": arr.tolist(),
            }
        return {"metrics_on_scores": out}

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": RESULT_SCHEMA,
            "name": self.name,
            "dataset": self.data["name"],
            "embedder": self.config.embedder,
            "mode": self.config.mode,
            "per_entity": self.config.per_entity,
            "seeds": [r["seed"] for r in self.runs],
            "command": self.provenance["command"],
            "anomaly_ratio_note": ANOMALY_RATIO_NOTE,
            "protocols": self.summary,
            "headline_protocol": headline_protocol(self.config.released_steps),
            "released_protocol": (
                describe_steps(self.config.released_steps) if self.config.released_steps else None
            ),
            "threshold_independent_metrics": (
                ["auc_roc", "auc_pr"]  # step d: range / VUS come from each threshold's predictions
                if "d" in self.config.released_steps
                else list(CONTINUOUS_METRICS)
            ),
            **self._range_on_scores(),
            "cost": self.cost,
            "data": self.data,
            "settings": self.config.settings(),
            "provenance": self.provenance,
            "tasks": self.tasks,
            "runs": self.runs,
        }


def build_result(
    row: Row, records: dict[str, dict[str, Any]], failures: list[dict[str, Any]], prov: dict
) -> BenchmarkResult:
    """The row from its finished task records (``records``: task key -> record).

    Raises ``ValueError`` when no seed has an evaluated task (nothing to report yet).
    """
    runs = []
    for seed in row.config.seeds:
        entity_runs = [records[t.key] for t in row.tasks if t.seed == seed and t.key in records]
        if any("metrics" in r for r in entity_runs):
            runs.append(seed_record(seed, entity_runs, row.config.per_entity))
    if not runs:
        done = [r for r in records.values()]
        reasons = "; ".join(f"{r['name']}: {r.get('skipped')}" for r in done) or "no task finished"
        raise ValueError(f"{row.name}: no entity could be evaluated: {reasons}")
    expected = len(row.tasks)
    tasks = {
        "expected": expected,
        "done": len(records),
        "failed": len(failures),
        "complete": len(records) == expected,
        "failures": [
            {k: f.get(k) for k in ("key", "name", "seed", "entity", "error")} for f in failures
        ],
    }
    summary = summarise(runs)
    if is_leak(row.config.released_steps):  # every protocol's numbers come from a leaky model
        for entry in summary.values():
            entry["leak"] = True
            entry["label"] += " (LEAK: test set as validation)"
    return BenchmarkResult(
        row.name,
        row.config,
        summary,
        runs,
        dict(row.data),
        cost_summary(runs, records),
        prov,
        tasks=tasks,
    )


def seed_record(seed: int, entity_runs: list[dict[str, Any]], per_entity: bool) -> dict[str, Any]:
    """One seed: the metrics (mean over entities when per-entity) and summed costs."""
    scored = [r for r in entity_runs if "metrics" in r]
    if not scored:
        raise ValueError(
            "no entity could be evaluated: "
            + "; ".join(f"{r['name']}: {r.get('skipped')}" for r in entity_runs)
        )
    # every protocol any entity has: one can be missing where an entity's scores cannot support it
    # (train-pot with ties in the top training scores); its mean is over the entities that have it
    protocols = list(dict.fromkeys(p for r in scored for p in r["metrics"]))
    metrics: dict[str, dict[str, float]] = {}
    for p in protocols:
        metrics[p] = {}
        for k in METRICS:
            values = np.array(
                [_num(r["metrics"][p][k]) if p in r["metrics"] else np.nan for r in scored],
                dtype=np.float64,
            )
            metrics[p][k] = float(np.nanmean(values)) if np.isfinite(values).any() else float("nan")
    timed = [r for r in entity_runs if "train_seconds" in r]
    record: dict[str, Any] = {
        "seed": seed,
        "metrics": metrics,
        **_on_scores(scored),
        "train_seconds": float(sum(r["train_seconds"] for r in timed)),
        "score_seconds": float(sum(r["score_seconds"] for r in timed)),
        "peak_rss_mb": float(max(r["peak_rss_mb"] for r in timed)),
        "n_params": timed[0]["n_params"],
        "macs_per_window": timed[0]["macs_per_window"],
        "macs_method": timed[0]["macs_method"],
    }
    if "history" in timed[0]:
        record["history"] = (
            timed[0]["history"] if not per_entity else _mean_history([r["history"] for r in timed])
        )
    if per_entity:
        nan_aff = {
            p: int(
                sum(
                    1
                    for r in scored
                    if p in r["metrics"] and math.isnan(_num(r["metrics"][p]["aff_precision"]))
                )
            )
            for p in protocols
        }
        record["protocol_missing_entities"] = {
            p: [r["name"] for r in scored if p not in r["metrics"]] for p in protocols
        }
        record["n_entities_scored"] = len(scored)
        record["aff_precision_nan_entities"] = nan_aff  # nothing predicted: left out of the mean
        record["entities"] = [_entity_view(r) for r in entity_runs]
    else:
        record.update({k: v for k, v in entity_runs[0].items() if k in _PER_RUN_KEYS})
    return record


def _on_scores(scored: list[dict[str, Any]]) -> dict[str, Any]:
    """Step d rows: the mean over entities of the range / VUS metrics on the continuous scores."""
    if not all("metrics_on_scores" in r for r in scored):
        return {}
    keys = scored[0]["metrics_on_scores"]
    return {
        "metrics_on_scores": {
            k: float(np.nanmean([_num(r["metrics_on_scores"][k]) for r in scored])) for k in keys
        }
    }


def _mean_history(histories: list[dict[str, Any]]) -> dict[str, float]:
    out = {"epochs_run_mean": float(np.mean([h["epochs_run"] for h in histories]))}
    for key in ("final_nu", "final_radius"):
        if all(key in h for h in histories):
            out[f"{key}_mean"] = float(np.mean([h[key] for h in histories]))
    return out


# bookkeeping of a task record that an entity entry of a row does not repeat
_TASK_ONLY = ("schema", "status", "row", "key", "fingerprint", "seed", "entity")


def _entity_view(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k not in _TASK_ONLY}


def _num(value: Any) -> float:
    """A stored metric as a float (JSON null, i.e. NaN on disk, back to NaN)."""
    return float("nan") if value is None else float(value)


def summarise(runs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per protocol: oracle flag, label, description, and mean / std / values of every metric."""
    summary = {}
    for p in [p for p in runs[0]["metrics"] if all(p in r["metrics"] for r in runs)]:
        proto = PROTOCOLS[p]
        metrics = {}
        for k in METRICS:
            values = [r["metrics"][p][k] for r in runs]
            arr = np.array([_num(v) for v in values], dtype=np.float64)
            ok = arr[np.isfinite(arr)]
            metrics[k] = {
                "mean": float(ok.mean()) if ok.size else float("nan"),
                "std": float(ok.std(ddof=1)) if ok.size > 1 else 0.0,
                "values": values,
            }
        summary[p] = {
            "oracle": proto.oracle,
            "label": f"{p} (ORACLE)" if proto.oracle else p,
            "description": proto.description,
            "metrics": metrics,
        }
    return summary


def cost_summary(runs: list[dict[str, Any]], records: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Parameters, MACs, and mean / std over seeds of time and memory."""

    def stat(key: str) -> dict[str, float]:
        arr = np.array([r[key] for r in runs], dtype=np.float64)
        return {"mean": float(arr.mean()), "std": float(arr.std(ddof=1)) if len(arr) > 1 else 0.0}

    max_rss = [r["process_max_rss_mb"] for r in records.values() if "process_max_rss_mb" in r]
    out = {
        "n_params": runs[0]["n_params"],
        "macs_per_window": runs[0]["macs_per_window"],
        "macs_method": runs[0]["macs_method"],
        "train_seconds": stat("train_seconds"),
        "score_seconds": stat("score_seconds"),
        "peak_rss_mb": stat("peak_rss_mb"),
        "peak_rss_method": (
            "RSS sampled from /proc/self/statm every 10 ms during fit + score, minus the RSS at "
            "the start"
        ),
        "process_max_rss_mb": float(max(max_rss)) if max_rss else None,
    }
    if "history" in runs[0]:
        h = [r["history"] for r in runs]
        keys = [k for k in h[0] if isinstance(h[0][k], (int, float))]
        out["history"] = {k: float(np.mean([x[k] for x in h])) for k in keys}
    return out


__all__ = ["BenchmarkResult", "build_result", "cost_summary", "seed_record", "summarise"]
