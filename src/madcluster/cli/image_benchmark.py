"""``madcluster benchmark --images``: the options of the image table and the command that runs it
(:func:`madcluster.images.benchmark.run_image_benchmark`, the same function
``benchmarks/tables/image_table.py`` calls).

Shared with the time-series benchmark: ``--seeds``, ``--epochs``, ``--batch-size``, ``--lr``,
``--out``, ``--embedder-param``, ``--device``, ``--threads``, ``--no-resume``, ``--quiet``
(:data:`IMAGE_SHARED_OPTIONS`); ``madcluster benchmark`` refuses every other time-series option by
name when ``--images`` is given.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

IMAGE_SHARED_OPTIONS = {
    "seeds",
    "epochs",
    "batch_size",
    "lr",
    "out",
    "embedder_param",
    "device",
    "threads",
}
DEFAULT_OUT = "madcluster-results/image"

IMAGE_EPILOG = """\
Images (--images): the paper's two appendix tables, image- and pixel-level AUROC per class, each
model alone and + MADCluster at the same budget, the paper's numbers beside each row. Writes
<out>/runs.jsonl (one line per finished fit: a rerun of the same command resumes), <out>/tables.md
and <out>/figures/<class>-<model>.png (image, ground truth, each configuration's anomaly map);
`madcluster report <out>` shows both.

On the generated texture-defect set (seeded, MVTec layout, NOT MVTec AD; minutes on a CPU):
  madcluster benchmark --images generated --out results/image

To reproduce the paper (MVTec AD + ImageNet WideResNet-50-2 teacher, 256 px, 10 epochs), save the
teacher once where torchvision is installed:
  python -c "import torch, torchvision; torch.save(torchvision.models.wide_resnet50_2(
      weights='IMAGENET1K_V1').state_dict(), 'wrn50_2.pth')"
then run:
  madcluster benchmark --images /path/to/mvtec_ad --image-models rd4ad pyramidflow \\
      --configs alone paper --image-size 256 --epochs 10 --backbone wide_resnet50_2 \\
      --teacher-weights wrn50_2.pth --device cuda --out results/mvtec
"""


def add_image_benchmark_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "images (the paper's appendix tables; see the end of this help)"
    )
    group.add_argument(
        "--images",
        metavar="ROOT|generated",
        help="run the image table on an MVTec AD root (its <class>/train/good, test/<defect>, "
        "ground_truth/<defect>) or on the generated texture-defect set ('generated')",
    )
    group.add_argument(
        "--image-models",
        nargs="+",
        metavar="MODEL",
        default=None,
        help="image base models: rd4ad, pyramidflow (default: both)",
    )
    group.add_argument(
        "--configs",
        nargs="+",
        metavar="CONFIG",
        default=None,
        help="alone (the base model), paper (+ MADCluster, the appendix's [B, C, H*W]), "
        "pixels-w0.5 (+ MADCluster, the library's image default), pixels, channels-detached, "
        "pixels-detached, pixels-detached-w0.5 (docs/images.md) (default: alone paper pixels-w0.5)",
    )
    group.add_argument(
        "--classes", nargs="+", default=None, help="only these classes (default: every class)"
    )
    group.add_argument(
        "--image-size", type=int, default=None, help="side images are resized to (default: 64)"
    )
    group.add_argument(
        "--n-train", type=int, default=None, help="first N training images a class (default: all)"
    )
    group.add_argument(
        "--backbone",
        default=None,
        help="RD4AD's teacher architecture (default: resnet18; the paper: wide_resnet50_2)",
    )
    group.add_argument(
        "--teacher-weights",
        metavar="PATH",
        default=None,
        help="RD4AD teacher's torchvision state_dict (.pth); without it the teacher is random "
        "and frozen, NOT the paper's",
    )
    group.add_argument(
        "--data-seed", type=int, default=None, help="seed of the generated set (default: 0)"
    )
    group.add_argument(
        "--generated-dir",
        default=None,
        help="where the generated set is written once (default: <tmp>/madcluster-textures)",
    )
    parser.epilog = (parser.epilog or "") + "\n\n" + IMAGE_EPILOG


def image_benchmark_from_args(args: argparse.Namespace):
    """The :class:`ImageBenchmark` the flags describe (time-series-only flags were refused
    before)."""
    from madcluster.benchmark.config import parse_key_values
    from madcluster.images.benchmark import ImageBenchmark

    given = {
        "models": args.image_models,
        "configs": args.configs,
        "seeds": args.seeds,
        "classes": args.classes,
        "epochs": args.epochs,
        "n_train": args.n_train,
        "image_size": args.image_size,
        "batch_size": args.batch_size,
        "lr": args.lr,
        "backbone": args.backbone,
        "teacher_weights": args.teacher_weights,
        "embedder_params": parse_key_values(args.embedder_param),
        "data_seed": args.data_seed,
        "generated_dir": Path(args.generated_dir) if args.generated_dir else None,
        "device": args.device,
    }
    given = {k: tuple(v) if isinstance(v, list) else v for k, v in given.items() if v is not None}
    argv = getattr(args, "argv", None)
    command = "madcluster " + shlex.join(argv) if argv is not None else ""
    return ImageBenchmark(
        images=args.images,
        out=Path(args.out or DEFAULT_OUT),
        resume=args.resume,
        verbose=not args.quiet,
        command=command,
        **given,
    )


def run_image_benchmark_command(args: argparse.Namespace) -> int:
    from madcluster.cli.console import say
    from madcluster.cli.runtime_options import apply_runtime
    from madcluster.images.benchmark import run_image_benchmark

    bench = image_benchmark_from_args(args)
    apply_runtime(args)  # checks --device, sets --threads (default 1) before any data is read
    result = run_image_benchmark(bench, log=say)
    print(result.tables.read_text())
    print(
        f"{len(result.rows)} runs in the table: {result.n_run} run now, {result.n_resumed} resumed "
        "(finished before)"
    )
    print(
        f"tables written to {result.tables}; {len(result.figures)} anomaly-map figures in "
        f"{result.tables.parent / 'figures'}"
    )
    return 0
