"""What one D-RNN training step costs on a CPU, and what the alternatives of issue 36 item 3 do to it.

    python benchmarks/studies/speed/epoch_cost.py            # one thread; a JSON line per variant
    python benchmarks/studies/speed/epoch_cost.py --threads 2

A step is the default fit's: a batch of 128 windows of 100 steps x 12 channels (6 columns and their
roughness channels), forward through the default D-RNN (3 GRU layers of 64, dilations 1, 2, 4),
a loss on h, backward and an Adam step; CPU seconds per step (median of ``--repeats`` blocks of 8
steps). Variants:

* ``nn.GRU``: the default (ATen's CPU GRU; autograd records each cell's operations);
* ``manual BPTT``: the GRU as one autograd Function, input projections in one matrix product, the
  backward through time written out, the weight gradients as one product over all steps (the
  same numbers to 1e-14 in float64, checked here);
* ``manual BPTT, scripted loops``: the same with the two loops in TorchScript;
* ``torch.compile``: the module compiled (inductor; its first step, the compile, is reported apart);
* lighter networks: hidden size 32, two layers of 32, the plain tanh RNN cell.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import torch
import torch.nn.functional as F
from torch import nn

from madcluster.embedders import drnn
from madcluster.embedders.drnn import DilatedRNN


class ManualGRU(torch.autograd.Function):
    """One GRU layer (zero initial state, batch first) with its backward through time written out."""

    @staticmethod
    def forward(ctx, x, w_ih, w_hh, b_ih, b_hh):
        batch, steps, _ = x.shape
        hidden = w_hh.shape[1]
        gi = torch.addmm(b_ih, x.reshape(batch * steps, -1), w_ih.t()).view(batch, steps, 3 * hidden).transpose(0, 1).contiguous()
        out, gates, hn = x.new_empty(steps, batch, hidden), x.new_empty(steps, batch, 3 * hidden), x.new_empty(steps, batch, hidden)
        ctx.loops[0](gi, w_hh.t(), b_hh, out, gates, hn)
        ctx.save_for_backward(x, w_ih, w_hh, out, gates, hn)
        return out.transpose(0, 1)

    @staticmethod
    def backward(ctx, grad_out):
        x, w_ih, w_hh, out, gates, hn = ctx.saved_tensors
        steps, batch, hidden = out.shape
        dgi, dgh = x.new_empty(steps, batch, 3 * hidden), x.new_empty(steps, batch, 3 * hidden)
        ctx.loops[1](grad_out.transpose(0, 1).contiguous(), out, gates, hn, w_hh, dgi, dgh)
        previous = torch.cat([out.new_zeros(1, batch, hidden), out[:-1]]).reshape(steps * batch, hidden)
        flat_dgi = dgi.transpose(0, 1).reshape(batch * steps, 3 * hidden)
        flat_dgh = dgh.reshape(steps * batch, 3 * hidden)
        return ((flat_dgi @ w_ih).view(batch, steps, -1), flat_dgi.t() @ x.reshape(batch * steps, -1),
                flat_dgh.t() @ previous, flat_dgi.sum(0), flat_dgh.sum(0))


def forward_loop(gi: torch.Tensor, w_hh_t: torch.Tensor, b_hh: torch.Tensor, out: torch.Tensor, gates: torch.Tensor,
                 hn_all: torch.Tensor) -> None:
    hidden = w_hh_t.shape[0]
    h = gi.new_zeros(gi.shape[1], hidden)
    for t in range(gi.shape[0]):
        gh = torch.addmm(b_hh, h, w_hh_t)
        rz = torch.sigmoid(gi[t, :, : 2 * hidden] + gh[:, : 2 * hidden])
        hn = gh[:, 2 * hidden :]
        n = torch.tanh(torch.addcmul(gi[t, :, 2 * hidden :], rz[:, :hidden], hn))
        h = torch.lerp(n, h, rz[:, hidden:])  # n + z (h - n)
        out[t] = h
        gates[t, :, : 2 * hidden] = rz
        gates[t, :, 2 * hidden :] = n
        hn_all[t] = hn


def backward_loop(grad_out: torch.Tensor, out: torch.Tensor, gates: torch.Tensor, hn_all: torch.Tensor, w_hh: torch.Tensor,
                  dgi: torch.Tensor, dgh: torch.Tensor) -> None:
    steps, hidden = out.shape[0], out.shape[2]
    dh = out.new_zeros(out.shape[1], hidden)
    zero = out.new_zeros(out.shape[1], hidden)
    for i in range(steps):
        t = steps - 1 - i
        r, z, n = gates[t, :, :hidden], gates[t, :, hidden : 2 * hidden], gates[t, :, 2 * hidden :]
        previous = out[t - 1] if t > 0 else zero
        dh = dh + grad_out[t]
        dn = dh * (1 - z) * (1 - n * n)
        dz = dh * (previous - n) * z * (1 - z)
        dr = dn * hn_all[t] * r * (1 - r)
        dgi[t, :, :hidden] = dr
        dgi[t, :, hidden : 2 * hidden] = dz
        dgi[t, :, 2 * hidden :] = dn
        dgh[t, :, :hidden] = dr
        dgh[t, :, hidden : 2 * hidden] = dz
        dgh[t, :, 2 * hidden :] = dn * r
        dh = torch.addmm(dh * z, dgh[t], w_hh)


def manual_dilate(loops):
    def run(rnn: nn.GRU, x: torch.Tensor) -> torch.Tensor:
        class Bound(ManualGRU):
            pass

        def forward(ctx, *args):
            ctx.loops = loops
            return ManualGRU.forward(ctx, *args)

        Bound.forward = staticmethod(forward)
        return Bound.apply(x, rnn.weight_ih_l0, rnn.weight_hh_l0, rnn.bias_ih_l0, rnn.bias_hh_l0)

    def dilate(rnn: nn.GRU, x: torch.Tensor, dilation: int) -> torch.Tensor:  # drnn.dilate with the manual GRU
        if dilation == 1:
            return run(rnn, x)
        batch, length, channels = x.shape
        pad = (-length) % dilation
        if pad:
            x = F.pad(x, (0, 0, 0, pad))
        steps = (length + pad) // dilation
        folded = x.reshape(batch, steps, dilation, channels).transpose(1, 2).reshape(batch * dilation, steps, channels)
        out = run(rnn, folded)
        out = out.reshape(batch, dilation, steps, -1).transpose(1, 2).reshape(batch, steps * dilation, -1)
        return out[:, :length]

    return dilate


def check_manual(dilate) -> float:
    """Largest difference of outputs and gradients against nn.GRU, float64."""
    torch.manual_seed(1)
    net = DilatedRNN(12).double()
    x = torch.randn(8, 40, 12, dtype=torch.float64)
    reference = net(x).h
    grads = torch.autograd.grad(reference.pow(2).sum(), list(net.parameters()))
    original, drnn.dilate = drnn.dilate, dilate
    try:
        mine = net(x).h
        mine_grads = torch.autograd.grad(mine.pow(2).sum(), list(net.parameters()))
    finally:
        drnn.dilate = original
    return max(float((reference - mine).detach().abs().max()), *(float((a - b).abs().max()) for a, b in zip(grads, mine_grads)))


def step_seconds(net: nn.Module, forward, repeats: int) -> tuple[float, float]:
    torch.manual_seed(0)
    x = torch.randn(128, 100, 12)
    optimizer = torch.optim.Adam(net.parameters(), 1e-3)

    def step() -> None:
        loss = forward(x).h.pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    started = time.process_time()
    step()
    first = time.process_time() - started
    blocks = []
    for _ in range(repeats):
        started = time.process_time()
        for _ in range(8):
            step()
        blocks.append((time.process_time() - started) / 8)
    return first, statistics.median(blocks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-compile", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    python_loops = (forward_loop, backward_loop)
    scripted_loops = (torch.jit.script(forward_loop), torch.jit.script(backward_loop))
    variants = [("nn.GRU", {}, None), ("manual BPTT", {}, python_loops), ("manual BPTT, scripted loops", {}, scripted_loops)]
    if not args.skip_compile:
        variants.append(("torch.compile", {}, "compile"))
    variants += [("hidden 32", {"hidden_size": 32}, None), ("2 layers of 32", {"hidden_size": 32, "n_layers": 2}, None),
                 ("tanh RNN cell", {"cell": "rnn"}, None), ("nn.GRU again", {}, None)]
    for name, size, how in variants:
        torch.manual_seed(0)
        net = DilatedRNN(12, **size)
        forward, note = net, {}
        original = drnn.dilate
        if isinstance(how, tuple):
            note["max_difference_float64"] = check_manual(manual_dilate(how))
            drnn.dilate = manual_dilate(how)
        elif how == "compile":
            forward = torch.compile(net)
        try:
            first, seconds = step_seconds(net, forward, args.repeats)
        finally:
            drnn.dilate = original
        print(json.dumps({"variant": name, "threads": args.threads, "step_cpu_seconds": round(seconds, 4),
                          "first_step_cpu_seconds": round(first, 3), **note}), flush=True)


if __name__ == "__main__":
    main()
