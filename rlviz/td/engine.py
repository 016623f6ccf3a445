"""The vectorised engine: ``run_control_many`` trains every run of several algorithms at once.

Each run draws one row of uniforms per step of its own life (``rlviz.td.dice``), so the plain loop
of ``rlviz.td.loop`` can ask for the same numbers and must match it draw for draw.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from rlviz.errors import InputError
from rlviz.mdp import TabularMDP
from rlviz.td.dice import (
    BLOCK,
    EXPLORE,
    RANDOM_ACTION,
    START,
    TABLE_COIN,
    TIE_KEYS,
    TRANSITION,
    _Dice,
    _greedy_actions,
    _greedy_order,
    _start_sampler,
)
from rlviz.td.results import DEFAULT_MAX_STEPS, ControlResult, _check_run, epsilon_schedule
from rlviz.td.summaries import greedy_path
from rlviz.td.updates import (
    double_q_target,
    expected_sarsa_target,
    q_learning_target,
    sarsa_target,
    td_update,
)

__all__ = [
    "BLOCK",
    "run_control",
    "run_control_many",
]


# --------------------------------------------------------------------------- the model, the logs
def _last_end(ended: np.ndarray, t_first: int, before: np.ndarray) -> np.ndarray:
    """Per lane, the last step of a log ``ended [n, L]`` (from ``t_first``) that ended an episode.

    Lanes with no such step keep ``before`` (a step before ``t_first``, or -1).
    """
    if len(ended) == 0:
        return before
    step_after = np.arange(t_first + 1, t_first + len(ended) + 1)[:, None]  # 0 marks no end
    return np.maximum(before, np.maximum.reduce(ended * step_after, axis=0) - 1)


def _steps_to_end(mdp: TabularMDP, cap: int) -> np.ndarray:
    """``[S]`` fewest steps from each state to a terminal state (0 there), at most ``cap``."""
    steps = np.where(mdp.terminal, 0, cap)
    possible = mdp.prob > 0
    for _ in range(mdp.n_states):
        via = np.where(possible, steps[mdp.next_state], cap).min(axis=(1, 2)) + 1
        new = np.minimum(steps, np.where(mdp.terminal, 0, via))
        if (new == steps).all():
            break
        steps = new
    return np.minimum(steps, cap)


@dataclass(frozen=True)
class _Outcomes:
    """The model flattened so that a step is a few look-ups in small tables every lane shares.

    Outcome ``m`` of action ``a`` in state ``s`` sits at ``o = m * S * A + s * A + a``; with a
    single outcome ``o`` is the index of ``(s, a)`` in a flattened ``[S, A]``.
    """

    next_state: np.ndarray  # [K * S*A]
    reward: np.ndarray  # [K * S*A]
    ends: np.ndarray  # [K * S*A] bool, the next state is terminal
    after: np.ndarray  # [K * S*A] the state at the next step: the start after a terminal state
    # (when the start is a single state; else the next state, and the start is drawn later)
    shared_cum: np.ndarray | None  # [K - 1] cumulative probabilities every live (s, a) shares
    cum: np.ndarray | None  # [S*A, K - 1] each (s, a)'s, when they differ; both None: one outcome


def _outcomes(mdp: TabularMDP, single_start: bool) -> _Outcomes:
    """Build the outcome tables (``single_start``: every episode starts in ``mdp.start_state``)."""
    n_outcomes = mdp.next_state.shape[2]
    next_state = mdp.next_state.transpose(2, 0, 1).ravel()
    reward = mdp.reward.transpose(2, 0, 1).ravel()
    ends = mdp.terminal[next_state]
    after = np.where(ends, mdp.start_state, next_state) if single_start else next_state
    # Outcome k is the number of cumulative probabilities <= u. The last one is exactly 1 and u
    # is below 1, so only the first K - 1 can count. Terminal states are never acted in.
    shared_cum = cum = None
    if n_outcomes > 1:
        live = mdp.cumulative_prob[~mdp.terminal][..., :-1].reshape(-1, n_outcomes - 1)
        if (live != live[0]).any():
            cum = mdp.cumulative_prob[..., :-1].reshape(-1, n_outcomes - 1)
        elif live[0, 0] < 1.0:  # else every live (s, a) has a single outcome: k is always 0
            shared_cum = live[0]
    return _Outcomes(next_state=next_state, reward=reward, ends=ends, after=after,
                     shared_cum=shared_cum, cum=cum)


def _episode_returns(rewards, ended, ended_run, ended_step, first, per_run, carry, *, whole):
    """Undiscounted return of every episode that ends in a block of steps.

    Args:
        rewards: ``[R, n]`` reward of each run's steps.
        ended: ``[R, n]`` whether the step ended an episode.
        ended_run: ``[E]`` the run of each step that ended an episode, run by run.
        ended_step: ``[E]`` its step in the block.
        first: ``[R]`` where each run's ends begin in those lists.
        per_run: ``[R]`` how many ends each run has there.
        carry: ``[R]`` what the previous block left: the reward summed over the episode in
            progress, or with ``whole``, ``[2, R]``: summed since the run began, and that sum
            at the run's last episode end.
        whole: Every reward is a whole number (and every sum below 2**53), so sums are exact in
            any order: a running total and differences replace the step-by-step sum.

    Returns:
        ``[E]`` the returns, and the carry for the next block.
    """
    if whole:
        totals = carry[0][:, None] + np.cumsum(rewards, axis=1)
        at_end = totals[ended_run, ended_step]
        some = per_run > 0
        before = np.roll(at_end, 1)  # the previous end of the same run...
        before[first[some]] = carry[1][some]  # ...or the last one before the block
        carry = np.stack([totals[:, -1], carry[1]])
        carry[1][some] = at_end[(first + per_run - 1)[some]]
        return at_end - before, carry
    totals = np.empty_like(rewards)
    total = carry
    for k in range(rewards.shape[1]):  # the order of the loop reference's sums
        total = total + rewards[:, k]
        totals[:, k] = total
        total = np.where(ended[:, k], 0.0, total)
    return totals[ended_run, ended_step], total


def run_control(
    mdp: TabularMDP,
    *,
    algorithm: str,
    episodes: int,
    runs: int = 1,
    epsilon: float = 0.1,
    alpha: float = 0.5,
    gamma: float = 1.0,
    seed: int = 0,
    max_steps: int = DEFAULT_MAX_STEPS,
    epsilon_decay: bool = False,
    max_total_steps: int | None = None,
) -> ControlResult:
    r"""Train ``runs`` independent ε-greedy learners of one algorithm, vectorised over runs.

    ``run_control_many`` with a single algorithm; arguments and result as there.
    """
    return run_control_many(
        mdp, algorithms=(algorithm,), episodes=episodes, runs=runs, epsilon=epsilon, alpha=alpha,
        gamma=gamma, seed=seed, max_steps=max_steps, epsilon_decay=epsilon_decay,
        max_total_steps=max_total_steps,
    )[algorithm]


def run_control_many(
    mdp: TabularMDP,
    *,
    algorithms: Sequence[str],
    episodes: int,
    runs: int = 1,
    epsilon: float = 0.1,
    alpha: float = 0.5,
    gamma: float = 1.0,
    seed: int = 0,
    max_steps: int = DEFAULT_MAX_STEPS,
    epsilon_decay: bool = False,
    max_total_steps: int | None = None,
    progress: Callable[[float], object] | None = None,
) -> dict[str, ControlResult]:
    r"""Train ``runs`` independent ε-greedy TD-control learners of each algorithm, all at once.

    Every step, in every run: choose :math:`a \sim \varepsilon\text{-greedy}(Q(s, \cdot))`
    (ties among the best actions broken at random; Double Q acts on :math:`Q_1 + Q_2`), observe
    :math:`r, s'`, and update

    .. math:: Q(s, a) \leftarrow Q(s, a) + \alpha \big[y - Q(s, a)\big]

    with ``y`` from ``q_learning_target``, ``sarsa_target`` (bootstrapping on the next action
    actually taken), ``expected_sarsa_target`` or ``double_q_target`` (a fair coin picks the table
    to update). Q starts at 0. An episode ends in a terminal state (target ``r``) or is cut short
    after ``max_steps`` steps; a cut is not a terminal state, so its last target still
    bootstraps from ``s'``. Each run counts its own episodes and stops after ``episodes``, or
    when it has taken ``max_total_steps`` steps: the episode in progress is then cut short and
    the rest are not played. Sutton & Barto (2018), Sections 6.4-6.7.

    Run ``r`` of every algorithm reads the same dice, so the algorithms are compared on paired
    random numbers, and each one's result is the one it gets trained alone.

    Args:
        mdp: The environment (its ``start`` distribution gives the first state of each episode).
        algorithms: Distinct names from ``ALGORITHMS``, at least one.
        episodes: Episodes per run, N ≥ 1.
        runs: Independent runs of each algorithm, R ≥ 1.
        epsilon: Exploration rate in [0, 1] (the first episode's, with ``epsilon_decay``).
        alpha: Step size in (0, 1].
        gamma: Discount factor in [0, 1].
        seed: Seed of every random draw.
        max_steps: Steps after which an episode is cut short.
        epsilon_decay: Decay ε linearly to 0 over the episodes (``epsilon_schedule``).
        max_total_steps: Steps each run may take in all, or None for no limit.
        progress: Called after every block of ``BLOCK`` steps with the fraction of the work
            done, in [0, 1] (each run counts the larger of its share of episodes played and of
            steps taken).

    Returns:
        For each algorithm, the per-episode returns and lengths, final Q, visit counts and
        greedy paths.

    Raises:
        InputError: if a setting is out of range or no algorithm is given (a wrong ``mdp``, an
            unknown or repeated algorithm name, a programming error, raises ``TypeError`` or
            ``ValueError``).
    """
    algorithms = tuple(algorithms)
    if not algorithms:
        raise InputError("choose at least one algorithm to train")
    if len(set(algorithms)) < len(algorithms):
        raise ValueError(f"each algorithm may be trained once; got {', '.join(algorithms)}")
    for algorithm in algorithms:
        _check_run(
            mdp, algorithm, episodes, runs, epsilon, alpha, gamma, max_steps, max_total_steps
        )
    block = BLOCK
    n_states, n_actions, n_outcomes = mdp.next_state.shape
    # Lane l trains run l % R of algorithm l // R: every learner of every algorithm steps
    # together, each step a handful of numpy operations over the lanes.
    n_lanes = len(algorithms) * runs
    n_rows = n_lanes * n_states
    n_sa = n_rows * n_actions
    epsilons = epsilon_schedule(epsilon, episodes, decay=epsilon_decay)
    n_tables = 2 if "double_q" in algorithms else 1
    # Every lane's Q in one flat array laid out [table, l * S + s, action]: lane l's Q(s, a) in
    # table t sits at t * L*S*A + (l * S + s) * A + a. A lane is tracked by its row l * S + s, so
    # one row gather gives every lane's Q(s, ·) as [L, A] (only Double Q's lanes use table 2).
    # One scratch slot per lane follows, to absorb SARSA's writes when it has no update pending.
    # Terminal states are never acted in, so their Q stays 0 and r + γ max Q(s') is already r
    # there: targets need no terminal mask.
    q_flat = np.zeros(n_tables * n_sa + n_lanes)
    q_rows = q_flat[: n_tables * n_sa].reshape(n_tables * n_rows, n_actions)
    q1, q2 = q_rows[:n_rows], q_rows[n_rows:]
    tables = q_flat[: n_tables * n_sa].reshape(n_tables, n_lanes, n_states, n_actions)
    lane_id = np.arange(n_lanes)  # of the lanes still going (lanes that finish are dropped)
    lane_algorithm = lane_id // runs
    lane_run = lane_id % runs
    two_tables = np.repeat([a == "double_q" for a in algorithms], runs)
    scratch = n_tables * n_sa + lane_id
    base = lane_id * n_states
    base_sa = base * n_actions
    sample_start = _start_sampler(mdp)
    model = _outcomes(mdp, sample_start is None)
    next_of, reward_of, ends_of, after_of = model.next_state, model.reward, model.ends, model.after
    each_cum = model.cum
    one_outcome = each_cum is None and model.shared_cum is None
    n_local = n_states * n_actions  # outcome m of (s, a) sits at m * n_local + s * A + a
    # Constants as [L] arrays: numpy combines equal-length arrays faster than array and scalar,
    # and multiplying by the same double gives the same bits (and by 1, the same number).
    ones = np.ones(n_lanes)
    alpha_v, gamma_v, width = alpha * ones, gamma * ones, np.full(n_lanes, n_actions)
    lane_cols = lane_id * n_actions  # where lane l's values start in a flattened [L, A]
    eps, eps_v = epsilon, epsilon * ones
    # SARSA updates (s, a) once a' is chosen, at the top of the next step. After a terminal step
    # it may wait likewise (the row it reads for Q(s', a') is the terminal one, all zeros), unless
    # an episode can end in one step from a start state: then waiting would let the next
    # episode's first action see Q before the update, and the update happens at once.
    starts = np.flatnonzero(mdp.start > 0)
    defer_terminal = not (mdp.terminal[mdp.next_state[starts]] & (mdp.prob[starts] > 0)).any()
    # Run r's dice serve lane r of every algorithm: `dice_runs` are the runs some lane still
    # trains, and lane l reads row `dice_row[l]` of each block.
    dice = _Dice(seed, runs, n_actions, block=block)
    dice_runs = np.arange(runs)
    dice_row = lane_run

    # Each step logs where it acted and what happened (its outcome index, and whether the
    # episode was cut short), and the block's log becomes per-episode records at its end.
    log_o = np.zeros((block, n_lanes), dtype=np.int64)
    log_cut = np.zeros((block, n_lanes), dtype=bool)
    returns = np.full((n_lanes, episodes), np.nan)
    played = np.zeros(n_lanes, dtype=np.int64)
    episode_end = np.zeros((n_lanes, episodes), dtype=np.int64)  # step that ended each episode
    truncated = np.zeros((n_lanes, episodes), dtype=bool)
    visits = np.zeros(n_rows, dtype=np.int64)  # steps taken from each lane's states
    final_q = np.zeros((n_lanes, n_states, n_actions))
    never = np.iinfo(np.int64).max
    finished_at = np.full(n_lanes, never)  # step at which each lane ended its last episode
    last_end = np.full(n_lanes, -1)  # last step, before the current block, that ended an episode
    budget = never if max_total_steps is None else int(max_total_steps)
    longest = min(budget, episodes * max_steps)  # steps a run can take
    whole = bool((mdp.reward == np.round(mdp.reward)).all()
                 and np.abs(mdp.reward).max() * longest < 2**53)
    carry = np.zeros((2, n_lanes)) if whole else np.zeros(n_lanes)

    state = np.full(n_lanes, mdp.start_state)  # each lane's state; its row is base + state
    rows = base + state
    # Episodes each lane has completed (counting on once it has finished): before the current
    # block, and up to step `seen` of it (brought up to date only when a check needs it).
    episode_at_block = np.zeros(n_lanes, dtype=np.int64)
    episode = episode_at_block  # step by step, only while ε decays
    fresh = np.ones(n_lanes, dtype=bool)
    # SARSA's pending update (its lanes only): where it goes, the reward and the next row.
    sarsa = slice(0, 0)
    if "sarsa" in algorithms:
        g = algorithms.index("sarsa")
        sarsa = slice(g * runs, (g + 1) * runs)
    prev_j, prev_r, prev_next = scratch[sarsa], np.zeros(sarsa.stop - sarsa.start), rows[sarsa]
    n_finished = 0
    # No lane can finish, nor any episode reach max_steps, before these steps: check only then.
    # An episode takes at least as many steps as the shortest way from its state to a terminal
    # state (or max_steps, when cut short); a new one, as that from the nearest start.
    to_end = _steps_to_end(mdp, max_steps)
    least = int(to_end[starts].min())
    next_finish_check = min(episodes * least, budget) - 1
    next_cut_check = min(max_steps, budget) - 1

    def per_lane(x):  # [D, BLOCK] per run -> [BLOCK, L] per lane
        x = np.ascontiguousarray(x.T)
        return x if same_rows else x[:, dice_row]

    t = 0
    sl_sarsa = None  # SARSA's lanes, a slice of the lanes going; its pending update is theirs
    while n_finished < n_lanes:
        going = np.flatnonzero(finished_at == never)
        if t == 0 or going.size < len(lane_id):  # drop the lanes that have finished
            if sl_sarsa is not None:
                kept = going[(going >= sl_sarsa.start) & (going < sl_sarsa.stop)] - sl_sarsa.start
                prev_j, prev_r, prev_next = prev_j[kept], prev_r[kept], prev_next[kept]
            lane_id, lane_run = lane_id[going], lane_run[going]
            lane_algorithm = lane_algorithm[going]
            state, rows, fresh = state[going], rows[going], fresh[going]
            scratch, base, base_sa = scratch[going], base[going], base_sa[going]
            finished_at, last_end, carry = finished_at[going], last_end[going], carry[..., going]
            episode_at_block, episode = episode_at_block[going], episode[going]
            eps = eps[going] if np.ndim(eps) else eps
            alpha_v, gamma_v, width = alpha_v[going], gamma_v[going], width[going]
            eps_v = eps_v[going]
            lane_cols = np.arange(len(going)) * n_actions
            log_o, log_cut = log_o[:, going], log_cut[:, going]
            needed = np.unique(lane_run)
            if needed.size < dice_runs.size:
                dice.keep(np.searchsorted(dice_runs, needed))
                dice_runs = needed
            dice_row = np.searchsorted(dice_runs, lane_run)
            same_rows = bool((dice_row == np.arange(len(going))).all())  # lane l reads row l
            # Each algorithm's lanes, a slice of the lanes going.
            edges = np.searchsorted(lane_algorithm, np.arange(len(algorithms) + 1))
            slices = {a: slice(int(edges[g]), int(edges[g + 1]))
                      for g, a in enumerate(algorithms) if edges[g + 1] > edges[g]}
            sl_sarsa, sl_double = slices.get("sarsa"), slices.get("double_q")
            updating = [(a, sl, alpha_v[sl], gamma_v[sl]) for a, sl in slices.items()
                        if a != "sarsa"]
            if sl_sarsa is not None:
                alpha_s, gamma_s = alpha_v[sl_sarsa], gamma_v[sl_sarsa]
                scratch_s, dice_row_s = scratch[sl_sarsa], dice_row[sl_sarsa]
        lanes = len(lane_id)
        u = dice.block()  # [D, BLOCK, streams], D runs
        t_block = t
        log_cut[:] = False
        seen, last_seen, episode_seen = 0, last_end, episode_at_block
        # Each step's dice turned into what the step needs, for the whole block at once.
        explore = None if epsilon_decay else u[:, :, EXPLORE] < epsilon
        order = _greedy_order(u[:, :, TIE_KEYS:], explore, u[:, :, RANDOM_ACTION])  # [B, D, A]
        if not same_rows:
            order = order[:, dice_row]  # [B, L, A]
        candidates = order + lane_cols[:, None]  # positions in Q(s, ·).ravel()
        order = order.reshape(block, lanes * n_actions)
        if epsilon_decay:
            explore_u = per_lane(u[:, :, EXPLORE])  # [BLOCK, L]
            random_action = (per_lane(u[:, :, RANDOM_ACTION]) * n_actions).astype(np.int64)
        if model.cum is not None:
            transition_u = per_lane(u[:, :, TRANSITION])
        elif model.shared_cum is not None:  # which outcome, the same for every (s, a)
            outcome = sum(c <= u[:, :, TRANSITION] for c in model.shared_cum)
            outcome_offset = per_lane(outcome) * n_local
        if sl_double is not None:  # Q2 picks a* in s' and is updated where the coin says, else Q1
            coin = per_lane(u[:, :, TABLE_COIN])[:, sl_double] >= 0.5
            chooser_rows, update_offset, evaluate_rows = coin * n_rows, coin * n_sa, ~coin * n_rows
        if sample_start is not None:
            start_states = per_lane(sample_start(u[:, :, START]))
        for i in range(block):
            if sample_start is not None:
                np.copyto(state, start_states[i], where=fresh)
                rows = base + state
            q_s = q1.take(rows, axis=0)  # [L, A]
            if sl_double is not None:
                q_s[sl_double] += q2.take(rows[sl_double], axis=0)
            a = order[i][q_s.ravel()[candidates[i]].argmax(axis=1) + lane_cols]
            if epsilon_decay:
                a = np.where(explore_u[i] < eps, random_action[i], a)
            local = state * width + a  # (s, a) in a flattened [S, A]
            sa = base_sa + local  # where Q(s, a) of each lane sits in q_flat
            if sl_sarsa is not None:  # the previous step's update, now that a' is known
                y = sarsa_target(prev_r, q1.take(prev_next, axis=0), a[sl_sarsa], gamma=gamma_s)
                q_flat[prev_j] = td_update(q_flat[prev_j], y, alpha_s)

            if one_outcome:
                o = local
            elif each_cum is None:
                o = local + outcome_offset[i]
            else:
                o = local + (each_cum[local] <= transition_u[i, :, None]).sum(axis=1) * n_local
            r = reward_of[o]
            rows2 = base + next_of[o]
            cut = None
            if t >= next_cut_check:
                term = ends_of[o]
                ended = ends_of[log_o[seen:i]] | log_cut[seen:i]
                last_seen = _last_end(ended, t_block + seen, last_seen)
                seen, episode_seen = i, episode_seen + ended.sum(axis=0)
                cut = ((t - last_seen >= max_steps) | (t + 1 >= budget)) & ~term
                next_cut_check = min(max_steps + int(np.where(term | cut, t, last_seen).min()),
                                     budget - 1)
                if cut.any():
                    log_cut[i] = cut
                else:
                    cut = None

            # The updates, by the same step functions a single run would use, on arrays over
            # each algorithm's lanes.
            for algorithm, sl, alpha_g, gamma_g in updating:
                if algorithm == "q_learning":
                    y = q_learning_target(r[sl], q1.take(rows2[sl], axis=0), gamma=gamma_g)
                    j = sa[sl]
                elif algorithm == "expected_sarsa":
                    y = expected_sarsa_target(r[sl], q1.take(rows2[sl], axis=0), gamma=gamma_g,
                                              epsilon=eps_v[sl])
                    j = sa[sl]
                else:  # Double Q: the coin's table picks a* in s', the other one values it
                    s2 = rows2[sl]
                    y = double_q_target(r[sl], q_rows.take(s2 + chooser_rows[i], axis=0),
                                        q_rows.take(s2 + evaluate_rows[i], axis=0), gamma=gamma_g)
                    j = sa[sl] + update_offset[i]
                q_flat[j] = td_update(q_flat[j], y, alpha_g)
            if sl_sarsa is not None:
                sa_s, r_s, rows2_s = sa[sl_sarsa], r[sl_sarsa], rows2[sl_sarsa]
                prev_j, prev_r, prev_next = sa_s, r_s, rows2_s
                if not defer_terminal:
                    term = ends_of[o[sl_sarsa]]
                    at_end = np.where(term, sa_s, scratch_s)
                    q_flat[at_end] = td_update(q_flat[at_end], r_s, alpha)
                    prev_j = np.where(term, scratch_s, sa_s)
                cut_s = None if cut is None else cut[sl_sarsa]
                if cut_s is not None and cut_s.any():
                    # cut short: pick a' in s' now, with the next step's dice
                    un = (u[:, i + 1] if i + 1 < block else dice.peek())[dice_row_s]
                    eps_s = eps[sl_sarsa] if np.ndim(eps) else eps
                    q_next = q1.take(rows2_s, axis=0)
                    a_next = np.where(
                        un[:, EXPLORE] < eps_s,
                        (un[:, RANDOM_ACTION] * n_actions).astype(np.int64),
                        _greedy_actions(q_next.T, un[:, TIE_KEYS:].T),
                    )
                    y = sarsa_target(r_s, q_next, a_next, gamma=gamma)
                    at_cut = np.where(cut_s, sa_s, scratch_s)
                    q_flat[at_cut] = td_update(q_flat[at_cut], y, alpha)
                    prev_j = np.where(cut_s, scratch_s, prev_j)

            log_o[i] = o
            state = after_of[o]
            if cut is not None and sample_start is None:
                np.copyto(state, mdp.start_state, where=cut)
            if sample_start is not None:
                fresh = ends_of[o] if cut is None else ends_of[o] | cut
            else:
                rows = base + state
            if epsilon_decay:
                episode = episode + (ends_of[o] if cut is None else ends_of[o] | cut)
                eps = eps_v = epsilons[np.minimum(episode, episodes - 1)]
            if t >= next_finish_check:
                ended = ends_of[log_o[seen:i + 1]] | log_cut[seen:i + 1]
                last_seen = _last_end(ended, t_block + seen, last_seen)
                seen, episode_seen = i + 1, episode_seen + ended.sum(axis=0)
                newly = np.flatnonzero(((episode_seen >= episodes) | (t + 1 >= budget))
                                       & (finished_at == never))
                if newly.size:
                    if sl_sarsa is not None:  # a last update still waiting for a' (target r)
                        last = newly[(newly >= sl_sarsa.start) & (newly < sl_sarsa.stop)]
                        last = last - sl_sarsa.start
                        last_j = prev_j[last]
                        q_flat[last_j] = td_update(q_flat[last_j], prev_r[last], alpha)
                        prev_j = prev_j.copy()
                        prev_j[last] = scratch_s[last]
                    finished_at[newly] = t
                    done = lane_id[newly]
                    played[done] = np.minimum(episode_seen[newly], episodes)
                    n_finished += newly.size
                    final_q[done] = tables[0, done]
                    halves = done[two_tables[done]]  # Double Q: the mean of its two tables
                    if halves.size:
                        final_q[halves] = (tables[0, halves] + tables[1, halves]) / 2
                if n_finished < n_lanes:  # the soonest any other lane can end its last episode
                    going = finished_at == never
                    now = to_end[state[going]]
                    if sample_start is not None:  # a lane that just ended starts afresh
                        now = np.where(fresh[going], least, now)
                    soonest = np.minimum(t + now, next_cut_check) + (
                        episodes - 1 - episode_seen[going]) * least
                    next_finish_check = min(int(soonest.min()), budget - 1)
            t += 1
            if n_finished == n_lanes:
                break

        # Turn the block's step log into per-episode records and visit counts.
        n = t - t_block
        o_log = log_o[:n].T  # [L, n]
        ended = ends_of[o_log] | log_cut[:n].T
        ended_lane, ended_step = np.nonzero(ended)  # lane by lane
        per_lane_ends = np.bincount(ended_lane, minlength=lanes)
        first = np.cumsum(per_lane_ends) - per_lane_ends
        ep_returns, carry = _episode_returns(
            reward_of[o_log], ended, ended_lane, ended_step, first, per_lane_ends, carry,
            whole=whole,
        )
        k = episode_at_block[ended_lane] + np.arange(len(ended_lane)) - first[ended_lane]
        keep = k < episodes
        lane, k, step = lane_id[ended_lane[keep]], k[keep], ended_step[keep]
        returns[lane, k] = ep_returns[keep]
        episode_end[lane, k] = t_block + step
        truncated[lane, k] = log_cut[step, ended_lane[keep]]
        episode_at_block = episode_at_block + per_lane_ends
        some = per_lane_ends > 0
        last_end[some] = t_block + ended_step[(first + per_lane_ends - 1)[some]]
        row_log = base[:, None] + (o_log % n_local if n_outcomes > 1 else o_log) // n_actions
        if finished_at.min() < t - 1:  # steps after a lane's last episode are not counted
            row_log = row_log[t_block + np.arange(n) <= finished_at[:, None]]
        visits += np.bincount(row_log.ravel(), minlength=n_rows)
        if progress is not None:
            going = finished_at == never
            share = np.maximum(np.minimum(episode_at_block[going], episodes) / episodes,
                               t / longest)
            progress(float(min((n_finished + share.sum()) / n_lanes, 1.0)))

    lengths = np.diff(episode_end, axis=1, prepend=-1)
    lengths[np.arange(episodes) >= played[:, None]] = 0
    visits = visits.reshape(n_lanes, n_states)
    results = {}
    for g, algorithm in enumerate(algorithms):
        mine = slice(g * runs, (g + 1) * runs)
        results[algorithm] = _result(
            mdp, algorithm, returns[mine], lengths[mine], truncated[mine], final_q[mine],
            visits[mine], epsilons, played[mine], alpha=alpha, gamma=gamma, seed=seed,
            max_steps=max_steps, max_total_steps=max_total_steps,
        )
    return results


def _result(
    mdp, algorithm, returns, lengths, truncated, q, visits, epsilons, played, **settings
):
    paths = [greedy_path(mdp, q_run) for q_run in q]
    path_lengths = np.array([p.length if p.reaches_goal else -1 for p in paths], dtype=np.int64)
    for arr in (returns, lengths, truncated, q, visits, epsilons, path_lengths, played):
        arr.setflags(write=False)
    return ControlResult(
        algorithm=algorithm, returns=returns, lengths=lengths, truncated=truncated, q=q,
        visits=visits, epsilons=epsilons, path_lengths=path_lengths,
        path=greedy_path(mdp, q.mean(axis=0)), played=played, **settings,
    )
