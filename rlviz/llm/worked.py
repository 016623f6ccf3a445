"""One group worked by hand, the group replayed, and the study of the KL estimators."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rlviz.errors import InputError
from rlviz.llm.comparison import Comparison, _seed_uniforms
from rlviz.llm.exact import exact_metrics
from rlviz.llm.model import _sequences, _token_logp, sample_responses, text_of
from rlviz.llm.objectives import (
    ADVANTAGES,
    AGGREGATIONS,
    GROUP_TRAINERS,
    _group_rewards,
    kl_estimates,
    token_weights,
)
from rlviz.llm.training import _gae_advantages, _values_at

__all__ = [
    "GroupView",
    "KLStudy",
    "WorkedGroup",
    "kl_study",
    "parse_rewards",
    "replay_group",
    "worked_group",
]


# --------------------------------------------------------------------------- one group, by hand
@dataclass(frozen=True)
class WorkedGroup:
    """Every trainer's advantages for one group of rewards: the whiteboard question.

    Attributes:
        rewards: ``[G]`` the group's rewards.
        mean, std: The group's mean and sample standard deviation (``G - 1``).
        advantages: Each group trainer's ``[G]`` advantages, by name.
        all_equal: Whether every reward is the same (then every advantage is exactly 0).
    """

    rewards: np.ndarray
    mean: float
    std: float
    advantages: dict[str, np.ndarray]
    all_equal: bool


def parse_rewards(text: str, *, max_size: int = 64) -> tuple[float, ...]:
    """A group's rewards from text such as ``"1, 0, 0, 1"`` or ``"[1 0 0 1]"``.

    Raises:
        InputError: when a value is not a number, or there are fewer than 2 or more than
            ``max_size`` of them.
    """
    parts = [p for p in str(text).replace("[", " ").replace("]", " ").replace(",", " ").split()]
    values = []
    for i, part in enumerate(parts, start=1):
        try:
            x = float(part)
        except ValueError:
            raise InputError(f"reward {i} of the group is not a number") from None
        if not math.isfinite(x) or abs(x) > 1e6:
            raise InputError(f"reward {i} of the group must be a number between −10⁶ and 10⁶")
        values.append(x)
    if len(values) < 2:
        raise InputError("give at least two rewards, separated by commas (e.g. 1, 0, 0, 1)")
    if len(values) > max_size:
        raise InputError(f"give at most {max_size} rewards; got {len(values)}")
    return tuple(values)


def worked_group(rewards: Sequence[float]) -> WorkedGroup:
    """The four group trainers' advantages for one group of rewards.

    Args:
        rewards: ``G >= 2`` finite rewards.

    Returns:
        A ``WorkedGroup``.
    """
    r = _group_rewards(rewards)
    if r.ndim != 1:
        raise InputError("give one group of rewards")
    adv = {name: ADVANTAGES[name](r).numpy() for name in GROUP_TRAINERS}
    return WorkedGroup(
        rewards=r.numpy().copy(), mean=float(r.mean()), std=float(r.std()),
        advantages=adv, all_equal=bool((r == r[0]).all()),
    )


@dataclass(frozen=True)
class GroupView:
    """One group of a training step, replayed, with what each trainer's loss does with it.

    Attributes:
        trainer: Whose policy sampled the group; ``step``, ``prompt``, ``seed_index``: which.
        texts: ``[G]`` the responses.
        tokens: ``[G, T]`` prompt and response tokens (``T = 2 + max_len``).
        is_prompt, is_response: ``[G, T]`` which positions are which (the rest is padding).
        rewards: ``[G]`` the task's rewards.
        seq_rewards: ``[G]`` the rewards the group trainers used (minus ``beta`` KL when the KL
            is in the reward).
        advantages: Each trainer's ``[G, T]`` token advantages (a group trainer's are constant
            along a response; PPO's come from GAE with its value head at that step).
        weights: Each trainer's ``[G, T]`` aggregation weights, over this group alone.
        counted: ``[G, T]`` the mask: True where the losses count the token.
        logp, logp_ref: ``[G, T]`` each token's log-probability under the sampling policy and
            under the reference model.
    """

    trainer: str
    step: int
    prompt: str
    seed_index: int
    texts: tuple[str, ...]
    tokens: np.ndarray
    is_prompt: np.ndarray
    is_response: np.ndarray
    rewards: np.ndarray
    seq_rewards: np.ndarray
    advantages: dict[str, np.ndarray]
    weights: dict[str, np.ndarray]
    counted: np.ndarray
    logp: np.ndarray
    logp_ref: np.ndarray

    def push(self, trainer: str) -> np.ndarray:
        """``[G, T]`` ``w A``: how hard the first update pushes each token's log-probability."""
        return self.weights[trainer] * self.advantages[trainer]


def replay_group(result: Comparison, trainer: str, step: int, prompt: int,
                 seed_index: int = 0) -> GroupView:
    """Re-sample one group of one step exactly as training did, and weigh it every trainer's way.

    Args:
        result: A ``Comparison``.
        trainer: Whose policy (and uniforms) sampled the group.
        step: The training step, in ``[0, steps - 1]``.
        prompt: Index of the prompt.
        seed_index: Which seed's run.

    Returns:
        A ``GroupView`` (PPO's advantages are included when PPO was trained).
    """
    import torch

    task, settings = result.task, result.settings
    k = result.index(trainer)
    if not 0 <= step < result.steps:
        raise InputError(f"the step must be in [0, {result.steps - 1}]; got {step}")
    if not 0 <= prompt < len(task.prompts):
        raise InputError(f"there are {len(task.prompts)} prompts; got prompt {prompt}")
    if not 0 <= seed_index < result.seeds:
        raise InputError(f"there are {result.seeds} seeds; got seed index {seed_index}")
    g = settings.group_size
    u = _seed_uniforms(result.seed, result.seeds, seed_index, step + 1,
                       (len(task.prompts), g, task.max_len))[step, prompt]
    logits = torch.from_numpy(result.logits[k, seed_index, step].copy())[None]
    prompts = task.prompt_tokens[prompt : prompt + 1]
    tokens = sample_responses(logits, torch.from_numpy(prompts[:, 1]),
                              torch.from_numpy(u)[None, None])  # [1, 1, G, L]
    ctx, tok, is_prompt, is_response = _sequences(prompts, tokens)
    counted = is_response if settings.mask_prompt else is_response | is_prompt
    slots = task.max_len if settings.mask_prompt else tok.shape[-1]
    ref = torch.from_numpy(task.ref_logits.copy())[None]
    logp_old = _token_logp(logits, ctx, tok)
    logp_ref = _token_logp(ref, ctx, tok)
    kl_old = getattr(kl_estimates(logp_old, logp_ref), settings.estimator) * counted
    rewards = task.reward(tokens)
    beta = settings.beta
    in_reward = settings.kl_place == "reward" and beta > 0
    seq_rewards = rewards - beta * kl_old.sum(-1) if in_reward else rewards
    advantages, weights = {}, {}
    for name in (*GROUP_TRAINERS, "ppo"):
        if name == "ppo" and "ppo" not in result.trainers:
            continue
        weights[name] = token_weights(counted[0], AGGREGATIONS[name],
                                      max_tokens=slots)[0].numpy()
        if name == "ppo":
            last = torch.arange(tok.shape[-1]) == 1 + is_response.sum(-1, keepdim=True)
            token_rewards = last * rewards[..., None] - (beta * kl_old if in_reward else 0.0)
            table = torch.from_numpy(result.values[seed_index, step].copy())[None]
            adv, _ = _gae_advantages(token_rewards, _values_at(table, ctx), is_response,
                                     lam=settings.lam)
            advantages[name] = (adv * counted)[0, 0].numpy()
        else:
            a = ADVANTAGES[name](seq_rewards)[..., None] * counted
            advantages[name] = a[0, 0].numpy()
    flat = tok[0, 0].numpy()
    return GroupView(
        trainer=trainer, step=int(step), prompt=task.prompts[prompt], seed_index=int(seed_index),
        texts=tuple(text_of(row) for row in tokens[0, 0].numpy()), tokens=flat,
        is_prompt=is_prompt[0, 0].numpy(), is_response=is_response[0, 0].numpy(),
        rewards=rewards[0, 0].numpy(), seq_rewards=seq_rewards[0, 0].numpy(),
        advantages=advantages, weights=weights, counted=counted[0, 0].numpy(),
        logp=logp_old[0, 0].numpy(), logp_ref=logp_ref[0, 0].numpy(),
    )


# --------------------------------------------------------------------------- KL estimators
@dataclass(frozen=True)
class KLStudy:
    """The three KL estimators against the exact KL, along one run's training.

    Each estimate is one sampled response's per-token estimator summed over its tokens; the
    exact value is ``KL(pi || pi_ref)`` over whole responses, both averaged over the prompts.

    Attributes:
        trainer: Whose run (seed index 0); ``steps``: ``[C]`` the checkpoints.
        exact: ``[C]`` the exact KL at each checkpoint.
        mean, se, std, low: ``[3, C]`` per estimator (k1, k2, k3): the mean over the samples, its
            standard error, the spread of a single sample, and its smallest value.
        n_samples: Responses sampled per checkpoint.
    """

    trainer: str
    steps: np.ndarray
    exact: np.ndarray
    mean: np.ndarray
    se: np.ndarray
    std: np.ndarray
    low: np.ndarray
    n_samples: int

    @property
    def bias(self) -> np.ndarray:
        """``[3, C]`` mean estimate minus the exact KL."""
        return self.mean - self.exact


def kl_study(result: Comparison, trainer: str, *, n_samples: int = 512, checkpoints: int = 21,
             seed: int = 0) -> KLStudy:
    r"""Sample responses from the policies one run passed through and estimate their KL.

    At each checkpoint the run's policy samples ``n_samples`` responses (an equal share per
    prompt); for each, ``k1``, ``k2`` and ``k3`` are summed over its tokens
    (``kl_estimates``) and compared with the exact ``KL(pi || pi_ref)`` (``exact_metrics``).
    ``k1`` and ``k3`` are unbiased; ``k2`` is not (it estimates a different divergence, and is
    close only while ``pi`` stays near ``pi_ref``).

    Args:
        result: A ``Comparison``.
        trainer: Whose run (seed index 0).
        n_samples: Responses per checkpoint, a multiple of the number of prompts, at most 8192.
        checkpoints: How many evenly spaced steps, at least 2.
        seed: Seed of the sampling.

    Returns:
        A ``KLStudy``.
    """
    import torch

    task = result.task
    k = result.index(trainer)
    p = len(task.prompts)
    if not (p <= n_samples <= 8192 and n_samples % p == 0):
        raise InputError(f"sample a multiple of {p} responses, at most 8192; got {n_samples}")
    steps = np.unique(np.linspace(0, result.steps, max(2, int(checkpoints))).round().astype(int))
    logits = torch.from_numpy(result.logits[k, 0, steps].copy())  # [C, V, V]
    c, per = len(steps), n_samples // p
    u = torch.from_numpy(np.random.default_rng(int(seed)).random((c, p, per, task.max_len)))
    prompts = task.prompt_tokens
    tokens = sample_responses(logits, torch.from_numpy(prompts[:, 1]), u)
    ctx, tok, _, is_response = _sequences(prompts, tokens)
    ref = torch.from_numpy(task.ref_logits.copy()).expand(c, -1, -1)
    est = kl_estimates(_token_logp(logits, ctx, tok), _token_logp(ref, ctx, tok))
    per_response = torch.stack([(e * is_response).sum(-1) for e in est]).reshape(3, c, -1)
    x = per_response.numpy()
    std = x.std(axis=-1, ddof=1)
    return KLStudy(
        trainer=trainer, steps=steps, exact=exact_metrics(logits, task)["kl"],
        mean=x.mean(-1), se=std / math.sqrt(x.shape[-1]), std=std, low=x.min(-1),
        n_samples=int(n_samples),
    )
