r"""Prediction on the random walks: TD(0) and Monte Carlo, n-step TD, the λ-return and TD(λ).

Sutton & Barto (2018): Example 6.2 (the 5-state walk, TD(0) against constant-α Monte Carlo),
Example 7.1 and Figure 7.2 (the 19-state walk, n-step TD for n = 1 … 512), Figures 12.3, 12.6 and
12.8 (the offline λ-return algorithm, TD(λ) with accumulating traces and true online TD(λ) on the
same walk). Values are tabular: one number per state, the terminal states worth 0.

**Runs and lanes.** A *run* is one sequence of episodes, the same for every method and setting
(paired random numbers, as in the book's figures: every n, λ and α sees the same episodes). A
run's episodes are laid back to back in a *stream* of steps ``k``. A *lane* is one run learned
with one setting (n or λ, and α); every lane of every run advances one stream step at a time, so
the update rules below are written once, on arrays with one row per lane, and a single call
serves one lane or ten thousand. Runs are ordered longest first, so the runs still going at step
``k`` are a prefix of the rows.

**The readable steps** (``n_step_td_step``, ``td_lambda_step``, ``true_online_td_lambda_step``,
``offline_lambda_return_update``) are the book's updates; the engines (``n_step_td``,
``td_lambda``, ``true_online_td_lambda``, ``offline_lambda_return``) gather the rows, call the
step and book the episodes. The returns themselves come from :mod:`rlviz.returns`.

**Divergence.** TD(λ) and the offline methods can grow without bound at large α (several
visits to a state within one episode add up). A lane whose TD error, or whose value after an
offline update, passes ``DIVERGED`` in size is frozen there (its α set to 0) and reported as
diverged from that episode on: its errors are infinite and its values NaN, never drawn.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from rlviz import returns
from rlviz.errors import InputError
from rlviz.mdp import policy_value

__all__ = [
    "ALPHAS",
    "ALPHAS_7_2",
    "BOOK_EPISODES",
    "BOOK_RUNS",
    "DIVERGED",
    "EXAMPLE_6_2",
    "LAMBDAS",
    "METHODS",
    "NS",
    "WALKS",
    "Backup",
    "Identities",
    "Known",
    "Runs",
    "Sweep",
    "SweepSummary",
    "TdVsMc",
    "Walk",
    "constant_alpha_mc",
    "episode_views",
    "identities",
    "known_answers",
    "lambda_return_increments",
    "linear_true_values",
    "n_step_backup",
    "n_step_td",
    "n_step_td_step",
    "offline_lambda_return",
    "offline_lambda_return_update",
    "monte_carlo_increments",
    "online_lambda_return",
    "run_sweep",
    "sample_runs",
    "td_lambda",
    "td_lambda_step",
    "td_vs_mc",
    "true_online_steps",
    "true_online_td_lambda",
    "true_online_td_lambda_step",
    "true_values",
    "whiteboard_gap",
]

BOOK = "Sutton & Barto (2018)"
DIVERGED = 1e6
"""A lane whose TD error (or value after an offline update) passes this in size has diverged."""

NS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
"""The n of Figure 7.2."""
LAMBDAS = (0.0, 0.4, 0.8, 0.9, 0.95, 0.975, 0.99, 1.0)
"""The λ of Figures 12.3, 12.6 and 12.8."""
ALPHAS_7_2 = tuple(round(0.1 * i, 1) for i in range(11))
"""Figure 7.2's step sizes, 0 to 1 by 0.1."""
ALPHAS = (0.0, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
"""The page's step sizes: Figure 7.2's and finer below 0.2, where large n and λ do best."""
EXAMPLE_6_2 = {"td": (0.05, 0.1, 0.15), "mc": (0.01, 0.02, 0.03, 0.04), "episodes": 100,
               "shown": (0, 1, 10, 100), "alpha_shown": 0.1}
"""Example 6.2's step sizes, episodes, and the estimates its left panel shows (TD(0), α = 0.1)."""

METHODS = {
    "n_step": "n-step TD",
    "offline_lambda_return": "offline λ-return",
    "td_lambda": "TD(λ)",
    "true_online": "true online TD(λ)",
}
"""The α sweeps of the page, by name."""


# --------------------------------------------------------------------------- the walks
@dataclass(frozen=True)
class Walk:
    """A random walk of the book: states 1 … n between terminals 0 and n + 1, starts central."""

    n_states: int
    left_reward: float
    right_reward: float
    initial_value: float  # every estimate starts here (the terminals are worth 0)
    source: str

    @property
    def centre(self) -> int:
        """The start state ``(n + 1) // 2``."""
        return (self.n_states + 1) // 2


WALKS: dict[int, Walk] = {
    5: Walk(5, *returns.SUTTON_BARTO_WALKS[5], initial_value=0.5, source=f"{BOOK}, Example 6.2"),
    19: Walk(19, *returns.SUTTON_BARTO_WALKS[19], initial_value=0.0,
             source=f"{BOOK}, Example 7.1"),
}


def _walk(walk: Walk | int) -> Walk:
    if isinstance(walk, Walk):
        return walk
    if walk not in WALKS:
        raise InputError(f"the walks are the book's 5-state and 19-state ones; got {walk!r}")
    return WALKS[walk]


def linear_true_values(walk: Walk | int) -> np.ndarray:
    r"""``[n]`` the true values without discounting, a straight line between the two rewards.

    From state ``k`` the walk leaves on the right with probability ``k / (n + 1)`` (gambler's
    ruin), so ``v(k) = a + (b - a) k / (n + 1)`` for the rewards ``a`` (left) and ``b`` (right):
    ``1/6 … 5/6`` on the 5-state walk, ``−18/20 … 18/20`` on the 19-state one.
    """
    w = _walk(walk)
    k = np.arange(1, w.n_states + 1)
    return w.left_reward + (w.right_reward - w.left_reward) * k / (w.n_states + 1)


@functools.lru_cache(maxsize=16)
def _true_values(n_states: int, left: float, right: float, gamma: float) -> np.ndarray:
    mdp = returns.random_walk(n_states, left_reward=left, right_reward=right)
    v = policy_value(mdp, np.full((mdp.n_states, 2), 0.5), gamma)
    v.setflags(write=False)
    return v


def true_values(walk: Walk | int, gamma: float = 1.0) -> np.ndarray:
    """``[n + 2]`` the uniform policy's values by one linear solve (terminals 0, at both ends)."""
    w = _walk(walk)
    return _true_values(w.n_states, w.left_reward, w.right_reward, _unit("γ", gamma))


# --------------------------------------------------------------------------- validation
def _unit(name: str, x: float) -> float:
    try:
        x = float(x)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number in [0, 1]; got {x!r}") from None
    if not 0.0 <= x <= 1.0:
        raise InputError(f"{name} must be in [0, 1]; got {x:g}")
    return x


def _grid(name: str, xs: Sequence[float]) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(xs, dtype=np.float64))
    if arr.ndim != 1 or arr.size == 0:
        raise InputError(f"give at least one value of {name}")
    for x in arr:
        _unit(name, x)
    return arr


def _whole(name: str, x: int, *, low: int = 1) -> int:
    if isinstance(x, bool) or not float(x).is_integer() or x < low:
        raise InputError(f"{name} must be a whole number of at least {low}; got {x!r}")
    return int(x)


# --------------------------------------------------------------------------- the episodes
@dataclass(frozen=True)
class Runs:
    """Independent runs of episodes on one walk, each run's episodes back to back in a stream.

    Stream step ``k`` of run ``r`` acts in ``states[r, k]``; past the end of a run the arrays
    hold zeros (and no lane reads them).
    """

    walk: Walk
    states: np.ndarray  # [R, K] int, S_k: the state acted in at stream step k
    rewards: np.ndarray  # [R, K] R_{k+1}
    next_states: np.ndarray  # [R, K] int, S_{k+1}: a terminal (0 or n+1) at an episode's end
    dones: np.ndarray  # [R, K] bool, stream step k is the last of its episode
    lengths: np.ndarray  # [R, E] int, steps of each episode
    seed: int

    @property
    def n_runs(self) -> int:
        """``R``."""
        return int(self.lengths.shape[0])

    @property
    def n_episodes(self) -> int:
        """``E``, episodes per run."""
        return int(self.lengths.shape[1])

    @property
    def run_lengths(self) -> np.ndarray:
        """``[R]`` steps in each run."""
        return self.lengths.sum(axis=1)

    @property
    def starts(self) -> np.ndarray:
        """``[R, E]`` the stream step at which each episode starts."""
        return np.cumsum(self.lengths, axis=1) - self.lengths

    @functools.cached_property
    def episode_of_step(self) -> np.ndarray:
        """``[R, K]`` the episode (0-based) of each stream step; ``E`` past the run's end."""
        return self._per_step(np.broadcast_to(np.arange(self.n_episodes), self.lengths.shape),
                              fill=self.n_episodes)

    @functools.cached_property
    def episode_end(self) -> np.ndarray:
        """``[R, K]`` the stream step of the last step of each step's episode (itself past it)."""
        last = np.cumsum(self.lengths, axis=1) - 1
        k = np.broadcast_to(np.arange(self.states.shape[1]), self.states.shape)
        return np.where(self.episode_of_step < self.n_episodes,
                        self._per_step(last, fill=0), k)

    def _per_step(self, per_episode: np.ndarray, *, fill: int) -> np.ndarray:
        """``[R, E]`` numbers per episode spread over the episode's steps, ``fill`` past the end."""
        out = np.full(self.states.shape, fill, dtype=np.int64)
        real = np.arange(self.states.shape[1]) < self.run_lengths[:, None]
        out[real] = np.repeat(per_episode.ravel(), self.lengths.ravel())
        return out

    def head(self, runs: int, episodes: int | None = None) -> Runs:
        """The first ``runs`` runs, each cut to its first ``episodes`` episodes (default all)."""
        episodes = self.n_episodes if episodes is None else min(episodes, self.n_episodes)
        lengths = self.lengths[:runs, :episodes]
        keep = np.arange(self.states.shape[1]) < lengths.sum(axis=1)[:, None]
        longest = int(lengths.sum(axis=1).max())

        def cut(x: np.ndarray) -> np.ndarray:
            return np.where(keep, x[:runs], 0).astype(x.dtype)[:, :longest]

        return Runs(self.walk, cut(self.states), cut(self.rewards), cut(self.next_states),
                    cut(self.dones), lengths.copy(), self.seed)

    def episode(self, run: int, episode: int) -> slice:
        """The stream steps of one episode of one run."""
        start = int(self.starts[run, episode])
        return slice(start, start + int(self.lengths[run, episode]))


def sample_runs(walk: Walk | int, *, runs: int, episodes: int, seed: int) -> Runs:
    """Draw ``runs`` independent runs of ``episodes`` episodes of a walk (uniform policy).

    Run ``r`` uses the ``r``-th child of ``np.random.SeedSequence(seed)``, so a run's episodes do
    not change when more runs are drawn.

    Args:
        walk: The walk, or its number of states (5 or 19).
        runs: ``R``, at least 1.
        episodes: ``E``, episodes per run, at least 1.
        seed: Seeds everything.

    Returns:
        The runs.
    """
    w = _walk(walk)
    runs = _whole("the number of runs", runs)
    episodes = _whole("the number of episodes", episodes)
    drawn = [
        returns.sample_walks(w.n_states, episodes, np.random.default_rng(child),
                             left_reward=w.left_reward, right_reward=w.right_reward)
        for child in np.random.SeedSequence(seed).spawn(runs)
    ]
    longest = max(d.states.size for d in drawn)
    states = np.zeros((runs, longest), dtype=np.int64)
    next_states = np.zeros((runs, longest), dtype=np.int64)
    rewards = np.zeros((runs, longest))
    dones = np.zeros((runs, longest), dtype=bool)
    for r, d in enumerate(drawn):
        k = d.states.size
        states[r, :k], next_states[r, :k] = d.states, d.next_states
        rewards[r, :k], dones[r, :k] = d.rewards, d.dones
    lengths = np.stack([d.lengths for d in drawn])
    return Runs(w, states, rewards, next_states, dones, lengths, int(seed))


# --------------------------------------------------------------------------- the steps
def _cells(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A block of rows ``[L, S]`` as one flat array, and where each row starts in it.

    ``flat[at + s]`` is ``v[lane, s]`` for every lane at once: one index array instead of two,
    several times faster for the tens of thousands of lanes of a sweep.
    """
    if not v.flags.c_contiguous:  # a reshaped copy would take the updates and drop them
        raise ValueError("the rows must be one contiguous block")
    return v.reshape(-1), _row_starts(v.shape[0], v.shape[1])


@functools.lru_cache(maxsize=64)
def _row_starts(rows: int, cols: int) -> np.ndarray:
    at = np.arange(0, rows * cols, cols)
    at.setflags(write=False)
    return at


def n_step_td_step(v, s_tau, reward_sum, s_boot, discount, alpha):
    r"""One n-step TD update in every lane (Sutton & Barto 2018, eqs. 7.1 and 7.2).

    .. math::
        G_{\tau:\tau+n} = R_{\tau+1} + \gamma R_{\tau+2} + \dots + \gamma^{n-1} R_{\tau+n}
            + \gamma^n V(S_{\tau+n}), \qquad
        V(S_\tau) \leftarrow V(S_\tau) + \alpha\,[G_{\tau:\tau+n} - V(S_\tau)]

    When the episode ends within the n steps the return stops at its end: the rewards run to
    ``R_T`` and the bootstrap is the terminal state, worth 0.

    Args:
        v: ``[L, S]`` values, one row per lane, terminal columns 0 (updated in place).
        s_tau: ``[L]`` the state ``S_τ`` being updated.
        reward_sum: ``[L]`` the discounted rewards ``R_{τ+1} … R_{min(τ+n, T)}``.
        s_boot: ``[L]`` ``S_{τ+n}``, or the terminal state when the episode ends first.
        discount: ``γ^n``, a number or ``[L]``.
        alpha: ``[L]`` step sizes.

    Returns:
        ``[L]`` the targets ``G_{τ:τ+n}``.
    """
    flat, at = _cells(v)
    g = reward_sum + discount * flat[at + s_boot]
    cell = at + s_tau
    old = flat[cell]
    flat[cell] = old + alpha * (g - old)
    return g


def td_lambda_step(v, z, s, r, s_next, *, gamma, lam, alpha, out=None):
    r"""One step of TD(λ) with accumulating traces in every lane (Sutton & Barto 2018, §12.2).

    .. math::
        z \leftarrow \gamma\lambda z + \nabla V(S_t), \qquad
        \delta = R_{t+1} + \gamma V(S_{t+1}) - V(S_t), \qquad
        V \leftarrow V + \alpha\,\delta\, z

    Tabular, so ``∇V(S_t)`` is 1 at ``S_t`` and 0 elsewhere. Online, the increment goes into
    ``v`` itself; with offline updates it goes into ``out``, added to ``v`` at the episode's end
    (so every TD error of the episode is measured with the values of its start).

    Args:
        v: ``[L, S]`` values, terminal columns 0 (updated in place unless ``out`` is given).
        z: ``[L, S]`` eligibility traces, 0 at an episode's start (updated in place).
        s: ``[L]`` ``S_t``.
        r: ``[L]`` ``R_{t+1}``.
        s_next: ``[L]`` ``S_{t+1}`` (a terminal state at the episode's end).
        gamma: Discount ``γ``.
        lam: ``[L]`` trace decay ``λ`` of each lane.
        alpha: ``[L]`` step size of each lane.
        out: ``[L, S]`` where the increment ``αδz`` is added, or None for ``v``.

    Returns:
        ``[L]`` the TD errors ``δ``.
    """
    flat, at = _cells(v)
    cell = at + s
    z *= (gamma * lam)[:, None]
    _cells(z)[0][cell] += 1.0
    delta = r + gamma * flat[at + s_next] - flat[cell]
    target = v if out is None else out
    target += (alpha * delta)[:, None] * z
    return delta


def true_online_td_lambda_step(v, z, v_old, s, r, s_next, *, gamma, lam, alpha):
    r"""One step of true online TD(λ) with dutch traces in every lane (Sutton & Barto 2018, §12.5).

    .. math::
        \delta = R_{t+1} + \gamma V' - V, \qquad
        z \leftarrow \gamma\lambda z + (1 - \alpha\gamma\lambda\, z^\top x)\, x, \\
        w \leftarrow w + \alpha(\delta + V - V_{old})\, z - \alpha(V - V_{old})\, x, \qquad
        V_{old} \leftarrow V'

    with ``x`` the one-hot features of ``S_t``, ``V = w^\top x`` and ``V' = w^\top x'`` read
    before the update (van Seijen, Mahmood, Pilarski, Machado & Sutton 2016, JMLR 17:145).

    Args:
        v: ``[L, S]`` values ``w`` (updated in place).
        z: ``[L, S]`` dutch traces, 0 at an episode's start (updated in place).
        v_old: ``[L]`` ``V_old``, 0 at an episode's start (updated in place to ``V'``).
        s: ``[L]`` ``S_t``.
        r: ``[L]`` ``R_{t+1}``.
        s_next: ``[L]`` ``S_{t+1}``.
        gamma: Discount ``γ``.
        lam: ``[L]`` trace decay ``λ`` of each lane.
        alpha: ``[L]`` step size of each lane.

    Returns:
        ``[L]`` the TD errors ``δ``.
    """
    flat, at = _cells(v)
    z_flat = _cells(z)[0]
    cell = at + s
    v_s, v_next = flat[cell], flat[at + s_next]
    delta = r + gamma * v_next - v_s
    decay = gamma * lam
    z_s = z_flat[cell]  # zᵀx before the update
    z *= decay[:, None]
    z_flat[cell] += 1.0 - alpha * decay * z_s
    v += (alpha * (delta + v_s - v_old))[:, None] * z
    flat[cell] -= alpha * (v_s - v_old)
    v_old[:] = v_next
    return delta


def offline_lambda_return_update(v, run, states, rewards, dones, *, gamma, lam, alpha):
    r"""The offline λ-return algorithm's updates for one episode of every lane (§12.1, Figure 12.3).

    .. math::
        G^\lambda_t = R_{t+1} + \gamma\big[(1-\lambda) V(S_{t+1}) + \lambda G^\lambda_{t+1}\big],
        \qquad V(S_t) \leftarrow V(S_t) + \alpha\,\big[G^\lambda_t - V(S_t)\big],
        \ t = 0, 1, \dots, T-1

    The values do not change during the episode, so every λ-return bootstraps from the values of
    its start; at its end the ``T`` updates are made one after the other. A state visited ``m``
    times then keeps ``(1−α)^m`` of its old value and its ``j``-th visit's target gets
    ``α(1−α)^(m−j)``: one summed update with that step for visit ``j`` makes those moves exactly.
    (Adding up the plain increments ``α[G^λ_t − V(S_t)]`` instead, ``lambda_return_increments``,
    is the form that TD(λ) with offline updates equals; it overshoots once a state's visits
    times α pass 2.)

    Args:
        v: ``[R, A, S]`` values of ``R`` runs at ``A`` step sizes (updated in place).
        run: ``[N]`` the run of each step; one episode per run, back to back, in time order.
        states: ``[N]`` ``S_t``.
        rewards: ``[N]`` ``R_{t+1}``.
        dones: ``[N]`` bool, the last step of each run's episode.
        gamma: Discount ``γ``.
        lam: ``λ``.
        alpha: ``[R, A]`` step size of each lane.

    Returns:
        ``[A, N]`` the λ-returns.
    """
    n_runs, n_alphas, n_states = v.shape
    values = v[run, :, states].T  # [A, N] V(S_t), the same V all episode
    shape = values.shape
    g = returns.lambda_returns(np.broadcast_to(rewards, shape), values, gamma=gamma, lam=lam,
                               dones=np.broadcast_to(dones, shape))
    step = alpha[run].T  # [A, N]
    step = step * (1.0 - step) ** _later_visits(run * n_states + states)  # the moves in turn
    cell = (run * n_alphas + np.arange(n_alphas)[:, None]) * n_states + states  # [A, N]
    v += np.bincount(cell.ravel(), weights=(step * (g - values)).ravel(),
                     minlength=v.size).reshape(v.shape)
    return g


def _later_visits(key: np.ndarray) -> np.ndarray:
    """``[N]`` how many later entries of ``key`` (in order) equal each entry's own."""
    order = np.argsort(key, kind="stable")  # time order kept within each key
    ranked = key[order]
    index = np.arange(key.size)
    first = np.ones(key.size, dtype=bool)
    first[1:] = ranked[1:] != ranked[:-1]
    start = np.maximum.accumulate(np.where(first, index, 0))
    size = np.bincount(key)[ranked]
    later = np.empty(key.size, dtype=np.int64)
    later[order] = size - 1 - (index - start)
    return later


# --------------------------------------------------------------------------- the lanes
class _Lanes:
    """Runs side by side in lock step, longest first: the runs still going are a prefix.

    Each run has ``M`` lanes (its settings); arrays of lanes are ``[R, M, ...]`` in position
    order, and the rows of the first ``p`` positions are ``[:p].reshape(p * M, ...)``.
    """

    def __init__(self, runs: Runs, per_run: int):
        self.runs = runs
        self.m = per_run
        self.order = np.argsort(-runs.run_lengths, kind="stable")  # position -> run
        self.position = np.argsort(self.order)  # run -> position
        self.states = np.ascontiguousarray(runs.states[self.order].T)  # [K, R]
        self.rewards = np.ascontiguousarray(runs.rewards[self.order].T)
        self.next_states = np.ascontiguousarray(runs.next_states[self.order].T)
        k = np.arange(runs.states.shape[1])
        self.active = (runs.run_lengths[self.order][None, :] > k[:, None]).sum(axis=1)  # [K]
        episode = runs.episode_of_step[self.order].T  # [K, R]
        self.episode = episode
        first = np.zeros(episode.shape, dtype=bool)
        first[0] = True
        first[1:] = episode[1:] != episode[:-1]
        first &= episode < runs.n_episodes
        self.first = _by_step(first)  # positions starting an episode at step k
        self.last = _by_step(runs.dones[self.order].T)  # positions ending one at step k

    def snapshots(self, v: np.ndarray) -> np.ndarray:
        """``[R, M, E+1, S]`` room for the values after each episode, the start ``v`` filled."""
        out = np.empty((len(self.order), self.m, self.runs.n_episodes + 1, v.shape[-1]))
        out[:, :, 0] = v
        return out

    def arrange(self, v: np.ndarray) -> np.ndarray:
        """``[R, P, A, S]`` per run to ``[R, M, S]`` per position (a new array)."""
        return np.ascontiguousarray(v[self.order].reshape(len(self.order), self.m, -1))

    def record(self, snaps: np.ndarray, v: np.ndarray, k: int) -> np.ndarray:
        """Store the values of the runs whose episode ended at step ``k``; their positions."""
        pos = self.last.at(k)
        if pos.size:
            snaps[pos, :, self.episode[k, pos] + 1] = v[pos]
        return pos

    def in_run_order(self, per_position: np.ndarray) -> np.ndarray:
        """``[R, ...]`` an array over positions, back in the order of the runs."""
        return per_position[self.position]


class _ByStep(NamedTuple):
    """Flagged positions grouped by stream step: ``at(k)`` lists those of step ``k``."""

    positions: np.ndarray  # [F] flagged positions, sorted by step
    offsets: np.ndarray  # [K+1] where each step's positions start

    def at(self, k: int) -> np.ndarray:
        """The positions flagged at step ``k``."""
        return self.positions[self.offsets[k] : self.offsets[k + 1]]


def _by_step(flags: np.ndarray) -> _ByStep:
    """``[K, R]`` flags as the flagged positions of each step."""
    k, pos = np.nonzero(flags)
    offsets = np.zeros(flags.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(k, minlength=flags.shape[0]), out=offsets[1:])
    return _ByStep(pos, offsets)


def _start_values(walk: Walk, shape: tuple[int, ...]) -> np.ndarray:
    """``[*shape, n+2]`` the walk's initial estimates, terminals 0."""
    v = np.full((*shape, walk.n_states + 2), walk.initial_value)
    v[..., [0, -1]] = 0.0
    return v


def _freeze(alpha: np.ndarray, diverged: np.ndarray, bad: np.ndarray,
            episode: np.ndarray) -> None:
    """Stop the lanes flagged ``bad`` (α = 0) and note the episode (1-based) they diverged in.

    ``alpha``, ``diverged`` and ``bad`` are ``[R, ...]`` over runs (or positions) and lanes;
    ``episode`` is ``[R]``, each run's current episode (0-based).
    """
    fresh = bad & (diverged == 0)
    alpha[fresh] = 0.0
    ep = np.broadcast_to(episode.reshape((-1,) + (1,) * (bad.ndim - 1)) + 1, bad.shape)
    diverged[fresh] = ep[fresh]


# --------------------------------------------------------------------------- results
@functools.cache
def _t975(dof: int) -> float:
    from scipy import stats

    return float(stats.t.ppf(0.975, dof))


def _mean_band(x: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean and 95% t-interval half-width along ``axis``; inf (and 0) where any entry is inf."""
    n = x.shape[axis]
    finite = np.isfinite(x).all(axis=axis)
    safe = np.where(np.isfinite(x), x, 0.0)
    mean = np.where(finite, safe.mean(axis=axis), np.inf)
    half = np.zeros_like(mean)
    if n > 1:
        half = np.where(finite, _t975(n - 1) * safe.std(axis=axis, ddof=1) / math.sqrt(n), 0.0)
    return mean, half


@dataclass(frozen=True)
class SweepSummary:
    """What the page draws of a sweep: means over runs with 95% bands, and one run's estimates."""

    method: str
    params: np.ndarray  # [P] n or λ
    alphas: np.ndarray  # [A]
    curve: np.ndarray  # [P, A] RMS error averaged over episodes 1..E, then runs (inf: diverged)
    curve_half: np.ndarray  # [P, A] its 95% half-width over runs
    by_episode: np.ndarray  # [P, A, E+1] RMS error after e episodes, mean over runs
    by_episode_half: np.ndarray  # [P, A, E+1]
    values: np.ndarray  # [P, A, E+1, n] estimates after e episodes, mean over runs (NaN: diverged)
    values_half: np.ndarray  # [P, A, E+1, n]
    first_run: np.ndarray  # [P, A, E+1, n] run 1's estimates (NaN once it diverged)
    diverged: np.ndarray  # [P, A] int, runs that diverged
    true_values: np.ndarray  # [n]
    runs: int
    episodes: int

    @property
    def best_alpha(self) -> np.ndarray:
        """``[P]`` index of each curve's lowest finite point (-1 if none)."""
        finite = np.isfinite(self.curve)
        masked = np.where(finite, self.curve, np.inf)
        return np.where(finite.any(axis=1), masked.argmin(axis=1), -1)

    @property
    def best(self) -> tuple[int, int]:
        """``(p, a)`` of the lowest point of all."""
        p, a = np.unravel_index(np.argmin(np.where(np.isfinite(self.curve), self.curve, np.inf)),
                                self.curve.shape)
        return int(p), int(a)

    @property
    def best_error(self) -> float:
        """The RMS error there."""
        p, a = self.best
        return float(self.curve[p, a])


@dataclass(frozen=True)
class Sweep:
    """One method on an ``[n or λ, α, run]`` grid: every estimate after every episode."""

    method: str
    params: np.ndarray  # [P] n (n-step TD) or λ
    alphas: np.ndarray  # [A]
    values: np.ndarray  # [P, A, R, E+1, n] estimates after e episodes (NaN once diverged)
    errors: np.ndarray  # [P, A, R, E+1] RMS error over the n states (inf once diverged)
    diverged_in: np.ndarray  # [P, A, R] int, the episode a run diverged in (0: never)
    true_values: np.ndarray  # [n]
    gamma: float

    @property
    def average_error(self) -> np.ndarray:
        """``[P, A, R]`` each run's RMS error averaged over episodes 1..E (the book's measure)."""
        return self.errors[..., 1:].mean(axis=-1)

    def summary(self) -> SweepSummary:
        """Means over runs with 95% bands (t-intervals), as drawn."""
        curve, curve_half = _mean_band(self.average_error, axis=2)
        by_ep, by_ep_half = _mean_band(self.errors, axis=2)
        ok = np.isfinite(self.values).all(axis=2)
        safe = np.where(np.isfinite(self.values), self.values, 0.0)
        values, values_half = _mean_band(safe, axis=2)
        nan = np.full_like(values, np.nan)
        return SweepSummary(
            method=self.method, params=self.params, alphas=self.alphas, curve=curve,
            curve_half=curve_half, by_episode=by_ep, by_episode_half=by_ep_half,
            values=np.where(ok, values, nan), values_half=np.where(ok, values_half, nan),
            first_run=self.values[:, :, 0], diverged=(self.diverged_in > 0).sum(axis=2),
            true_values=self.true_values, runs=int(self.values.shape[2]),
            episodes=int(self.values.shape[3] - 1),
        )


def _sweep(method: str, lanes: _Lanes, snaps: np.ndarray, diverged: np.ndarray,
           params: np.ndarray, alphas: np.ndarray, gamma: float) -> Sweep:
    """Package an engine's snapshots ``[R, M, E+1, S]`` (positions) as a ``Sweep``."""
    runs = lanes.runs
    p, a = params.size, alphas.size
    n_runs, n_eps = runs.n_runs, runs.n_episodes
    v = lanes.in_run_order(snaps).reshape(n_runs, p, a, n_eps + 1, -1)[..., 1:-1]
    v = np.moveaxis(v, 0, 2)  # [P, A, R, E+1, n]
    div = np.moveaxis(lanes.in_run_order(diverged).reshape(n_runs, p, a), 0, 2)
    return _finish(method, runs.walk, params, alphas, gamma, v, div)


def _finish(method: str, walk: Walk, params: np.ndarray, alphas: np.ndarray, gamma: float,
            v: np.ndarray, div: np.ndarray) -> Sweep:
    """A ``Sweep`` from the estimates ``[P, A, R, E+1, n]``: errors, and NaN after divergence."""
    truth = true_values(walk, gamma)[1:-1]
    errors = np.sqrt(np.square(v - truth).mean(axis=-1))
    values = v
    if div.any():
        n_eps = v.shape[3] - 1
        after = np.arange(n_eps + 1) >= np.where(div > 0, div, n_eps + 1)[..., None]
        values = np.where(after[..., None], np.nan, v)
        errors[after] = np.inf
    return Sweep(method, params, alphas, values, errors, div, truth, gamma)


# --------------------------------------------------------------------------- the engines
def n_step_td(runs: Runs, *, ns: Sequence[int], alphas: Sequence[float],
              gamma: float = 1.0) -> Sweep:
    r"""n-step TD prediction for every ``n``, ``α`` and run at once (Sutton & Barto 2018, §7.1).

    The book's algorithm updates ``S_τ`` at time ``τ + n − 1`` (or at the episode's end), after
    every update of the steps before ``τ``; so doing the updates in stream order, one step ``τ``
    at a time, is that algorithm exactly. The rewards part of each n-step return is the same for
    every α and comes from ``rlviz.returns.n_step_returns``; the bootstrap ``V(S_{τ+n})`` is read
    when the update is made, from the values of that moment.

    Args:
        runs: The episodes (``sample_runs``).
        ns: ``[P]`` the n to try, each at least 1 (an n past an episode's length is Monte Carlo).
        alphas: ``[A]`` step sizes in ``[0, 1]``.
        gamma: Discount ``γ`` in ``[0, 1]`` (the book's walks use 1).

    Returns:
        The sweep, ``params`` the n.
    """
    ns_ = np.array([_whole("n", n) for n in np.atleast_1d(ns)], dtype=np.int64)
    alphas_ = _grid("α", alphas)
    gamma = _unit("γ", gamma)
    p, a = ns_.size, alphas_.size
    lanes = _Lanes(runs, p * a)
    n_runs, n_steps = lanes.states.shape[1], lanes.states.shape[0]
    # The rewards part of every step's n-step return and the state it bootstraps from, [K, R, P]:
    # the same for every α, computed on all the runs' steps laid end to end.
    real = runs.episode_of_step < runs.n_episodes  # [R, K] the steps that exist
    run, step = np.nonzero(real)
    pos = lanes.position[run]
    ends = runs.episode_end[run, step]
    reward_sums = np.zeros((n_steps, n_runs, p))
    boot = np.zeros((n_steps, n_runs, p), dtype=np.int64)
    zero = np.zeros(run.size)
    for i, n in enumerate(ns_):
        reward_sums[step, pos, i] = returns.n_step_returns(
            runs.rewards[run, step], zero, gamma=gamma, n=int(n), dones=runs.dones[run, step])
        last = np.minimum(step + n - 1, ends)  # the step whose next state is S_{τ+n}, or the end
        boot[step, pos, i] = runs.next_states[run, last]
    discount = np.tile(np.repeat(gamma ** ns_.astype(np.float64), a), n_runs)
    alpha = np.tile(alphas_, n_runs * p)
    v = lanes.arrange(_start_values(runs.walk, (n_runs, p, a)))
    snaps = lanes.snapshots(v)
    m, n_cols = p * a, v.shape[-1]
    for k in range(n_steps):
        na = lanes.active[k]
        rows = v[:na].reshape(na * m, n_cols)
        n_step_td_step(rows, lanes.states[k, :na].repeat(m),
                       reward_sums[k, :na].repeat(a), boot[k, :na].repeat(a),
                       discount[: na * m], alpha[: na * m])
        lanes.record(snaps, v, k)
    return _sweep("n_step", lanes, snaps, np.zeros((n_runs, m), dtype=np.int64), ns_, alphas_,
                  gamma)


def constant_alpha_mc(runs: Runs, *, alphas: Sequence[float], gamma: float = 1.0) -> Sweep:
    r"""Constant-α Monte Carlo (Sutton & Barto 2018, eq. 6.1): n-step TD with n past every end.

    .. math:: V(S_t) \leftarrow V(S_t) + \alpha\,[G_t - V(S_t)]

    made for ``t = 0 … T−1`` in order once the episode is over (every visit counts).
    """
    longest = int(runs.lengths.max())
    sweep = n_step_td(runs, ns=[longest], alphas=alphas, gamma=gamma)
    return Sweep("monte_carlo", np.array([np.inf]), sweep.alphas, sweep.values, sweep.errors,
                 sweep.diverged_in, sweep.true_values, sweep.gamma)


def td_lambda(runs: Runs, *, lams: Sequence[float], alphas: Sequence[float],
              gamma: float = 1.0, offline: bool = False) -> Sweep:
    r"""TD(λ) with accumulating traces for every ``λ``, ``α`` and run at once (§12.2).

    Online (Figure 12.6) each step's ``αδz`` changes the values at once; with ``offline`` the
    increments are summed over the episode and applied at its end, which makes exactly the
    offline λ-return algorithm's updates (the forward and backward views agree).

    Args:
        runs: The episodes.
        lams: ``[P]`` trace decays in ``[0, 1]``.
        alphas: ``[A]`` step sizes in ``[0, 1]``.
        gamma: Discount ``γ``.
        offline: Apply the updates at each episode's end.

    Returns:
        The sweep, ``params`` the λ.
    """
    lams_, alphas_ = _grid("λ", lams), _grid("α", alphas)
    gamma = _unit("γ", gamma)
    p, a = lams_.size, alphas_.size
    m = p * a
    lanes = _Lanes(runs, m)
    n_runs = len(lanes.order)
    v = lanes.arrange(_start_values(runs.walk, (n_runs, p, a)))
    z = np.zeros_like(v)
    dv = np.zeros_like(v) if offline else None
    n_cols = v.shape[-1]
    snaps = lanes.snapshots(v)
    lam = np.tile(np.repeat(lams_, a), n_runs)
    alpha = np.tile(alphas_, n_runs * p)
    diverged = np.zeros((n_runs, m), dtype=np.int64)
    alpha_of = alpha.reshape(n_runs, m)  # the same array, by position and lane
    for k in range(lanes.states.shape[0]):
        na = lanes.active[k]
        z[lanes.first.at(k)] = 0.0
        rows, width = slice(0, na * m), (na * m, n_cols)
        delta = td_lambda_step(
            v[:na].reshape(width), z[:na].reshape(width), lanes.states[k, :na].repeat(m),
            lanes.rewards[k, :na].repeat(m), lanes.next_states[k, :na].repeat(m),
            gamma=gamma, lam=lam[rows], alpha=alpha[rows],
            out=None if dv is None else dv[:na].reshape(width))
        ended = lanes.last.at(k)
        bad = None
        if dv is None and (np.abs(delta) > DIVERGED).any():
            bad = np.zeros((n_runs, m), dtype=bool)
            bad[:na] = (np.abs(delta) > DIVERGED).reshape(na, m)
        elif dv is not None and ended.size:
            v[ended] += dv[ended]  # the episode's summed updates, at its end
            dv[ended] = 0.0
            bad = np.zeros((n_runs, m), dtype=bool)
            bad[ended] = np.abs(v[ended]).max(axis=-1) > DIVERGED
        if bad is not None:
            _freeze(alpha_of, diverged, bad, lanes.episode[k])
        lanes.record(snaps, v, k)
    return _sweep("offline_td_lambda" if offline else "td_lambda", lanes, snaps, diverged,
                  lams_, alphas_, gamma)


def true_online_td_lambda(runs: Runs, *, lams: Sequence[float], alphas: Sequence[float],
                          gamma: float = 1.0) -> Sweep:
    r"""True online TD(λ) for every ``λ``, ``α`` and run at once (§12.5, Figure 12.8).

    It makes, step by step, the same values as the online λ-return algorithm
    (``online_lambda_return``), at the cost of TD(λ).

    Args:
        runs: The episodes.
        lams: ``[P]`` trace decays in ``[0, 1]``.
        alphas: ``[A]`` step sizes in ``[0, 1]``.
        gamma: Discount ``γ``.

    Returns:
        The sweep, ``params`` the λ.
    """
    lams_, alphas_ = _grid("λ", lams), _grid("α", alphas)
    gamma = _unit("γ", gamma)
    p, a = lams_.size, alphas_.size
    m = p * a
    lanes = _Lanes(runs, m)
    n_runs = len(lanes.order)
    v = lanes.arrange(_start_values(runs.walk, (n_runs, p, a)))
    z = np.zeros_like(v)
    v_old = np.zeros((n_runs, m))
    n_cols = v.shape[-1]
    snaps = lanes.snapshots(v)
    lam = np.tile(np.repeat(lams_, a), n_runs)
    alpha = np.tile(alphas_, n_runs * p)
    alpha_of = alpha.reshape(n_runs, m)
    diverged = np.zeros((n_runs, m), dtype=np.int64)
    for k in range(lanes.states.shape[0]):
        na = lanes.active[k]
        starting = lanes.first.at(k)
        z[starting] = 0.0
        v_old[starting] = 0.0
        rows, width = slice(0, na * m), (na * m, n_cols)
        delta = true_online_td_lambda_step(
            v[:na].reshape(width), z[:na].reshape(width), v_old[:na].reshape(-1),
            lanes.states[k, :na].repeat(m), lanes.rewards[k, :na].repeat(m),
            lanes.next_states[k, :na].repeat(m), gamma=gamma, lam=lam[rows],
            alpha=alpha[rows])
        if (np.abs(delta) > DIVERGED).any():
            bad = np.zeros((n_runs, m), dtype=bool)
            bad[:na] = (np.abs(delta) > DIVERGED).reshape(na, m)
            _freeze(alpha_of, diverged, bad, lanes.episode[k])
        lanes.record(snaps, v, k)
    return _sweep("true_online", lanes, snaps, diverged, lams_, alphas_, gamma)


def _offline_engine(runs: Runs, alphas: np.ndarray, params: np.ndarray, update) -> tuple:
    """Episode by episode, every run at once: ``update(v[:, p], run, s, r, done, p, alpha)``."""
    n_runs, p, a = runs.n_runs, params.size, alphas.size
    v = _start_values(runs.walk, (n_runs, p, a))
    snaps = np.empty((n_runs, p, a, runs.n_episodes + 1, v.shape[-1]))
    snaps[:, :, :, 0] = v
    alpha = np.broadcast_to(alphas, (n_runs, p, a)).copy()
    diverged = np.zeros((n_runs, p, a), dtype=np.int64)
    episode_of_step = runs.episode_of_step
    for e in range(runs.n_episodes):
        run, step = np.nonzero(episode_of_step == e)
        s, r, done = runs.states[run, step], runs.rewards[run, step], runs.dones[run, step]
        for i in range(p):
            update(v[:, i], run, s, r, done, i, alpha[:, i])
        _freeze(alpha, diverged, np.abs(v).max(axis=-1) > DIVERGED, np.full(n_runs, e))
        snaps[:, :, :, e + 1] = v
    return snaps, diverged


def _offline_sweep(method, runs, params, alphas, gamma, snaps, diverged) -> Sweep:
    v = np.moveaxis(snaps, 0, 2)[..., 1:-1]  # [P, A, R, E+1, n]
    return _finish(method, runs.walk, params, alphas, gamma, v, np.moveaxis(diverged, 0, 2))


def offline_lambda_return(runs: Runs, *, lams: Sequence[float], alphas: Sequence[float],
                          gamma: float = 1.0) -> Sweep:
    r"""The offline λ-return algorithm for every ``λ``, ``α`` and run at once (Figure 12.3).

    Each episode's λ-returns are computed with the values of its start
    (``rlviz.returns.lambda_returns``, every run's episode in one call per λ) and the updates
    made at its end (``offline_lambda_return_update``).

    Args:
        runs: The episodes.
        lams: ``[P]`` λ in ``[0, 1]``.
        alphas: ``[A]`` step sizes in ``[0, 1]``.
        gamma: Discount ``γ``.

    Returns:
        The sweep, ``params`` the λ.
    """
    lams_, alphas_ = _grid("λ", lams), _grid("α", alphas)
    gamma = _unit("γ", gamma)

    def update(v, run, s, r, done, i, alpha):
        offline_lambda_return_update(v, run, s, r, done, gamma=gamma, lam=float(lams_[i]),
                                     alpha=alpha)

    snaps, diverged = _offline_engine(runs, alphas_, lams_, update)
    return _offline_sweep("offline_lambda_return", runs, lams_, alphas_, gamma, snaps, diverged)


def run_sweep(method: str, runs: Runs, *, params: Sequence[float],
              alphas: Sequence[float]) -> Sweep:
    """One of ``METHODS`` by name (the page's α sweep)."""
    if method == "n_step":
        return n_step_td(runs, ns=[int(n) for n in params], alphas=alphas)
    if method == "offline_lambda_return":
        return offline_lambda_return(runs, lams=params, alphas=alphas)
    if method == "td_lambda":
        return td_lambda(runs, lams=params, alphas=alphas)
    if method == "true_online":
        return true_online_td_lambda(runs, lams=params, alphas=alphas)
    raise InputError(f"the method must be one of {', '.join(METHODS)}; got {method!r}")


# --------------------------------------------------------------------------- Example 6.2
@dataclass(frozen=True)
class TdVsMc:
    """Example 6.2: TD(0) against constant-α Monte Carlo on the 5-state walk, paired episodes."""

    td_alphas: np.ndarray  # [3]
    mc_alphas: np.ndarray  # [4]
    td_error: np.ndarray  # [3, E+1] RMS error over the 5 states after e episodes, mean over runs
    td_half: np.ndarray  # [3, E+1] its 95% half-width
    mc_error: np.ndarray  # [4, E+1]
    mc_half: np.ndarray  # [4, E+1]
    shown: tuple[int, ...]  # the episodes after which the estimates are shown
    estimates: np.ndarray  # [len(shown), 5] TD(0) at α = 0.1, run 1
    true_values: np.ndarray  # [5]
    runs: int
    episodes: int


def td_vs_mc(*, runs: int, seed: int, episodes: int = EXAMPLE_6_2["episodes"]) -> TdVsMc:
    """Example 6.2: TD(0) (n-step TD, n = 1) and constant-α MC on the same episodes.

    Constant-α MC is n-step TD with n past the longest episode (``constant_alpha_mc``).

    Args:
        runs: Independent runs (the book: 100).
        seed: Seeds the episodes.
        episodes: Episodes per run (the book: 100).

    Returns:
        The errors of every step size after every episode, and run 1's TD(0) estimates.
    """
    walk_runs = sample_runs(5, runs=runs, episodes=episodes, seed=seed)
    td_alphas, mc_alphas = EXAMPLE_6_2["td"], EXAMPLE_6_2["mc"]
    # One sweep: n = 1 is TD(0), an n past every episode's end is constant-α MC.
    both = n_step_td(walk_runs, ns=[1, int(walk_runs.lengths.max())],
                     alphas=td_alphas + mc_alphas)
    td_error, td_half = _mean_band(both.errors[0, : len(td_alphas)], axis=1)
    mc_error, mc_half = _mean_band(both.errors[1, len(td_alphas) :], axis=1)
    shown = tuple(e for e in EXAMPLE_6_2["shown"] if e <= episodes)
    at = td_alphas.index(EXAMPLE_6_2["alpha_shown"])
    return TdVsMc(
        td_alphas=np.array(td_alphas), mc_alphas=np.array(mc_alphas), td_error=td_error,
        td_half=td_half, mc_error=mc_error, mc_half=mc_half, shown=shown,
        estimates=both.values[0, at, 0][list(shown)], true_values=both.true_values,
        runs=int(runs), episodes=int(episodes),
    )


# --------------------------------------------------------------------------- one backup
@dataclass(frozen=True)
class Backup:
    """One n-step TD update of one episode, with every number in it (run 1 of the runs)."""

    n: int
    alpha: float
    gamma: float
    episode: int  # 0-based
    tau: int  # τ, the step of the episode whose state is updated
    states: np.ndarray  # [T+1] S_0 … S_T (S_T terminal)
    rewards: np.ndarray  # [T] R_1 … R_T
    used: int  # m = min(n, T − τ): the rewards R_{τ+1} … R_{τ+m} in the return
    bootstraps: bool  # τ + n < T: the return ends on an estimate, not on the terminal
    values: np.ndarray  # [n+2] V when the update is made (terminals 0)
    reward_sum: float  # Σ γ^(i−τ−1) R_i over the rewards used
    discount: float  # γ^n
    boot_value: float  # V(S_{τ+m}), 0 at the terminal
    target: float  # G_{τ:τ+n}
    old_value: float  # V(S_τ) before the update
    new_value: float  # after it
    made_at: int  # the step of the episode after which the update is made: min(τ + n, T) − 1

    @property
    def length(self) -> int:
        """``T``, the episode's steps."""
        return int(self.rewards.size)

    @property
    def boot_state(self) -> int:
        """``S_{τ+m}``: the state bootstrapped from (a terminal when the episode ends first)."""
        return int(self.states[self.tau + self.used])


def n_step_backup(runs: Runs, *, n: int, alpha: float, episode: int, tau: int,
                  gamma: float = 1.0) -> Backup:
    """Replay run 1 with n-step TD up to the update of step ``τ`` of ``episode``, and open it up.

    The values are those of the moment the update is made (after every earlier update of the
    run), as in the book's algorithm; the update itself is ``n_step_td_step`` on one lane.

    Args:
        runs: The episodes (run 1 is replayed).
        n: Rewards before bootstrapping, at least 1.
        alpha: Step size in ``[0, 1]``.
        episode: Which episode (0-based).
        tau: The step of that episode whose state is updated, ``0 … T−1``.
        gamma: Discount ``γ``.

    Returns:
        The update, with the rewards and the bootstrap it uses.
    """
    n = _whole("n", n)
    alpha = _unit("α", alpha)
    gamma = _unit("γ", gamma)
    if not 0 <= episode < runs.n_episodes:
        raise InputError(f"episode {episode + 1} is not among the {runs.n_episodes} drawn")
    length = int(runs.lengths[0, episode])
    if not 0 <= tau < length:
        raise InputError(f"episode {episode + 1} has steps 0 to {length - 1}; got τ = {tau}")
    total = int(runs.run_lengths[0])
    r, d = runs.rewards[0, :total], runs.dones[0, :total]
    sums = returns.n_step_returns(r, np.zeros(total), gamma=gamma, n=n, dones=d)
    k = np.arange(total)
    boot = runs.next_states[0, np.minimum(k + n - 1, runs.episode_end[0, :total])]
    v = _start_values(runs.walk, (1, 1, 1)).reshape(1, -1)
    discount = gamma**n
    at = int(runs.starts[0, episode]) + tau
    states = runs.states[0, :total]
    for step in range(at):
        n_step_td_step(v, states[step : step + 1], sums[step : step + 1],
                       boot[step : step + 1], discount, np.array([alpha]))
    before = v[0].copy()
    s_tau, s_boot = int(states[at]), int(boot[at])
    g = n_step_td_step(v, states[at : at + 1], sums[at : at + 1], boot[at : at + 1], discount,
                       np.array([alpha]))
    ep = runs.episode(0, episode)
    used = min(n, length - tau)
    return Backup(
        n=n, alpha=alpha, gamma=gamma, episode=int(episode), tau=int(tau),
        states=np.append(runs.states[0, ep], runs.next_states[0, ep.stop - 1]),
        rewards=runs.rewards[0, ep].copy(), used=used, bootstraps=tau + n < length,
        values=before, reward_sum=float(sums[at]), discount=discount,
        boot_value=float(before[s_boot]), target=float(g[0]), old_value=float(before[s_tau]),
        new_value=float(v[0, s_tau]), made_at=min(tau + n, length) - 1,
    )


# --------------------------------------------------------------------------- forward views
def _segments(dones: np.ndarray) -> list[slice]:
    """The episodes of one run's stream, as slices (the last may be cut short)."""
    ends = np.flatnonzero(dones) + 1
    if not ends.size or ends[-1] < dones.size:
        ends = np.r_[ends, dones.size]
    starts = np.r_[0, ends[:-1]]
    return [slice(int(a), int(b)) for a, b in zip(starts, ends, strict=True)]


def online_lambda_return(states, rewards, next_states, dones, v0, *, gamma, lam, alpha):
    r"""The online λ-return algorithm (Sutton & Barto 2018, §12.4): the forward view, redone.

    At every horizon ``h`` of an episode the updates are redone from the episode's start with
    the λ-returns truncated at ``h``:

    .. math::
        w^h_{t+1} = w^h_t + \alpha\,\big[G^\lambda_{t:h} - w^h_t(S_t)\big]\, x(S_t),
        \qquad t = 0, \dots, h-1,

    where each n-step return ``G_{t:t+n}`` inside ``G^λ_{t:h}`` bootstraps from ``V(S_{t+n})``
    with the weights ``w_{t+n−1} = w^{t+n−1}_{t+n−1}`` of that moment, and ``w_h = w^h_h``.
    ``O(T²)`` per episode: a reference to check true online TD(λ) against, not a learner.

    Args:
        states: ``[K]`` one run's ``S_k``, episodes back to back.
        rewards: ``[K]`` ``R_{k+1}``.
        next_states: ``[K]`` ``S_{k+1}``.
        dones: ``[K]`` bool, an episode's last step.
        v0: ``[S]`` the values to start from (terminals 0).
        gamma: Discount ``γ``.
        lam: ``λ``.
        alpha: Step size ``α``.

    Returns:
        ``[K+1, S]`` the values ``w_k`` after every step (the start first).
    """
    w = np.array(v0, dtype=np.float64)
    out = [w.copy()]
    for ep in _segments(np.asarray(dones)):
        start = w.copy()  # w^h_0 for every horizon of this episode
        s, r = np.asarray(states[ep]), np.asarray(rewards[ep], dtype=np.float64)
        nxt, done = np.asarray(next_states[ep]), np.asarray(dones[ep])
        boot = np.zeros(s.size + 1)  # boot[k] = V(S_k) with the weights of time k − 1
        for h in range(1, s.size + 1):
            boot[h] = w[nxt[h - 1]]
            g = returns.lambda_returns(r[:h], boot[:h], gamma=gamma, lam=lam,
                                       last_value=boot[h], dones=done[:h])
            w = start.copy()
            for t in range(h):
                w[s[t]] += alpha * (g[t] - w[s[t]])
            out.append(w.copy())
    return np.array(out)


def true_online_steps(states, rewards, next_states, dones, v0, *, gamma, lam, alpha):
    """``[K+1, S]`` true online TD(λ)'s values after every step of one run.

    One lane of ``true_online_td_lambda_step``; arguments as ``online_lambda_return``.
    """
    v = np.array(v0, dtype=np.float64)[None, :].copy()
    z = np.zeros_like(v)
    v_old = np.zeros(1)
    out = [v[0].copy()]
    starts = np.r_[True, np.asarray(dones)[:-1]]
    lam_, alpha_ = np.array([lam], dtype=np.float64), np.array([alpha], dtype=np.float64)
    for k in range(len(states)):
        if starts[k]:
            z[:] = 0.0
            v_old[:] = 0.0
        true_online_td_lambda_step(v, z, v_old, states[k : k + 1], rewards[k : k + 1],
                                   next_states[k : k + 1], gamma=gamma, lam=lam_, alpha=alpha_)
        out.append(v[0].copy())
    return np.array(out)


# --------------------------------------------------------------------------- the identities
@dataclass(frozen=True)
class Identities:
    """The identities between the methods, measured on the page's own episodes.

    A gap is the largest difference between the two methods' values, relative to the largest
    value in play in that lane (``_gap``). Offline updates are compared one episode at a time
    from the same values, so that a lane whose values grow (a large α) does not magnify one
    episode's rounding in the next.
    """

    forward_backward: float  # offline TD(λ) vs the summed λ-return increments, every λ and α
    forward_backward_count: int  # values compared
    monte_carlo: float  # offline TD(λ = 1) vs summed every-visit constant-α MC
    monte_carlo_count: int
    true_online: float  # true online TD(λ) vs the online λ-return, after every step
    true_online_steps: int
    lam: float  # the λ and α of the step-by-step check and of the episode below
    alpha: float
    runs: int  # runs compared (the first of the page's)
    episodes: int
    forward: np.ndarray  # [n] run 1's first episode: Σ α[G^λ_t − V(S_t)] per state (forward)
    backward: np.ndarray  # [n] the same episode's Σ α δ_t z_t per state (backward view)


def episode_views(runs: Runs, *, lam: float, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Run 1's first episode from the initial values, both ways: ``[n]`` increments per state.

    Forward: ``lambda_return_increments``. Backward: ``td_lambda_step`` on one lane, the
    increments ``αδz`` collected in a separate array (offline updates).
    """
    lam, alpha = _unit("λ", lam), _unit("α", alpha)
    ep = runs.episode(0, 0)
    s, r, s1 = runs.states[0, ep], runs.rewards[0, ep], runs.next_states[0, ep]
    v = _start_values(runs.walk, (1,))
    z, dv = np.zeros_like(v), np.zeros_like(v)
    lam_, alpha_ = np.array([lam]), np.array([alpha])
    for t in range(s.size):
        td_lambda_step(v, z, s[t : t + 1], r[t : t + 1], s1[t : t + 1], gamma=1.0, lam=lam_,
                       alpha=alpha_, out=dv)
    forward = lambda_return_increments(v, s[None], r[None], s1[None], np.ones((1, s.size), bool),
                                       gamma=1.0, lam=lam_, alpha=alpha_)
    return forward[0, 1:-1], dv[0, 1:-1]


def _gap(a: np.ndarray, b: np.ndarray, *before: np.ndarray) -> tuple[float, int]:
    """Largest gap between ``a`` and ``b`` ``[..., S]``, relative to the values in play.

    Per lane (all axes but the last), ``max_s |a − b|`` over ``max(1, max_s |a|, |b|, |before|)``:
    rounding grows with the size of the numbers added, and a lane whose values have grown large
    (a large α) rounds in proportion. Lanes with a NaN (diverged) are skipped.
    Returns the gap and the number of values compared.
    """
    scale = np.maximum(np.abs(a).max(axis=-1), np.abs(b).max(axis=-1))
    for x in before:
        scale = np.maximum(scale, np.abs(x).max(axis=-1))
    ok = np.isfinite(scale)
    if not ok.any():
        return 0.0, 0
    gap = np.abs(a - b)[ok].max(axis=-1) / np.maximum(1.0, scale[ok])
    return float(gap.max()), int(ok.sum() * a.shape[-1])


def _episode_rows(runs: Runs, episode: int) -> tuple[np.ndarray, ...]:
    """``[R, T]`` every run's ``episode``-th episode, padded with a terminal past its end."""
    lengths = runs.lengths[:, episode]
    width = int(lengths.max())
    k = np.arange(width)
    src = np.minimum(runs.starts[:, episode][:, None] + k, runs.states.shape[1] - 1)
    valid = k < lengths[:, None]

    def cut(x: np.ndarray) -> np.ndarray:
        return np.where(valid, np.take_along_axis(x, src, axis=1), 0).astype(x.dtype)

    return cut(runs.states), cut(runs.rewards), cut(runs.next_states), valid


def lambda_return_increments(v, states, rewards, next_states, valid, *, gamma, lam, alpha):
    r"""The forward view of one episode, summed: all increments measured from the same values.

    .. math::
        \Delta V = \alpha \sum_{t=0}^{T-1} \big[G^\lambda_t - V(S_t)\big]\, x(S_t), \qquad
        G^\lambda_t - V(S_t) = \delta_t + \gamma\lambda\,\big[G^\lambda_{t+1} - V(S_{t+1})\big]

    (the λ-return's error is the λ-discounted sum of the TD errors), run backwards from the
    episode's end with ``rlviz.returns.td_error`` and ``rlviz.returns.discounted_step``. This is
    what TD(λ) with accumulating traces and offline updates adds up (Sutton 1988).

    Args:
        v: ``[B, S]`` values of each lane (not changed).
        states: ``[B, T]`` each lane's episode ``S_t``, padded past its end.
        rewards: ``[B, T]`` ``R_{t+1}``.
        next_states: ``[B, T]`` ``S_{t+1}``.
        valid: ``[B, T]`` bool, the steps that exist.
        gamma: Discount ``γ``.
        lam: ``[B]`` λ of each lane.
        alpha: ``[B]`` step size of each lane.

    Returns:
        ``[B, S]`` the summed increments.
    """
    rows = np.arange(len(v))[:, None]
    delta = returns.td_error(rewards, v[rows, states], v[rows, next_states], gamma=gamma)
    delta = np.where(valid, delta, 0.0)
    error = np.empty_like(delta)
    later = np.zeros(len(v))
    for t in reversed(range(delta.shape[1])):
        later = returns.discounted_step(delta[:, t], later, gamma * lam)
        error[:, t] = later
    cell = rows * v.shape[1] + states
    step = np.where(valid, alpha[:, None] * error, 0.0)
    return np.bincount(cell.ravel(), weights=step.ravel(), minlength=v.size).reshape(v.shape)


def _per_episode(runs: Runs, sweep: Sweep, lam: np.ndarray, alpha: np.ndarray,
                 increments) -> tuple[float, int]:
    """Each episode of an offline ``sweep`` against ``increments`` added to its values before it.

    ``increments(v, states, rewards, next_states, valid, lam, alpha)`` gets ``[B, S]`` values of
    the ``B`` lanes (``sweep.values`` flattened over its first three axes), the episode padded
    ``[B, T]``, and ``[B]`` λ and α.
    """
    lanes = int(np.prod(sweep.values.shape[:3]))
    copies = lanes // runs.n_runs
    worst, count = 0.0, 0
    for e in range(runs.n_episodes):
        rows = [np.tile(x, (copies, 1)) for x in _episode_rows(runs, e)]
        v = np.zeros((lanes, runs.walk.n_states + 2))
        v[:, 1:-1] = sweep.values[:, :, :, e].reshape(lanes, -1)
        after = v[:, 1:-1] + increments(v, *rows, lam, alpha)[:, 1:-1]
        gap, n = _gap(sweep.values[:, :, :, e + 1].reshape(lanes, -1), after, v)
        worst, count = max(worst, gap), count + n
    return worst, count


def monte_carlo_increments(v, states, rewards, next_states, valid, lam, alpha):
    r"""Every-visit constant-α Monte Carlo of one episode, its increments summed.

    .. math:: \Delta V = \alpha \sum_{t=0}^{T-1} \big[G_t - V(S_t)\big]\, x(S_t)

    with ``G_t`` the return to the episode's end (``rlviz.returns.discounted_returns``, γ = 1).
    Arguments as ``lambda_return_increments`` (``lam`` is not used: there is none).
    """
    last = valid & ~np.pad(valid[:, 1:], ((0, 0), (0, 1)))  # each row's last real step
    g = returns.discounted_returns(rewards, 1.0, dones=last)
    rows = np.arange(len(v))[:, None]
    step = np.where(valid, alpha[:, None] * (g - v[rows, states]), 0.0)
    cell = rows * v.shape[1] + states
    return np.bincount(cell.ravel(), weights=step.ravel(), minlength=v.size).reshape(v.shape)


def identities(runs: Runs, *, lam: float, alpha: float, check_runs: int = 5,
               check_episodes: int = 3, max_steps: int = 150) -> Identities:
    """Measure every identity of the page on the first runs of ``runs`` (the 19-state walk, γ = 1).

    Args:
        runs: The page's episodes.
        lam: λ of the step-by-step check of true online TD(λ).
        alpha: α of that check.
        check_runs: How many runs the grids are compared on.
        check_episodes: How many of their episodes.
        max_steps: Steps of run 1 the step-by-step check covers (it is O(T²) per episode).

    Returns:
        The gaps.
    """
    lam, alpha = _unit("λ", lam), _unit("α", alpha)
    head = runs.head(min(check_runs, runs.n_runs), check_episodes)
    lams, alphas = np.array(LAMBDAS), np.array(ALPHAS)
    r = head.n_runs
    # TD(λ) with offline updates, every λ and α; the forward view from the same values.
    backward = td_lambda(head, lams=lams, alphas=alphas, offline=True)
    lam_of = np.repeat(lams, alphas.size * r)
    alpha_of = np.tile(np.repeat(alphas, r), lams.size)
    fb = _per_episode(head, backward, lam_of, alpha_of, lambda v, s, rw, s1, ok, lm, al:
                      lambda_return_increments(v, s, rw, s1, ok, gamma=1.0, lam=lm, alpha=al))
    # Its λ = 1 lanes against every-visit Monte Carlo.
    one = Sweep(backward.method, lams[-1:], alphas, backward.values[-1:], backward.errors[-1:],
                backward.diverged_in[-1:], backward.true_values, backward.gamma)
    mc = _per_episode(head, one, lam_of[-alphas.size * r :], alpha_of[-alphas.size * r :],
                      monte_carlo_increments)
    # True online TD(λ) against the online λ-return, after every step of run 1.
    steps = min(max_steps, int(runs.run_lengths[0]))
    args = (runs.states[0, :steps], runs.rewards[0, :steps], runs.next_states[0, :steps],
            runs.dones[0, :steps], _start_values(runs.walk, ()))
    forward_view = online_lambda_return(*args, gamma=1.0, lam=lam, alpha=alpha)
    backward_view = true_online_steps(*args, gamma=1.0, lam=lam, alpha=alpha)
    to = _gap(forward_view, backward_view)
    forward, back = episode_views(runs, lam=lam, alpha=alpha)
    return Identities(
        forward_backward=fb[0], forward_backward_count=fb[1], monte_carlo=mc[0],
        monte_carlo_count=mc[1], true_online=to[0], true_online_steps=steps, lam=lam,
        alpha=alpha, runs=r, episodes=head.n_episodes, forward=forward, backward=back,
    )


# --------------------------------------------------------------------------- the whiteboard
def whiteboard_gap(runs: Runs, method: str, param: float, alpha: float,
                   values: np.ndarray) -> float | None:
    """How far the whiteboard version is from ``values`` (run 1 after every episode, ``[n]``).

    The whiteboard function of ``method`` (``rlviz.interview.whiteboard.multistep_td``) replays
    run 1's episodes one after the other from the walk's initial values. The gap is relative to
    the largest value; None when run 1 diverged at this setting (nothing to compare).
    """
    from rlviz.interview.whiteboard import multistep_td as wb

    if not np.isfinite(values).all():
        return None

    board = {"n_step": wb.n_step_td, "offline_lambda_return": wb.offline_lambda_return,
             "td_lambda": wb.td_lambda, "true_online": wb.true_online_td_lambda}[method]
    v = _start_values(runs.walk, ())
    for e in range(runs.n_episodes):
        ep = runs.episode(0, e)
        states = np.append(runs.states[0, ep], runs.next_states[0, ep.stop - 1])
        board(v, states, runs.rewards[0, ep], int(param) if method == "n_step" else param,
              alpha)
    return float(np.abs(v[1:-1] - values).max() / max(1.0, float(np.abs(values).max())))


# --------------------------------------------------------------------------- known answers
@dataclass(frozen=True)
class Known:
    """One known answer: a live number against a textbook value or an identity."""

    label: str
    value: float | str
    reference: float | str
    tol: float = 0.0
    source: str = ""
    passed: bool | None = None  # for comparisons that are not a number within a tolerance
    fmt: str = ".4g"


BOOK_RUNS, BOOK_EPISODES = 100, 10
"""The protocol of Figures 7.2, 12.3, 12.6 and 12.8: 100 runs, the first 10 episodes."""
FIGURES = {"n_step": "Figure 7.2", "offline_lambda_return": "Figure 12.3",
           "td_lambda": "Figure 12.6", "true_online": "Figure 12.8"}
IDENTITY_TOL = 1e-12


def _setting(s: SweepSummary, p: int, a: int) -> str:
    name = "n" if s.method == "n_step" else "λ"
    return f"{name} = {s.params[p]:g}, α = {s.alphas[a]:g}"


def known_answers(*, example: TdVsMc, sweep: SweepSummary, ident: Identities,
                  n_step: SweepSummary, compare: dict[str, SweepSummary] | None,
                  whiteboard: float | None) -> list[Known]:
    """The page's checks: true values, Example 6.2, the α sweep's figure, the identities.

    The figure's best region and lowest error are checked at the book's protocol only (the
    19-state walk, 100 runs, the first 10 episodes); ``n_step`` is the n-step sweep on the same
    episodes, ``compare`` the three λ methods at one λ (for the λ methods' figures).
    """
    k5, k19 = np.arange(1, 6), np.arange(1, 20)
    out = [
        Known("5-state walk: true values vs 1/6 … 5/6 (largest gap)",
              float(np.abs(true_values(5)[1:-1] - k5 / 6).max()), 0.0, 1e-12,
              f"{BOOK}, Example 6.2", fmt=".2g"),
        Known("19-state walk: true values vs −18/20 … 18/20 (largest gap)",
              float(np.abs(true_values(19)[1:-1] - (k19 - 10) / 10).max()), 0.0, 1e-12,
              f"{BOOK}, Example 7.1", fmt=".2g"),
    ]
    first = example.estimates[1] - example.estimates[0] if len(example.shown) > 1 else None
    if first is not None:
        moved = np.flatnonzero(np.abs(first) > 1e-12)
        end = "A" if moved.size == 1 and moved[0] == 0 else "E"
        out.append(Known(
            "Example 6.2, run 1: states TD(0) moved in episode 1 (α = 0.1)",
            f"{moved.size}: V({end}) by {float(first[moved[0]]) if moved.size else 0:+.3g}"
            .replace("-", "−"),
            "1: V(A) by −0.05 or V(E) by +0.05", passed=bool(
                moved.size == 1 and moved[0] in (0, 4) and abs(abs(first[moved[0]]) - 0.05)
                < 1e-12), source=f"{BOOK}, Example 6.2 (only the end state's value moves)"))
    td_end, mc_end = example.td_error[:, -1].min(), example.mc_error[:, -1].min()
    out.append(Known(
        f"Example 6.2: lowest error after {example.episodes} episodes, TD(0) vs MC",
        f"{td_end:.3f} vs {mc_end:.3f}", "TD(0) lower", passed=bool(td_end < mc_end),
        source=f"{BOOK}, Example 6.2 (right panel)"))
    out.append(Known(
        f"{FIGURES[sweep.method]}: α = 0 leaves every curve at √0.3",
        float(np.abs(sweep.curve[:, 0] - math.sqrt(0.3)).max()) if sweep.alphas[0] == 0 else
        "no α = 0", 0.0, 1e-12, "V = 0 against v(k) = (k − 10)/10: mean square 0.3",
        passed=None if sweep.alphas[0] == 0 else False, fmt=".2g"))
    if sweep.runs == BOOK_RUNS and sweep.episodes == BOOK_EPISODES:
        out += _figure_checks(sweep, n_step, compare)
    out += [
        Known("Forward = backward: offline TD(λ) vs the λ-return's summed updates (every λ "
              f"and α, {ident.runs} runs × {ident.episodes} episodes)", ident.forward_backward,
              0.0, IDENTITY_TOL,
              "Sutton (1988); Sutton & Barto (2018) §12.2", fmt=".2g"),
        Known("Offline TD(λ = 1) vs every-visit constant-α Monte Carlo",
              ident.monte_carlo, 0.0, IDENTITY_TOL, f"{BOOK} §12.2", fmt=".2g"),
        Known(f"True online TD(λ) vs the online λ-return, each of {ident.true_online_steps} "
              f"steps (λ = {ident.lam:g}, α = {ident.alpha:g})",
              ident.true_online, 0.0, IDENTITY_TOL,
              "van Seijen et al. (2016), Theorem 1; Sutton & Barto (2018) §12.5", fmt=".2g"),
        Known("Whiteboard version equals rlviz on this view (run 1, up close)",
              "run 1 diverged here: nothing to compare" if whiteboard is None else whiteboard,
              0.0, IDENTITY_TOL, "rlviz.interview.whiteboard.multistep_td",
              passed=True if whiteboard is None else None, fmt=".2g"),
    ]
    return out


def _figure_checks(sweep: SweepSummary, n_step: SweepSummary,
                   compare: dict[str, SweepSummary] | None) -> list[Known]:
    fig = f"{BOOK}, {FIGURES[sweep.method]}"
    p, a = sweep.best
    inner = 0 < p < sweep.params.size - 1
    kind = "n" if sweep.method == "n_step" else "λ"
    out = [
        Known(f"{FIGURES[sweep.method]}: best setting", _setting(sweep, p, a),
              f"an intermediate {kind}", passed=bool(inner), source=fig),
        Known(f"{FIGURES[sweep.method]}: its error (first 10 episodes, 100 runs)",
              sweep.best_error, "0.25–0.30 (the book's axis starts at 0.25)",
              passed=bool(0.24 <= sweep.best_error <= 0.30), source=fig),
    ]
    if sweep.method == "offline_lambda_return":
        mine, theirs = float(sweep.curve[:, -1].min()), float(n_step.curve[:, -1].min())
        out.append(Known("Figure 12.3: at α = 1, the best λ against the best n (same episodes)",
                         f"{mine:.3f} vs {theirs:.3f}", "the λ-return lower",
                         passed=mine < theirs, source=f"{fig} (caption: better at high α)"))
    if sweep.method == "td_lambda":
        big = sweep.params >= 0.9
        blown = ~np.isfinite(sweep.curve[big, -1])
        out.append(Known("Figure 12.6: the curves with λ ≥ 0.9 diverge before α = 1",
                         f"{int(blown.sum())} of {int(big.sum())}", f"all {int(big.sum())}",
                         passed=bool(blown.all()), source=f"{fig} (unstable at large α)"))
    if sweep.method == "true_online" and compare is not None:
        lam = float(compare["true_online"].params[0])
        mine = float(compare["true_online"].curve.min())
        theirs = float(compare["offline_lambda_return"].curve.min())
        out.append(Known(f"Figure 12.8: at λ = {lam:g}, lowest error of true online TD(λ) vs "
                         "the offline λ-return", f"{mine:.3f} vs {theirs:.3f}",
                         "as low or lower", passed=mine <= theirs + 0.005, source=fig))
        out.append(Known("Figure 12.8: runs that diverged, any λ and α",
                         int(sweep.diverged.sum()), 0, 0.0, f"{fig} (stable where TD(λ) is not)",
                         fmt=".0f"))
    return out
