"""The paper's two image tables (appendix, image- and pixel-level AUROC per class, each base model
alone and + MADCluster at the same budget), on MVTec AD or the generated texture-defect set.

Each run (class, base model, configuration, seed) is one fit of :class:`ImageMADCluster`; its
metrics go to ``runs.jsonl`` as soon as it ends (a rerun skips finished runs), its maps of a few
test images to ``maps/``. :func:`write_tables` then writes the two tables with the paper's numbers
beside each row, and :func:`write_figures` the anomaly-map figures.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from madcluster.atomic import atomic_path
from madcluster.images.detector import ImageMADCluster
from madcluster.images.io import ImageSet, read_mvtec_class
from madcluster.metrics.image import image_auroc, pixel_auroc, pro_auc

# Configurations compared at the same budget. "alone" is the base model; "paper" the appendix's
# literal reading ([B, C, H*W], joint training, MADCluster's term at weight 1); the others are
# options (docs/images.md), each pinned so that a change of the library's defaults changes no row.
CONFIGS: dict[str, dict] = {
    "alone": {"mode": "base-only"},
    "paper": {"mode": "full", "layout": "channels", "detach_h": False, "head_weight": 1.0},
    "pixels": {"mode": "full", "layout": "pixels", "detach_h": False, "head_weight": 1.0},
    "channels-detached": {
        "mode": "full",
        "layout": "channels",
        "detach_h": True,
        "head_weight": 1.0,
    },
    "pixels-detached": {"mode": "full", "layout": "pixels", "detach_h": True, "head_weight": 1.0},
    # the image default (ImageMADCluster's): chosen on training images only, see DEFAULT_CONFIG
    "pixels-w0.5": {"mode": "full", "layout": "pixels", "detach_h": False, "head_weight": 0.5},
    # the runner-up among detached options on the same validation (reported, not chosen)
    "pixels-detached-w0.5": {
        "mode": "full",
        "layout": "pixels",
        "detach_h": True,
        "head_weight": 0.5,
    },
}
# The configuration ImageMADCluster's defaults are: the best + MADCluster option on CutPaste
# defects in held-out training images (test images unused):
# benchmarks/studies/models/image_combination_select.py.
DEFAULT_CONFIG = "pixels-w0.5"
# The paper's appendix tables (MVTec AD, 10 epochs): (alone, + MADCluster) per model and class.
PAPER_IMAGE = {
    "rd4ad": {
        "bottle": (0.991, 0.998),
        "cable": (0.945, 0.946),
        "capsule": (0.868, 0.870),
        "carpet": (0.996, 0.997),
        "grid": (0.921, 0.945),
        "hazelnut": (1.0, 1.0),
        "leather": (1.0, 1.0),
        "metal_nut": (0.995, 0.996),
        "pill": (0.936, 0.956),
        "screw": (0.829, 0.848),
        "tile": (0.993, 0.994),
        "toothbrush": (0.997, 1.0),
        "transistor": (0.967, 0.970),
        "wood": (0.990, 0.993),
        "zipper": (0.871, 0.889),
    },
    "pyramidflow": {
        "bottle": (0.778, 0.993),
        "cable": (0.638, 0.695),
        "capsule": (0.870, 0.916),
        "carpet": (0.938, 0.964),
        "grid": (0.794, 0.824),
        "hazelnut": (0.930, 0.935),
        "leather": (0.993, 0.999),
        "metal_nut": (0.735, 0.742),
        "pill": (0.810, 0.834),
        "screw": (0.595, 0.752),
        "tile": (0.994, 0.995),
        "toothbrush": (0.944, 0.947),
        "transistor": (0.908, 0.936),
        "wood": (0.991, 0.996),
        "zipper": (0.938, 0.938),
    },
}
PAPER_PIXEL = {
    "rd4ad": {
        "bottle": (0.982, 0.986),
        "cable": (0.977, 0.977),
        "capsule": (0.981, 0.982),
        "carpet": (0.992, 0.992),
        "grid": (0.942, 0.963),
        "hazelnut": (0.991, 0.991),
        "leather": (0.994, 0.994),
        "metal_nut": (0.969, 0.974),
        "pill": (0.967, 0.968),
        "screw": (0.985, 0.986),
        "tile": (0.953, 0.953),
        "toothbrush": (0.987, 0.988),
        "transistor": (0.890, 0.890),
        "wood": (0.955, 0.955),
        "zipper": (0.968, 0.970),
    },
    "pyramidflow": {
        "bottle": (0.960, 0.974),
        "cable": (0.895, 0.912),
        "capsule": (0.977, 0.980),
        "carpet": (0.964, 0.978),
        "grid": (0.941, 0.948),
        "hazelnut": (0.964, 0.973),
        "leather": (0.985, 0.987),
        "metal_nut": (0.938, 0.959),
        "pill": (0.943, 0.956),
        "screw": (0.898, 0.903),
        "tile": (0.962, 0.973),
        "toothbrush": (0.975, 0.977),
        "transistor": (0.965, 0.972),
        "wood": (0.957, 0.960),
        "zipper": (0.968, 0.968),
    },
}
# The generated classes and the MVTec AD class each imitates (whose paper row is shown beside it).
IMITATES = {
    "weave": "grid",
    "grain": "wood",
    "speckle": "carpet",
    "disc": "pill",
    "ring": "metal_nut",
}
N_FIGURE_IMAGES = 4


@dataclass(frozen=True)
class Run:
    cls: str
    model: str
    config: str
    seed: int

    @property
    def key(self) -> str:
        return f"{self.cls}/{self.model}/{self.config}/{self.seed}"


def figure_indices(test: ImageSet) -> np.ndarray:
    """A fixed choice of test images for the figures: the first image of each defect type."""
    seen: dict[str, int] = {}
    for i, defect in enumerate(test.defects):
        if test.labels[i] and defect not in seen:
            seen[defect] = i
    return np.asarray(sorted(seen.values())[:N_FIGURE_IMAGES], dtype=np.int64)


def run_one(run: Run, train: ImageSet, test: ImageSet, settings: dict, out: Path) -> dict:
    """Fit one configuration, score the test set, save the figure maps; the result row."""
    t0, cpu0 = time.perf_counter(), time.process_time()
    model = ImageMADCluster(
        embedder=run.model, random_state=run.seed, **settings, **CONFIGS[run.config]
    )
    model.fit(train.images)
    fit_seconds, fit_cpu = time.perf_counter() - t0, time.process_time() - cpu0
    scores, maps = model.decision_and_map(test.images)
    chosen = figure_indices(test)
    with (
        atomic_path(out / "maps" / f"{run.cls}-{run.model}-{run.config}-{run.seed}.npz") as tmp,
        open(tmp, "wb") as fh,
    ):
        np.savez_compressed(fh, index=chosen, maps=maps[chosen].astype(np.float32))
    return {
        **asdict(run),
        "image_auroc": image_auroc(scores, test.labels),
        "pixel_auroc": pixel_auroc(maps, test.masks),
        "pro": pro_auc(maps, test.masks),
        "fit_seconds": round(fit_seconds, 1),
        "fit_cpu_seconds": round(fit_cpu, 1),
        "epochs_run": len(model.history_["epoch"]),
        "n_train": len(train),
        "n_test": len(test),
    }


def load_runs(path: Path) -> dict[str, dict]:
    if not path.exists():
        return {}
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {Run(r["cls"], r["model"], r["config"], r["seed"]).key: r for r in rows}


def paper_note(run: Run) -> str:
    """The paper's (alone, + MADCluster) image / pixel AUROC of the MVTec class ``run`` is (or
    imitates)."""
    cls = IMITATES.get(run.cls, run.cls)
    image, pixel = PAPER_IMAGE.get(run.model, {}).get(cls), PAPER_PIXEL.get(run.model, {}).get(cls)
    if image is None or pixel is None:
        return ""
    index = 0 if run.config == "alone" else 1
    return (
        f"; paper ({cls}, {'alone' if index == 0 else '+MC'}): "
        f"{image[index]:.3f} / {pixel[index]:.3f}"
    )


def run_table(
    root: Path,
    out: Path,
    runs: Iterable[Run],
    settings: dict,
    embedder_params: dict[str, dict],
    n_train: int | None = None,
    log=print,
    progress: bool = False,
) -> dict[str, dict]:
    """Every run not already in ``out/runs.jsonl``, appended as it finishes; returns all rows.
    ``n_train`` keeps the first training images of each class (None: all); ``progress``: a bar over
    the runs and each fit's epoch bar (on a terminal), each finished run's line written above
    them."""
    from tqdm.auto import tqdm

    out.mkdir(parents=True, exist_ok=True)
    store = out / "runs.jsonl"
    done = load_runs(store)
    runs = list(runs)
    todo = [run for run in runs if run.key not in done]
    data: dict[str, tuple[ImageSet, ImageSet]] = {}
    # a bar on a terminal; in a log file the result lines suffice
    progress = progress and sys.stderr.isatty()
    bar = tqdm(
        total=len(runs),
        initial=len(runs) - len(todo),
        desc="image runs",
        unit="fit",
        disable=not progress,
    )
    say = bar.write if progress else log
    for run in todo:
        bar.set_postfix_str(run.key)
        if run.cls not in data:
            train, test = read_mvtec_class(root / run.cls, settings["image_size"])
            if n_train is not None:
                train = ImageSet(
                    train.images[:n_train],
                    train.labels[:n_train],
                    train.masks[:n_train],
                    train.defects[:n_train],
                    train.paths[:n_train],
                )
            data[run.cls] = (train, test)
        fit_settings = {
            **settings,
            "embedder_params": embedder_params.get(run.model),
            "verbose": progress,
        }
        row = run_one(run, *data[run.cls], fit_settings, out)  # verbose: the fit's own epoch bar
        done[run.key] = row
        with open(store, "a") as fh:  # one line per finished run: an interrupted table resumes
            fh.write(json.dumps(row) + "\n")
        say(
            f"{run.key}: image AUROC {row['image_auroc']:.3f}, pixel AUROC "
            f"{row['pixel_auroc']:.3f}, PRO {row['pro']:.3f} (fit {row['fit_seconds']} s wall, "
            f"{row['fit_cpu_seconds']} s CPU){paper_note(run)}"
        )
        bar.update(1)
    bar.close()
    return done
