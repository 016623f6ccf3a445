r"""Returns and advantages along trajectories: discounted, n-step and λ-returns, and GAE.

Time runs along the last axis. A trajectory of ``T`` steps is the sequence of transitions
``(s_t, r_t, s_{t+1})`` for ``t`` in ``[0, T-1]``: ``rewards[..., t]`` is ``r_t``, the reward
received after acting in ``s_t``, and ``values[..., t]`` is the critic's ``V(s_t)``. Leading axes
hold independent trajectories, so a batch of ``B`` rollouts is an array ``[B, T]``.

An episode can end inside a trajectory in two different ways, and they must not be confused:

* **termination** (``dones[..., t]``): ``s_{t+1}`` is a terminal state. Its value is zero by
  definition, so step ``t`` bootstraps from nothing.
* **truncation** (``truncated[..., t]``): a time limit cut the episode at ``s_{t+1}``, an ordinary
  state the agent simply never acted in. Step ``t`` bootstraps from ``V(s_{t+1})``, the value of
  the state where the episode was cut, given in ``truncated_values[..., t]``.

After either end the next entry, ``values[..., t+1]``, is the first state of a *new* episode, so
it is never the bootstrap of step ``t``; that is why a truncation needs its own value. The last
step ``T-1``, when it neither terminates nor is truncated, bootstraps from ``last_value`` (the
value of ``s_T``, the state the rollout stopped in). When a step is flagged both ways,
termination wins, as in gymnasium.

Every recursion here has the form ``y_t = x_t + c * y_{t+1}`` within an episode. It runs as one
linear filter over reversed time (``scipy.signal.lfilter``) per trajectory, and the carry across
episode ends is then removed in closed form; no Python loop runs over time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy.signal import lfilter

from rlviz.mdp import TabularMDP, action_values, policy_value

__all__ = [
    "SUTTON_BARTO_WALKS",
    "EXAMPLES",
    "AdvantageBreakdown",
    "Example",
    "StudyResult",
    "WalkSamples",
    "bias_variance_study",
    "breakdown",
    "discounted_returns",
    "expected_episode_length",
    "gae",
    "lambda_returns",
    "lambda_weights",
    "n_step_returns",
    "random_example",
    "random_walk",
    "sample_walks",
    "td_errors",
]

ArrayLike = np.ndarray | list | tuple | float

# Rewards (left end, right end) of the random walks in Sutton & Barto (2018):
# Example 6.2 (5 states) and Example 7.1 (19 states).
SUTTON_BARTO_WALKS: dict[int, tuple[float, float]] = {5: (0.0, 1.0), 19: (-1.0, 1.0)}


# --------------------------------------------------------------------------- validation
def _where(index: tuple[int, ...]) -> str:
    *batch, t = (int(i) for i in index)
    if batch:
        return f"step {t} of trajectory {', '.join(str(b) for b in batch)}"
    return f"step {t}"


def _check_unit(name: str, x: float) -> float:
    try:
        x = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number in [0, 1]; got {x!r}") from None
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"{name} must be in [0, 1]; got {x:g}")
    return x


def _numbers(name: str, x: ArrayLike, what: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim == 0:
        raise ValueError(f"{name} must be an array over time [..., T]; got a single number")
    if arr.shape[-1] == 0:
        raise ValueError(f"the trajectory is empty: {name} has no steps")
    if not np.isfinite(arr).all():
        bad = tuple(np.argwhere(~np.isfinite(arr))[0])
        raise ValueError(f"{what} at {_where(bad)} is empty or not a finite number")
    return arr


def _same_shape(name: str, arr: np.ndarray, shape: tuple[int, ...], per: str) -> None:
    if arr.shape != shape:
        raise ValueError(
            f"{name} has shape {arr.shape} but rewards has shape {shape}: give one {per} per step"
        )


def _flags(name: str, x: ArrayLike | None, shape: tuple[int, ...]) -> np.ndarray:
    if x is None:
        return np.zeros(shape, dtype=bool)
    arr = np.asarray(x)
    _same_shape(name, arr, shape, "flag")
    if arr.dtype == bool:
        return arr
    num = np.asarray(arr, dtype=np.float64)
    bad = ~((num == 0.0) | (num == 1.0))
    if bad.any():
        where = tuple(np.argwhere(bad)[0])
        raise ValueError(f"{name} must be 0 or 1 (False or True); {_where(where)} is not")
    return num == 1.0


class _Steps(NamedTuple):
    """Validated inputs of a trajectory, with the bootstrap value of every step resolved."""

    rewards: np.ndarray  # [..., T] r_t
    values: np.ndarray | None  # [..., T] V(s_t), or None when not needed
    next_values: np.ndarray  # [..., T] V(s_{t+1}) bootstrapped by step t (0 after termination)
    ends: np.ndarray  # [..., T] bool, an episode ends after step t (terminated or truncated)


def _steps(
    rewards: ArrayLike,
    values: ArrayLike | None,
    *,
    last_value: ArrayLike,
    dones: ArrayLike | None,
    truncated: ArrayLike | None,
    truncated_values: ArrayLike | None,
) -> _Steps:
    r = _numbers("rewards", rewards, "the reward r_t")
    shape = r.shape
    v = None
    if values is not None:
        v = np.asarray(values, dtype=np.float64)
        _same_shape("values", v, shape, "value V(s_t)")
        v = _numbers("values", v, "the value V(s_t)")
    d = _flags("dones", dones, shape)
    tr = _flags("truncated", truncated, shape) & ~d
    last = np.asarray(last_value, dtype=np.float64)
    if last.shape not in {(), shape[:-1]}:
        raise ValueError(
            f"last_value must be one number per trajectory, shape {shape[:-1]}; got {last.shape}"
        )
    if not np.isfinite(last).all():
        raise ValueError("last_value, the value V(s_T) after the last step, must be finite")

    next_values = np.empty(shape)
    if v is not None:
        next_values[..., :-1] = v[..., 1:]
    else:
        next_values[..., :-1] = 0.0  # only read at episode ends, which are filled in below
    next_values[..., -1] = last
    if tr.any():
        if truncated_values is None:
            where = tuple(np.argwhere(tr)[0])
            raise ValueError(
                f"{_where(where)} is truncated, so its return bootstraps from the value of the "
                "state where the episode was cut: pass truncated_values"
            )
        cut = np.asarray(truncated_values, dtype=np.float64)
        _same_shape("truncated_values", cut, shape, "cut-state value")
        missing = tr & ~np.isfinite(cut)
        if missing.any():
            where = tuple(np.argwhere(missing)[0])
            raise ValueError(
                f"{_where(where)} is truncated but the value of the state where the episode was "
                "cut, V(s_t+1), is empty: enter it"
            )
        np.copyto(next_values, cut, where=tr)
    np.copyto(next_values, 0.0, where=d)  # a terminal state is worth nothing
    return _Steps(r, v, next_values, d | tr)


# --------------------------------------------------------------------------- the filter
def _cuts(ends: np.ndarray) -> np.ndarray | None:
    """Where running sums must restart, in the trajectories laid end to end as one stream.

    Args:
        ends: ``[..., T]`` True where an episode ends after step ``t``.

    Returns:
        ``[E]`` sorted stream indices of every episode end and every trajectory's last step,
        except the stream's very last step; None when there are none.
    """
    closes = ends.copy()
    closes[..., -1] = True
    last = np.flatnonzero(closes)
    return last[:-1] if last.size > 1 else None


_BLOCK = 8  # steps per block when sums are read off at a few positions only


def _reverse_filter(x: np.ndarray, coef: float) -> np.ndarray:
    """``z_t = x_t + coef * z_{t+1}`` over a whole 1-D stream, ``z`` zero past its end."""
    return lfilter([1.0], [1.0, -coef], x[::-1])[::-1]


def _reverse_sums_at(x: np.ndarray, coef: float, at: np.ndarray) -> np.ndarray:
    r"""``z_p = sum_{k>=p} coef^(k-p) x_k`` at a few stream positions ``p``, without a full pass.

    The stream is cut into blocks of ``K`` steps. Each block's own discounted sum is one dot
    product; a filter over the ``N / K`` block sums gives ``Z_b``, everything from block ``b``
    on. Then ``z_p`` is the rest of ``p``'s own block plus ``coef^(K-i) Z_{b+1}``, where ``i`` is
    ``p``'s place in block ``b``.
    """
    k = _BLOCK
    n = x.size
    powers = coef ** np.arange(k, dtype=np.float64)
    full = n - n % k
    own = np.einsum("bk,k->b", x[:full].reshape(-1, k), powers)
    if full < n:
        own = np.append(own, x[full:] @ powers[: n - full])
    whole = lfilter([1.0], [1.0, -(coef**k)], own[::-1])[::-1]
    block, place = np.divmod(at, k)
    reach = np.minimum(k - place, n - at)  # steps of x from p to the end of its block
    ahead = np.arange(k)
    weights = np.where(ahead[None, :] < np.arange(k + 1)[:, None], powers, 0.0)[reach]
    window = x[np.minimum(at[:, None] + ahead, n - 1)]
    rest = np.einsum("pk,pk->p", window, weights)
    later = np.append(whole[1:], 0.0)[block]
    return rest + coef ** (k - place) * later


def _discounted_sum(
    x_t: np.ndarray, coef: float, cuts: np.ndarray | None, *, overwrite: bool = False
) -> np.ndarray:
    r"""``y_t = x_t + coef * y_{t+1}`` inside each segment, restarting after every end.

    One reversed-time linear filter over the trajectories laid end to end,
    ``z_t = sum_{k>=t} coef^(k-t) x_k``, would leak each segment's sum into the one before it.
    The exact sum at the start ``s`` of a segment that ends at ``e`` is
    ``y_s = z_s - coef^(e+1-s) z_{e+1}``, which needs ``z`` at the segment boundaries only.
    Lowering the input at each end by the carry ``coef * y_{e+1}`` it would receive, a single
    pass of the filter is exact everywhere. No Python loop runs over time.

    Args:
        x_t: ``[..., T]`` the per-step terms, times ``[0, T-1]``.
        coef: The per-step decay in ``[0, 1]`` (``gamma``, or ``gamma * lam`` for GAE).
        cuts: The segment ends from ``_cuts`` (None: a single segment).
        overwrite: Whether ``x_t`` (a fresh array of the caller's) may be used as scratch.

    Returns:
        ``[..., T]`` the sums ``y_t``.
    """
    flat = x_t.reshape(-1) if overwrite else x_t.flatten()
    if coef == 0.0:
        return flat.reshape(x_t.shape)
    if cuts is not None:
        start = cuts + 1  # the first step of every segment but the first
        heads = _reverse_sums_at(flat, coef, start)
        heads[:-1] -= coef ** (start[1:] - start[:-1]) * heads[1:]  # now y at each start
        flat[cuts] -= coef * heads
    return _reverse_filter(flat, coef).reshape(x_t.shape)


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
        ValueError: on empty input, mismatched shapes, missing (NaN) entries, flags other than
            0/1, a truncation without its cut-state value, or ``gamma`` outside ``[0, 1]``.
    """
    gamma = _check_unit("gamma", gamma)
    s = _steps(rewards, values, last_value=last_value, dones=dones, truncated=truncated,
               truncated_values=truncated_values)
    return s.rewards + gamma * s.next_values - s.values


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
        ValueError: as ``td_errors``.
    """
    gamma = _check_unit("gamma", gamma)
    s = _steps(rewards, None, last_value=last_value, dones=dones, truncated=truncated,
               truncated_values=truncated_values)
    closes = s.ends.copy()
    closes[..., -1] = True
    x = s.rewards + np.where(closes, gamma * s.next_values, 0.0)
    return _discounted_sum(x, gamma, _cuts(s.ends), overwrite=True)


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
        ValueError: as ``td_errors``, or if ``n`` is not a whole number of at least 1.
    """
    gamma = _check_unit("gamma", gamma)
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise ValueError(f"n must be a whole number of at least 1; got {n!r}")
    n = int(n)
    s = _steps(rewards, values, last_value=last_value, dones=dones, truncated=truncated,
               truncated_values=truncated_values)
    shape = s.rewards.shape
    length = shape[-1]
    t = np.arange(length)
    horizon = _horizons(s.ends)
    m = np.minimum(n, horizon)
    # Rewards to the end of the episode, minus the part beyond m steps.
    tail = _discounted_sum(s.rewards, gamma, _cuts(s.ends))
    tail_pad = np.concatenate([tail, np.zeros(shape[:-1] + (1,))], axis=-1)
    later = np.take_along_axis(tail_pad, t + m, axis=-1)
    powers = gamma ** np.arange(length + 1, dtype=np.float64)
    rewards_part = tail - np.where(m < horizon, powers[m] * later, 0.0)
    boot = np.take_along_axis(s.next_values, t + m - 1, axis=-1)
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
        ValueError: on empty input, mismatched shapes, missing (NaN) entries, flags other than
            0/1, a truncation without its cut-state value, or ``gamma``/``lam`` outside
            ``[0, 1]``.
    """
    gamma = _check_unit("gamma", gamma)
    lam = _check_unit("lam", lam)
    s = _steps(rewards, values, last_value=last_value, dones=dones, truncated=truncated,
               truncated_values=truncated_values)
    delta = s.next_values  # a fresh array: turned into delta_t in place
    delta *= gamma
    delta += s.rewards
    delta -= s.values
    return _discounted_sum(delta, gamma * lam, _cuts(s.ends), overwrite=True)


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
        ValueError: as ``gae``.
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
        raise ValueError(f"the horizon must be a whole number of at least 1; got {horizon!r}")
    horizon = int(horizon)
    w = (1.0 - lam) * lam ** np.arange(horizon, dtype=np.float64)
    w[-1] = lam ** (horizon - 1)
    return w


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
        ValueError: as ``gae``, or if ``step`` is outside the trajectory.
    """
    kw = dict(last_value=last_value, dones=dones, truncated=truncated,
              truncated_values=truncated_values)
    s = _steps(rewards, values, **kw)
    if s.rewards.ndim != 1:
        raise ValueError(f"one trajectory [T] is expected; got shape {s.rewards.shape}")
    length = s.rewards.size
    if not 0 <= step < length:
        raise ValueError(f"step {step} is outside the trajectory of {length} steps")
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
        next_values=s.next_values,
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


# --------------------------------------------------------------------------- the random walk
def random_walk(n_states: int, *, left_reward: float, right_reward: float) -> TabularMDP:
    """The random-walk chain of Sutton & Barto (2018), Examples 6.2 and 7.1, as an MDP.

    States ``1 .. n`` in a row between two terminal states ``0`` and ``n + 1``; every episode
    starts in the centre ``(n + 1) // 2``. Action 0 steps left, action 1 right; stepping into
    the left end pays ``left_reward``, into the right end ``right_reward``, anything else 0.
    Under the uniform policy it is the Markov reward process of the book.

    Args:
        n_states: ``n``, the number of non-terminal states (at least 1).
        left_reward: Reward for leaving through the left end.
        right_reward: Reward for leaving through the right end.

    Returns:
        The MDP with ``n + 2`` states and actions ``("left", "right")``.
    """
    if isinstance(n_states, bool) or int(n_states) != n_states or n_states < 1:
        raise ValueError(f"the walk needs a whole number of states, at least 1; got {n_states!r}")
    n = int(n_states)
    size = n + 2
    s = np.arange(size)
    nxt = np.stack([np.clip(s - 1, 0, size - 1), np.clip(s + 1, 0, size - 1)], axis=1)
    terminal = (s == 0) | (s == size - 1)
    nxt[terminal] = s[terminal, None]
    reward = np.where(nxt == 0, left_reward, np.where(nxt == size - 1, right_reward, 0.0))
    reward[terminal] = 0.0
    start = np.zeros(size)
    start[(n + 1) // 2] = 1.0
    return TabularMDP(
        next_state=nxt[:, :, None], prob=np.ones((size, 2, 1)), reward=reward[:, :, None],
        terminal=terminal, start=start, action_names=("left", "right"),
        name=f"{n}-state random walk",
    )


def expected_episode_length(n_states: int) -> int:
    """Mean steps of a walk episode from the centre ``k``: ``k (n + 1 - k)`` (gambler's ruin).

    Feller (1968), *An Introduction to Probability Theory*, Vol. 1, §XIV.3.
    """
    centre = (n_states + 1) // 2
    return centre * (n_states + 1 - centre)


@dataclass(frozen=True)
class WalkSamples:
    """Complete episodes of a random walk under the uniform policy, back to back in time."""

    states: np.ndarray  # [N] int, s_t in 1..n
    actions: np.ndarray  # [N] int, a_t: 0 left, 1 right
    rewards: np.ndarray  # [N] float, r_t
    next_states: np.ndarray  # [N] int, s_{t+1} in 0..n+1
    dones: np.ndarray  # [N] bool, s_{t+1} is terminal (the last step of each episode)
    lengths: np.ndarray  # [E] int, steps per episode


def sample_walks(
    n_states: int,
    n_episodes: int,
    rng: np.random.Generator,
    *,
    left_reward: float,
    right_reward: float,
    chunk: int | None = None,
) -> WalkSamples:
    """Sample whole episodes of the random walk, vectorised over episodes.

    Each episode's moves are drawn in chunks of ``chunk`` fair ±1 steps (row ``i`` of a chunk is
    episode ``i``); an episode stops at the first step that reaches an end, and the episodes
    still going draw another chunk. The expected length from the centre ``k`` is
    ``k (n + 1 - k)`` (the gambler's-ruin duration).

    Args:
        n_states: ``n``, the number of non-terminal states.
        n_episodes: How many episodes (at least 1).
        rng: The random generator (consumed).
        left_reward: Reward for leaving through the left end.
        right_reward: Reward for leaving through the right end.
        chunk: Steps drawn per round; by default a few times the expected length.

    Returns:
        The episodes, concatenated.
    """
    if n_episodes < 1:
        raise ValueError(f"at least one episode is needed; got {n_episodes}")
    n = int(n_states)
    centre = (n + 1) // 2
    if chunk is None:
        chunk = max(16, 2 * expected_episode_length(n))
    position = np.full(n_episodes, centre, dtype=np.int64)
    alive = np.arange(n_episodes)
    pieces: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (episodes, moves, used)
    while alive.size:
        moves = rng.integers(0, 2, size=(alive.size, chunk), dtype=np.int8)
        path = position[alive, None] + np.cumsum(2 * moves - 1, axis=1, dtype=np.int64)
        ended = (path <= 0) | (path >= n + 1)
        finished = ended.any(axis=1)
        used = np.where(finished, ended.argmax(axis=1) + 1, chunk)
        pieces.append((alive, moves, used))
        position[alive] = path[:, -1]
        alive = alive[~finished]

    lengths = np.zeros(n_episodes, dtype=np.int64)
    for episodes, _, used in pieces:
        lengths[episodes] += used
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    total = int(lengths.sum())
    actions = np.empty(total, dtype=np.int64)
    offset = starts.copy()
    for episodes, moves, used in pieces:
        keep = np.arange(chunk) < used[:, None]
        where = (offset[episodes, None] + np.arange(chunk))[keep]
        actions[where] = moves[keep]
        offset[episodes] += used

    step = 2 * actions - 1
    walked = np.cumsum(step)
    before = np.repeat(walked[starts] - step[starts], lengths)  # progress before each episode
    next_states = centre + walked - before
    states = next_states - step
    dones = np.zeros(total, dtype=bool)
    dones[starts + lengths - 1] = True
    rewards = np.where(next_states == 0, left_reward,
                       np.where(next_states == n + 1, right_reward, 0.0))
    return WalkSamples(states, actions, rewards, next_states, dones, lengths)


@dataclass(frozen=True)
class StudyResult:
    """Bias, variance and mean squared error of GAE on a random walk, for a grid of λ."""

    lams: np.ndarray  # [L] the λ values
    bias2: np.ndarray  # [L] squared bias, averaged over visited (s, a)
    variance: np.ndarray  # [L] variance, averaged over visited (s, a)
    mse: np.ndarray  # [L] bias2 + variance
    best: int  # index of the λ with the smallest MSE
    true_values: np.ndarray  # [n+2] v(s) of the uniform policy (terminals 0)
    critic: np.ndarray  # [n+2] the critic V^(s) = v(s) + bias + noise (terminals 0)
    gamma: float
    n_episodes: int
    n_steps: int
    mean_length: float  # average episode length
    length_se: float  # its standard error

    @property
    def best_lam(self) -> float:
        """The λ with the smallest mean squared error."""
        return float(self.lams[self.best])


def bias_variance_study(
    *,
    n_states: int,
    left_reward: float,
    right_reward: float,
    gamma: float,
    lams: ArrayLike,
    critic_bias: float,
    critic_noise: float,
    n_episodes: int,
    seed: int,
) -> StudyResult:
    r"""How λ trades the critic's bias for the return's variance, measured on a random walk.

    A critic ``V^(s) = v(s) + b + sigma * z_s`` (``z_s ~ N(0, 1)`` drawn once per state) scores
    ``n_episodes`` sampled episodes of the walk under the uniform policy. Each step's GAE is
    compared with the true advantage of the step taken measured from the critic's baseline,
    ``Q(s_t, a_t) - V^(s_t)`` with ``Q(s, a) = r + gamma v(s')``; a baseline that depends on
    the state alone does not bias a policy gradient, so this is the error that matters
    (Schulman et al. 2016, §3: GAE(γ, 1) is unbiased whatever the critic; GAE(γ, λ < 1) is
    unbiased only for a correct critic). With ``eps_t = A_t - (Q(s_t, a_t) - V^(s_t))``,
    grouped by the state-action pair ``g = (s_t, a_t)`` over all visits::

        bias2 = sum_g p_g mean_g(eps)^2,  variance = sum_g p_g var_g(eps),  mse = bias2 + variance

    where ``p_g`` is the share of steps in group ``g``.

    Args:
        n_states: ``n``, non-terminal states of the walk.
        left_reward: Reward for leaving through the left end.
        right_reward: Reward for leaving through the right end.
        gamma: Discount factor in ``[0, 1]``.
        lams: ``[L]`` the λ values, each in ``[0, 1]``.
        critic_bias: ``b``, added to every non-terminal state's true value.
        critic_noise: ``sigma >= 0``, the spread of the critic's per-state errors.
        n_episodes: Number of sampled episodes.
        seed: Seeds the critic's errors and the episodes (independent streams).

    Returns:
        The bias², variance and MSE for each λ.
    """
    gamma = _check_unit("gamma", gamma)
    lams = np.atleast_1d(np.asarray(lams, dtype=np.float64))
    if lams.ndim != 1 or lams.size == 0:
        raise ValueError("give at least one value of λ")
    for lam in lams:
        _check_unit("lam", lam)
    if not critic_noise >= 0:
        raise ValueError(f"the critic's noise must be at least 0; got {critic_noise}")
    critic_rng, walk_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))

    walk = random_walk(n_states, left_reward=left_reward, right_reward=right_reward)
    uniform = np.full((walk.n_states, walk.n_actions), 0.5)
    v = policy_value(walk, uniform, gamma)
    q = action_values(walk, v, gamma)
    noise = critic_rng.standard_normal(walk.n_states)
    critic = np.where(walk.terminal, 0.0, v + critic_bias + critic_noise * noise)

    ep = sample_walks(n_states, n_episodes, walk_rng, left_reward=left_reward,
                      right_reward=right_reward)
    v_t = critic[ep.states]
    delta = ep.rewards + gamma * critic[ep.next_states] - v_t  # critic is 0 at terminals
    target = q[ep.states, ep.actions] - v_t
    cuts = _cuts(ep.dones[None, :])
    group = ep.states * 2 + ep.actions
    counts = np.bincount(group, minlength=2 * walk.n_states)
    seen = counts > 0
    share = counts[seen] / group.size

    bias2 = np.empty(lams.size)
    variance = np.empty(lams.size)
    for i, lam in enumerate(lams):
        err = _discounted_sum(delta[None, :], gamma * lam, cuts)[0] - target
        mean = np.zeros(counts.size)
        mean[seen] = np.bincount(group, weights=err, minlength=counts.size)[seen] / counts[seen]
        bias2[i] = float(share @ mean[seen] ** 2)
        variance[i] = float(np.mean((err - mean[group]) ** 2))
    mse = bias2 + variance
    lengths = ep.lengths.astype(np.float64)
    se = float(lengths.std(ddof=1) / np.sqrt(lengths.size)) if lengths.size > 1 else 0.0
    return StudyResult(
        lams=lams, bias2=bias2, variance=variance, mse=mse, best=int(np.argmin(mse)),
        true_values=v, critic=critic, gamma=gamma, n_episodes=int(n_episodes),
        n_steps=int(group.size), mean_length=float(lengths.mean()), length_se=se,
    )
