"""One benchmark row's configuration, its validation, its name and its command line."""

from __future__ import annotations

import hashlib
import json
import shlex
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from madcluster.benchmark.schema import BASELINE_MODE, BASELINES, DETECTORS
from madcluster.data.validation import check_positive_int
from madcluster.defaults import DEFAULT_BATCH_SIZE, DEFAULT_EPOCHS, DEFAULT_WINDOW_SIZE
from madcluster.estimator.params import MADCLUSTER_PARAMS
from madcluster.evaluation.released_protocol import check_steps, steps_suffix
from madcluster.method.config import MODES

_POSITIVE_INTS = (
    "epochs",
    "window_size",
    "batch_size",
    "hidden_size",
    "layers",
    "patience",
    "n_centroids",
    "metric_window",
)
# settings that change nothing in a task's result: left out of its fingerprint, so a rerun with
# another output folder, thread count or data mount still finds the finished tasks
_NOT_IN_FINGERPRINT = ("seeds", "entities", "out", "verbose", "threads", "argv", "data_dir")
# settings a baseline (PCA / KMeans) does not use: left out of its command line
_NEURAL_ONLY = (
    "epochs",
    "batch_size",
    "lr",
    "weight_decay",
    "hidden_size",
    "layers",
    "validation_size",
    "patience",
    "device",
    "embedder_params",
)


@dataclass
class BenchmarkConfig:
    """Everything that defines one benchmark row. Defaults follow the paper where it says.

    dataset: ``MSL``, ``SMAP``, ``SMD``, ``PSM`` or a folder with train/test files.
    detector: ``madcluster`` (default), or a window baseline ``pca`` / ``kmeans`` (``embedder``
        and ``mode`` do not apply to them).
    embedder: MADCluster's Base Embedder: ``drnn`` or any registered name. ``pca`` / ``kmeans``
        here are the older spelling of ``detector`` and still accepted.
    mode: ``full``, ``distance-only`` (ablation row "DeepSVDD"), ``cluster-only`` ("Clustering").
    seeds: one run per seed; metrics are reported as mean and std over seeds.
    per_entity: train/score each entity (channel / machine) separately, report the mean.
    stride: step between training windows (MADCluster) or between windows (baselines, training
        and scoring); ``None`` = the detector's default (MADCluster 1, baselines window_size // 10).
    embedder_params: keyword arguments for the embedder, merged over ``hidden_size`` / ``layers``
        (which only the D-RNN reads).
    detector_params: further keyword arguments of the detector's constructor, passed through as
        they are (e.g. ``{"rho": 0.1}``), so new detector options need no runner change.
    contamination: training-score fraction above the ``train-quantile`` threshold.
    anomaly_ratio: alpha of ``test-ratio`` / ``combined``; ``None`` = the dataset's test anomaly
        ratio (uses the test labels' mean, as the paper).
    out: results folder (JSON per row + ``results.md`` + ``tasks/``); ``None`` writes nothing.
    threads: torch threads per task (``None``: one, the shared default of
        :mod:`madcluster.threads`).
    released_steps: steps of the released code's evaluation to apply (subset of ``a``..``e``, see
        :mod:`madcluster.evaluation.released_protocol`): ``a`` per entity with MinMax scaling
        (implies ``per_entity``), ``b`` stride-1 window scores and labels, ``c`` best-F1 headline
        (ORACLE), ``d`` range / VUS on the 0/1 predictions, ``e`` test set as validation (LEAK).
        Empty (default) = the honest protocol. The row's name carries ``released-<steps>``.
    """

    dataset: str
    embedder: str = "drnn"
    detector: str = "madcluster"
    mode: str = "full"
    seeds: tuple[int, ...] = (0,)
    per_entity: bool = False
    entities: tuple[str, ...] | None = None
    epochs: int = DEFAULT_EPOCHS  # the detector's, so a default row measures the default
    stride: int | None = None
    window_size: int = DEFAULT_WINDOW_SIZE
    batch_size: int = DEFAULT_BATCH_SIZE  # Table 1's protocol: every window, in batches of 128
    lr: float = MADCLUSTER_PARAMS["lr"].default
    weight_decay: float = MADCLUSTER_PARAMS["weight_decay"].default
    hidden_size: int = 64  # Table 1's: the paper's D-RNN (the detector's default is 32 units)
    layers: int = 3
    validation_size: float = MADCLUSTER_PARAMS["validation_size"].default
    patience: int = MADCLUSTER_PARAMS["patience"].default
    # the baselines' defaults (their tables import scikit-learn; a test checks these equal them)
    n_components: float = 0.95
    n_centroids: int = 20  # the KMeans baseline's k
    embedder_params: dict[str, Any] | None = None
    detector_params: dict[str, Any] | None = None
    contamination: float = MADCLUSTER_PARAMS["contamination"].default
    anomaly_ratio: float | None = None
    metric_window: int = 100
    data_dir: str | None = None
    out: str | None = "madcluster-results"
    tag: str | None = None
    device: str = "cpu"
    threads: int | None = None
    verbose: bool = True
    released_steps: tuple[str, ...] = ()
    argv: list[str] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.dataset = str(self.dataset)
        self.embedder = str(self.embedder).lower()
        self.detector = str(self.detector).lower()
        if self.embedder in BASELINES:  # the older spelling: --embedder pca
            self.detector = self.embedder
        if self.detector not in DETECTORS:
            raise ValueError(
                f"unknown detector {self.detector!r}; choose one of {', '.join(DETECTORS)}"
            )
        if self.detector in BASELINES:
            self.embedder = self.detector  # result names stay <dataset>_<pca|kmeans>_baseline
        self.seeds = tuple(
            int(s) for s in (self.seeds if is_sequence(self.seeds) else [self.seeds])
        )
        if self.entities is not None:
            self.entities = tuple(str(e) for e in self.entities)
        self.released_steps = check_steps(self.released_steps)
        if "a" in self.released_steps:
            self.per_entity = True  # step a is one model per entity
        if not self.seeds:
            raise ValueError("seeds must name at least one seed")
        if len(set(self.seeds)) != len(self.seeds):
            raise ValueError(f"seeds must be distinct, got {list(self.seeds)}")
        if self.is_baseline:
            self.mode = BASELINE_MODE
        else:
            from madcluster.embedders import EMBEDDERS

            if self.embedder not in EMBEDDERS:
                known = ", ".join(sorted(EMBEDDERS) + list(BASELINES))
                raise ValueError(f"unknown embedder {self.embedder!r}; choose one of {known}")
            if self.mode not in MODES:
                raise ValueError(f"unknown mode {self.mode!r}; choose one of {', '.join(MODES)}")
        for name in _POSITIVE_INTS:
            check_positive_int(name, getattr(self, name))
        if self.stride is not None:
            check_positive_int("stride", self.stride)
        if self.threads is not None:
            check_positive_int("threads", self.threads)
        for name in ("embedder_params", "detector_params"):
            value = getattr(self, name)
            if value is not None:
                if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
                    raise ValueError(f"{name} must be a mapping with string keys, got {value!r}")
                setattr(self, name, dict(value))
        MADCLUSTER_PARAMS["contamination"].check("contamination", self.contamination)
        if self.anomaly_ratio is not None and not 0.0 < self.anomaly_ratio < 0.5:
            raise ValueError(
                f"anomaly_ratio must be a fraction in (0, 0.5), got {self.anomaly_ratio} "
                "(1 % is 0.01)"
            )
        if self.tag is not None and not all(c.isalnum() or c in "-." for c in self.tag):
            raise ValueError(f"tag may hold only letters, digits, '-' and '.', got {self.tag!r}")

    @property
    def is_baseline(self) -> bool:
        return self.detector in BASELINES

    def dataset_label(self) -> str:
        """The dataset's short name: the benchmark name or the folder's last component."""
        return Path(self.dataset).name or self.dataset

    def result_name(self, dataset_name: str | None = None) -> str:
        """``<dataset>_<embedder>_<mode>[_per-entity][_<tag>]``: the JSON file's stem."""
        parts = [dataset_name or self.dataset_label(), self.embedder, self.mode]
        if self.per_entity:
            parts.append("per-entity")
        if self.released_steps:
            parts.append(steps_suffix(self.released_steps))
        if self.tag:
            parts.append(self.tag)
        return "_".join(parts)

    def resolved_embedder_params(self) -> dict[str, Any] | None:
        """What the embedder receives: the size settings it reads (its class's ``size_options``:
        ``hidden_size`` / ``layers`` for the D-RNN), then ``embedder_params`` over them."""
        from madcluster.embedders import EMBEDDERS

        options = getattr(EMBEDDERS.get(self.embedder), "size_options", {})
        params: dict[str, Any] = {name: getattr(self, setting) for name, setting in options.items()}
        params.update(self.embedder_params or {})
        return params or None

    def settings(self) -> dict[str, Any]:
        """The configuration as plain JSON-able values (``argv`` left out: it is recorded apart)."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "argv"}
        out["seeds"] = list(self.seeds)
        out["entities"] = list(self.entities) if self.entities is not None else None
        out["released_steps"] = list(self.released_steps)
        return out

    def fingerprint(self) -> str:
        """Short hash of every setting that can change a task's result (resume key)."""
        kept = {k: v for k, v in self.settings().items() if k not in _NOT_IN_FINGERPRINT}
        kept["n_clusters"] = kept.pop("n_centroids")  # its name when the finished tasks were keyed
        if not kept["released_steps"]:  # honest rows keep the fingerprint they had before steps
            del kept["released_steps"]
        text = json.dumps(kept, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:10]

    def command(self) -> str:
        """The ``madcluster benchmark`` command line that reproduces this configuration."""
        args = ["madcluster", "benchmark", "--dataset", self.dataset]
        args += ["--detector", self.detector] if self.is_baseline else ["--embedder", self.embedder]
        if not self.is_baseline:
            args += ["--mode", self.mode]
        args += ["--seeds", *map(str, self.seeds)]
        defaults = BenchmarkConfig(dataset="x")
        skip = {
            "dataset",
            "embedder",
            "detector",
            "mode",
            "seeds",
            "argv",
            "verbose",
            "per_entity",
            "entities",
            "released_steps",
        }
        if self.is_baseline:
            skip |= set(_NEURAL_ONLY)
        if self.embedder != "pca":
            skip.add("n_components")
        if self.embedder != "kmeans":
            skip.add("n_centroids")
        if self.per_entity:
            args.append("--per-entity")
        if self.entities:
            args += ["--entities", *self.entities]
        if self.released_steps:
            args += ["--released-steps", *self.released_steps]
        for f in fields(self):
            if f.name in skip:
                continue
            value = getattr(self, f.name)
            always = f.name in ("epochs", "stride") and not (
                self.is_baseline and f.name == "epochs"
            )
            if (value == getattr(defaults, f.name) and not always) or value is None:
                continue
            if f.name in ("embedder_params", "detector_params"):
                flag = "--" + f.name[:-1].replace("_", "-")
                for key, item in value.items():
                    args += [flag, f"{key}={json.dumps(item)}"]
                continue
            args += [f"--{f.name.replace('_', '-')}", str(value)]
        if not self.verbose:
            args.append("--quiet")
        return shlex.join(args)


def parse_key_value(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` with VALUE read as JSON when it parses (``3``, ``0.5``, ``true``), else
    text."""
    key, sep, raw = str(text).partition("=")
    key = key.strip()
    if not sep or not key.isidentifier():
        raise ValueError(f"expected KEY=VALUE with a Python identifier as KEY, got {text!r}")
    lowered = raw.strip().lower()
    if lowered in ("true", "false", "none", "null"):
        return key, {"true": True, "false": False}.get(lowered)
    try:
        return key, json.loads(raw)
    except json.JSONDecodeError:
        return key, raw


def parse_key_values(items: Sequence[str] | None) -> dict[str, Any] | None:
    """Repeated ``KEY=VALUE`` options as a dict (``None`` when none was given)."""
    if not items:
        return None
    return dict(parse_key_value(item) for item in items)


def is_sequence(value: Any) -> bool:
    return (
        isinstance(value, Sequence)
        and not isinstance(value, (str, bytes))
        or isinstance(value, (np.ndarray, Iterator))
    )


__all__ = [
    "BenchmarkConfig",
    "check_positive_int",
    "is_sequence",
    "parse_key_value",
    "parse_key_values",
]
