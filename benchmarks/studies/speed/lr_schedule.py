"""Issue 36 item 1, the learning-rate schedule lever: can fewer epochs at a higher, decaying rate
reach the 20-epoch default's quality on the 20,000 x 6 series of ``fit_budget.py``?

    python benchmarks/studies/speed/lr_schedule.py --run 20:1e-3:1e-3:0 8:3e-3:1e-4:1 --out /tmp/lr.jsonl

Each ``EPOCHS:PEAK:FINAL:WARM`` fits the default with that many epochs; the rate rises linearly
to PEAK over WARM epochs, then follows a cosine from PEAK to FINAL over the rest (PEAK = FINAL:
a constant rate; ``20:1e-3:1e-3:0`` is the default). The schedule is set on the D-RNN's optimizer
at each epoch's end (the hook ``BaseEmbedder.on_epoch_end`` that learning-rate schedules use),
patched in this process only. Prints and appends one JSON line per fit: CPU seconds (one torch
thread) and the test ROC-AUC by anomaly kind (the suite's seasonal base, 20,000 training and
10,000 test rows, seed ``--seed``).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import torch

from madcluster import MADCluster
from madcluster.data.synthetic import make_anomaly_suite, roc_auc_by_kind
from madcluster.embedders.drnn import DilatedRNN


def rate_at(epoch: int, epochs: int, peak: float, final: float, warm: int) -> float:
    """The learning rate of (1-based) ``epoch``: linear warm-up, then a cosine to ``final``."""
    if epoch <= warm:
        return peak * epoch / warm
    frac = (epoch - warm - 1) / max(epochs - warm - 1, 1)
    return final + 0.5 * (peak - final) * (1.0 + math.cos(math.pi * frac))


def scheduled_fit(epochs: int, peak: float, final: float, warm: int, seed: int) -> dict:
    optimizers: list = []
    configure = DilatedRNN.configure_optimizers

    def set_rate(epoch: int) -> None:
        for optimizer in optimizers:
            for group in optimizer.param_groups:
                group["lr"] = rate_at(epoch, epochs, peak, final, warm)

    def configure_and_keep(self, head_params, *, lr, weight_decay):
        optimizers[:] = configure(self, head_params, lr=lr, weight_decay=weight_decay)
        set_rate(1)
        return optimizers

    DilatedRNN.configure_optimizers = configure_and_keep
    DilatedRNN.on_epoch_end = lambda self, epoch: set_rate(epoch + 1)
    try:
        data = make_anomaly_suite("seasonal", n_train=20_000, n_test=10_000, seed=seed)
        model = MADCluster(random_state=seed, epochs=epochs)
        started = time.process_time()
        model.fit(data.train)
        cpu = time.process_time() - started
        aucs = roc_auc_by_kind(model.decision_function(data.test), data.kinds, data.kind_names)
    finally:
        DilatedRNN.configure_optimizers = configure
        del DilatedRNN.on_epoch_end  # back to BaseEmbedder's
    return {
        "epochs": epochs, "peak": peak, "final": final, "warm": warm, "seed": seed,
        "epochs_run": len(model.history_["seconds"]), "fit_cpu_seconds": round(cpu, 1),
        "roc_auc": {k: round(v, 4) for k, v in aucs.items()},
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", nargs="+", required=True, metavar="EPOCHS:PEAK:FINAL:WARM")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, help="append each JSON line here too")
    args = parser.parse_args()
    torch.set_num_threads(1)
    for spec in args.run:
        epochs, peak, final, warm = spec.split(":")
        line = json.dumps(scheduled_fit(int(epochs), float(peak), float(final), int(warm), args.seed))
        print(line, flush=True)
        if args.out is not None:
            with args.out.open("a") as out:
                out.write(line + "\n")


if __name__ == "__main__":
    main()
