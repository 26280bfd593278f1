"""Choose how + MADCluster combines with an image base model, on training images only.

For each class of the generated set, base model, configuration and seed: fit on the first
``n_fit`` training images, then score a validation set made of the next ``n_val`` good training
images and one CutPaste copy of each (:mod:`madcluster.images.cutpaste`: a generic defect, not one
of the generator's test defect types). Each fit is scored with the MADCluster term weighted by every
``--weights`` value in the image score and in the pixel map (the sum of standardised terms of
:func:`madcluster.score.scoring.combine_scores`); the test images are never read. Writes the validation
image / pixel AUROC of each option, averaged over classes and seeds, per base model, to
``<out>/selection.md`` (and every row to ``<out>/selection.jsonl``).

    python benchmarks/studies/models/image_combination_select.py --out benchmarks/results/image
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
from madcluster.score.scoring import combine_scores


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
    parser.add_argument("--val-start", type=int, default=24, help="first held-out image (of the first n-fit + n-val)")
    parser.add_argument("--image-size", type=int, default=64)
    parser.add_argument("--name", default="selection", help="output files <out>/<name>.md and .jsonl")
    parser.add_argument("--table-only", action="store_true", help="rewrite <name>.md from <name>.jsonl, no fits")
    parser.add_argument("--pool", nargs="+", metavar="NAME", default=None,
                        help="with --table-only: <name>.md from the rows of these runs together (e.g. two folds)")
    args = parser.parse_args(argv)
    args.argv = [a for a in (sys.argv[1:] if argv is None else argv) if a != "--table-only"]  # the command that makes it
    if args.table_only:
        rows = [json.loads(line) for name in (args.pool or [args.name])
                for line in (args.out / f"{name}.jsonl").read_text().splitlines() if line.strip()]
        rows = [r for r in rows if r["config"] in args.configs and (r["config"] == "alone" or r["weight"] in args.weights)]
        return write_selection(rows, args)
    torch.set_num_threads(1)
    root = ensure_generated(ImageBenchmark(images="generated", out=args.out, image_size=args.image_size))
    rows: list[dict] = []
    for cls in CLASSES:
        train, _ = read_mvtec_class(root / cls, args.image_size)  # the test split is not used
        first = train.images[: args.n_fit + args.n_val]
        held = np.arange(args.val_start, args.val_start + args.n_val) % len(first)
        fit_images = np.delete(first, held, axis=0)
        good = first[held]
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
    with atomic_path(args.out / f"{args.name}.jsonl") as tmp:
        Path(tmp).write_text("".join(json.dumps(r) + "\n" for r in rows))
    return write_selection(rows, args)


def write_selection(rows: list[dict], args: argparse.Namespace) -> int:
    with atomic_path(args.out / f"{args.name}.md") as tmp:
        Path(tmp).write_text(selection_table(rows, args))
    print((args.out / f"{args.name}.md").read_text())
    return 0


def selection_table(rows: list[dict], args: argparse.Namespace) -> str:
    """Per base model, configuration and weight: mean validation AUROC, their mean (the rule), and in
    how many classes the option is at least the base model alone (mean over seeds)."""
    seeds = sorted({r["seed"] for r in rows})
    how = (f"The rows of {', '.join(args.pool)} together (see each). " if args.pool else
           f"Per class: of the first {args.n_fit + args.n_val} training images, {args.n_val} from number "
           f"{args.val_start + 1} are held out and the model fits on the others; validation: the held-out "
           "images and one CutPaste copy of each; test images unused. ")
    lines = ["## Choosing the image combination on training images only (CutPaste validation)", "",
             f"Command: `python benchmarks/studies/models/image_combination_select.py {' '.join(args.argv)}`", "",
             (f"{how}Mean over classes and seeds "
              f"({', '.join(CLASSES)}; seeds {', '.join(map(str, seeds))}). w: weight of the standardised "
              "MADCluster term; mean: of the two AUROCs; >= alone: classes where the option is at least the "
              "base model alone (image, pixel)."), "",
             "| base | configuration | w | val image AUROC | val pixel AUROC | mean | >= alone |", "|---|---|---|---|---|---|---|"]
    alone = {(r["cls"], r["model"], r["seed"]): r for r in rows if r["config"] == "alone"}
    overall: dict[tuple[str, float], list[float]] = {}
    keys = sorted({(r["model"], r["config"], r["weight"]) for r in rows},
                  key=lambda k: (args.models.index(k[0]), args.configs.index(k[1]), -k[2]))
    for model, config, weight in keys:
        chosen = [r for r in rows if (r["model"], r["config"], r["weight"]) == (model, config, weight)]
        image = np.mean([r["image_auroc"] for r in chosen])
        pixel = np.mean([r["pixel_auroc"] for r in chosen])
        wins = {"image_auroc": 0, "pixel_auroc": 0}
        for cls in CLASSES:
            mine = [r for r in chosen if r["cls"] == cls]
            base = [alone[(cls, model, r["seed"])] for r in mine if (cls, model, r["seed"]) in alone]
            for metric in wins:
                if mine and len(base) == len(mine):
                    wins[metric] += np.mean([r[metric] for r in mine]) >= np.mean([r[metric] for r in base]) - 1e-12
        lines.append(f"| {model} | {config} | {'-' if config == 'alone' else weight} | {image:.3f} | {pixel:.3f} | "
                     f"{(image + pixel) / 2:.3f} | {wins['image_auroc']}, {wins['pixel_auroc']} |")
        overall.setdefault((config, weight), []).append((image + pixel) / 2)
    lines += ["", ("The rule (fixed before the final test table was run): the + MADCluster option with the highest "
                   "mean, over the base models, of the mean column."), "", "| configuration | w | mean over base models |", "|---|---|---|"]
    ranked = sorted(((np.mean(v), k) for k, v in overall.items() if k[0] != "alone" and len(v) == len(args.models)), reverse=True)
    lines += [f"| {config} | {weight} | {value:.3f}{' (chosen)' if i == 0 else ''} |" for i, (value, (config, weight)) in enumerate(ranked)]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
