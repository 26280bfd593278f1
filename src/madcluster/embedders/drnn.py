"""Dilated RNN Base Embedder (Chang et al., NeurIPS 2017), the paper's default.

Layer i is a recurrent layer with dilation 2**i: step t is connected to step t - 2**i. A dilation
of d is the same as running an ordinary RNN over the d interleaved sub-sequences t = r, r+d, r+2d,
..., so we fold time into the batch dimension (``[B, L, C] -> [B*d, L/d, C]``) and each layer is a
single cuDNN/MKL RNN call, with no Python loop over time steps.
"""

from __future__ import annotations

from typing import Any, ClassVar

import torch
import torch.nn.functional as F
from torch import nn

from madcluster.embedders.base import BaseEmbedder, EmbedderOutput
from madcluster.exceptions import ParameterError

CELLS = {"gru": nn.GRU, "lstm": nn.LSTM, "rnn": nn.RNN}


def dilate(rnn: nn.Module, x: torch.Tensor, dilation: int) -> torch.Tensor:
    """Run ``rnn`` (batch_first) over ``x [B, L, C]`` with the given dilation; returns
    ``[B, L, H]``."""
    if dilation == 1:
        return rnn(x)[0]
    batch, length, channels = x.shape
    pad = (-length) % dilation
    if pad:  # pad at the end: the RNN is causal, so real steps never see the padding
        x = F.pad(x, (0, 0, 0, pad))
    steps = (length + pad) // dilation
    folded = (
        x.reshape(batch, steps, dilation, channels)
        .transpose(1, 2)
        .reshape(batch * dilation, steps, channels)
    )
    out = rnn(folded)[0]
    hidden = out.shape[-1]
    out = (
        out.reshape(batch, dilation, steps, hidden)
        .transpose(1, 2)
        .reshape(batch, steps * dilation, hidden)
    )
    return out[:, :length]


AUXILIARY = ("next-step", "none")


class DilatedRNN(BaseEmbedder):
    """Stacked RNN layers with dilations 1, 2, 4, ...; h is the last layer's output.

    Defaults: 3 GRU layers of 32 units (dilations 1, 2, 4), so f = 32. The paper's are 64 units (its
    parameter count grows by about 70 when MADCluster is added, i.e. a center of about 64
    components): ``paper`` and the benchmark's Table 1 rows pin them. 32 units keep the default's
    quality within .005 on the 46 TSB-AD series, the synthetic suite and every development family
    (two or three seeds) at about 0.72 of the fit (benchmarks/results/fit_budget.md).

    Two remedies against hypersphere collapse are options, both measured and both off by default
    because they lowered the ROC-AUC of the synthetic suite and MSL's VUS-PR (the measurements are
    with the benchmark results):
    ``bias=False`` removes the RNN biases (DeepSVDD's remedy, Ruff et al. 2018, Prop. 2: a network
    with biases can map every input onto c); it keeps q more spread, but ranked worse.
    ``auxiliary="next-step"`` adds a linear map from h_t to x_{t+1}: its mean squared error becomes
    the D-RNN's own loss and its per-step error its own score, as a base detector's would be; the
    prediction loss and the distance loss then compete for h.
    """

    causal = True
    # the roughness channels the estimator adds by default (measured: docs/method.md)
    default_roughness_window = 3
    # 15 steps of 32 windows an epoch, not of 128: a step's cost is set by the 175 sequential cell
    # steps, not the batch, so on a CPU a fit takes about half the time, within .005 of batches of
    # 128 on the 46 TSB-AD series and the synthetic suite over two seeds
    # (benchmarks/results/fit_budget.md)
    training_batch = (32, 480)
    # the paper's D-RNN (its 64 units; the other defaults pinned)
    paper_params: ClassVar[dict[str, Any]] = {"hidden_size": 64, "auxiliary": "none", "bias": True}
    size_options: ClassVar[dict[str, str]] = {"hidden_size": "hidden_size", "n_layers": "layers"}

    def __init__(
        self,
        n_features: int,
        hidden_size: int = 32,
        n_layers: int = 3,
        cell: str = "gru",
        dropout: float = 0.0,
        auxiliary: str = "none",
        bias: bool = True,
    ) -> None:
        super().__init__()
        if cell not in CELLS:
            raise ParameterError(f"unknown cell {cell!r}; choose one of {', '.join(CELLS)}")
        if auxiliary not in AUXILIARY:
            raise ParameterError(
                f"unknown auxiliary {auxiliary!r}; choose one of {', '.join(AUXILIARY)}"
            )
        if n_layers < 1 or hidden_size < 1:
            raise ParameterError("n_layers and hidden_size must be >= 1")
        self.dilations = [2**i for i in range(n_layers)]
        self.layers = nn.ModuleList(
            CELLS[cell](
                n_features if i == 0 else hidden_size, hidden_size, batch_first=True, bias=bias
            )
            for i in range(n_layers)
        )
        self.auxiliary = auxiliary
        self.predictor = nn.Linear(hidden_size, n_features) if auxiliary == "next-step" else None
        self.dropout = nn.Dropout(dropout)
        self.out_features = hidden_size

    def layer_outputs(self, x: torch.Tensor) -> list[torch.Tensor]:
        """Every layer's output ``[B, L, H]``, bottom first (THOC clusters each one)."""
        outputs: list[torch.Tensor] = []
        h = x
        for i, (rnn, dilation) in enumerate(zip(self.layers, self.dilations)):
            if i:
                h = self.dropout(h)
            h = dilate(rnn, h, dilation)
            outputs.append(h)
        return outputs

    def forward(self, x: torch.Tensor) -> EmbedderOutput:
        h = self.layer_outputs(x)[-1]
        if self.predictor is None:
            return EmbedderOutput(h=h)
        return EmbedderOutput(h=h, **next_step_error(self.predictor(h), x))


def next_step_error(prediction: torch.Tensor, x: torch.Tensor) -> dict[str, torch.Tensor]:
    """Loss and per-step score of predicting x_{t+1} from h_t, for windows ``x [B, L, D]``.

    The score at step t is the error of the prediction made at t - 1; step 0 has none and takes
    step 1's (scoring only uses position 0 for the first point of a series).
    """
    error = (prediction[:, :-1] - x[:, 1:]).pow(2).mean(dim=-1)  # [B, L - 1]: error at steps 1..L-1
    score = torch.cat([error[:, :1], error], dim=1)
    return {"loss": error.mean(), "score": score}
