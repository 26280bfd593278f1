"""Why + MADCluster can lose to the image base model: each score term's own test AUROC.

For a few classes of the generated set and each configuration, one fit (30 training images, 10
epochs, 64 px) and, on the test images, the image / pixel AUROC of: the base model's own term
(``base``: with joint training it is no longer the model alone), MADCluster's terms (``cluster``,
``distance``; pixel AUROC only in the ``pixels`` layout) and their standardised sum (``own``), and
the final combination. A diagnosis, not a selection: nothing here sets a default.

    python benchmarks/studies/models/image_term_diagnosis.py --classes weave disc --seeds 0
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

from madcluster.images.benchmark import ImageBenchmark, ensure_generated
from madcluster.images.detector import ImageMADCluster
from madcluster.images.io import read_mvtec_class
from madcluster.images.table import CONFIGS
from madcluster.metrics.image import image_auroc, pixel_auroc
from madcluster.score.scoring import head_score, standardize


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--classes", nargs="+", default=["weave", "disc"])
    parser.add_argument("--models", nargs="+", default=["rd4ad", "pyramidflow"])
    parser.add_argument("--configs", nargs="+", default=["alone", "paper", "pixels", "pixels-detached"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    root = ensure_generated(ImageBenchmark(images="generated", out=Path("."), image_size=64))
    for cls in args.classes:
        train, test = read_mvtec_class(root / cls, 64)
        for model in args.models:
            params = {"backbone": "resnet18"} if model == "rd4ad" else {}
            for config, seed in ((c, s) for c in args.configs for s in args.seeds):
                detector = ImageMADCluster(model, params, image_size=64, random_state=seed, **CONFIGS[config])
                detector.fit(train.images[:30])
                scores, maps = detector.score_terms(test.images)
                cells = []
                for name in scores:
                    pixel = f"{pixel_auroc(maps[name], test.masks):.3f}" if name in maps else "-"
                    cells.append(f"{name} {image_auroc(scores[name], test.labels):.3f}/{pixel}")
                if len(scores) > 1:
                    own = standardize(head_score(scores, detector.score_stats_, detector.score_scaling), detector.score_stats_["own"])
                    cells.append(f"own {image_auroc(own, test.labels):.3f}/-")
                final, final_map = detector.decision_and_map(test.images)
                cells.append(f"final {image_auroc(final, test.labels):.3f}/{pixel_auroc(final_map, test.masks):.3f}")
                print(f"{cls} {model} {config} seed {seed}: " + "  ".join(cells), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
