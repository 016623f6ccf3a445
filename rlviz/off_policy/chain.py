"""The chain: the estimators compared as the behaviour policy moves away from the target."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlviz.errors import InputError
from rlviz.mdp import TabularMDP
from rlviz.off_policy._common import _mean_band, _rng, _unit, _whole
from rlviz.off_policy.estimators import (
    ESTIMATORS,
    doubly_robust,
    importance_ratio,
    kish_ess,
    ordinary_is,
    per_decision_is,
    weighted_is,
)

__all__ = [
    "CRITICS",
    "DELTA_GRID",
    "Episodes",
    "EstimatorStudy",
    "chain_mdp",
    "chain_policies",
    "estimator_study",
    "finite_horizon_q",
    "fit_models",
    "sample_episodes",
    "weight_distribution",
]


CRITICS = ("cross_fitted", "same_data", "true", "zero")
"""Critics for doubly robust: a model fitted on the other half of the run's episodes, a model
fitted on all of them, the true Q of the target policy, or none (DR is then per-decision IS)."""

DELTA_GRID = tuple(round(0.1 * i, 1) for i in range(11))
"""The distances between the policies swept on the chain (the chosen one is added)."""


# =========================================================================== the chain
LEFT, RIGHT = 0, 1


def chain_mdp(n_states: int = 5, p_forward: float = 0.7, left_reward: float = 0.1,
              right_reward: float = 1.0) -> TabularMDP:
    """A chain of states: *right* moves on with probability ``p_forward``, *left* moves back.

    The episode starts at the left end. Arriving (or staying) at the left end pays
    ``left_reward``, at the right end ``right_reward``; nothing else pays. Episodes last a
    fixed number of steps (the horizon), so no state is terminal.
    """
    s = np.arange(n_states)
    ahead = np.minimum(s + 1, n_states - 1)
    behind = np.maximum(s - 1, 0)
    next_state = np.stack([np.stack([behind, behind], 1), np.stack([ahead, s], 1)], 1)
    prob = np.broadcast_to(np.array([[1.0, 0.0], [p_forward, 1.0 - p_forward]]),
                           (n_states, 2, 2)).copy()
    pay = np.zeros(n_states)
    pay[0], pay[-1] = left_reward, right_reward
    start = np.zeros(n_states)
    start[0] = 1.0
    return TabularMDP(next_state=next_state, prob=prob, reward=pay[next_state],
                      terminal=np.zeros(n_states, dtype=bool), start=start,
                      action_names=("left", "right"), name=f"{n_states}-state chain")


def chain_policies(delta: float, n_states: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """``(pi [S, A], b [S, A])``: ``b`` is uniform; ``pi`` goes right with ``(1 + delta) / 2``.

    ``delta = 0`` makes the two policies equal; ``delta = 1`` makes the target always go right.
    The per-step ratio is ``1 + delta`` after *right* and ``1 - delta`` after *left*.
    """
    delta = _unit("The distance δ between the policies", delta)
    pi = np.tile([(1.0 - delta) / 2, (1.0 + delta) / 2], (n_states, 1))
    return pi, np.full((n_states, 2), 0.5)


@dataclass(frozen=True)
class Episodes:
    """Fixed-length episodes, any leading shape (runs, episodes)."""

    states: np.ndarray  # [..., T+1] int S_0..S_T
    actions: np.ndarray  # [..., T] int A_0..A_{T-1}
    rewards: np.ndarray  # [..., T] R_1..R_T (the reward after each action)


def sample_episodes(mdp: TabularMDP, behaviour: np.ndarray, *, shape: tuple[int, ...],
                    horizon: int, rng: np.random.Generator) -> Episodes:
    """Episodes of ``horizon`` steps from the start state, all in lockstep under ``behaviour``."""
    size = int(np.prod(shape))
    cum = np.cumsum(behaviour, axis=1)
    states = np.empty((size, horizon + 1), dtype=np.int64)
    actions = np.empty((size, horizon), dtype=np.int64)
    rewards = np.empty((size, horizon))
    states[:, 0] = mdp.start_state
    for t in range(horizon):
        s = states[:, t]
        a = np.minimum((cum[s] <= rng.random(size)[:, None]).sum(axis=1), cum.shape[1] - 1)
        states[:, t + 1], rewards[:, t] = mdp.step(s, a, rng.random(size))
        actions[:, t] = a
    return Episodes(states.reshape(*shape, horizon + 1), actions.reshape(*shape, horizon),
                    rewards.reshape(*shape, horizon))


def fit_models(episodes: Episodes, group: np.ndarray, n_groups: int, n_states: int,
               n_actions: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Maximum-likelihood models of each run's episodes, one per group of episodes.

    ``P^(s' | s, a) = N(s, a, s') / N(s, a)`` and ``R^(s, a)`` the mean reward seen after
    ``(s, a)``. A pair never seen gets ``P^ = 0`` and ``R^ = 0``: the critic then values it 0.

    Args:
        episodes: ``[R, n, ...]`` the runs' episodes.
        group: ``[n]`` the group (0..G-1) of each episode.
        n_groups: ``G``.
        n_states: ``S``.
        n_actions: ``A``.

    Returns:
        ``(P^ [R, G, S, A, S], R^ [R, G, S, A])``.
    """
    runs, n, horizon = episodes.actions.shape
    run = np.broadcast_to(np.arange(runs)[:, None, None], (runs, n, horizon))
    grp = np.broadcast_to(np.asarray(group)[None, :, None], (runs, n, horizon))
    pair = ((run * n_groups + grp) * n_states + episodes.states[..., :-1]) * n_actions \
        + episodes.actions
    move = pair * n_states + episodes.states[..., 1:]
    cells = runs * n_groups * n_states * n_actions
    counts = np.bincount(move.ravel(), minlength=cells * n_states).reshape(
        runs, n_groups, n_states, n_actions, n_states).astype(np.float64)
    visits = counts.sum(axis=-1)
    reward_sum = np.bincount(pair.ravel(), weights=episodes.rewards.ravel(),
                             minlength=cells).reshape(runs, n_groups, n_states, n_actions)
    seen = visits > 0
    p_hat = np.divide(counts, visits[..., None], out=np.zeros_like(counts),
                      where=seen[..., None])
    r_hat = np.divide(reward_sum, visits, out=np.zeros_like(reward_sum), where=seen)
    return p_hat, r_hat


def finite_horizon_q(p: np.ndarray, r: np.ndarray, pi: np.ndarray, horizon: int,
                     gamma: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Action and state values of ``pi`` with ``h`` steps to go, for ``h = 0..horizon``.

    ``Q_h(s, a) = R(s, a) + gamma sum_s' P(s' | s, a) V_{h-1}(s')``,
    ``V_h(s) = sum_a pi(a | s) Q_h(s, a)``, ``Q_0 = V_0 = 0`` (backward induction).

    Args:
        p: ``[..., S, A, S]`` transition probabilities (leading axes: several models).
        r: ``[..., S, A]`` expected rewards.
        pi: ``[S, A]`` the policy.
        horizon: The longest number of steps to go.
        gamma: Discount factor.

    Returns:
        ``(Q [..., H+1, S, A], V [..., H+1, S])``.
    """
    q = np.zeros(r.shape[:-2] + (horizon + 1,) + r.shape[-2:])
    v = np.zeros(r.shape[:-2] + (horizon + 1, r.shape[-2]))
    for h in range(1, horizon + 1):
        q[..., h, :, :] = r + gamma * (p @ v[..., h - 1, None, :, None])[..., 0]
        v[..., h, :] = np.sum(pi * q[..., h, :, :], axis=-1)
    return q, v


@dataclass(frozen=True)
class EstimatorStudy:
    """Four estimators of ``v_pi`` on the chain as the target drifts from the behaviour."""

    deltas: np.ndarray  # [D] distances swept, the chosen one included
    chosen: int
    """Index of the chosen distance in ``deltas``."""
    horizon: int
    episodes: int
    runs: int
    critic: str
    true_values: np.ndarray  # [D] exact v_pi(start) of each target
    estimates: dict[str, np.ndarray]  # name -> [D, R] each run's estimate
    on_policy: np.ndarray  # [R] the plain average return of each run's episodes (Monte Carlo)
    ess: np.ndarray  # [D, R] Kish effective sample size of each run's episode weights
    second_moment: np.ndarray  # [D] E_b[rho^2] of one episode, exact
    weight_values: np.ndarray  # [K] the distinct episode weights at the chosen distance
    weight_episodes: np.ndarray  # [K] share of episodes with each weight
    weight_mass: np.ndarray  # [K] share of the total weight they carry
    mean_weight: float
    """Mean episode weight at the chosen distance (its expectation is 1)."""
    mean_weight_half: float
    """Half-width of its 95% interval."""
    example: dict[str, np.ndarray]  # the first run at the chosen distance: ratios, rewards,
    # q_taken, v_state [n, T] and weights [n], for the whiteboard check

    def bias(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """``[D]`` mean estimate minus the truth, and the half-width of its 95% interval."""
        mean, half = _mean_band(self.estimates[name], axis=1)
        return mean - self.true_values, half

    def variance(self, name: str) -> np.ndarray:
        """``[D]`` variance of the estimate over runs (divided by R, so MSE = bias² + it)."""
        return self.estimates[name].var(axis=1)

    def mse(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """``[D]`` mean squared error over runs, and the half-width of its 95% interval."""
        return _mean_band((self.estimates[name] - self.true_values[:, None]) ** 2, axis=1)

    def mean_ess(self) -> tuple[np.ndarray, np.ndarray]:
        """``[D]`` mean Kish effective sample size over runs, and its 95% half-width."""
        return _mean_band(self.ess, axis=1)


def weight_distribution(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct weights (to 12 significant digits), the share of episodes and of weight."""
    flat = np.asarray(weights, dtype=np.float64).ravel()
    rounded = np.array([float(f"{w:.12g}") for w in np.unique(flat)])
    values, index = np.unique(rounded[np.searchsorted(np.unique(flat), flat)],
                              return_inverse=True)
    count = np.bincount(index, minlength=values.size)
    mass = np.bincount(index, weights=flat, minlength=values.size)
    total = mass.sum()
    return values, count / flat.size, mass / total if total > 0 else np.zeros(values.size)


def estimator_study(*, delta: float = 0.5, horizon: int = 5, episodes: int = 100,
                    runs: int = 200, critic: str = "cross_fitted", gamma: float = 1.0,
                    seed: int = 0, max_work: int = 400_000) -> EstimatorStudy:
    r"""Ordinary, weighted, per-decision and doubly robust IS on the chain, for every distance.

    Each run is a data set of ``episodes`` episodes of ``horizon`` steps drawn once from the
    uniform behaviour policy; every target policy is evaluated on the same episodes, so the
    distances and the estimators differ only by their ratios and formulas.

    The doubly robust critic (``critic="cross_fitted"``): each run's episodes are split in two
    halves (even and odd), a maximum-likelihood model (transition counts, mean rewards) is fitted
    on each, and ``Q^`` of the target is computed on it by backward induction; an episode is
    corrected by the critic of the *other* half, so the critic never saw it and DR stays
    unbiased. ``"same_data"`` fits one model on all of a run's episodes (a little bias),
    ``"true"`` uses the exact ``Q^pi``, ``"zero"`` none.

    Args:
        delta: The chosen distance (the swept grid ``DELTA_GRID`` is always included).
        horizon: Steps per episode.
        episodes: Episodes per data set (``n``).
        runs: Independent data sets.
        critic: One of ``CRITICS``.
        gamma: Discount factor.
        seed: Seed of the random stream.
        max_work: The largest ``runs * episodes * horizon`` allowed.

    Returns:
        The study.
    """
    delta = _unit("The distance δ between the policies", delta)
    horizon = _whole("The horizon", horizon, 1, 50)
    episodes = _whole("The number of episodes per data set", episodes, 2, 100_000)
    runs = _whole("The number of runs", runs, 2, 100_000)
    if critic not in CRITICS:
        raise InputError(f"The critic must be one of {', '.join(CRITICS)}; got {critic!r}")
    if runs * episodes * horizon > max_work:
        raise InputError(
            f"{runs} runs × {episodes} episodes × {horizon} steps is more than "
            f"{max_work:,} steps: lower one of them")
    mdp = chain_mdp()
    n_states, n_actions = mdp.n_states, mdp.n_actions
    _, behaviour = chain_policies(0.0, n_states)
    data = sample_episodes(mdp, behaviour, shape=(runs, episodes), horizon=horizon,
                           rng=_rng(seed, 1))
    s, a = data.states[..., :-1], data.actions
    pair = s * n_actions + a  # flat (S_t, A_t) of every step
    b_taken = np.take(behaviour, pair)
    returns = np.sum(gamma ** np.arange(horizon) * data.rewards, axis=-1)
    to_go = horizon - np.arange(horizon)  # steps to go at each t

    half = np.arange(episodes) % 2
    p_half, r_half = fit_models(data, half, 2, n_states, n_actions)
    p_all, r_all = fit_models(data, np.zeros(episodes, dtype=np.int64), 1, n_states, n_actions)
    p_hat = np.concatenate([p_half, p_all], axis=1)  # [R, 3, S, A, S]: halves 0, 1, and all
    r_hat = np.concatenate([r_half, r_all], axis=1)
    model = {"cross_fitted": 1 - half, "same_data": np.full(episodes, 2)}.get(critic)
    if model is not None:  # where each step's Q^ and V^ sit in the flattened critic tables
        run = np.arange(runs)[:, None, None] * p_hat.shape[1] + model[None, :, None]
        at_v = (run * (horizon + 1) + to_go) * n_states + s
        at_q = at_v * n_actions + a

    deltas = np.array(sorted(set(DELTA_GRID) | {round(delta, 10)}))
    chosen = int(np.flatnonzero(np.isclose(deltas, delta))[0])
    estimates = {name: np.empty((deltas.size, runs)) for name in ESTIMATORS}
    ess = np.empty((deltas.size, runs))
    true_values = np.empty(deltas.size)
    second = np.empty(deltas.size)
    example: dict[str, np.ndarray] = {}
    for i, d in enumerate(deltas):
        pi, _ = chain_policies(float(d), n_states)
        pi_taken = np.take(pi, pair)
        ratios = pi_taken / b_taken
        weights = importance_ratio(pi_taken, b_taken)
        q_true, v_true = finite_horizon_q(mdp.P, mdp.R, pi, horizon, gamma)
        true_values[i] = v_true[horizon, mdp.start_state]
        # E_b[rho_t^2] = sum_a pi^2 / b is the same in every state, so E_b[rho^2] is its power.
        second[i] = float(np.sum(pi[0] ** 2 / behaviour[0])) ** horizon
        if critic == "true":
            q_taken = np.take(q_true, to_go * n_states * n_actions + pair)
            v_state = np.take(v_true, to_go * n_states + s)
        elif critic == "zero":
            q_taken = v_state = np.zeros_like(ratios)
        else:
            q_hat, v_hat = finite_horizon_q(p_hat, r_hat, pi, horizon, gamma)
            q_taken, v_state = np.take(q_hat, at_q), np.take(v_hat, at_v)
        estimates["ordinary"][i] = ordinary_is(weights, returns)
        estimates["weighted"][i] = weighted_is(weights, returns)
        estimates["per_decision"][i] = per_decision_is(ratios, data.rewards, gamma)
        estimates["doubly_robust"][i] = doubly_robust(ratios, data.rewards, q_taken, v_state,
                                                      gamma)
        ess[i] = kish_ess(weights)
        if i == chosen:
            values, share, mass = weight_distribution(weights)
            mean_w, half_w = _mean_band(weights.ravel())
            example = {"ratios": ratios[0], "rewards": data.rewards[0], "q_taken": q_taken[0],
                       "v_state": v_state[0], "weights": weights[0], "returns": returns[0]}
    return EstimatorStudy(
        deltas=deltas, chosen=chosen, horizon=horizon, episodes=episodes, runs=runs,
        critic=critic, true_values=true_values, estimates=estimates,
        on_policy=returns.mean(axis=-1),
        ess=ess, second_moment=second, weight_values=values, weight_episodes=share,
        weight_mass=mass, mean_weight=float(mean_w), mean_weight_half=float(half_w),
        example=example,
    )
