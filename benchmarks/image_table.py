"""The paper's two image tables (image- and pixel-level AUROC, alone vs + MADCluster) and figures.

On the generated texture-defect set (made from --data-seed into --data if --root is not given):

    python benchmarks/image_table.py --out benchmarks/results/image

On MVTec AD (the paper's setting: WideResNet-50-2 teacher from a torchvision .pth, 256 px, 10 epochs):

    python benchmarks/image_table.py --root /path/to/mvtec_ad --image-size 256 \
        --backbone wide_resnet50_2 --weights wide_resnet50_2.pth --out results/mvtec

Runs are appended to <out>/runs.jsonl as they finish; rerunning the same command resumes. One torch
thread, fixed seeds: the same command gives the same numbers.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

from madcluster.images.io import mvtec_classes
from madcluster.images.report import write_figures, write_tables
from madcluster.images.synthetic import CLASSES, make_texture_defects
from madcluster.images.table import CONFIGS, Run, run_table


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", type=Path, help="an MVTec AD root (class folders); default: the generated set")
    p.add_argument("--data", type=Path, default=Path("/tmp/madcluster-textures"), help="where the generated set goes")
    p.add_argument("--data-seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/image"))
    p.add_argument("--classes", nargs="+")
    p.add_argument("--models", nargs="+", default=["rd4ad", "pyramidflow"])
    p.add_argument("--configs", nargs="+", default=["alone", "paper", "pixels"], choices=list(CONFIGS))
    p.add_argument("--seeds", nargs="+", type=int, default=[0])
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--n-train", type=int, help="first N training images of each class (default: all)")
    p.add_argument("--image-size", type=int, default=64)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--backbone", default="resnet18", help="RD4AD's teacher (the paper: wide_resnet50_2)")
    p.add_argument("--weights", help="RD4AD teacher's torchvision .pth (default: random, frozen teacher)")
    p.add_argument("--tables-only", action="store_true", help="rewrite tables and figures from runs.jsonl")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    torch.set_num_threads(1)
    root = args.root
    if root is None:
        root = args.data / f"seed{args.data_seed}"
        if not root.exists():
            make_texture_defects(root, seed=args.data_seed, size=args.image_size)
    classes = args.classes or (mvtec_classes(root) if args.root else list(CLASSES))
    settings = {"image_size": args.image_size, "epochs": args.epochs, "batch_size": args.batch_size, "lr": args.lr}
    params = {"rd4ad": {"backbone": args.backbone, "weights": args.weights}, "pyramidflow": {}}
    # class-major order, so that an interrupted table still has whole rows
    runs = [Run(cls, model, config, seed) for seed in args.seeds for cls in classes
            for model in args.models for config in args.configs]
    t0 = time.perf_counter()
    if not args.tables_only:
        run_table(root, args.out, runs, settings, params, args.n_train, log=lambda line: print(line, flush=True))
    from madcluster.images.table import load_runs

    rows = {k: r for k, r in load_runs(args.out / "runs.jsonl").items()
            if r["cls"] in classes and r["model"] in args.models and r["config"] in args.configs and r["seed"] in args.seeds}
    data = "MVTec AD at " + str(root) if args.root else f"the generated texture-defect set (data seed {args.data_seed}; NOT MVTec AD)"
    given = [a for a in (sys.argv[1:] if argv is None else argv) if a != "--tables-only"]  # the runs' command
    header = (f"## Image tables on {data}\n\nCommand: `python benchmarks/image_table.py {' '.join(given)}`"
              f"\n\n{args.epochs} epochs, {args.n_train or 'all'} training images a class, {args.image_size} px, batch {args.batch_size}, lr {args.lr}; RD4AD teacher "
              f"{args.backbone} ({'weights ' + args.weights if args.weights else 'random, frozen: not the paper teacher'}).")
    print(write_tables(rows, args.out, args.models, classes, header))
    for path in write_figures(root, args.out, args.models, classes, args.image_size, args.seeds[0]):
        print(path)
    print(f"done in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
