"""Training and scoring speed of MADCluster-DRNN on MSL-sized input (58,317 x 55, window 100), CPU.

    python benchmarks/studies/speed/bench_drnn.py                 # one epoch at stride 1 (every window)
    python benchmarks/studies/speed/bench_drnn.py --stride 10     # faster: one epoch over every 10th window

Reports seconds per epoch, training windows/s, and scoring throughput in points/s. As a reference
in the same process it also times a naive dilated RNN that loops over time steps with a GRUCell
(what folding time into the batch avoids), on a few batches, and prints the ratio.
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
import torch

from madcluster import MADCluster
from madcluster.embedders.drnn import DilatedRNN


def naive_dilated_forward(model: DilatedRNN, x: torch.Tensor) -> torch.Tensor:
    """Reference: a Python loop over time steps, h_t = cell(x_t, h_{t-d}), same weights."""
    h_in = x
    for rnn, d in zip(model.layers, model.dilations):
        cell = torch.nn.GRUCell(rnn.input_size, rnn.hidden_size)
        cell.weight_ih.data, cell.weight_hh.data = rnn.weight_ih_l0.data, rnn.weight_hh_l0.data
        cell.bias_ih.data, cell.bias_hh.data = rnn.bias_ih_l0.data, rnn.bias_hh_l0.data
        outs: list[torch.Tensor] = []
        zero = x.new_zeros(x.shape[0], rnn.hidden_size)
        for t in range(h_in.shape[1]):
            outs.append(cell(h_in[:, t], outs[t - d] if t >= d else zero))
        h_in = torch.stack(outs, dim=1)
    return h_in


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stride", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    n_train, n_test, dim = 58_317, 73_729, 55
    t = np.arange(n_train + n_test)[:, None]
    data = (np.sin(t / rng.uniform(5, 50, size=dim)) + 0.1 * rng.normal(size=(len(t), dim))).astype(np.float32)
    train, test = data[:n_train], data[n_train:]
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {platform.processor() or platform.machine()}")

    model = MADCluster(epochs=1, stride=args.stride, batch_size=args.batch_size, validation_size=0.0, random_state=0)
    t0 = time.perf_counter()
    model.fit(train)
    fit_s = time.perf_counter() - t0
    epoch_s = model.history_["seconds"][0]
    n_windows = len(range(0, n_train - 100 + 1, args.stride))
    print(f"fit (init pass + 1 epoch + training scores): {fit_s:.1f} s")
    print(f"epoch at stride {args.stride}: {epoch_s:.1f} s, {n_windows} windows, {n_windows / epoch_s:.0f} windows/s")
    t0 = time.perf_counter()
    model.decision_function(test)
    score_s = time.perf_counter() - t0
    print(f"scoring {n_test} points: {score_s:.2f} s = {n_test / score_s:,.0f} points/s")

    # same-process reference: folded (ours) vs naive time-step loop, forward+backward on 4 batches
    emb = DilatedRNN(dim)
    x = torch.from_numpy(np.stack([train[i : i + 100] for i in range(0, 128 * 100, 100)]))
    timings = {}
    for name, fn in (("folded", lambda: emb(x).h), ("naive loop", lambda: naive_dilated_forward(emb, x))):
        t0 = time.perf_counter()
        for _ in range(4):
            fn().pow(2).mean().backward()
        timings[name] = (time.perf_counter() - t0) / 4
    with torch.no_grad():
        assert torch.allclose(emb(x).h, naive_dilated_forward(emb, x), atol=1e-4), "folded D-RNN differs from the loop"
    print(f"one training batch (128 x 100 x 55, fwd+bwd): folded {timings['folded'] * 1e3:.0f} ms, "
          f"naive loop {timings['naive loop'] * 1e3:.0f} ms -> {timings['naive loop'] / timings['folded']:.1f}x faster")


if __name__ == "__main__":
    main()
