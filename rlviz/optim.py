r"""Gradient steps for the small training loops of the torch pages (PPO's toy, CQL's learners).

The pages train tiny models for thousands of steps, so the cost of a step is its bookkeeping,
not its arithmetic: ``torch.optim`` spends most of a step on hooks, profiler scopes and state
lookups. These two classes do only the arithmetic, with the same tensor operations in the same
order as ``torch.optim.SGD`` and ``torch.optim.Adam`` (single-tensor path, no weight decay), so
the parameters they produce are identical, bit for bit (``tests/test_optim.py``).

Use them with ``torch.autograd.grad``, which returns the gradients instead of accumulating
them into ``.grad``::

    opt = Adam(params, lr=1e-2)
    for _ in range(steps):
        grads = torch.autograd.grad(loss_fn(params), params)
        opt.step(grads)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

__all__ = ["SGD", "Adam"]


class SGD:
    r"""Gradient descent with heavy-ball momentum.

    ``b <- mu b + g`` (``b = g`` at the first step), ``theta <- theta - lr b``; plain
    ``theta <- theta - lr g`` when ``mu = 0`` (Polyak 1964; ``torch.optim.SGD``'s form).

    Args:
        params: The tensors to update in place.
        lr: Step size, positive.
        momentum: ``mu`` in [0, 1).
    """

    def __init__(self, params: Sequence[torch.Tensor], *, lr: float, momentum: float = 0.0):
        if not (math.isfinite(lr) and lr > 0):
            raise ValueError(f"the learning rate must be positive; got {lr}")
        if not 0.0 <= momentum < 1.0:
            raise ValueError(f"momentum must be in [0, 1); got {momentum}")
        self.params = list(params)
        self.lr, self.momentum = float(lr), float(momentum)
        self._buffers: list[torch.Tensor] | None = None

    @torch.no_grad()
    def step(self, grads: Sequence[torch.Tensor]) -> None:
        """Update every parameter from its gradient (in the order of ``params``)."""
        if self.momentum == 0.0:
            for p, g in zip(self.params, grads, strict=True):
                p.add_(g, alpha=-self.lr)
            return
        if self._buffers is None:
            self._buffers = [g.detach().clone() for g in grads]
        else:
            for b, g in zip(self._buffers, grads, strict=True):
                b.mul_(self.momentum).add_(g)
        for p, b in zip(self.params, self._buffers, strict=True):
            p.add_(b, alpha=-self.lr)


class Adam:
    r"""Adam (Kingma & Ba, 2015, Algorithm 1), as ``torch.optim.Adam`` computes it.

    With ``t`` the step count: ``m <- beta1 m + (1 - beta1) g``, ``v <- beta2 v + (1 - beta2)
    g^2``, ``theta <- theta - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)``.

    Args:
        params: The tensors to update in place.
        lr: Step size, positive.
        betas: ``(beta1, beta2)``, the decay rates of the two moment estimates.
        eps: Added to the denominator.
    """

    def __init__(
        self,
        params: Sequence[torch.Tensor],
        *,
        lr: float,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
    ):
        if not (math.isfinite(lr) and lr > 0):
            raise ValueError(f"the learning rate must be positive; got {lr}")
        self.params = list(params)
        self.lr, self.eps = float(lr), float(eps)
        self.beta1, self.beta2 = (float(b) for b in betas)
        self.t = 0
        self._m = [torch.zeros_like(p) for p in self.params]
        self._v = [torch.zeros_like(p) for p in self.params]

    @torch.no_grad()
    def step(self, grads: Sequence[torch.Tensor]) -> None:
        """Update every parameter from its gradient (in the order of ``params``)."""
        self.t += 1
        # torch.optim.Adam keeps its step count as a float tensor and reads it back as a float.
        t = float(self.t)
        step_size = self.lr / (1 - self.beta1**t)
        root = (1 - self.beta2**t) ** 0.5
        for p, g, m, v in zip(self.params, grads, self._m, self._v, strict=True):
            m.lerp_(g, 1 - self.beta1)
            v.mul_(self.beta2).addcmul_(g, g, value=1 - self.beta2)
            p.addcdiv_(m, (v.sqrt() / root).add_(self.eps), value=-step_size)
