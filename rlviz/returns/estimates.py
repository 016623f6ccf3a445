"""Returns and advantages along whole trajectories: TD errors, n-step, λ-returns and GAE."""

from __future__ import annotations

import numpy as np

from rlviz.errors import InputError
from rlviz.returns.filter import _discounted_sum
from rlviz.returns.steps import ArrayLike
from rlviz.returns.validation import _check_unit, _steps

__all__ = [
    "discounted_returns",
    "gae",
    "lambda_returns",
    "lambda_weights",
    "n_step_returns",
    "td_errors",
]


# --------------------------------------------------------------------------- returns
def td_errors(
    rewards: ArrayLike,
    values: ArrayLike,
    *,
    gamma: float,
    last_value: ArrayLike = 0.0,
    dones: ArrayLike | None = None,
    truncated: ArrayLike | None = None,
    truncated_values: ArrayLike | None = None,
) -> np.ndarray:
    r"""One-step temporal-difference errors.

    ``delta_t = r_t + gamma * V(s_{t+1}) - V(s_t)``, with ``V(s_{t+1}) = 0`` when step ``t``
    terminates and the cut state's value when it is truncated (Sutton & Barto 2018, eq. 6.5).

    Args:
        rewards: ``[..., T]`` rewards ``r_t``, times ``[0, T-1]``.
        values: ``[..., T]`` critic values ``V(s_t)``, times ``[0, T-1]``.
        gamma: Discount factor in ``[0, 1]``.
        last_value: ``V(s_T)``, a number or ``[...]`` one per trajectory; used by step ``T-1``
            when it neither terminates nor is truncated.
        dones: ``[..., T]`` True where ``s_{t+1}`` is terminal.
        truncated: ``[..., T]`` True where a time limit cut the episode at ``s_{t+1}``.
        truncated_values: ``[..., T]`` ``V(s_{t+1})`` of the cut state, read only where
            ``truncated`` (other entries are ignored and may be NaN).

    Returns:
        ``[..., T]`` the TD errors ``delta_t``.

    Raises:
        InputError: on empty input, mismatched shapes, missing (NaN) entries, flags other than
            0/1, a truncation without its cut-state value, or ``gamma`` outside ``[0, 1]``.
    """
    gamma = _check_unit("gamma", gamma)
    s = _steps(rewards, values, last_value=last_value, dones=dones, truncated=truncated,
               truncated_values=truncated_values)
    return s.td_errors(gamma)


def discounted_returns(
    rewards: ArrayLike,
    gamma: float,
    *,
    last_value: ArrayLike = 0.0,
    dones: ArrayLike | None = None,
    truncated: ArrayLike | None = None,
    truncated_values: ArrayLike | None = None,
) -> np.ndarray:
    r"""Discounted returns to the end of each step's episode.

    ``G_t = r_t + gamma * G_{t+1}`` inside an episode; at its last step ``e``,
    ``G_e = r_e + gamma * V(s_{e+1})`` with ``V = 0`` on termination, the cut state's value on
    truncation and ``last_value`` at the end of the trajectory (Sutton & Barto 2018, eq. 3.9).

    Args:
        rewards: ``[..., T]`` rewards ``r_t``, times ``[0, T-1]``.
        gamma: Discount factor in ``[0, 1]``.
        last_value: ``V(s_T)``, a number or ``[...]``; bootstraps the unfinished last episode.
        dones: ``[..., T]`` True where ``s_{t+1}`` is terminal.
        truncated: ``[..., T]`` True where a time limit cut the episode at ``s_{t+1}``.
        truncated_values: ``[..., T]`` ``V(s_{t+1})`` of the cut state, read where truncated.

    Returns:
        ``[..., T]`` the returns ``G_t``.

    Raises:
        InputError: as ``td_errors``.
    """
    gamma = _check_unit("gamma", gamma)
    s = _steps(rewards, None, last_value=last_value, dones=dones, truncated=truncated,
               truncated_values=truncated_values)
    x = s.rewards.copy()
    x.reshape(-1)[s.closes] += gamma * s.boot
    return _discounted_sum(x, gamma, s.cuts, overwrite=True)


def n_step_returns(
    rewards: ArrayLike,
    values: ArrayLike,
    *,
    gamma: float,
    n: int,
    last_value: ArrayLike = 0.0,
    dones: ArrayLike | None = None,
    truncated: ArrayLike | None = None,
    truncated_values: ArrayLike | None = None,
) -> np.ndarray:
    r"""n-step bootstrapped returns, stopping at episode ends.

    ``G_t^(n) = sum_{k=0}^{m-1} gamma^k r_{t+k} + gamma^m V(s_{t+m})`` with
    ``m = min(n, N_t)``, where ``N_t`` is the number of steps from ``t`` to the end of its
    episode (or of the trajectory); past an end the bootstrap is the end's own (0, the cut
    state's value, or ``last_value``). Sutton & Barto (2018), eq. 7.1.

    Args:
        rewards: ``[..., T]`` rewards ``r_t``, times ``[0, T-1]``.
        values: ``[..., T]`` critic values ``V(s_t)``, times ``[0, T-1]``.
        gamma: Discount factor in ``[0, 1]``.
        n: Number of rewards before bootstrapping, at least 1.
        last_value: ``V(s_T)``, a number or ``[...]``.
        dones: ``[..., T]`` True where ``s_{t+1}`` is terminal.
        truncated: ``[..., T]`` True where a time limit cut the episode at ``s_{t+1}``.
        truncated_values: ``[..., T]`` ``V(s_{t+1})`` of the cut state, read where truncated.

    Returns:
        ``[..., T]`` the n-step returns ``G_t^(n)``.

    Raises:
        InputError: as ``td_errors``, or if ``n`` is not a whole number of at least 1.
    """
    gamma = _check_unit("gamma", gamma)
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise InputError(f"n must be a whole number of at least 1; got {n!r}")
    n = int(n)
    s = _steps(rewards, values, last_value=last_value, dones=dones, truncated=truncated,
               truncated_values=truncated_values)
    shape = s.rewards.shape
    length = shape[-1]
    t = np.arange(length)
    horizon = _horizons(s.ends)
    m = np.minimum(n, horizon)
    # Rewards to the end of the episode, minus the part beyond m steps.
    tail = _discounted_sum(s.rewards, gamma, s.cuts)
    tail_pad = np.concatenate([tail, np.zeros(shape[:-1] + (1,))], axis=-1)
    later = np.take_along_axis(tail_pad, t + m, axis=-1)
    powers = gamma ** np.arange(length + 1, dtype=np.float64)
    rewards_part = tail - np.where(m < horizon, powers[m] * later, 0.0)
    boot = np.take_along_axis(s.next_values(), t + m - 1, axis=-1)
    return rewards_part + powers[m] * boot


def _horizons(ends: np.ndarray) -> np.ndarray:
    length = ends.shape[-1]
    t = np.arange(length)
    last = np.where(ends, t, length - 1)
    last = np.minimum.accumulate(last[..., ::-1], axis=-1)[..., ::-1]
    return last + 1 - t


def gae(
    rewards: ArrayLike,
    values: ArrayLike,
    *,
    gamma: float,
    lam: float,
    last_value: ArrayLike = 0.0,
    dones: ArrayLike | None = None,
    truncated: ArrayLike | None = None,
    truncated_values: ArrayLike | None = None,
) -> np.ndarray:
    r"""Generalized advantage estimation, GAE(γ, λ).

    ``A_t = sum_{l=0}^{N_t-1} (gamma * lam)^l delta_{t+l}``, i.e. the backward recursion
    ``A_t = delta_t + gamma * lam * (1 - end_t) * A_{t+1}`` where ``end_t`` marks a termination
    or a truncation after step ``t``. A termination bootstraps nothing; a truncation bootstraps
    from the cut state's value inside ``delta_t``. ``lam = 0`` gives ``delta_t``; ``lam = 1``
    gives ``G_t - V(s_t)``. Schulman, Moritz, Levine, Jordan & Abbeel (2016), "High-Dimensional
    Continuous Control Using Generalized Advantage Estimation", eq. 16.

    Args:
        rewards: ``[..., T]`` rewards ``r_t``, times ``[0, T-1]``.
        values: ``[..., T]`` critic values ``V(s_t)``, times ``[0, T-1]``.
        gamma: Discount factor in ``[0, 1]``.
        lam: The GAE ``λ`` in ``[0, 1]``.
        last_value: ``V(s_T)``, a number or ``[...]`` one per trajectory; used by step ``T-1``
            when it neither terminates nor is truncated.
        dones: ``[..., T]`` True where ``s_{t+1}`` is terminal (no bootstrap).
        truncated: ``[..., T]`` True where a time limit cut the episode at ``s_{t+1}``.
        truncated_values: ``[..., T]`` ``V(s_{t+1})`` of the cut state, read only where
            ``truncated`` (``values[t+1]`` is already the next episode's first state).

    Returns:
        ``[..., T]`` the advantages ``A_t``.

    Raises:
        InputError: on empty input, mismatched shapes, missing (NaN) entries, flags other than
            0/1, a truncation without its cut-state value, or ``gamma``/``lam`` outside
            ``[0, 1]``.
    """
    gamma = _check_unit("gamma", gamma)
    lam = _check_unit("lam", lam)
    s = _steps(rewards, values, last_value=last_value, dones=dones, truncated=truncated,
               truncated_values=truncated_values)
    return _discounted_sum(s.td_errors(gamma), gamma * lam, s.cuts, overwrite=True)


def lambda_returns(
    rewards: ArrayLike,
    values: ArrayLike,
    *,
    gamma: float,
    lam: float,
    last_value: ArrayLike = 0.0,
    dones: ArrayLike | None = None,
    truncated: ArrayLike | None = None,
    truncated_values: ArrayLike | None = None,
) -> np.ndarray:
    r"""λ-returns, the exponentially weighted mix of n-step returns.

    ``G_t^λ = sum_{n=1}^{N_t-1} (1 - lam) lam^(n-1) G_t^(n) + lam^(N_t-1) G_t^(N_t)``, computed
    as ``A_t^GAE + V(s_t)`` (Sutton & Barto 2018, eq. 12.3, truncated at the episode end).

    Args:
        rewards: ``[..., T]`` rewards ``r_t``, times ``[0, T-1]``.
        values: ``[..., T]`` critic values ``V(s_t)``, times ``[0, T-1]``.
        gamma: Discount factor in ``[0, 1]``.
        lam: ``λ`` in ``[0, 1]``.
        last_value: ``V(s_T)``, a number or ``[...]``.
        dones: ``[..., T]`` True where ``s_{t+1}`` is terminal.
        truncated: ``[..., T]`` True where a time limit cut the episode at ``s_{t+1}``.
        truncated_values: ``[..., T]`` ``V(s_{t+1})`` of the cut state, read where truncated.

    Returns:
        ``[..., T]`` the λ-returns ``G_t^λ``.

    Raises:
        InputError: as ``gae``.
    """
    adv = gae(rewards, values, gamma=gamma, lam=lam, last_value=last_value, dones=dones,
              truncated=truncated, truncated_values=truncated_values)
    return adv + np.asarray(values, dtype=np.float64)


def lambda_weights(lam: float, horizon: int) -> np.ndarray:
    r"""Weights of the n-step advantages inside GAE, for a finite horizon.

    ``w_n = (1 - lam) lam^(n-1)`` for ``n < N`` and the tail mass ``w_N = lam^(N-1)`` on the
    longest (Monte-Carlo) return, so that the weights sum to one (Sutton & Barto 2018, §12.1).

    Args:
        lam: ``λ`` in ``[0, 1]``.
        horizon: ``N``, steps to the end of the episode (at least 1).

    Returns:
        ``[N]`` weights ``w_1 .. w_N``.
    """
    lam = _check_unit("lam", lam)
    if isinstance(horizon, bool) or int(horizon) != horizon or horizon < 1:
        raise InputError(f"the horizon must be a whole number of at least 1; got {horizon!r}")
    horizon = int(horizon)
    w = (1.0 - lam) * lam ** np.arange(horizon, dtype=np.float64)
    w[-1] = lam ** (horizon - 1)
    return w
