"""``madcluster benchmark --images``: the paper's two image tables, from one settings object.

:class:`ImageBenchmark` says what to run (data, models, configurations, seeds, budget);
:func:`run_image_benchmark` checks all of it before the first fit (unknown model or configuration,
a missing folder, a folder not in the MVTec AD layout, settings that differ from the runs already
in the output folder), runs what is not yet in ``<out>/runs.jsonl``
(:func:`~madcluster.images.table.run_table`, a progress bar over the runs), then writes the tables
and the anomaly-map figures. ``benchmarks/tables/image_table.py`` and the CLI both call it: there is
one implementation.
"""

from __future__ import annotations

import inspect
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from madcluster.atomic import atomic_path
from madcluster.exceptions import DataError, OutputPathError, ParameterError

GENERATED = "generated"
SETTINGS_FILE = "settings.json"


def default_generated_dir() -> Path:
    return Path(tempfile.gettempdir()) / "madcluster-textures"


@dataclass(frozen=True)
class ImageBenchmark:
    """One image table. ``images``: an MVTec AD root (class folders) or ``"generated"`` (the seeded
    texture-defect set, made under ``generated_dir`` on first use)."""

    images: str
    out: Path
    models: tuple[str, ...] = ("rd4ad", "pyramidflow")
    configs: tuple[str, ...] = ("alone", "paper", "pixels-w0.5")
    seeds: tuple[int, ...] = (0,)
    classes: tuple[str, ...] | None = None
    epochs: int = 10
    n_train: int | None = None
    image_size: int = 64
    batch_size: int = 16
    lr: float = 1e-3
    backbone: str = "resnet18"
    teacher_weights: str | None = None
    embedder_params: dict = field(default_factory=dict)
    data_seed: int = 0
    generated_dir: Path = field(default_factory=default_generated_dir)
    device: str = "auto"
    resume: bool = True
    verbose: bool = True
    command: str = ""

    @property
    def is_generated(self) -> bool:
        return self.images == GENERATED

    @property
    def root(self) -> Path:
        if self.is_generated:
            return Path(self.generated_dir) / f"seed{self.data_seed}-{self.image_size}px"
        return Path(self.images)

    def settings(self) -> dict:
        """What makes a run's numbers: runs of one output folder must share it (checked on
        resume)."""
        return {
            "data": f"{GENERATED} (data seed {self.data_seed})"
            if self.is_generated
            else os.fspath(Path(self.images).resolve()),
            "epochs": self.epochs,
            "n_train": self.n_train,
            "image_size": self.image_size,
            "batch_size": self.batch_size,
            "lr": self.lr,
            "backbone": self.backbone,
            "teacher_weights": self.teacher_weights,
            "embedder_params": self.embedder_params,
        }


@dataclass
class ImageBenchmarkResult:
    rows: dict[str, dict]
    n_run: int
    n_resumed: int
    tables: Path
    figures: list[Path]


def model_params(bench: ImageBenchmark) -> dict[str, dict]:
    """Each model's embedder keywords: RD4AD's teacher, then ``embedder_params`` for every model
    whose constructor takes that key (a key no model takes is refused)."""
    from madcluster.embedders import IMAGE_EMBEDDERS

    params: dict[str, dict] = {m: {} for m in bench.models}
    if "rd4ad" in params:
        params["rd4ad"] = {"backbone": bench.backbone, "weights": bench.teacher_weights}
    taken = set()
    for model in bench.models:
        accepted = inspect.signature(IMAGE_EMBEDDERS[model]).parameters
        for key, value in bench.embedder_params.items():
            if key in accepted:
                params[model][key] = value
                taken.add(key)
    unused = sorted(set(bench.embedder_params) - taken)
    if unused:
        raise ParameterError(
            f"embedder parameter(s) {', '.join(unused)} apply to none of {', '.join(bench.models)}"
        )
    return params


def check_benchmark(bench: ImageBenchmark) -> list[str]:
    """Everything that can be checked before the first fit; returns the classes to run."""
    from madcluster.embedders import IMAGE_EMBEDDERS
    from madcluster.images.io import mvtec_classes
    from madcluster.images.synthetic import CLASSES
    from madcluster.images.table import CONFIGS

    for what, given, known in (
        ("image model", bench.models, IMAGE_EMBEDDERS),
        ("configuration", bench.configs, CONFIGS),
    ):
        unknown = [name for name in given if name not in known]
        if unknown:
            raise ParameterError(
                f"unknown {what} {', '.join(map(repr, unknown))}; choose from {', '.join(known)}"
            )
    if (
        bench.epochs < 1
        or bench.image_size < 8
        or bench.batch_size < 1
        or (bench.n_train is not None and bench.n_train < 2)
    ):
        raise ParameterError(
            "--epochs and --batch-size must be >= 1, --image-size >= 8, --n-train >= 2"
        )
    if (
        bench.teacher_weights is not None
        and "rd4ad" in bench.models
        and not Path(bench.teacher_weights).is_file()
    ):
        raise DataError(f"teacher weights file {bench.teacher_weights!r} does not exist")
    if bench.is_generated:
        available = list(CLASSES)
    elif not Path(bench.images).is_dir():
        raise DataError(
            f"MVTec AD folder {bench.images!r} does not exist (or pass --images {GENERATED})"
        )
    else:
        available = mvtec_classes(bench.images)  # DataError when no <class>/train/good is there
    classes = list(bench.classes or available)
    missing = [c for c in classes if c not in available]
    if missing:
        raise DataError(
            f"no class {', '.join(map(repr, missing))} in {bench.images!r}; it has "
            f"{', '.join(available)}"
        )
    model_params(bench)
    check_resume(bench)
    return classes


def check_resume(bench: ImageBenchmark) -> None:
    """Refuse to mix runs made with other settings into one table (an honest table has one
    budget)."""
    path = Path(bench.out) / SETTINGS_FILE
    if not bench.resume or not path.exists():
        return
    before = json.loads(path.read_text())
    differ = sorted(
        k for k, v in bench.settings().items() if json.dumps(before.get(k)) != json.dumps(v)
    )
    if differ:
        raise OutputPathError(
            f"{os.fspath(bench.out)!r} holds runs made with other settings ({', '.join(differ)}); "
            "pass another --out, or --no-resume to rerun every run with these settings"
        )


def ensure_generated(bench: ImageBenchmark) -> Path:
    """The generated set (all classes) at ``bench.root``, made once; a half-written one is never
    used."""
    from madcluster.images.synthetic import make_texture_defects

    root = bench.root
    if not root.exists():
        partial = root.with_name(root.name + f".partial-{os.getpid()}")
        make_texture_defects(partial, seed=bench.data_seed, size=bench.image_size)
        partial.rename(root)
    return root


def run_image_benchmark(
    bench: ImageBenchmark, log: Callable[[str], None] = print
) -> ImageBenchmarkResult:
    """Check, run what is missing (class-major, so an interrupted table has whole rows), write
    tables and figures."""
    from madcluster.images.report import write_figures, write_tables
    from madcluster.images.table import Run, load_runs, run_table

    classes = check_benchmark(bench)
    root = ensure_generated(bench) if bench.is_generated else Path(bench.images)
    out = Path(bench.out)
    out.mkdir(parents=True, exist_ok=True)
    if not bench.resume and (out / "runs.jsonl").exists():
        with atomic_path(out / "runs.jsonl") as tmp:
            Path(tmp).write_text("")
    with atomic_path(out / SETTINGS_FILE) as tmp:
        Path(tmp).write_text(json.dumps(bench.settings(), indent=1) + "\n")
    runs = [
        Run(cls, model, config, seed)
        for seed in bench.seeds
        for cls in classes
        for model in bench.models
        for config in bench.configs
    ]
    wanted = {r.key for r in runs}
    before = wanted & set(load_runs(out / "runs.jsonl"))
    settings = {
        "image_size": bench.image_size,
        "epochs": bench.epochs,
        "batch_size": bench.batch_size,
        "lr": bench.lr,
        "device": bench.device,
    }
    run_table(
        root,
        out,
        runs,
        settings,
        model_params(bench),
        bench.n_train,
        log=log,
        progress=bench.verbose,
    )
    rows = {k: r for k, r in load_runs(out / "runs.jsonl").items() if k in wanted}
    tables = write_tables(rows, out, list(bench.models), classes, table_header(bench))
    figures = write_figures(
        root, out, list(bench.models), classes, bench.image_size, bench.seeds[0]
    )
    return ImageBenchmarkResult(rows, len(wanted - before), len(before), tables, figures)


def table_header(bench: ImageBenchmark) -> str:
    data = (
        f"the generated texture-defect set (data seed {bench.data_seed}; NOT MVTec AD)"
        if bench.is_generated
        else f"the MVTec AD layout folder {bench.images}"
    )
    teacher = (
        f"weights {bench.teacher_weights}"
        if bench.teacher_weights
        else "random, frozen: not the paper teacher"
    )
    return (
        f"## Image tables on {data}\n\nCommand: `{bench.command or '(called from Python)'}`\n\n"
        f"{bench.epochs} epochs, {bench.n_train or 'all'} training images a class, "
        f"{bench.image_size} px, batch {bench.batch_size}, lr {bench.lr}; RD4AD teacher "
        f"{bench.backbone} ({teacher})."
    )
