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

Every recursion here has the form ``y_t = x_t + c * y_{t+1}`` within an episode: one linear
filter over reversed time, run blockwise over all trajectories laid end to end (see
``_discounted_sum``), with the carry across episode ends removed in closed form. No Python loop
runs over time; the plain step-by-step loops live in the tests as the reference.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from rlviz.errors import InputError
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
    "discounted_step",
    "expected_episode_length",
    "gae",
    "lambda_returns",
    "lambda_weights",
    "n_step_returns",
    "random_example",
    "random_walk",
    "sample_walks",
    "td_error",
    "td_errors",
]

ArrayLike = np.ndarray | list | tuple | float

# Rewards (left end, right end) of the random walks in Sutton & Barto (2018):
# Example 6.2 (5 states) and Example 7.1 (19 states).
SUTTON_BARTO_WALKS: dict[int, tuple[float, float]] = {5: (0.0, 1.0), 19: (-1.0, 1.0)}


# --------------------------------------------------------------------------- the steps
def td_error(r_t, v_t, v_tp1, *, gamma):
    r"""The one-step temporal-difference error of each step.

    .. math:: \delta_t = r_t + \gamma V(s_{t+1}) - V(s_t)

    with ``V(s_{t+1}) = 0`` when ``s_{t+1}`` is terminal (Sutton & Barto 2018, eq. 6.5).
    Element-wise: one call serves one step or every step of a batch of trajectories.

    Args:
        r_t: ``[...]`` rewards.
        v_t: ``[...]`` the critic's ``V(s_t)``.
        v_tp1: ``[...]`` the value each step bootstraps from (0 after a termination).
        gamma: Discount factor in ``[0, 1]``.
    """
    return r_t + gamma * v_tp1 - v_t


def discounted_step(x_t, y_tp1, coef, *, out=None):
    r"""One step back in time of the recursion every return and advantage here is made of.

    .. math:: y_t = x_t + c\, y_{t+1}

    GAE is ``A_t = δ_t + (γλ) A_{t+1}`` (``x = δ``, ``c = γλ``; Schulman et al. 2016, eq. 16),
    the discounted return ``G_t = r_t + γ G_{t+1}`` (``x = r``, ``c = γ``). Inside an episode
    only: at its end nothing flows back. ``_discounted_sum`` calls it for a whole column of
    blocks of the trajectories at once.

    Args:
        x_t: ``[...]`` this step's term.
        y_tp1: ``[...]`` the sum from the next step on.
        coef: The per-step decay ``c`` in ``[0, 1]``.
        out: Where to write ``y_t`` (it may be ``x_t`` itself), or None for a new array.
    """
    return np.add(x_t, coef * y_tp1, out=out)


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
        raise InputError(f"{name} must be a number in [0, 1]; got {x!r}") from None
    if not 0.0 <= x <= 1.0:
        raise InputError(f"{name} must be in [0, 1]; got {x:g}")
    return x


def _numbers(name: str, x: ArrayLike, what: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim == 0:
        raise InputError(f"{name} must be an array over time [..., T]; got a single number")
    if arr.shape[-1] == 0:
        raise InputError(f"the trajectory is empty: {name} has no steps")
    if not np.isfinite(arr).all():
        bad = tuple(np.argwhere(~np.isfinite(arr))[0])
        raise InputError(f"{what} at {_where(bad)} is empty or not a finite number")
    return arr


def _same_shape(name: str, arr: np.ndarray, shape: tuple[int, ...], per: str) -> None:
    if arr.shape != shape:
        raise InputError(
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
        raise InputError(f"{name} must be 0 or 1 (False or True); {_where(where)} is not")
    return num == 1.0


class _Steps(NamedTuple):
    """Validated inputs of a trajectory, with the bootstrap of every segment's last step.

    The trajectories are read as one stream, row after row. It splits into segments at every
    episode end and at the end of every trajectory; only a segment's last step bootstraps
    from something other than the next entry of ``values``.
    """

    rewards: np.ndarray  # [..., T] r_t
    values: np.ndarray | None  # [..., T] V(s_t), or None when not needed
    ends: np.ndarray  # [..., T] bool, an episode ends after step t (terminated or truncated)
    closes: np.ndarray  # [C] sorted stream index of each segment's last step
    boot: np.ndarray  # [C] V(s_{t+1}) there: 0, the cut state's value, or last_value

    def next_values(self) -> np.ndarray:
        """``[..., T]`` the value ``V(s_{t+1})`` that each step bootstraps from."""
        out = np.zeros(self.rewards.shape)
        if self.values is not None:
            out[..., :-1] = self.values[..., 1:]
        out.reshape(-1)[self.closes] = self.boot
        return out

    def td_errors(self, gamma: float) -> np.ndarray:
        """``[..., T]`` ``delta_t = r_t + gamma V(s_{t+1}) - V(s_t)``, a fresh array."""
        return td_error(self.rewards, self.values, self.next_values(), gamma=gamma)

    @property
    def cuts(self) -> np.ndarray | None:
        """``[E]`` the segment ends where a running sum restarts (all but the stream's last)."""
        return self.closes[:-1] if self.closes.size > 1 else None


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
    length = shape[-1]
    v = None
    if values is not None:
        v = np.asarray(values, dtype=np.float64)
        _same_shape("values", v, shape, "value V(s_t)")
        v = _numbers("values", v, "the value V(s_t)")
    d = _flags("dones", dones, shape)
    tr = _flags("truncated", truncated, shape) & ~d  # termination wins
    last = np.asarray(last_value, dtype=np.float64)
    if last.shape not in {(), shape[:-1]}:
        raise InputError(
            f"last_value must be one number per trajectory, shape {shape[:-1]}; got {last.shape}"
        )
    if not np.isfinite(last).all():
        raise InputError("last_value, the value V(s_T) after the last step, must be finite")

    ends = d | tr
    closing = ends.copy()
    closing[..., -1] = True
    closes = np.flatnonzero(closing)
    boot = np.zeros(closes.size)
    at_row_end = closes % length == length - 1
    boot[at_row_end] = np.broadcast_to(last, shape[:-1]).reshape(-1)[closes[at_row_end] // length]
    cut_here = tr.reshape(-1)[closes]
    if cut_here.any():
        if truncated_values is None:
            where = tuple(np.argwhere(tr)[0])
            raise InputError(
                f"{_where(where)} is truncated, so its return bootstraps from the value of the "
                "state where the episode was cut: pass truncated_values"
            )
        cut = np.asarray(truncated_values, dtype=np.float64)
        _same_shape("truncated_values", cut, shape, "cut-state value")
        boot[cut_here] = cut.reshape(-1)[closes[cut_here]]
        missing = ~np.isfinite(boot)
        if missing.any():
            where = np.unravel_index(closes[np.argmax(missing)], shape)
            raise InputError(
                f"{_where(where)} is truncated but the value of the state where the episode was "
                "cut, V(s_t+1), is empty: enter it"
            )
    boot[d.reshape(-1)[closes]] = 0.0  # a terminal state is worth nothing
    return _Steps(r, v, ends, closes, boot)


# --------------------------------------------------------------------------- the filter
_BLOCK = 8  # K, steps per block of the blocked filter


def _discounts(coef: float, n: int) -> np.ndarray:
    """``[n, n]`` with entry ``[k, i] = coef^(k-i)`` for ``k >= i`` and 0 below."""
    lag = np.arange(n)[:, None] - np.arange(n)
    return np.where(lag >= 0, coef ** np.maximum(lag, 0), 0.0)


def _split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A 1-D stream as ``[B, K]`` whole blocks and the fewer than ``K`` steps after them."""
    whole = x.size - x.size % _BLOCK
    return x[:whole].reshape(-1, _BLOCK), x[whole:]


def _block_sums(x: np.ndarray, powers: np.ndarray) -> np.ndarray:
    """``[B (+1)]`` each block's own ``sum_k coef^k x_{bK+k}``, the short last block's last."""
    full, tail = _split(x)
    own = np.einsum("bk,k->b", full, powers)
    return np.append(own, tail @ powers[: tail.size]) if tail.size else own


def _later(own: np.ndarray, coef: float) -> np.ndarray:
    """``[B]`` everything after block ``b``, discounted to the step just after its end."""
    return np.append(_leaky_sum(own, coef**_BLOCK)[1:], 0.0)


def _fill(x: np.ndarray, coef: float, later: np.ndarray) -> np.ndarray:
    """``y_t = x_t + coef * y_{t+1}`` in place, given what flows into each block from later.

    The ``K`` places of a block are filled from the last to the first, each for all blocks
    at once; the short last block has nothing after it.
    """
    full, tail = _split(x)
    if tail.size:
        tail[:] = tail @ _discounts(coef, tail.size)
    after = later[: full.shape[0]]
    for i in range(_BLOCK - 1, -1, -1):  # place i of every block at once
        after = discounted_step(full[:, i], after, coef, out=full[:, i])
    return x


def _leaky_sum(x: np.ndarray, coef: float) -> np.ndarray:
    r"""``z_t = sum_{k>=t} coef^(k-t) x_k`` over a whole 1-D stream, as a new array.

    Blockwise: the block sums form a stream ``K`` times shorter with decay ``coef^K``, summed
    the same way, until a single block is left.
    """
    if x.size <= _BLOCK:
        return x @ _discounts(coef, x.size)
    powers = coef ** np.arange(_BLOCK, dtype=np.float64)
    return _fill(x.copy(), coef, _later(_block_sums(x, powers), coef))


def _leaky_sums_at(
    x: np.ndarray, coef: float, powers: np.ndarray, later: np.ndarray, at: np.ndarray
) -> np.ndarray:
    r"""``z_p = sum_{k>=p} coef^(k-p) x_k`` over the whole stream, at the positions ``at`` only.

    ``z_p`` is the rest of ``p``'s own block plus ``coef^(K-i)`` times everything after it,
    where ``i`` is ``p``'s place in its block.
    """
    k = _BLOCK
    n = x.size
    block, place = np.divmod(at, k)
    reach = np.minimum(k - place, n - at)  # steps from p to the end of its block
    ahead = np.arange(k)
    weights = np.where(ahead < np.arange(k + 1)[:, None], powers, 0.0)[reach]
    window = x[np.minimum(at[:, None] + ahead, n - 1)]
    return np.einsum("pk,pk->p", window, weights) + coef ** (k - place) * later[block]


def _discounted_sum(
    x_t: np.ndarray, coef: float, cuts: np.ndarray | None, *, overwrite: bool = False
) -> np.ndarray:
    r"""``y_t = x_t + coef * y_{t+1}`` inside each segment, restarting after every end.

    A reversed-time linear filter run blockwise over the trajectories laid end to end: the
    stream is cut into blocks of ``K`` steps, the same filter over the ``N / K`` block sums
    finds what flows into each block from the blocks after it, and then the ``K`` places of a
    block are filled from last to first, each for all blocks at once. Run as it is, the filter would
    leak each segment's sum into the one before; so the input at each end ``e`` is first
    lowered by the carry ``coef * y_{e+1}`` it would receive. The exact sum at the next
    segment's start ``s`` (ending at ``e'``) is ``y_s = z_s - coef^(e'+1-s) z_{e'+1}`` with
    ``z`` the leaky sum, which is needed at the segment starts only.

    Args:
        x_t: ``[..., T]`` the per-step terms, times ``[0, T-1]``.
        coef: The per-step decay in ``[0, 1]`` (``gamma``, or ``gamma * lam`` for GAE).
        cuts: ``[E]`` stream indices where sums restart (``_Steps.cuts``), or None.
        overwrite: Whether ``x_t`` (a fresh array of the caller's) may be used as scratch.

    Returns:
        ``[..., T]`` the sums ``y_t``.
    """
    flat = x_t.reshape(-1) if overwrite else x_t.flatten()
    if coef == 0.0:
        return flat.reshape(x_t.shape)
    k = _BLOCK
    powers = coef ** np.arange(k, dtype=np.float64)
    own = _block_sums(flat, powers)
    if cuts is not None:
        start = cuts + 1  # the first step of every segment but the first
        heads = _leaky_sums_at(flat, coef, powers, _later(own, coef), start)
        heads[:-1] -= coef ** (start[1:] - start[:-1]) * heads[1:]  # now exact: y at starts
        lowered = coef * heads
        flat[cuts] -= lowered
        own = own - np.bincount(cuts // k, weights=powers[cuts % k] * lowered,
                                minlength=own.size)
    return _fill(flat, coef, _later(own, coef)).reshape(x_t.shape)


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
        raise InputError(f"the walk needs a whole number of states, at least 1; got {n_states!r}")
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
        raise InputError(f"at least one episode is needed; got {n_episodes}")
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
        raise InputError("give at least one value of λ")
    for lam in lams:
        _check_unit("lam", lam)
    if not critic_noise >= 0:
        raise InputError(f"the critic's noise must be at least 0; got {critic_noise}")
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
    delta = td_error(ep.rewards, v_t, critic[ep.next_states], gamma=gamma)  # 0 at terminals
    target = q[ep.states, ep.actions] - v_t
    cuts = np.flatnonzero(ep.dones)[:-1]  # where each episode but the last ends
    cuts = cuts if cuts.size else None
    group = ep.states * 2 + ep.actions
    counts = np.bincount(group, minlength=2 * walk.n_states)
    seen = counts > 0
    share = counts[seen] / group.size

    bias2 = np.empty(lams.size)
    variance = np.empty(lams.size)
    for i, lam in enumerate(lams):
        err = _discounted_sum(delta[None, :], gamma * lam, cuts)[0] - target
        mean = np.bincount(group, weights=err, minlength=counts.size)[seen] / counts[seen]
        bias2[i] = float(share @ mean**2)
        # The share-weighted variance within groups: the mean square less the squared means.
        # (einsum, not BLAS: a threaded dot product waits for cores a busy server lacks)
        variance[i] = max(float(np.einsum("i,i->", err, err)) / err.size - bias2[i], 0.0)
    mse = bias2 + variance
    lengths = ep.lengths.astype(np.float64)
    se = float(lengths.std(ddof=1) / np.sqrt(lengths.size)) if lengths.size > 1 else 0.0
    return StudyResult(
        lams=lams, bias2=bias2, variance=variance, mse=mse, best=int(np.argmin(mse)),
        true_values=v, critic=critic, gamma=gamma, n_episodes=int(n_episodes),
        n_steps=int(group.size), mean_length=float(lengths.mean()), length_se=se,
    )
