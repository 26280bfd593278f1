"""Fit the default once per development series and dump what the evidence study reads.

Why: the network is the one expensive part of a fit. Choosing how evidence becomes weights means
trying many rules over the same series, so each series' network readings are dumped once: the own
score on the test rows and on every injected copy of the held-out training rows (with the copies
themselves), and the default's ``decision_function``. The cheap parts are refitted by the reader
(``analyse.py``), so a change to a cheap part does not need new fits.

    python benchmarks/studies/parts/dev_bundle.py --data-dir ../shared/datasets --out BUNDLE.npz
    python benchmarks/studies/evidence/fit_dump.py --bundle BUNDLE.npz --out DUMPS/ [--family F ...]
    python benchmarks/studies/evidence/fit_dump.py --families-only --out DUMPS/   # generated ones

Each series is written to ``DUMPS/<name>.npz`` as soon as it is done (an interrupted run keeps
them; a rerun skips them).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: benchlib
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/studies/: lib
from lib import bundle_series, generated_series

SEED = 0


def dump_one(name: str, arrays: dict[str, np.ndarray], out: Path,
             kinds: tuple[str, ...] | None = None, models: Path | None = None) -> float:
    """Fit, read and write one series (copies with events of ``kinds``, the fit's by default;
    the fitted model too, into ``models``, so that new copies need no new fit); returns the fit's
    CPU seconds."""
    from madcluster import MADCluster
    from madcluster.score.evidence import holdout_start, injected_copies
    from madcluster.score.injection import KINDS
    from madcluster.training.loop import validation_rows

    train = np.asarray(arrays["train"], dtype=np.float32)
    test = np.asarray(arrays["test"], dtype=np.float32)
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        detector = MADCluster(random_state=SEED).fit(train)
        fit_cpu = time.process_time() - start
        if models is not None:
            models.mkdir(parents=True, exist_ok=True)
            detector.save(models / f"{name}.mcz")
        model = detector.model_
        data = model.inputs.check_rows(train)
        own_train = model.own_scores(model.inputs.model_input(data))
        rows_test = model.inputs.check_rows(test)
        own_test = model.own_scores(model.inputs.model_input(rows_test))
        default_test = detector.decision_function(test)
        n_val = validation_rows(len(data), detector.validation_size, detector.window_size)
        start = holdout_start(len(data), n_val, detector.window_size)
        copies = None if start is None else injected_copies(
            data[start:], data[:start].astype(np.float64).std(axis=0), detector.window_size, SEED,
            kinds or KINDS)
    record: dict[str, np.ndarray] = {
        "own_train": own_train, "own_test": own_test, "default_test": default_test,
        "labels": np.asarray(arrays["labels"]), "family": np.asarray(str(arrays["family"])),
        "train": train, "test": test,  # what was fitted, should a generator change later
        "n_validation": np.asarray(n_val), "fit_cpu": np.asarray(fit_cpu),
    }
    if copies is not None:
        for i, copy in enumerate(copies):
            record[f"copy{i}/rows"] = copy.rows.astype(np.float32)
            record[f"copy{i}/labels"] = copy.labels
            record[f"copy{i}/kinds"] = np.asarray(copy.kinds)
            record[f"copy{i}/starts"] = copy.starts
            record[f"copy{i}/ends"] = copy.ends
            # the own score on the copy (not its contribution): what the reader refits around
            record[f"copy{i}/own"] = model.own_scores(model.inputs.model_input(copy.rows.astype(np.float32)))
    tmp = out / f".{name}.tmp.npz"
    np.savez_compressed(tmp, **record)
    os.replace(tmp, out / f"{name}.npz")
    return fit_cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", help="development bundle from dev_bundle.py")
    parser.add_argument("--families-only", action="store_true", help="generated families only")
    parser.add_argument("--family", action="append", help="only these families (repeatable)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--reverse", action="store_true", help="last series first (a second worker)")
    parser.add_argument("--kinds", nargs="*", help="the injected kinds (default: the fit's); e.g. "
                        "the fit's and the whole-row ones: KINDS reorder transplant")
    parser.add_argument("--models", help="also save each fitted model (NAME.mcz) here")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    series = (generated_series(args.family) if args.families_only or not args.bundle
              else bundle_series(args.bundle, args.family))
    if args.reverse:
        series = reversed(list(series))
    from madcluster.score.injection import KINDS

    kinds = None
    if args.kinds:
        kinds = tuple(k for given in args.kinds for k in (KINDS if given == "KINDS" else (given,)))
    for name, arrays in series:
        if (out / f"{name}.npz").exists():
            continue
        fit_cpu = dump_one(name, arrays, out, kinds, Path(args.models) if args.models else None)
        print(f"{name}: fit {fit_cpu:.1f} CPU s", flush=True)


if __name__ == "__main__":
    main()
