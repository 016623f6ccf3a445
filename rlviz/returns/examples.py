"""One trajectory's advantage broken down term by term, and the worked examples."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlviz.errors import InputError
from rlviz.returns.estimates import (
    _horizons,
    discounted_returns,
    gae,
    lambda_weights,
    n_step_returns,
    td_errors,
)
from rlviz.returns.steps import ArrayLike
from rlviz.returns.validation import _flags, _steps

__all__ = [
    "EXAMPLES",
    "AdvantageBreakdown",
    "Example",
    "breakdown",
    "random_example",
]


# --------------------------------------------------------------------------- one trajectory
@dataclass(frozen=True)
class AdvantageBreakdown:
    """Everything about the advantages of one trajectory, for one ``(gamma, lam)``."""

    gamma: float
    lam: float
    values: np.ndarray  # [T] V(s_t)
    dones: np.ndarray  # [T] bool, terminations as used
    truncated: np.ndarray  # [T] bool, truncations as used (never where done)
    next_values: np.ndarray  # [T] V(s_{t+1}) bootstrapped by each step
    td_errors: np.ndarray  # [T] delta_t
    advantages: np.ndarray  # [T] GAE(gamma, lam)
    td_advantages: np.ndarray  # [T] GAE(gamma, 0)
    mc_advantages: np.ndarray  # [T] GAE(gamma, 1)
    returns: np.ndarray  # [T] G_t to the end of the episode
    lambda_returns: np.ndarray  # [T] G_t^lambda
    horizons: np.ndarray  # [T] N_t, steps to the end of each step's episode
    step: int  # the step whose n-step decomposition is below
    n_step_advantages: np.ndarray  # [N_step] G_step^(n) - V(s_step) for n = 1..N_step
    weights: np.ndarray  # [N_step] lambda-weights of those n-step advantages


def breakdown(
    rewards: ArrayLike,
    values: ArrayLike,
    *,
    gamma: float,
    lam: float,
    last_value: float = 0.0,
    dones: ArrayLike | None = None,
    truncated: ArrayLike | None = None,
    truncated_values: ArrayLike | None = None,
    step: int = 0,
) -> AdvantageBreakdown:
    """TD errors, returns and advantages of one trajectory, and GAE at ``step`` split by n.

    Args:
        rewards: ``[T]`` rewards ``r_t``, times ``[0, T-1]``.
        values: ``[T]`` critic values ``V(s_t)``, times ``[0, T-1]``.
        gamma: Discount factor in ``[0, 1]``.
        lam: ``λ`` in ``[0, 1]``.
        last_value: ``V(s_T)`` after the last step.
        dones: ``[T]`` True where ``s_{t+1}`` is terminal.
        truncated: ``[T]`` True where a time limit cut the episode at ``s_{t+1}``.
        truncated_values: ``[T]`` ``V(s_{t+1})`` of the cut state, read where truncated.
        step: The step ``t`` in ``[0, T-1]`` whose n-step advantages are listed.

    Returns:
        The breakdown.

    Raises:
        InputError: as ``gae``, or if ``step`` is outside the trajectory.
    """
    kw = dict(last_value=last_value, dones=dones, truncated=truncated,
              truncated_values=truncated_values)
    s = _steps(rewards, values, **kw)
    if s.rewards.ndim != 1:
        raise ValueError(f"one trajectory [T] is expected; got shape {s.rewards.shape}")
    length = s.rewards.size
    if not 0 <= step < length:
        raise InputError(f"step {step} is outside the trajectory of {length} steps")
    horizons = _horizons(s.ends)
    n_max = int(horizons[step])
    n_step = np.array([
        n_step_returns(rewards, values, gamma=gamma, n=n, **kw)[step] for n in range(1, n_max + 1)
    ]) - s.values[step]
    returns = discounted_returns(rewards, gamma, **kw)
    adv = gae(rewards, values, gamma=gamma, lam=lam, **kw)
    d = _flags("dones", dones, s.rewards.shape)
    return AdvantageBreakdown(
        gamma=float(gamma),
        lam=float(lam),
        values=s.values,
        dones=d,
        truncated=s.ends & ~d,
        next_values=s.next_values(),
        td_errors=td_errors(rewards, values, gamma=gamma, **kw),
        advantages=adv,
        td_advantages=gae(rewards, values, gamma=gamma, lam=0.0, **kw),
        mc_advantages=gae(rewards, values, gamma=gamma, lam=1.0, **kw),
        returns=returns,
        lambda_returns=adv + s.values,
        horizons=horizons,
        step=int(step),
        n_step_advantages=n_step,
        weights=lambda_weights(lam, n_max),
    )


# --------------------------------------------------------------------------- examples
@dataclass(frozen=True)
class Example:
    """A short trajectory to explore, one entry per step ``t`` in ``[0, T-1]``."""

    label: str
    rewards: tuple[float, ...]  # r_t
    values: tuple[float, ...]  # V(s_t)
    dones: tuple[bool, ...]  # s_{t+1} is terminal
    truncated: tuple[bool, ...]  # a time limit cut the episode at s_{t+1}
    truncated_values: tuple[float, ...]  # V(s_{t+1}) where truncated, NaN elsewhere
    last_value: float  # V(s_T)


def _marked(n: int, *steps: int) -> tuple[bool, ...]:
    return tuple(t in steps for t in range(n))


def _cut_values(n: int, **at: float) -> tuple[float, ...]:
    return tuple(at.get(f"t{t}", float("nan")) for t in range(n))


EXAMPLES: dict[str, Example] = {
    "goal_and_time_limit": Example(
        "Goal, then a time limit",
        rewards=(0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0),
        values=(0.3, 0.35, 0.45, 0.5, 0.6, 0.75, 0.9, 0.4, 0.45, 0.5, 0.55, 0.4),
        dones=_marked(12, 6),
        truncated=_marked(12, 10),
        truncated_values=_cut_values(12, t10=0.6),
        last_value=0.45,
    ),
    "sparse_reward": Example(
        "Sparse reward, flat critic",
        rewards=(0,) * 9 + (1,),
        values=(0.5,) * 10,
        dones=_marked(10, 9),
        truncated=_marked(10),
        truncated_values=_cut_values(10),
        last_value=0.0,
    ),
    "time_limit": Example(
        "Cut by a time limit",
        rewards=(0.1,) * 8,
        values=(0.9, 0.95, 1.0, 1.05, 1.1, 1.15, 1.2, 0.9),
        dones=_marked(8),
        truncated=_marked(8, 6),
        truncated_values=_cut_values(8, t6=1.25),
        last_value=0.95,
    ),
}


def random_example(seed: int, n_steps: int = 12) -> Example:
    """A random trajectory: rewards and values ~ N(0, 1), ends with probability 0.1 each kind.

    Args:
        seed: Seeds the draws.
        n_steps: ``T``, at least 1.

    Returns:
        The trajectory.
    """
    rng = np.random.default_rng(seed)
    rewards, values, cut = np.round(rng.normal(size=(3, n_steps)), 2)
    kind = rng.choice(3, size=n_steps, p=[0.8, 0.1, 0.1])  # go on, terminate, truncate
    return Example(
        f"Random (seed {seed})",
        rewards=tuple(rewards.tolist()),
        values=tuple(values.tolist()),
        dones=tuple((kind == 1).tolist()),
        truncated=tuple((kind == 2).tolist()),
        truncated_values=tuple(np.where(kind == 2, cut, np.nan).tolist()),
        last_value=float(np.round(rng.normal(), 2)),
    )
