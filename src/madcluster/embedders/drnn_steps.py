"""One row at a time through a Dilated RNN: the streaming scorer's fast path.

A causal model scores step t from its window on the fixed grid (starts every ``stride`` steps,
:func:`~madcluster.data.windows.causal_window_of`). Rerunning that window for each new row costs
a whole window of recurrent steps per layer. Here every window that is still open (started, not
yet ``window_size`` long; at most ``ceil(L / s)``) keeps, per layer of dilation d, its last d
outputs: the hidden states its d interleaved sub-sequences continue from (the fold of
:func:`~madcluster.embedders.drnn.dilate`). A new row is then one recurrent step per layer for all
open windows at once.

The step calls the layer's own RNN module, so the arithmetic is that of the whole-window pass;
batches are padded to ``min_batch`` rows, as the whole-window pass pads its batches, so the CPU
kernels take the same path (tests/embedders/test_drnn_steps.py checks the outputs match).
"""

from __future__ import annotations

import numpy as np
import torch

from madcluster.data.windows import causal_window_of, gather_windows, pad_for_windows
from madcluster.embedders.drnn import DilatedRNN

# nn.RNNBase.mode -> the function its forward calls (one layer, eval, one direction, batch first)
KERNELS = {"GRU": torch.gru, "RNN_TANH": torch.rnn_tanh, "RNN_RELU": torch.rnn_relu}


class DilatedRNNSteps:
    """Open windows' per-layer states of a :class:`DilatedRNN`; :meth:`advance` feeds one row."""

    def __init__(self, embedder: DilatedRNN, window_size: int, stride: int, min_batch: int) -> None:
        self.embedder = embedder
        self.window_size, self.stride, self.min_batch = window_size, stride, min_batch
        self.device = next(embedder.parameters()).device
        self.dtype = next(embedder.parameters()).dtype  # rows of any float type are cast to it
        self.starts: list[int] = []  # open windows' first steps, oldest first
        # per layer [W, dilation, H]: the window's outputs at positions p - d .. p - 1, slot p % d
        self.states: list[torch.Tensor] = []

    @staticmethod
    def supports(embedder: object, precision: object) -> bool:
        """Whether ``embedder`` can step: a D-RNN of GRU or plain RNN cells without the
        next-step predictor, run in full precision."""
        return (
            isinstance(embedder, DilatedRNN)
            and embedder.predictor is None
            and precision is None
            and all(isinstance(layer, (torch.nn.GRU, torch.nn.RNN)) for layer in embedder.layers)
        )

    def advance(self, row: torch.Tensor, step: int) -> torch.Tensor:
        """Feed model input ``row [C]`` of stream step ``step`` (steps must come in order) and
        return the last layer's output ``[H]`` in the window that scores ``step``."""
        return self._feed(row, step)[self.starts.index(self.window_of(step))]

    @torch.inference_mode()
    def replay(self, rows: torch.Tensor, first_step: int) -> None:
        """Rebuild the open windows from their rows ``[n, C]``, the first of which is step
        ``first_step`` = :meth:`window_of` the next step: one batched pass over the windows (the
        whole-window pass of the detector, so the states are the ones stepping would have built)."""
        next_step = first_step + len(rows)
        self.starts = list(range(first_step, next_step, self.stride))
        if not self.starts:
            self.states = []
            return
        local = np.asarray(self.starts) - first_step
        rows = rows.to(self.dtype)
        batch = gather_windows(
            pad_for_windows(rows, local, self.window_size), local, self.window_size
        )
        n_open = len(batch)
        if n_open < self.min_batch:
            batch = torch.cat([batch, batch[-1:].expand(self.min_batch - n_open, *batch.shape[1:])])
        outputs = self.embedder.layer_outputs(batch)
        self.states = []
        for out, dilation in zip(outputs, self.embedder.dilations):
            states = out.new_zeros(n_open, dilation, out.shape[-1])
            for i, start in enumerate(self.starts):
                last = next_step - 1 - start  # the window's last position fed
                for position in range(max(0, last - dilation + 1), last + 1):
                    states[i, position % dilation] = out[i, position]
            self.states.append(states)

    @torch.inference_mode()
    def _feed(self, row: torch.Tensor, step: int) -> torch.Tensor:
        """One step of every open window; the last layer's outputs ``[W, H]``."""
        self._open_and_close(step)
        n_open = len(self.starts)
        index = torch.arange(n_open, device=self.device)
        positions = torch.as_tensor([step - start for start in self.starts], device=self.device)
        h = row.to(self.dtype).reshape(1, 1, -1).expand(n_open, 1, row.shape[-1])
        for layer, dilation, states in zip(
            self.embedder.layers, self.embedder.dilations, self.states
        ):
            slots = positions % dilation
            hidden = states[index, slots]  # [W, H]: the sub-sequence's state before this step
            h = self._step(layer, h, hidden)
            states[index, slots] = h[:, 0]
        return h[:, 0]

    def window_of(self, step: int) -> int:
        """First step of the window that scores ``step``: the oldest window open at ``step``
        (:func:`~madcluster.data.windows.causal_window_of`)."""
        return int(causal_window_of(np.asarray([step]), self.window_size, self.stride)[0])

    def _step(self, layer: torch.nn.Module, x: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
        n = len(x)
        if n < self.min_batch:  # the kernels' small-batch path rounds differently
            x = torch.cat([x, x[-1:].expand(self.min_batch - n, *x.shape[1:])])
            hidden = torch.cat([hidden, hidden[-1:].expand(self.min_batch - n, -1)])
        x, hidden = x.contiguous(), hidden.unsqueeze(0).contiguous()
        kernel = KERNELS.get(getattr(layer, "mode", None))
        if kernel is None:
            return layer(x, hidden)[0][:n]
        # the call nn.GRU / nn.RNN make (same kernel, same numbers) without their per-call checks
        # of the weights and arguments: a third of a one-row step's time
        return kernel(x, hidden, layer._flat_weights, layer.bias, 1, 0.0, False, False, True)[0][:n]

    def _open_and_close(self, step: int) -> None:
        """Drop windows that ended before ``step``; open the window that starts at ``step``."""
        closed = sum(1 for start in self.starts if step - start >= self.window_size)
        if closed:
            self.starts = self.starts[closed:]
            self.states = [states[closed:] for states in self.states]
        if step % self.stride == 0:
            hidden = self.embedder.out_features
            self.starts.append(step)
            fresh = [
                torch.zeros(1, d, hidden, device=self.device, dtype=self.dtype)
                for d in self.embedder.dilations
            ]
            self.states = (
                fresh
                if len(self.states) == 0
                else [torch.cat([s, f]) for s, f in zip(self.states, fresh)]
            )
