"""A benchmark grid: lists of datasets, embedders, modes, seeds -> rows -> independent tasks.

A **row** is one :class:`~madcluster.benchmark.config.BenchmarkConfig` (one line of the results
table); a **task** is one fit + score + metrics of that row: one seed, and with ``per_entity`` one
entity. Tasks are named from their configuration (row name, a fingerprint of every setting that
changes the result, seed, entity), which is what lets a rerun find and skip finished ones.

A grid file (JSON, or YAML when PyYAML is installed) holds ``BenchmarkConfig`` fields; the axes
``dataset``, ``embedder``, ``mode``, ``per_entity`` and ``tag`` may be lists and are crossed,
``seeds`` is the seed list of every row. An optional ``rows`` list adds rows, each expanded the
same way over the top-level settings::

    {"dataset": ["MSL", "SMAP"], "embedder": "drnn", "mode": ["full", "distance-only"],
     "seeds": [0, 1, 2], "epochs": 10, "stride": 10,
     "rows": [{"detector": ["pca", "kmeans"], "seeds": [0]}]}
"""

from __future__ import annotations

import itertools
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from madcluster.benchmark.config import BenchmarkConfig
from madcluster.evaluation.released_protocol import window_label_ratio

AXES = ("dataset", "detector", "embedder", "mode", "per_entity", "tag")
_FIELDS = {f.name for f in fields(BenchmarkConfig)}


@dataclass(frozen=True)
class Task:
    """One fit + score + metrics: what a worker needs besides the dataset's arrays."""

    config: BenchmarkConfig
    row: str
    fingerprint: str
    seed: int
    entity: str | None
    part_name: str
    train_slice: tuple[int, int]
    test_slice: tuple[int, int]
    anomaly_ratio: float
    data_key: str
    threads: int | None = None
    show_epochs: bool = False

    @property
    def key(self) -> str:
        """``seed<k>[_<entity>]``: the task's file stem inside its row's folder."""
        stem = f"seed{self.seed}"
        return stem if self.entity is None else f"{stem}_{_safe(self.entity)}"

    @property
    def folder(self) -> str:
        """``<row>-<fingerprint>``: one folder per row configuration."""
        return f"{self.row}-{self.fingerprint}"


@dataclass
class Row:
    """One results-table row and its tasks, with the dataset facts the report needs."""

    config: BenchmarkConfig
    name: str
    data: dict[str, Any]
    tasks: list[Task] = field(default_factory=list)


def expand_grid(spec: Mapping[str, Any]) -> list[BenchmarkConfig]:
    """Rows of a grid specification (see the module docstring), duplicates removed, in order."""
    spec = dict(spec)
    extra_rows = spec.pop("rows", None) or []
    unknown = sorted(set(spec) - _FIELDS)
    if unknown:
        raise ValueError(f"unknown grid keys {unknown}; known: {', '.join(sorted(_FIELDS))}")
    configs = _cross(spec) if "dataset" in spec or not extra_rows else []
    for extra in extra_rows:
        if not isinstance(extra, Mapping):
            raise ValueError(  # noqa: TRY004
                f"each entry of 'rows' must be a mapping, got {extra!r}"
            )
        configs += expand_grid({**spec, **extra})
    seen: set[str] = set()
    unique = []
    for config in configs:
        key = json.dumps({k: v for k, v in config.settings().items()}, sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            unique.append(config)
    return unique


def _cross(spec: Mapping[str, Any]) -> list[BenchmarkConfig]:
    if "dataset" not in spec:
        raise ValueError("a grid needs at least one dataset")
    axes = {k: _as_list(spec[k]) for k in AXES if k in spec}
    fixed = {k: v for k, v in spec.items() if k not in axes}
    out = []
    for values in itertools.product(*axes.values()):
        out.append(BenchmarkConfig(**fixed, **dict(zip(axes, values, strict=True))))
    return out


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def load_grid_file(path: str | os.PathLike) -> dict[str, Any]:
    """A grid specification from a ``.json`` or ``.yaml`` / ``.yml`` file."""
    path = Path(path)
    text = path.read_text()
    if path.suffix.lower() in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ValueError(
                f"{path}: reading YAML grids needs PyYAML (pip install pyyaml); or write it as JSON"
            ) from exc
        spec = yaml.safe_load(text)
    else:
        try:
            spec = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: not valid JSON ({exc})") from exc
    if isinstance(spec, dict):
        return spec
    raise ValueError(f"{path}: a grid file holds one mapping of settings, got {type(spec)}")


def plan_rows(
    configs: Iterable[BenchmarkConfig],
    datasets: Mapping[str, Any],
    *,
    threads: int | None = None,
    show_epochs: bool = False,
) -> list[Row]:
    """Rows with their tasks; ``datasets`` maps :func:`dataset_key` to a loaded Dataset.

    ``threads`` is the torch thread count of tasks whose row leaves it unset (one per Ray task).
    """
    rows = []
    for config in configs:
        key = dataset_key(config)
        dataset = datasets[key]
        parts = _parts(dataset, config)
        anomaly_ratio = (
            config.anomaly_ratio if config.anomaly_ratio is not None else dataset.anomaly_ratio
        )
        if "b" in config.released_steps and config.anomaly_ratio is None:
            # step b evaluates window labels: their known ratio, as the paper uses the points'
            anomaly_ratio = window_label_ratio(
                dataset.labels, [p[3] for p in parts], config.window_size
            )
        if not 0.0 < anomaly_ratio < 0.5:
            raise ValueError(
                f"{dataset.name}: test anomaly ratio {anomaly_ratio:.4f} is outside (0, 0.5); "
                "pass anomaly_ratio explicitly"
            )
        row = Row(config, config.result_name(dataset.name), _data_facts(dataset, config, parts))
        row.data["anomaly_ratio_used"] = float(anomaly_ratio)
        if "b" in config.released_steps and config.anomaly_ratio is None:
            row.data["anomaly_ratio_source"] = (
                "test window labels (step b: a window is anomalous if any point in it is)"
            )
        fingerprint = config.fingerprint()
        for seed in config.seeds:
            for entity, part_name, train_slice, test_slice in parts:
                row.tasks.append(
                    Task(
                        config=config,
                        row=row.name,
                        fingerprint=fingerprint,
                        seed=seed,
                        entity=entity,
                        part_name=part_name,
                        train_slice=train_slice,
                        test_slice=test_slice,
                        anomaly_ratio=float(anomaly_ratio),
                        data_key=key,
                        threads=config.threads if config.threads is not None else threads,
                        show_epochs=show_epochs and config.verbose,
                    )
                )
        rows.append(row)
    return rows


def dataset_key(config: BenchmarkConfig) -> str:
    """Which loaded dataset a row uses: one load (and one object-store copy) per key."""
    return f"{config.dataset}|{config.data_dir or ''}"


def _parts(dataset: Any, config: BenchmarkConfig) -> list[tuple[str | None, str, tuple, tuple]]:
    """``(entity, name, train rows, test rows)`` per fit: the whole series or each entity."""
    if not config.per_entity:
        if config.entities:
            raise ValueError("entities selects entities for per_entity=True runs only")
        return [(None, dataset.name, (0, len(dataset.train)), (0, len(dataset.test)))]
    chosen = (
        [_find_entity(dataset, e) for e in config.entities]
        if config.entities
        else list(dataset.entities)
    )
    return [
        (
            e.name,
            f"{dataset.name}/{e.name}",
            e.train_slice.indices(len(dataset.train))[:2],
            e.test_slice.indices(len(dataset.test))[:2],
        )
        for e in chosen
    ]


def _find_entity(dataset: Any, name: str) -> Any:
    """The Entity called ``name`` (same lookup and error as ``Dataset.entity``)."""
    try:
        wanted = dataset.entity(name).name.split("/")[-1]
    except KeyError as exc:  # a ValueError, which the command line reports in one line
        raise ValueError(exc.args[0]) from None
    return next(e for e in dataset.entities if e.name == wanted)


def _data_facts(dataset: Any, config: BenchmarkConfig, parts: list) -> dict[str, Any]:
    return {
        "name": dataset.name,
        "n_train": len(dataset.train),
        "n_test": len(dataset.test),
        "n_features": dataset.n_features,
        "n_entities": len(dataset.entities),
        "n_entities_run": len(parts),
        "test_anomaly_ratio": dataset.anomaly_ratio,
        "anomaly_ratio_source": "given"
        if config.anomaly_ratio is not None
        else "test labels (known ratio, as the paper)",
    }


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)


__all__ = ["AXES", "Row", "Task", "dataset_key", "expand_grid", "load_grid_file", "plan_rows"]
