"""Adam without ``torch.optim``: the same updates, without importing ``torch._dynamo``.

Why: every ``torch.optim.Optimizer`` imports ``torch._dynamo`` on its first use (its methods are
wrapped to keep the compiler out), 1.2 to 1.5 CPU seconds per process here: a tenth of a default fit
that trains 4 epochs, and of every refit a service runs in a child process. This class performs
``torch.optim.Adam``'s single-tensor update (the one torch uses for CPU tensors) operation for
operation, so the parameters after any number of steps are the same to the bit
(``tests/embedders/test_adam.py``), on a CPU and elsewhere; ``torch.optim`` optimizers still work
wherever an embedder returns them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

import torch


class Optimizer(Protocol):
    """What the training loop and checkpoints use of an optimizer (``torch.optim``'s fit too)."""

    def zero_grad(self, set_to_none: bool = True) -> None: ...

    def step(self) -> Any: ...

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state_dict: dict[str, Any]) -> None: ...


class Adam:
    """Adam (Kingma & Ba) with L2 weight decay added to the gradient, per parameter group, as
    ``torch.optim.Adam(groups, lr=..., betas=...)`` with its other options at their defaults."""

    def __init__(
        self,
        params: Iterable[torch.nn.Parameter] | Iterable[dict[str, Any]],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
    ) -> None:
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay}
        groups = list(params)
        if not groups:
            raise ValueError("Adam got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        self.param_groups: list[dict[str, Any]] = []
        for group in groups:
            self.param_groups.append({**defaults, **group, "params": list(group["params"])})
        # per parameter: step (a float32 tensor, as torch's), exp_avg, exp_avg_sq
        self.state: dict[torch.Tensor, dict[str, torch.Tensor]] = {}

    def zero_grad(self, set_to_none: bool = True) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    p.grad.detach_()
                    p.grad.zero_()

    @torch.no_grad()
    def step(self) -> None:
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
            for param in group["params"]:
                if param.grad is None:
                    continue
                state = self.state.get(param)
                if state is None:
                    state = self.state[param] = {
                        "step": torch.tensor(0.0, dtype=torch.float32),
                        "exp_avg": torch.zeros_like(param, memory_format=torch.preserve_format),
                        "exp_avg_sq": torch.zeros_like(param, memory_format=torch.preserve_format),
                    }
                _update(param, state, lr, beta1, beta2, eps, weight_decay)

    def state_dict(self) -> dict[str, Any]:
        """Parameters by position, as ``torch.optim``'s state dicts (tensors shared, not copied)."""
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            ids = []
            for p in group["params"]:
                ids.append(index.setdefault(id(p), len(index)))
            groups.append({**{k: v for k, v in group.items() if k != "params"}, "params": ids})
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups) or any(
            len(saved["params"]) != len(group["params"])
            for saved, group in zip(saved_groups, self.param_groups)
        ):
            raise ValueError("the saved optimizer state has other parameter groups")
        by_index = {
            i: p
            for saved, group in zip(saved_groups, self.param_groups)
            for i, p in zip(saved["params"], group["params"])
        }
        for saved, group in zip(saved_groups, self.param_groups):
            group.update({k: v for k, v in saved.items() if k != "params"})
            group["betas"] = tuple(group["betas"])
        self.state = {}
        for i, values in state_dict["state"].items():
            param = by_index[int(i)]
            self.state[param] = {
                k: v.to(dtype=torch.float32) if k == "step" else v.to(param.device, param.dtype)
                for k, v in values.items()
            }


def _update(
    param: torch.Tensor,
    state: dict[str, torch.Tensor],
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
    weight_decay: float,
) -> None:
    """One Adam update of ``param`` in place: ``torch.optim.adam._single_tensor_adam``'s
    operations in its order (not capturable, not AMSGrad, real parameters)."""
    grad = param.grad
    exp_avg, exp_avg_sq, step_t = state["exp_avg"], state["exp_avg_sq"], state["step"]
    step_t += 1
    if weight_decay != 0:
        grad = grad.add(param, alpha=weight_decay)
    exp_avg.lerp_(grad, 1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    step = step_t.item()
    bias_correction1 = 1 - beta1**step
    bias_correction2 = 1 - beta2**step
    step_size = lr / bias_correction1
    denom = (exp_avg_sq.sqrt() / bias_correction2**0.5).add_(eps)
    param.addcdiv_(exp_avg, denom, value=-step_size)
