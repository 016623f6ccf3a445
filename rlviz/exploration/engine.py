"""The engine: every learner's runs simulated together, on each run's own dice."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rlviz.errors import InputError
from rlviz.exploration.exact import finite_horizon_plan
from rlviz.exploration.problems import KINDS, LABELS, MODEL_BASED, N_SLOTS, STAY, Problem
from rlviz.exploration.steps import (
    TRANSITION,
    bonus_model,
    choose_actions,
    plan_models,
    posterior_sample,
    q_learning_step,
)

__all__ = [
    "simulate",
]


BLOCK = 32
"""Episodes of uniforms each run draws at a time."""


# --------------------------------------------------------------------------- the engine
@dataclass(frozen=True, eq=False)
class Simulation:
    """Raw results of ``simulate``: every learner on every problem, run by run.

    Attributes:
        kinds: The learners, in order (``"optimal"`` is the optimal policy on the same dice).
        problems: The problems, in order.
        returns: Return of each episode; NaN for episodes not played (after stopping).
        first_reach: The episode (from 1) in which each run first collected the far reward,
            0 if it never did.
        visits: Visits to each (step, position), summed over runs and episodes.
        episodes: Episodes each run played.
    """

    kinds: tuple[str, ...]
    problems: tuple[Problem, ...]
    returns: np.ndarray  # [K, T, R, E]
    first_reach: np.ndarray  # [K, T, R] int, 0 = not reached
    visits: np.ndarray  # [K, T, H_max, S_max]
    episodes: np.ndarray  # [K, T, R] int


def _check_settings(*, runs, episodes, epsilon, alpha, beta) -> None:
    def whole(name, value, lo, hi):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or not (
            lo <= value <= hi
        ):
            raise InputError(f"{name} must be a whole number from {lo:,} to {hi:,}; got "
                             f"{value!r}.")

    whole("The number of runs", runs, 1, 10_000)
    whole("The number of episodes", episodes, 1, 1_000_000)
    for name, value, lo, hi in (("Exploration ε", epsilon, 0.0, 1.0),
                                ("The step size α", alpha, 1e-6, 1.0),
                                ("The bonus scale β", beta, 0.0, 1e6)):
        if isinstance(value, bool) or not (
            isinstance(value, int | float) and math.isfinite(value) and lo <= value <= hi
        ):
            raise InputError(f"{name} must be a number from {lo:g} to {hi:g}; got {value!r}.")


@dataclass(frozen=True, eq=False)
class _Outcomes:
    """Every problem's outcome table, flattened by row ``(problem, s, a)``, to sample from.

    Positions beyond a problem's size loop on themselves; no lane ever reaches them.
    """

    cumulative: np.ndarray  # [T * S_max * A, 3] cumulative outcome probabilities, last = 1
    next_state: np.ndarray  # [T * S_max * A * 3] successor of each outcome
    reward: np.ndarray  # [T * S_max * A * 3] reward of each outcome

    @classmethod
    def build(cls, problems: Sequence[Problem], s_max: int) -> _Outcomes:
        n_actions = problems[0].mdp.n_actions
        shape = (len(problems), s_max, n_actions, N_SLOTS)
        cum = np.ones(shape)
        nxt = np.broadcast_to(np.arange(s_max)[None, :, None, None], shape).copy()
        rew = np.zeros(shape)
        for t, p in enumerate(problems):
            cum[t, : p.n_states] = p.mdp.cumulative_prob
            nxt[t, : p.n_states] = p.mdp.next_state
            rew[t, : p.n_states] = p.mdp.reward
        return cls(cum.reshape(-1, N_SLOTS), nxt.reshape(-1), rew.reshape(-1))

    def step(self, rows: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Successors and rewards of the rows ``(problem, s, a)`` for uniforms ``u``.

        As ``TabularMDP.step``: outcome k is the number of cumulative probabilities <= u.
        """
        cum = self.cumulative[rows]
        outcome = rows * N_SLOTS
        for j in range(N_SLOTS - 1):
            outcome = outcome + (cum[:, j] <= u)
        return self.next_state[outcome], self.reward[outcome]


def _padded_layout(problems: Sequence[Problem], s_max: int) -> np.ndarray:
    """``[T, S_max, A, 3]`` each problem's chain layout; extra positions loop on themselves."""
    n_actions = problems[0].mdp.n_actions
    layout = np.empty((len(problems), s_max, n_actions, N_SLOTS), dtype=np.int64)
    for t, p in enumerate(problems):
        layout[t] = np.arange(s_max)[:, None, None]
        layout[t, : p.n_states] = p.mdp.next_state
    return layout


def simulate(
    problems: Sequence[Problem],
    kinds: Sequence[str],
    *,
    runs: int,
    episodes: int,
    seed: int,
    epsilon: float = 0.1,
    alpha: float = 0.1,
    beta: float = 0.5,
    until_reached: bool = False,
    record_visits: bool = True,
) -> Simulation:
    """Train every learner on every problem for ``runs`` runs, all lanes in lockstep.

    A lane is one (learner, problem, run). Each episode the planners build their models
    (``bonus_model``, ``posterior_sample``) and solve them all in one ``plan_models`` call; then
    every lane steps at once: it chooses with ``choose_actions`` on its run's uniforms, moves
    with ``TabularMDP.step``, and learns with ``q_learning_step`` (Q-learners) or by counting
    what happened (planners). The learner ``"optimal"`` follows the true model's plan on the
    same dice, the paired baseline of the regret.

    Engine details: lanes are sorted by episode length, longest first, so the lanes still
    inside their episode at step ``h`` are a prefix; lanes that have stopped are dropped at the
    end of an episode. Each run's rows of uniforms are as long as the longest episode, and
    PSRL's posterior draws come from one stream for all its lanes, in lane order. So a
    problem simulated with others sees the same dice as alone only when it has the longest
    episode, and PSRL's draws shift when some of its lanes stop early.

    Args:
        problems: The problems (for example the deep sea at several sizes).
        kinds: Learners from ``LEARNERS``, ``"random"`` (ε-greedy with ε = 1) or ``"optimal"``.
        runs: Independent runs per (learner, problem).
        episodes: Episodes per run (the cap when ``until_reached``).
        seed: Seed of everything random.
        epsilon: ε of the ε-greedy learner.
        alpha: Step size of the Q-learners.
        beta: Bonus scale of the count-based learner.
        until_reached: Stop each run after the episode in which it first collects the far
            reward (its later returns are NaN).
        record_visits: Count visits to each (step, position) (else ``visits`` stays 0).

    Returns:
        The returns, first-reach episodes and visits of every lane.
    """
    _check_settings(runs=runs, episodes=episodes, epsilon=epsilon, alpha=alpha, beta=beta)
    kinds = tuple(kinds)
    if not kinds or any(k not in (*KINDS, "optimal") for k in kinds):
        raise InputError(f"Choose learners among {', '.join(LABELS)}; got {list(kinds)}.")
    problems = tuple(problems)
    if not problems:
        raise InputError("Give at least one problem.")
    n_kinds, n_tasks = len(kinds), len(problems)
    horizon_of = np.array([p.horizon for p in problems])
    h_max, s_max = int(horizon_of.max()), max(p.n_states for p in problems)
    n_actions = problems[0].mdp.n_actions
    layout = _padded_layout(problems, s_max)
    env = _Outcomes.build(problems, s_max)

    # Lanes, learner-major (lane = (kind * T + task) * R + run), then sorted longest first.
    shape = (n_kinds, n_tasks, runs)
    kind, task, run = (a.ravel() for a in np.indices(shape))
    order = np.argsort(-horizon_of[task], kind="stable")
    lane, kind, task, run = order, kind[order], task[order], run[order]
    names = np.array(kinds)[kind]
    horizon = horizon_of[task]
    planner = np.isin(names, [*MODEL_BASED, "optimal"])
    eps = np.select([names == "epsilon_greedy", names == "random"], [epsilon, 1.0], 0.0)
    env_row = task * (s_max * n_actions)  # row of (the lane's problem, s = 0, a = 0)
    far_pair = np.array([p.far_state * n_actions + p.far_action for p in problems])[task]
    r_max = np.array([p.r_max for p in problems])[task]

    # What each lane acts on: Q_h(s, ·) for Q-learners, its plan's optimal set for planners.
    table = np.zeros((lane.size, h_max + 1, s_max, n_actions))
    to_go = np.clip(horizon[:, None] - np.arange(h_max + 1)[None, :], 0, None)  # H - h
    optimistic = names == "optimistic"
    table[optimistic] = (to_go[optimistic] * r_max[optimistic, None])[..., None, None]
    if (names == "optimal").any():
        best = {t: finite_horizon_plan(p.mdp, p.horizon).greedy for t, p in enumerate(problems)}
        for i in np.flatnonzero(names == "optimal"):
            table[i, : horizon[i], : problems[task[i]].n_states] = best[task[i]]
    counts = np.zeros((lane.size, s_max, n_actions, N_SLOTS))
    reward_sum = np.zeros((lane.size, s_max, n_actions))
    visits = np.zeros((lane.size, h_max, s_max))

    returns = np.full((lane.size, episodes), np.nan)  # indexed by the original lane
    first = np.zeros(lane.size, dtype=np.int64)
    played = np.zeros(lane.size, dtype=np.int64)
    visits_out = np.zeros((lane.size, h_max, s_max))

    dice_seed, posterior_seed = np.random.SeedSequence(seed).spawn(2)
    dice_rngs = [np.random.default_rng(s) for s in dice_seed.spawn(runs)]
    posterior_rng = np.random.default_rng(posterior_seed)
    dice = np.empty((runs, 0, h_max, 4))
    sampling = names == "psrl"
    bonus = names == "bonus"

    for e in range(episodes):
        if e % BLOCK == 0:
            dice = np.stack([g.random((BLOCK, h_max, 4)) for g in dice_rngs])
        if lane.size == 0:
            break
        u_lane = dice[run, e % BLOCK]  # [n, H_max, 4]: each lane its run's row
        learns = planner & (names != "optimal")
        if learns.any():
            who = np.flatnonzero(learns)
            prob = np.empty((who.size, s_max, n_actions, N_SLOTS))
            reward = np.empty((who.size, s_max, n_actions))
            b, p = bonus[who], sampling[who]
            if b.any():
                prob[b], reward[b] = bonus_model(counts[who[b]], reward_sum[who[b]], beta=beta,
                                                 r_max=r_max[who[b]])
            if p.any():
                prob[p], reward[p] = posterior_sample(counts[who[p]], reward_sum[who[p]],
                                                      posterior_rng)
            table[who, :h_max] = plan_models(layout[task[who]], prob, reward, horizon[who],
                                             steps=h_max)
        state = np.zeros(lane.size, dtype=np.int64)
        ret = np.zeros(lane.size)
        hit = np.zeros(lane.size, dtype=bool)
        inside = (horizon[None, :] > np.arange(h_max)[:, None]).sum(axis=1)  # lanes at step h
        last = horizon[None, :] == np.arange(1, h_max + 1)[:, None]  # [H_max, n] h = H - 1
        # Flat indices: row (lane, h, s) of the table, (lane, s, a) of the counts, ...
        ar = np.arange(lane.size)
        table_row = ar * ((h_max + 1) * s_max)
        pair_row = ar * (s_max * n_actions)
        visit_row = ar * (h_max * s_max)
        rows, cells = table.reshape(-1, n_actions), table.reshape(-1)
        count_cells, reward_cells = counts.reshape(-1), reward_sum.reshape(-1)
        visit_cells = visits.reshape(-1)
        any_q, any_planner = (~planner).any(), planner.any()
        for h in range(h_max):
            n = int(inside[h])
            s, u = state[:n], u_lane[:n, h]
            here = table_row[:n] + h * s_max + s
            a = choose_actions(rows[here], eps[:n], u)
            sa = s * n_actions + a
            s2, r = env.step(env_row[:n] + sa, u[:, TRANSITION])
            if any_q:
                old = cells[here * n_actions + a]
                new = q_learning_step(old, r, rows[here + s_max + (s2 - s)], alpha=alpha,
                                      last_step=last[h, :n])
                cells[here * n_actions + a] = np.where(planner[:n], old, new) if any_planner \
                    else new
            if any_planner:
                count_cells[(pair_row[:n] + sa) * N_SLOTS + (s2 - s + STAY)] += 1
                reward_cells[pair_row[:n] + sa] += r
            if record_visits:
                visit_cells[visit_row[:n] + h * s_max + s] += 1
            ret[:n] += r
            hit[:n] |= sa == far_pair[:n]
            state[:n] = s2
        returns[lane, e] = ret
        played[lane] += 1
        first[lane[hit & (first[lane] == 0)]] = e + 1
        if until_reached and (stop := first[lane] > 0).any():
            visits_out[lane[stop]] = visits[stop]
            keep = ~stop
            lane, kind, task, run, names, horizon, planner, eps, env_row = (
                x[keep] for x in (lane, kind, task, run, names, horizon, planner, eps, env_row))
            far_pair, r_max, sampling, bonus = (
                x[keep] for x in (far_pair, r_max, sampling, bonus))
            table, counts, reward_sum, visits = (
                x[keep] for x in (table, counts, reward_sum, visits))
    visits_out[lane] = visits

    return Simulation(
        kinds=kinds, problems=problems, returns=returns.reshape(*shape, episodes),
        first_reach=first.reshape(shape),
        visits=visits_out.reshape(*shape, h_max, s_max).sum(axis=2),
        episodes=played.reshape(shape),
    )
