"""One training step of each trainer, its settings, and the budget of a comparison."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from rlviz.errors import InputError
from rlviz.llm.model import PROMPTS, Task, _sequences, _token_logp, sample_responses
from rlviz.llm.objectives import (
    ADVANTAGES,
    AGGREGATIONS,
    KL_PLACES,
    TRAINERS,
    kl_estimates,
    policy_loss,
    token_weights,
)

if TYPE_CHECKING:
    import torch

__all__ = [
    "Settings",
    "max_steps",
    "train_step",
]


# --------------------------------------------------------------------------- training
@dataclass(frozen=True)
class Settings:
    """What every trainer shares.

    Attributes:
        group_size: Responses per prompt per step, ``G``.
        lr: Adam's step size (policy logits and value head alike).
        epsilon: PPO clip range on every token's probability ratio.
        updates: Optimiser steps on each sampled batch (``mu``); from the second on, the ratios
            move away from 1 and the clip starts to act.
        beta: KL coefficient; 0 switches the KL off.
        kl_place: ``"loss"`` (``+ beta KL`` in the loss, as GRPO) or ``"reward"``
            (``- beta KL`` per token in the reward, as InstructGPT's PPO).
        estimator: ``"k1"`` or ``"k3"``, the per-token KL estimator used.
        mask_prompt: The loss counts only response tokens (False: the prompt's too).
        lam: GAE's λ for PPO's token advantages (γ = 1).
    """

    group_size: int = 8
    lr: float = 0.02
    epsilon: float = 0.2
    updates: int = 1
    beta: float = 0.04
    kl_place: str = "loss"
    estimator: str = "k3"
    mask_prompt: bool = True
    lam: float = 0.95


MAX_STEPS = 400
"""The most training steps a comparison offers."""
STEP_BUDGET = 2.0
"""Seconds of training a comparison may take on the reference machine (2 cores, one torch
thread): the heaviest settings get fewer steps rather than a longer wait."""


def step_seconds(n_trainers: int, seeds: int, group_size: int, updates: int) -> float:
    """Estimated seconds of one ``train_step`` (with its bookkeeping) on the reference machine.

    A fixed cost per step and per trainer, a cost per sampled response, and per extra update a
    fixed and a per-response cost; fitted to ``compare`` timings with one torch thread on a busy
    machine, where large batches cost more than their share (``benchmarks/bench_grpo.py`` times
    the heaviest settings at their limit against the default).
    """
    responses = n_trainers * seeds * group_size * len(PROMPTS)
    extra = (updates - 1) * (1.6 + 0.0015 * responses)
    return 1e-3 * (2.4 + 0.95 * n_trainers + 0.0035 * responses + extra)


def max_steps(n_trainers: int, seeds: int, group_size: int, updates: int) -> int:
    """The most steps (a multiple of 10, at most ``MAX_STEPS``) that fit in ``STEP_BUDGET``."""
    fit = STEP_BUDGET / step_seconds(n_trainers, seeds, group_size, updates)
    return int(min(MAX_STEPS, max(20, 10 * (fit // 10))))


def _validate(settings: Settings, trainers: Sequence[str], steps: int, seeds: int) -> None:
    if not trainers:
        raise InputError("choose at least one trainer")
    unknown = [t for t in trainers if t not in TRAINERS]
    if unknown:
        raise InputError(f"unknown trainer {unknown[0]!r}; choose from {', '.join(TRAINERS)}")
    if len(set(trainers)) != len(trainers):
        raise InputError("each trainer can be chosen once")
    if not 2 <= settings.group_size <= 64:
        raise InputError(f"a group needs 2 to 64 responses; got {settings.group_size}")
    if not 1 <= steps <= 2000:
        raise InputError(f"train for 1 to 2000 steps; got {steps}")
    if not 1 <= seeds <= 32:
        raise InputError(f"use 1 to 32 seeds; got {seeds}")
    if not 1 <= settings.updates <= 8:
        raise InputError(f"take 1 to 8 updates per batch; got {settings.updates}")
    checks = [
        (0 < settings.lr <= 1, f"the learning rate must be in (0, 1]; got {settings.lr}"),
        (0 < settings.epsilon < 1, f"the clip range must be in (0, 1); got {settings.epsilon}"),
        (0 <= settings.beta <= 10, f"the KL coefficient must be in [0, 10]; got {settings.beta}"),
        (0 <= settings.lam <= 1, f"GAE's λ must be in [0, 1]; got {settings.lam}"),
        (settings.kl_place in KL_PLACES, f"the KL goes in {' or '.join(KL_PLACES)}"),
        (settings.estimator in ("k1", "k3"), "the KL estimator in training is k1 or k3"),
    ]
    for ok, message in checks:
        if not ok:
            raise InputError(message)


@dataclass
class _State:
    """The live tensors of a comparison: runs ``R = trainers x seeds``, trainer-major."""

    logits: torch.Tensor  # [R, V, V] policy logits (leaf)
    values: torch.Tensor  # [S, T, V] PPO's value head V(position, previous token) (leaf)
    optimizer: torch.optim.Optimizer
    ref_logits: torch.Tensor  # [R, V, V]
    trainers: tuple[str, ...]
    seeds: int


@dataclass(frozen=True)
class StepStats:
    """Per-run diagnostics of one training step (each ``[R]``)."""

    sampled_reward: np.ndarray
    flat_groups: np.ndarray  # share of groups whose rewards are all equal
    clip_fraction: np.ndarray  # share of counted tokens outside the clip range, last update
    kl_sample: np.ndarray  # the estimator's mean per response, under the sampler


def _values_at(table, ctx) -> torch.Tensor:
    """The value head ``V(position t, previous token)`` at every position.

    Args:
        table: ``[R, T, V]`` one value per position and previous token.
        ctx: ``[R, P, G, T]`` the previous token at each position.
    """
    import torch

    r, t, v = table.shape
    index = (torch.arange(t) * v + ctx).reshape(r, -1)
    return torch.gather(table.reshape(r, -1), 1, index).reshape(ctx.shape)


def _gae_advantages(token_rewards, values, is_response, *, lam: float):
    r"""PPO's per-token advantages and value targets: GAE(γ = 1, λ) over the tokens.

    Prompt and response form one episode that terminates after the response's last token;
    after it come zero rewards and zero values, so their advantages are 0. With
    ``δ_t = r_t + V(s_{t+1}) − V(s_t)`` (``V = 0`` past the end),
    ``A_t = Σ_{k ≥ t} λ^{k−t} δ_k``: one product with the ``[T, T]`` matrix of ``λ^{k−t}``
    (the same advantages as ``rlviz.returns.gae``, which a test checks). The value targets are
    ``A_t + V(s_t)``.

    Args:
        token_rewards: ``[..., T]`` each position's reward.
        values: ``[..., T]`` the value head at each position.
        is_response: ``[..., T]`` the response's positions.
        lam: GAE's λ in [0, 1].
    """
    import torch

    t = is_response.shape[-1]
    last = 1 + is_response.sum(dim=-1, keepdim=True)  # position of the response's last token
    v = torch.where(torch.arange(t) <= last, values, 0.0)
    delta = token_rewards + torch.nn.functional.pad(v[..., 1:], (0, 1)) - v
    adv = delta @ _lambda_powers(t, float(lam))
    return adv, adv + v


@functools.cache
def _lambda_powers(t: int, lam: float):
    """``[T, T]``: ``λ^{k−t}`` in row k, column t for k ≥ t, else 0 (read-only by convention)."""
    import torch

    pos = torch.arange(t)
    ahead = pos[:, None] - pos  # k − t
    return torch.where(ahead >= 0, lam ** ahead.clamp(min=0).to(torch.float64), 0.0)


def train_step(state: _State, uniforms, task: Task, settings: Settings) -> StepStats:
    r"""One step of every trainer and seed at once: sample, score, advantages, update.

    1. Each run samples ``G`` responses to every prompt from its policy, with the shared
       uniforms (``sample_responses``).
    2. Score them: the task's reward, and per token the KL estimate against ``pi_ref`` under
       the sampling policy ``pi_old``. With ``kl_place="reward"`` the penalty ``beta k`` comes
       off the reward: summed over the response for the group trainers, per token for PPO.
    3. Advantages, each trainer its own: a group trainer gives every token of response ``i``
       its ``A_i``; PPO runs GAE over the tokens with its value head.
    4. ``updates`` Adam steps on ``policy_loss`` (clipped, tokens weighted by the trainer's
       aggregation) ``+ beta`` KL when it is in the loss, ``+`` PPO's value loss. Runs share no
       parameters and Adam acts elementwise, so each run follows its own loss exactly.

    Args:
        state: The live tensors (updated in place).
        uniforms: ``[R, P, G, L]`` the step's uniforms (the same for every trainer of a seed).
        task: The task.
        settings: The shared settings.

    Returns:
        ``StepStats`` of the step.
    """
    import torch

    beta, est, s = settings.beta, settings.estimator, state.seeds
    prompts = task.prompt_tokens
    tokens = sample_responses(state.logits, torch.from_numpy(prompts[:, 1]), uniforms)
    ctx, tok, is_prompt, is_response = _sequences(prompts, tokens)
    counted = is_response if settings.mask_prompt else is_response | is_prompt
    slots = task.max_len if settings.mask_prompt else tok.shape[-1]  # Dr. GRPO's constant
    logp = _token_logp(state.logits, ctx, tok)  # the first update's, with its gradient
    logp_old = logp.detach()  # the sampler's: the same policy, before any update
    with torch.no_grad():
        logp_ref = _token_logp(state.ref_logits, ctx, tok)
        kl_old = getattr(kl_estimates(logp_old, logp_ref), est) * counted
    rewards = task.reward(tokens)  # [R, P, G]
    in_reward = settings.kl_place == "reward" and beta > 0
    seq_rewards = rewards - beta * kl_old.sum(dim=-1) if in_reward else rewards

    advantages, weights = [], []  # each trainer's runs, joined along the runs afterwards
    ppo_rows, ppo_returns = None, None
    for k, name in enumerate(state.trainers):
        rows = slice(k * s, (k + 1) * s)
        batch = counted[rows].flatten(1, 2)  # [S, P*G, T]: every response of a run's batch
        w = token_weights(batch, AGGREGATIONS[name], max_tokens=slots)
        weights.append(w.view(counted[rows].shape))
        if name == "ppo":
            last = torch.arange(tok.shape[-1]) == 1 + is_response[rows].sum(-1, keepdim=True)
            token_rewards = last * rewards[rows][..., None]
            if in_reward:
                token_rewards = token_rewards - beta * kl_old[rows]
            with torch.no_grad():
                values = _values_at(state.values, ctx[rows])
            ppo_rows = rows
            adv, ppo_returns = _gae_advantages(token_rewards, values, is_response[rows],
                                               lam=settings.lam)
            advantages.append(adv)
        else:  # every token of response i carries A_i
            advantages.append(ADVANTAGES[name](seq_rewards[rows])[..., None].expand(w.shape[0],
                                                                                  *tok.shape[1:]))
    advantages, weights = torch.cat(advantages), torch.cat(weights)

    for update in range(settings.updates):
        if update:  # the policy has moved: its log-probabilities again
            logp = _token_logp(state.logits, ctx, tok)
        with torch.no_grad():  # PPO's clip fraction: tokens outside the clip range
            clipped = ((logp - logp_old).exp() - 1).abs().gt(settings.epsilon) & counted
        loss = policy_loss(logp, logp_old, advantages, weights, epsilon=settings.epsilon)
        if beta > 0 and settings.kl_place == "loss":
            loss = loss + beta * (weights * getattr(kl_estimates(logp, logp_ref), est)).sum()
        if ppo_rows is not None:
            v = _values_at(state.values, ctx[ppo_rows])
            loss = loss + 0.5 * (weights[ppo_rows] * (v - ppo_returns) ** 2).sum()
        state.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        state.optimizer.step()

    flat = (rewards == rewards[..., :1]).all(dim=-1)  # [R, P]
    per_run = counted.flatten(1).sum(-1).clamp(min=1)
    return StepStats(
        sampled_reward=rewards.mean(dim=(1, 2)).numpy(),
        flat_groups=flat.to(torch.float64).mean(-1).numpy(),
        clip_fraction=(clipped.flatten(1).sum(-1) / per_run).numpy(),
        kl_sample=kl_old.sum(-1).mean(dim=(1, 2)).numpy(),
    )
