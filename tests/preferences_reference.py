"""References for the preference-learning engine: DPO written the torch way (autograd and
``torch.optim.Adam``), and the policy gradient one run at a time."""

from __future__ import annotations

import numpy as np

from rlviz import preferences as pref


def dpo_torch(space: pref.ResponseSpace, pairs: pref.Pairs, *, beta: float, steps: int,
              policy: str = "features", lr: float = pref.DPO_LR,
              l2: float = pref.L2) -> np.ndarray:
    """DPO by autograd: the loss of every pair, ``backward()``, ``torch.optim.Adam``."""
    import torch

    basis = space.features if policy == "features" else np.eye(space.n)
    phi, log_ref = torch.from_numpy(basis), torch.from_numpy(space.log_ref)
    w, lo = torch.from_numpy(pairs.chosen), torch.from_numpy(pairs.rejected)
    u = torch.zeros(phi.shape[1], dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([u], lr=lr)
    for _ in range(steps):
        logp = torch.log_softmax(log_ref + phi @ u / beta, dim=-1)
        z = beta * ((logp[w] - log_ref[w]) - (logp[lo] - log_ref[lo]))
        loss = torch.nn.functional.softplus(-z).mean() + 0.5 * l2 * u @ u
        opt.zero_grad()
        loss.backward()
        opt.step()
    return u.detach().numpy()


def policy_gradient_one_run_at_a_time(space, reward, *, runs: int, seed: int = 0,
                                      **kw) -> list:
    """The same work as R runs in one batch, as R separate single-run trainings."""
    return [pref.train_policy_gradient(space, reward, runs=1, seed=seed + r, **kw)
            for r in range(runs)]
