"""Choose how + MADCluster combines with an image base model, on training images only.

For each class of the generated set, base model, configuration and seed: fit on the first
``n_fit`` training images, then score a validation set made of the next ``n_val`` good training
images and one CutPaste copy of each (:mod:`madcluster.images.cutpaste`: a generic defect, not one
of the generator's test defect types). Each fit is scored with the MADCluster term weighted by every
``--weights`` value in the image score and in the pixel map (the sum of standardised terms of
:func:`madcluster.scoring.combine_scores`); the test images are never read. Writes the validation
image / pixel AUROC of each option, averaged over classes and seeds, per base model, to
``<out>/selection.md`` (and every row to ``<out>/selection.jsonl``).

    python benchmarks/image_combination_select.py --out benchmarks/results/image
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch

from madcluster.atomic import atomic_path
from madcluster.images.benchmark import ImageBenchmark, ensure_generated
from madcluster.images.cutpaste import cutpaste
from madcluster.images.detector import ImageMADCluster
from madcluster.images.io import read_mvtec_class
from madcluster.images.synthetic import CLASSES
from madcluster.images.table import CONFIGS
from madcluster.metrics.image import image_auroc, pixel_auroc
from madcluster.scoring import combine_scores


def validation_rows(model: str, config: str, cls: str, seed: int, fit_images: np.ndarray, val_images: np.ndarray,
                    val_masks: np.ndarray, weights: list[float], image_size: int) -> list[dict]:
    params = {"backbone": "resnet18"} if model == "rd4ad" else {}
    detector = ImageMADCluster(embedder=model, embedder_params=params, image_size=image_size, random_state=seed,
                               **{**CONFIGS[config], "head_weight": 1.0})
    detector.fit(fit_images)
    scores, maps = detector.score_terms(val_images)
    labels = val_masks.reshape(len(val_masks), -1).any(1).astype(int)
    rows = []
    for weight in weights:
        score = combine_scores(scores, detector.score_stats_, detector.score_scaling, detector.base_score_combination, weight)
        amap = combine_scores(maps, detector.map_stats_, detector.score_scaling, detector.base_score_combination, weight)
        rows.append({"cls": cls, "model": model, "config": config, "seed": seed, "weight": weight,
                     "image_auroc": image_auroc(score, labels), "pixel_auroc": pixel_auroc(amap.reshape(val_masks.shape), val_masks)})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/image"))
    parser.add_argument("--models", nargs="+", default=["rd4ad", "pyramidflow"])
    parser.add_argument("--configs", nargs="+", default=["alone", "paper", "pixels", "channels-detached", "pixels-detached"])
    parser.add_argument("--weights", nargs="+", type=float, default=[1.0, 0.5, 0.25, 0.1])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    parser.add_argument("--n-fit", type=int, default=24)
    parser.add_argument("--n-val", type=int, default=6)
    parser.add_argument("--image-size", type=int, default=64)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    root = ensure_generated(ImageBenchmark(images="generated", out=args.out, image_size=args.image_size))
    rows: list[dict] = []
    for cls in CLASSES:
        train, _ = read_mvtec_class(root / cls, args.image_size)  # the test split is not used
        fit_images = train.images[: args.n_fit]
        good = train.images[args.n_fit : args.n_fit + args.n_val]
        pasted, masks = cutpaste(good, seed=CLASSES.index(cls))
        val_images = np.concatenate([good, pasted])
        val_masks = np.concatenate([np.zeros_like(masks), masks])
        for model in args.models:
            for config in args.configs:
                for seed in args.seeds:
                    new = validation_rows(model, config, cls, seed, fit_images, val_images, val_masks,
                                          [1.0] if config == "alone" else args.weights, args.image_size)
                    rows += new
                    print(" ".join(f"{r['cls']}/{model}/{config}/{seed} w{r['weight']}: {r['image_auroc']:.3f}/{r['pixel_auroc']:.3f}"
                                   for r in new), flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    with atomic_path(args.out / "selection.jsonl") as tmp:
        Path(tmp).write_text("".join(json.dumps(r) + "\n" for r in rows))
    with atomic_path(args.out / "selection.md") as tmp:
        Path(tmp).write_text(selection_table(rows, args))
    print((args.out / "selection.md").read_text())
    return 0


def selection_table(rows: list[dict], args: argparse.Namespace) -> str:
    lines = ["## Choosing the image combination on training images only (CutPaste validation)", "",
             f"Command: `python benchmarks/image_combination_select.py --out {args.out} --seeds {' '.join(map(str, args.seeds))}`", "",
             (f"Per class: fit on training images 1-{args.n_fit}, validate on training images {args.n_fit + 1}-{args.n_fit + args.n_val} "
             "and one CutPaste copy of each; test images unused. Mean over classes and seeds "
             f"({', '.join(CLASSES)}; seeds {', '.join(map(str, args.seeds))}). w: weight of the standardised MADCluster term."), "",
             "| base | configuration | w | val image AUROC | val pixel AUROC |", "|---|---|---|---|---|"]
    keys = sorted({(r["model"], r["config"], r["weight"]) for r in rows},
                  key=lambda k: (args.models.index(k[0]), args.configs.index(k[1]), -k[2]))
    for model, config, weight in keys:
        chosen = [r for r in rows if (r["model"], r["config"], r["weight"]) == (model, config, weight)]
        image = np.mean([r["image_auroc"] for r in chosen])
        pixel = np.mean([r["pixel_auroc"] for r in chosen])
        lines.append(f"| {model} | {config} | {'-' if config == 'alone' else weight} | {image:.3f} | {pixel:.3f} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
