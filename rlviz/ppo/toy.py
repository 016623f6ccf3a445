"""The live toy: PPO epochs on a one-step, few-action problem (torch)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch

from rlviz import optim
from rlviz.errors import InputError
from rlviz.ppo.kl import adapt_beta, categorical_kl
from rlviz.ppo.objectives import (
    ADV_NORM_EPS,
    DTYPE,
    METHODS,
    _check_epsilon,
    _clip_bounds,
    _clip_objective,
    _readonly,
    kl_penalty_loss,
    ppo_clip_loss,
    surrogate_loss,
)

__all__ = [
    "ToyResult",
    "ToyRun",
    "run_toy",
]


# --------------------------------------------------------------------------- the live toy
@dataclass(frozen=True, eq=False)
class ToyRun:
    """One objective's trajectory over ``E`` epochs on the toy's batch.

    Row ``e`` of every per-epoch array is measured on the whole batch after epoch ``e``; row 0 is
    before any update (ratios 1, divergence 0).

    Attributes:
        method: ``"clipped"``, ``"unclipped"`` or ``"kl_penalty"``.
        ratios: ``[E+1, N]`` every sample's ratio ``pi(a_i)/pi_old(a_i)``.
        probs: ``[E+1, K]`` action probabilities.
        flat: ``[E+1, N]`` True where a sample sits in the clipped objective's flat region
            (``A > 0, r > 1 + eps`` or ``A < 0, r < 1 - eps``): zero gradient under the clip.
        clip_fraction: ``[E+1]`` fraction of samples with ``|r - 1| > eps``.
        flat_fraction: ``[E+1]`` fraction of samples in the flat region.
        kl_k1: ``[E+1]`` mean of ``-log r`` over the batch.
        kl_k3: ``[E+1]`` mean of ``(r - 1) - log r`` over the batch.
        kl_exact: ``[E+1]`` exact ``KL[pi_old, pi]``.
        expected_return: ``[E+1]`` true ``J(pi) = sum_a pi(a) mu(a)``.
        objective: ``[E+1]`` the method's own surrogate on the whole batch (maximised).
        beta: ``[E+1]`` the KL coefficient after each epoch's adaptation (row 0: the initial
            value; epoch ``e`` used ``beta[e - 1]``); zeros for the methods without a penalty.
    """

    method: str
    ratios: np.ndarray  # [E+1, N]
    probs: np.ndarray  # [E+1, K]
    flat: np.ndarray  # [E+1, N] bool
    clip_fraction: np.ndarray  # [E+1]
    flat_fraction: np.ndarray  # [E+1]
    kl_k1: np.ndarray  # [E+1]
    kl_k3: np.ndarray  # [E+1]
    kl_exact: np.ndarray  # [E+1]
    expected_return: np.ndarray  # [E+1]
    objective: np.ndarray  # [E+1]
    beta: np.ndarray  # [E+1]


@dataclass(frozen=True, eq=False)
class ToyResult:
    """A softmax bandit policy trained for ``E`` epochs on one batch, under three objectives.

    Attributes:
        true_rewards: ``[K]`` mean reward ``mu(a)`` of each action.
        old_probs: ``[K]`` the policy that collected the batch (uniform).
        actions: ``[N]`` sampled actions.
        rewards: ``[N]`` sampled rewards ``mu(a_i) + noise``.
        advantages: ``[N]`` advantages used by every objective (normalised if asked).
        runs: The ``ToyRun`` of each method in ``METHODS`` order.
        epsilon, lr, epochs, minibatch_size: Settings that ran.
        steps_per_epoch: Minibatch updates per epoch.
    """

    true_rewards: np.ndarray  # [K]
    old_probs: np.ndarray  # [K]
    actions: np.ndarray  # [N] int
    rewards: np.ndarray  # [N]
    advantages: np.ndarray  # [N]
    runs: tuple[ToyRun, ...]
    epsilon: float
    lr: float
    epochs: int
    minibatch_size: int
    steps_per_epoch: int

    def run(self, method: str) -> ToyRun:
        """The trajectory of one method."""
        for r in self.runs:
            if r.method == method:
                return r
        raise KeyError(f"no run of {method!r}; have {[r.method for r in self.runs]}")

    @property
    def action_advantage(self) -> np.ndarray:
        """``[K]`` the summed advantage of each action's samples (its push on the logits)."""
        return np.bincount(self.actions, weights=self.advantages, minlength=self.true_rewards.size)

    @property
    def action_counts(self) -> np.ndarray:
        """``[K]`` how many samples of each action the batch holds."""
        return np.bincount(self.actions, minlength=self.true_rewards.size)

    def action_ratios(self, method: str) -> np.ndarray:
        """``[E+1, K]`` each action's ratio ``pi(a)/pi_old(a)`` (shared by all its samples)."""
        return self.run(method).probs / self.old_probs

    @property
    def best_return(self) -> float:
        """``max_a mu(a)``: the expected return of the best deterministic policy."""
        return float(self.true_rewards.max())

    def epoch_table(self) -> dict[str, np.ndarray]:
        """Long-form per-epoch diagnostics of every method (for export)."""
        epochs = np.arange(self.epochs + 1)
        cols: dict[str, list] = {"method": [], "epoch": []}
        names = ("clip_fraction", "flat_fraction", "kl_exact", "kl_k1", "kl_k3",
                 "expected_return", "objective", "beta")
        for name in names:
            cols[name] = []
        for k in range(self.true_rewards.size):
            cols[f"prob_a{k}"] = []
        for run in self.runs:
            cols["method"].append(np.full(epochs.size, run.method))
            cols["epoch"].append(epochs)
            for name in names:
                cols[name].append(getattr(run, name))
            for k in range(self.true_rewards.size):
                cols[f"prob_a{k}"].append(run.probs[:, k])
        return {name: np.concatenate(parts) for name, parts in cols.items()}

    def sample_table(self) -> dict[str, np.ndarray]:
        """Long-form ratio of every sample after every epoch, per method (for export)."""
        n, e1 = self.actions.size, self.epochs + 1
        parts = [
            {
                "method": np.full(e1 * n, run.method),
                "epoch": np.repeat(np.arange(e1), n),
                "sample": np.tile(np.arange(n), e1),
                "action": np.tile(self.actions, e1),
                "reward": np.tile(self.rewards, e1),
                "advantage": np.tile(self.advantages, e1),
                "ratio": run.ratios.ravel(),
                "flat": run.flat.ravel(),
            }
            for run in self.runs
        ]
        return {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}


def _log_softmax(logits: torch.Tensor) -> torch.Tensor:
    """``log softmax`` over the last axis, as ``logits - logsumexp(logits)``.

    Same values as ``torch.log_softmax`` to rounding, but made of reductions and elementwise ops
    that stay on the calling thread for small tensors; ``torch.log_softmax`` hands even a
    ``[3, 5]`` tensor to the intra-op thread pool, which on a busy CPU costs milliseconds a call.
    """
    return logits - torch.logsumexp(logits, dim=-1, keepdim=True)


def _losses(theta, a_mb, adv_mb, logp_old_all, *, eps, beta):
    """The three methods' losses on one minibatch; row m of ``theta`` is method m's logits."""
    logp_all = _log_softmax(theta)  # [M, K]
    logp = logp_all[:, a_mb]  # [M, B]
    logp_old = logp_old_all[a_mb]  # [B]
    kl = categorical_kl(logp_old_all, logp_all[2]).expand(a_mb.numel())
    return (
        ppo_clip_loss(logp[0], logp_old, adv_mb, epsilon=eps)
        + surrogate_loss(logp[1], logp_old, adv_mb)
        + kl_penalty_loss(logp[2], logp_old, adv_mb, kl, beta=beta)
    )


@torch.no_grad()
def _measure(theta, actions, adv, logp_old_all, true_rewards, *, eps, beta):
    """Whole-batch diagnostics of every method: ratios, probabilities, KL, return, objective."""
    lo, hi = _clip_bounds(eps)
    logp_all = _log_softmax(theta)  # [M, K]
    log_r = logp_all[:, actions] - logp_old_all[actions]  # [M, N]
    ratio = torch.exp(log_r)
    probs = torch.exp(logp_all)
    kl_exact = categorical_kl(logp_old_all.expand_as(logp_all), logp_all)  # [M]
    surrogate = (ratio * adv).mean(dim=1)
    objective = torch.stack([
        _clip_objective(ratio[0], adv, lo, hi).mean(),
        surrogate[1],
        surrogate[2] - beta * kl_exact[2],
    ])
    flat = ((adv > 0) & (ratio > hi)) | ((adv < 0) & (ratio < lo))
    return dict(
        ratios=ratio,
        probs=probs,
        flat=flat,
        clip_fraction=((ratio < lo) | (ratio > hi)).to(DTYPE).mean(dim=1),
        flat_fraction=flat.to(DTYPE).mean(dim=1),
        kl_k1=(-log_r).mean(dim=1),
        kl_k3=(torch.expm1(log_r) - log_r).mean(dim=1),
        kl_exact=kl_exact,
        expected_return=probs @ true_rewards,
        objective=objective,
    )


def run_toy(
    true_rewards,
    *,
    batch_size: int = 64,
    epochs: int = 10,
    minibatch_size: int = 16,
    lr: float = 0.05,
    epsilon: float = 0.2,
    beta: float = 1.0,
    adaptive_beta: bool = True,
    kl_target: float = 0.01,
    normalize_advantages: bool = True,
    reward_noise: float = 1.0,
    optimizer: Literal["adam", "sgd"] = "adam",
    seed: int = 0,
) -> ToyResult:
    r"""Train a softmax bandit policy for E epochs on one batch with three PPO objectives.

    The policy ``pi(a) = softmax(theta)_a`` over ``K`` actions starts uniform and collects one
    batch of ``N`` actions with rewards ``mu(a_i) + sigma z_i``, ``z_i ~ N(0, 1)``. Advantages are
    ``A_i = R_i - J(pi_old)`` (a perfect critic), optionally normalised to zero mean and unit
    (unbiased) standard deviation over the batch. Three copies of ``theta`` then run ``E`` epochs;
    each epoch shuffles the batch (one permutation shared by all three, so they see the same
    minibatches) and takes one optimiser step per minibatch on

    * ``clipped``: ``-mean min(r A, clip(r, 1-eps, 1+eps) A)`` (Schulman et al., 2017, eq. 7);
    * ``unclipped``: ``-mean r A`` (eq. 6);
    * ``kl_penalty``: ``-mean [r A - beta KL[pi_old, pi]]`` (eq. 8) with the exact categorical
      KL; with ``adaptive_beta`` the section 4 rule halves or doubles ``beta`` after every epoch
      (the paper adapts once per batch; with a single batch, per epoch shows the rule at work).

    The three parameter rows are updated together (their losses are summed; the rows share no
    parameters, and Adam and SGD act elementwise, so each row follows its own objective exactly).
    All randomness comes from one ``torch.Generator`` seeded with ``seed``.

    Args:
        true_rewards: ``[K]`` mean reward of each action, ``2 <= K <= 16``.
        batch_size: Samples ``N`` in the batch, at least 2.
        epochs: Passes ``E`` over the batch, at least 1.
        minibatch_size: Samples per update, in ``[1, N]``; the last minibatch of an epoch holds
            the remainder when it does not divide ``N``.
        lr: Optimiser step size, positive.
        epsilon: Clip range, in (0, 1).
        beta: Initial KL coefficient, positive.
        adaptive_beta: Adapt ``beta`` toward ``kl_target`` after every epoch.
        kl_target: ``d_targ`` of the adaptive rule, positive.
        normalize_advantages: Standardise the advantages over the batch.
        reward_noise: Standard deviation ``sigma`` of the reward noise, non-negative.
        optimizer: ``"adam"`` (as in the paper) or ``"sgd"``.
        seed: Seed of the generator that draws the batch and the shuffles.

    Returns:
        A ``ToyResult``.

    Raises:
        InputError: if the rewards are not 2 to 16 finite numbers, or training diverged to
            non-finite parameters (settings a person chose).
        ValueError: if another setting is out of its range.
    """
    mu_np = np.array(true_rewards, dtype=np.float64)
    if mu_np.ndim != 1 or not 2 <= mu_np.size <= 16:
        raise InputError(f"give between 2 and 16 actions' rewards; got {mu_np.size}")
    if not np.isfinite(mu_np).all():
        raise InputError("every action needs a finite true reward (is a cell empty?)")
    eps = _check_epsilon(epsilon)
    if not (isinstance(batch_size, int | np.integer) and batch_size >= 2):
        raise ValueError(f"the batch needs at least 2 samples; got {batch_size}")
    if not (isinstance(epochs, int | np.integer) and epochs >= 1):
        raise ValueError(f"run at least 1 epoch; got {epochs}")
    if not (isinstance(minibatch_size, int | np.integer) and 1 <= minibatch_size <= batch_size):
        raise ValueError(
            f"the minibatch size must be between 1 and the batch size {batch_size}; "
            f"got {minibatch_size}"
        )
    if not (math.isfinite(lr) and lr > 0):
        raise ValueError(f"the learning rate must be positive; got {lr:g}")
    if not (math.isfinite(beta) and beta > 0):
        raise ValueError(f"the KL penalty β must be positive; got {beta:g}")
    if not (math.isfinite(kl_target) and kl_target > 0):
        raise ValueError(f"the KL target must be positive; got {kl_target:g}")
    if not (math.isfinite(reward_noise) and reward_noise >= 0):
        raise ValueError(f"the reward noise must be non-negative; got {reward_noise:g}")
    if optimizer not in ("adam", "sgd"):
        raise ValueError(f"the optimiser must be 'adam' or 'sgd'; got {optimizer!r}")

    gen = torch.Generator().manual_seed(int(seed))
    mu = torch.as_tensor(mu_np)
    k = mu.numel()
    logp_old_all = torch.full((k,), -math.log(k), dtype=DTYPE)
    old_probs = torch.exp(logp_old_all)
    actions = torch.multinomial(old_probs, batch_size, replacement=True, generator=gen)
    rewards = mu[actions] + reward_noise * torch.randn(batch_size, generator=gen, dtype=DTYPE)
    adv = rewards - old_probs @ mu
    if normalize_advantages:
        adv = (adv - adv.mean()) / (adv.std() + ADV_NORM_EPS)

    theta = torch.zeros(len(METHODS), k, dtype=DTYPE, requires_grad=True)
    opt = (optim.Adam if optimizer == "adam" else optim.SGD)([theta], lr=lr)
    betas = [float(beta)]
    records = [_measure(theta, actions, adv, logp_old_all, mu, eps=eps, beta=betas[-1])]
    starts = range(0, batch_size, minibatch_size)
    for _ in range(epochs):
        order = torch.randperm(batch_size, generator=gen)
        for start in starts:
            idx = order[start : start + minibatch_size]
            loss = _losses(theta, actions[idx], adv[idx], logp_old_all, eps=eps, beta=betas[-1])
            opt.step(torch.autograd.grad(loss, [theta]))
        if not bool(torch.isfinite(theta).all()):
            raise InputError(
                "training diverged (the policy's parameters overflowed): lower the learning "
                "rate, or use smaller rewards"
            )
        record = _measure(theta, actions, adv, logp_old_all, mu, eps=eps, beta=betas[-1])
        records.append(record)
        if adaptive_beta:
            betas.append(adapt_beta(betas[-1], float(record["kl_exact"][2]), target=kl_target))
        else:
            betas.append(betas[-1])

    stacked = {name: torch.stack([r[name] for r in records], dim=1).numpy()
               for name in records[0]}  # each [M, E+1, ...]
    beta_arr = np.array(betas)
    runs = []
    for m, method in enumerate(METHODS):
        fields = {name: np.ascontiguousarray(v[m]) for name, v in stacked.items()}
        b = beta_arr.copy() if method == "kl_penalty" else np.zeros_like(beta_arr)
        _readonly(b, *fields.values())
        runs.append(ToyRun(method=method, beta=b, **fields))
    out = (mu_np, old_probs.numpy().copy(), actions.numpy().copy(), rewards.numpy().copy(),
           adv.numpy().copy())
    _readonly(*out)
    return ToyResult(*out, runs=tuple(runs), epsilon=eps, lr=float(lr), epochs=int(epochs),
                     minibatch_size=int(minibatch_size), steps_per_epoch=len(starts))
