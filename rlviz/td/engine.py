"""The vectorised engine: every run's dice, the greedy order, and ``run_control``.

Each run draws one row of uniforms per step of its own life, in blocks of ``BLOCK`` rows, so
the plain loop of ``rlviz.td.loop`` can ask for the same numbers and must match it draw for
draw.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass

import numpy as np

from rlviz.mdp import TabularMDP
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
]


BLOCK = 256
"""Rows of uniforms each run draws from its generator at a time, and steps ``run_control``
prepares at once (a block's dice and tables then stay in cache)."""

# Columns of a run's row of uniforms: which decision each one drives. The last ``A`` columns
# are tie-break keys, one per action.
EXPLORE, RANDOM_ACTION, TRANSITION, TABLE_COIN, START, TIE_KEYS = range(6)


# --------------------------------------------------------------------------- dice
def _n_streams(n_actions: int) -> int:
    return TIE_KEYS + n_actions


def _generators(seed: int, runs: int) -> list[np.random.Generator]:
    """One generator per run; run r's stream does not depend on how many runs there are."""
    return [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(runs)]


class _Dice:
    """Blocks of uniforms ``[runs, BLOCK, streams]``: ``[r, t]`` holds run r's dice of step t.

    Each run's generator fills its own rows in place (the numbers of
    ``gen.random((BLOCK, streams))``, as ``_RunDice`` draws them). ``peek`` gives the first step
    of the next block early, ``[runs, streams]`` (SARSA needs the next step's dice when an
    episode is cut short at the last step of a block).
    """

    def __init__(self, seed: int, runs: int, n_actions: int):
        self._gens = _generators(seed, runs)
        self._shape = (runs, BLOCK, _n_streams(n_actions))
        self._next: np.ndarray | None = None

    def _draw(self) -> np.ndarray:
        block = np.empty(self._shape)
        for gen, rows in zip(self._gens, block, strict=True):
            gen.random(out=rows)
        return block

    def block(self) -> np.ndarray:
        block, self._next = (self._next, None) if self._next is not None else (self._draw(), None)
        return block

    def peek(self) -> np.ndarray:
        if self._next is None:
            self._next = self._draw()
        return self._next[:, 0]

    def keep(self, runs: np.ndarray) -> None:
        """Go on drawing for these runs only (indices into the current ones)."""
        self._gens = [self._gens[r] for r in runs]
        self._shape = (len(runs), *self._shape[1:])
        if self._next is not None:
            self._next = self._next[runs]


class _RunDice:
    """The same rows as ``_Dice`` for one run (the loop reference): ``row(t)`` is ``[streams]``."""

    def __init__(self, gen: np.random.Generator, n_actions: int):
        self._gen = gen
        self._shape = (BLOCK, _n_streams(n_actions))
        self._blocks: list[np.ndarray] = []

    def row(self, t: int) -> np.ndarray:
        while t >= BLOCK * len(self._blocks):
            self._blocks.append(self._gen.random(self._shape))
        return self._blocks[t // BLOCK][t % BLOCK]


# --------------------------------------------------------------------------- training
def _start_sampler(mdp: TabularMDP):
    """Start states from uniforms, or None when the start is a single state."""
    if mdp.start.max() == 1.0:
        return None
    cum = np.cumsum(mdp.start)
    cum[-1] = 1.0
    return lambda u: np.minimum(np.searchsorted(cum, u, side="right"), mdp.n_states - 1)


def _greedy_actions(q_s: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Greedy actions of ``q_s [A, R]``; among tied best actions, the one with the largest key.

    Keys are uniforms in [0, 1), moved up to the next double so that a tied action's key is
    never 0 (the same order as the keys, so every tied action is equally likely to win).
    """
    return ((q_s == np.maximum.reduce(q_s, axis=0)) * np.nextafter(keys, 2.0)).argmax(axis=0)


@functools.cache
def _order_table(n_actions: int) -> tuple[tuple[tuple[int, int], ...], np.ndarray]:
    """Every order of ``n_actions`` actions, looked up by which action of each pair goes first.

    Returns the pairs ``(a, b)``, ``a < b``, and a table whose row ``code`` is the order in which
    bit ``k`` of ``code`` is set when the second action of pair ``k`` goes before the first;
    rows ``2**P + a`` (P pairs) hold action ``a`` ``n_actions`` times.
    """
    pairs = tuple((a, b) for a in range(n_actions) for b in range(a + 1, n_actions))
    table = np.zeros((2 ** len(pairs) + n_actions, n_actions), dtype=np.int64)
    for order in itertools.permutations(range(n_actions)):
        place = {a: k for k, a in enumerate(order)}
        table[sum(1 << k for k, (a, b) in enumerate(pairs) if place[b] < place[a])] = order
    table[2 ** len(pairs):] = np.arange(n_actions)[:, None]
    table.setflags(write=False)
    return pairs, table


def _greedy_order(keys: np.ndarray, explore: np.ndarray | None,
                  random_u: np.ndarray) -> np.ndarray:
    """The order in which each step's greedy choice prefers the actions: ``[B, R, A]``.

    Among tied best actions the greedy choice is the one with the largest tie-break key (the
    first action when keys are equal): the first of the tied actions in this order, which
    ``argmax`` of Q read in this order (it returns the first maximum) finds in one call. An
    exploring step's order is its random action ``A`` times, so it is chosen whatever Q says.
    The order is a stable ``argsort`` of ``-keys``; for up to 5 actions it is looked up from
    which action of each pair has the larger key, which is faster.

    Args:
        keys: ``[R, B, A]`` tie-break keys of each run's steps.
        explore: ``[R, B]`` whether each step explores, or None (nothing folded in).
        random_u: ``[R, B]`` the uniforms that pick each step's random action.
    """
    n_actions = keys.shape[2]
    if n_actions > 5:
        order = np.argsort(-keys, axis=2, kind="stable")
        if explore is not None:
            order[explore] = (random_u[explore] * n_actions).astype(np.int64)[:, None]
        return np.ascontiguousarray(order.transpose(1, 0, 2))
    pairs, table = _order_table(n_actions)
    bits = np.uint8 if len(table) <= 256 else np.uint16
    code = np.zeros(keys.shape[:2], dtype=bits)
    for k, (a, b) in enumerate(pairs):
        code |= (keys[..., a] < keys[..., b]).view(np.uint8).astype(bits, copy=False) << k
    if explore is not None:  # code += (exploring code - code) where exploring, in whole numbers
        exploring = (random_u * n_actions).astype(bits) + bits(2 ** len(pairs))
        code += (exploring - code) * explore.view(np.uint8).astype(bits, copy=False)
    return table.take(np.ascontiguousarray(code.T), axis=0)


def _last_end(ended: np.ndarray, t_first: int, before: np.ndarray) -> np.ndarray:
    """Per run, the last step of a log ``ended [n, R]`` (from ``t_first``) that ended an episode.

    Runs with no such step keep ``before``.
    """
    if len(ended) == 0:
        return before
    last = t_first + len(ended) - 1 - ended[::-1].argmax(axis=0)
    return np.where(ended.any(axis=0), last, before)


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
    """The model copied once per run and indexed like Q, so a step is a few table look-ups.

    Outcome ``m`` of action ``a`` in row ``r * S + s`` (run r, state s) sits at
    ``o = m * R * S * A + (r * S + s) * A + a``; with a single outcome ``o`` is Q's own index.
    """

    next_row: np.ndarray  # [K * R*S*A] row of the next state
    reward: np.ndarray  # [K * R*S*A]
    ends: np.ndarray  # [K * R*S*A] bool, the next state is terminal
    ends_count: np.ndarray  # [K * R*S*A] int64, 1 where the next state is terminal
    after: np.ndarray  # [K * R*S*A] the row at the next step: the start after a terminal state
    # (when the start is a single state; else the next state, and the start is drawn later)
    shared_cum: np.ndarray | None  # [K - 1] cumulative probabilities every live (s, a) shares
    cum: np.ndarray | None  # [R*S*A, K - 1] each (s, a)'s, when they differ; both None: one outcome


def _outcomes(mdp: TabularMDP, runs: int, start_row: np.ndarray | None) -> _Outcomes:
    """Build the per-run outcome tables (``start_row [R]``: the fixed start's row, or None)."""
    n_states, n_actions, n_outcomes = mdp.next_state.shape
    base = np.arange(runs) * n_states
    shape = (n_outcomes, runs, n_states, n_actions)
    next_row = (mdp.next_state.transpose(2, 0, 1)[:, None] + base[:, None, None]).ravel()
    reward = np.broadcast_to(mdp.reward.transpose(2, 0, 1)[:, None], shape).ravel()
    ends = np.tile(mdp.terminal, runs)[next_row]
    after = next_row
    if start_row is not None:
        after = np.where(ends, np.broadcast_to(start_row[:, None, None], shape).ravel(), next_row)
    # Outcome k is the number of cumulative probabilities <= u. The last one is exactly 1 and u
    # is below 1, so only the first K - 1 can count. Terminal states are never acted in.
    shared_cum = cum = None
    if n_outcomes > 1:
        live = mdp.cumulative_prob[~mdp.terminal][..., :-1].reshape(-1, n_outcomes - 1)
        if (live != live[0]).any():
            cum = np.broadcast_to(
                mdp.cumulative_prob[None, ..., :-1], (runs, n_states, n_actions, n_outcomes - 1)
            ).reshape(-1, n_outcomes - 1)
        elif live[0, 0] < 1.0:  # else every live (s, a) has a single outcome: k is always 0
            shared_cum = live[0]
    return _Outcomes(
        next_row=next_row, reward=reward, ends=ends, ends_count=ends.astype(np.int64),
        after=after, shared_cum=shared_cum, cum=cum,
    )


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
    r"""Train ``runs`` independent ε-greedy TD-control learners together, vectorised over runs.

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

    Args:
        mdp: The environment (its ``start`` distribution gives the first state of each episode).
        algorithm: One of ``ALGORITHMS``.
        episodes: Episodes per run, N ≥ 1.
        runs: Independent runs, R ≥ 1.
        epsilon: Exploration rate in [0, 1] (the first episode's, with ``epsilon_decay``).
        alpha: Step size in (0, 1].
        gamma: Discount factor in [0, 1].
        seed: Seed of every random draw.
        max_steps: Steps after which an episode is cut short.
        epsilon_decay: Decay ε linearly to 0 over the episodes (``epsilon_schedule``).
        max_total_steps: Steps each run may take in all, or None for no limit.

    Returns:
        The per-episode returns and lengths, final Q, visit counts and greedy paths.

    Raises:
        InputError: if a setting is out of range (a wrong ``mdp`` or algorithm name, a
            programming error, raises ``TypeError`` or ``ValueError``).
    """
    _check_run(
        mdp, algorithm, episodes, runs, epsilon, alpha, gamma, max_steps, max_total_steps
    )
    n_states, n_actions, n_outcomes = mdp.next_state.shape
    n_rows = runs * n_states
    n_sa = n_rows * n_actions
    epsilons = epsilon_schedule(epsilon, episodes, decay=epsilon_decay)
    double, sarsa = algorithm == "double_q", algorithm == "sarsa"
    q_learning, expected = algorithm == "q_learning", algorithm == "expected_sarsa"
    n_tables = 2 if double else 1
    # Every run's Q in one flat array laid out [table, run * S + s, action]: run r's Q(s, a) in
    # table t sits at t * R*S*A + (r * S + s) * A + a. A run is tracked by its row r * S + s, so
    # one row gather gives every run's Q(s, ·) as [R, A]. One scratch slot per run follows, to
    # absorb SARSA's writes when it has no update pending. Terminal states are never acted in,
    # so their Q stays 0 and r + γ max Q(s') is already r there: targets need no terminal mask.
    q_flat = np.zeros(n_tables * n_sa + runs)
    q_rows = q_flat[: n_tables * n_sa].reshape(n_tables * n_rows, n_actions)
    q1, q2 = q_rows[:n_rows], q_rows[n_rows:]
    tables = q_flat[: n_tables * n_sa].reshape(n_tables, runs, n_states, n_actions)
    scratch = n_tables * n_sa + np.arange(runs)
    base = np.arange(runs) * n_states
    sample_start = _start_sampler(mdp)
    start_row = base + mdp.start_state
    model = _outcomes(mdp, runs, start_row if sample_start is None else None)
    next_row, reward_of, ends_of, after_of = model.next_row, model.reward, model.ends, model.after
    ends_count, each_cum = model.ends_count, model.cum
    one_outcome = each_cum is None and model.shared_cum is None
    # Constants as [R] arrays: numpy combines equal-length arrays faster than array and scalar,
    # and multiplying by the same double gives the same bits (and by 1, the same number).
    ones = np.ones(runs)
    alpha_v, gamma_v, width = alpha * ones, gamma * ones, np.full(runs, n_actions)
    run_cols = np.arange(runs) * n_actions  # where run r's values start in a flattened [R, A]
    eps, eps_v = epsilon, epsilon * ones
    # SARSA updates (s, a) once a' is chosen, at the top of the next step. After a terminal step
    # it may wait likewise (the row it reads for Q(s', a') is the terminal one, all zeros), unless
    # an episode can end in one step from a start state: then waiting would let the next
    # episode's first action see Q before the update, and the update happens at once.
    starts = np.flatnonzero(mdp.start > 0)
    defer_terminal = not (mdp.terminal[mdp.next_state[starts]] & (mdp.prob[starts] > 0)).any()
    dice = _Dice(seed, runs, n_actions)

    # Each step logs where it acted and what happened (its outcome index, and whether the
    # episode was cut short), and the block's log becomes per-episode records at its end.
    log_o = np.zeros((BLOCK, runs), dtype=np.int64)
    log_cut = np.zeros((BLOCK, runs), dtype=bool)
    returns = np.full((runs, episodes), np.nan)
    played = np.zeros(runs, dtype=np.int64)
    episode_end = np.zeros((runs, episodes), dtype=np.int64)  # step at which each episode ended
    truncated = np.zeros((runs, episodes), dtype=bool)
    visits = np.zeros(n_rows, dtype=np.int64)  # steps taken from each run's states
    final_q = np.zeros((runs, n_states, n_actions))
    never = np.iinfo(np.int64).max
    # Per-run state below is held per lane: lane l trains run lane_run[l]. A run that has
    # finished only idles until the end of the block, and is then dropped.
    lane_run = np.arange(runs)
    finished_at = np.full(runs, never)  # step at which each lane ended its last episode
    last_end = np.full(runs, -1)  # last step, before the current block, that ended an episode
    budget = never if max_total_steps is None else int(max_total_steps)
    longest = min(budget, episodes * max_steps)  # steps a run can take
    whole = bool((mdp.reward == np.round(mdp.reward)).all()
                 and np.abs(mdp.reward).max() * longest < 2**53)
    carry = np.zeros((2, runs)) if whole else np.zeros(runs)

    rows = start_row.copy()
    # Episodes each run has completed (counting on once it has finished): before the current
    # block, and up to step `seen` of it (brought up to date only when a check needs it).
    episode_at_block = np.zeros(runs, dtype=np.int64)
    episode = episode_at_block  # step by step, only while ε decays
    fresh = np.ones(runs, dtype=bool)
    prev_j, prev_r, prev_next = scratch, np.zeros(runs), rows  # SARSA's pending update
    n_finished = 0
    # No run can finish, nor any episode reach max_steps, before these steps: check only then.
    # An episode takes at least as many steps as the shortest way from its state to a terminal
    # state (or max_steps, when cut short); a new one, as that from the nearest start.
    to_end = _steps_to_end(mdp, max_steps)
    least = int(to_end[starts].min())
    to_end = np.tile(to_end, runs)
    next_finish_check = min(episodes * least, budget) - 1
    next_cut_check = min(max_steps, budget) - 1

    t = 0
    while n_finished < runs:
        going = np.flatnonzero(finished_at == never)
        if going.size < len(lane_run):  # drop the lanes whose runs have finished
            dice.keep(going)
            lane_run, rows, fresh = lane_run[going], rows[going], fresh[going]
            scratch, start_row, base = scratch[going], start_row[going], base[going]
            finished_at, last_end, carry = finished_at[going], last_end[going], carry[..., going]
            episode_at_block, episode = episode_at_block[going], episode[going]
            prev_j, prev_r, prev_next = prev_j[going], prev_r[going], prev_next[going]
            eps = eps[going] if np.ndim(eps) else eps
            alpha_v, gamma_v, width = alpha_v[going], gamma_v[going], width[going]
            eps_v = eps_v[going]
            run_cols = np.arange(len(going)) * n_actions
            log_o, log_cut = log_o[:, going], log_cut[:, going]
        lanes = len(lane_run)
        u = dice.block()  # [L, BLOCK, streams]
        t_block = t
        log_cut[:] = False
        seen, last_seen, episode_seen = 0, last_end, episode_at_block
        # Each step's dice turned into what the step needs, for the whole block at once.
        explore = None if epsilon_decay else u[:, :, EXPLORE] < epsilon
        order = _greedy_order(u[:, :, TIE_KEYS:], explore, u[:, :, RANDOM_ACTION])  # [B, R, A]
        candidates = order.reshape(BLOCK, lanes * n_actions) + np.repeat(run_cols, n_actions)
        candidates = candidates.reshape(order.shape)  # positions in Q(s, ·).ravel()
        order = order.reshape(BLOCK, lanes * n_actions)
        if epsilon_decay:
            explore_u = np.ascontiguousarray(u[:, :, EXPLORE].T)  # [BLOCK, R]
            random_action = (u[:, :, RANDOM_ACTION].T * n_actions).astype(np.int64, order="C")
        if model.cum is not None:
            transition_u = np.ascontiguousarray(u[:, :, TRANSITION].T)
        elif model.shared_cum is not None:  # which outcome, the same for every (s, a)
            outcome = sum(c <= u[:, :, TRANSITION] for c in model.shared_cum)
            outcome_offset = np.ascontiguousarray(outcome.T) * n_sa
        if double:  # Q2 picks a* in s' and is updated where the coin says, else Q1
            coin = np.ascontiguousarray(u[:, :, TABLE_COIN].T) >= 0.5
            chooser_rows, update_offset, evaluate_rows = coin * n_rows, coin * n_sa, ~coin * n_rows
        if sample_start is not None:
            start_rows = base + sample_start(np.ascontiguousarray(u[:, :, START].T))
        for i in range(BLOCK):
            if sample_start is not None:
                np.copyto(rows, start_rows[i], where=fresh)
            q_s = q1.take(rows, axis=0)  # [R, A]
            if double:
                q_s += q2.take(rows, axis=0)
            a = order[i][q_s.ravel()[candidates[i]].argmax(axis=1) + run_cols]
            if epsilon_decay:
                a = np.where(explore_u[i] < eps, random_action[i], a)
            sa = rows * width + a  # where Q(s, a) of each run sits in q_flat
            if sarsa:  # the previous step's update, now that a' is known
                y = sarsa_target(prev_r, q1.take(prev_next, axis=0), a, gamma=gamma_v)
                q_flat[prev_j] = td_update(q_flat[prev_j], y, alpha_v)

            if one_outcome:
                o = sa
            elif each_cum is None:
                o = sa + outcome_offset[i]
            else:
                o = sa + (each_cum[sa] <= transition_u[i, :, None]).sum(axis=1) * n_sa
            r = reward_of[o]
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

            # The update, by the same step functions a single run would use, on [R] arrays.
            if q_learning:
                y = q_learning_target(r, q1.take(next_row[o], axis=0), gamma=gamma_v)
                q_flat[sa] = td_update(q_flat[sa], y, alpha_v)
            elif expected:
                y = expected_sarsa_target(r, q1.take(next_row[o], axis=0), gamma=gamma_v,
                                          epsilon=eps_v)
                q_flat[sa] = td_update(q_flat[sa], y, alpha_v)
            elif double:  # the coin's table picks a* in s', the other one values it
                rows2 = next_row[o]
                y = double_q_target(r, q_rows.take(rows2 + chooser_rows[i], axis=0),
                                    q_rows.take(rows2 + evaluate_rows[i], axis=0), gamma=gamma_v)
                j = sa + update_offset[i]
                q_flat[j] = td_update(q_flat[j], y, alpha_v)
            else:
                rows2 = next_row[o]
                prev_j, prev_r, prev_next = sa, r, rows2
                if not defer_terminal:
                    term = ends_of[o]
                    at_end = np.where(term, sa, scratch)
                    q_flat[at_end] = td_update(q_flat[at_end], r, alpha)
                    prev_j = np.where(term, scratch, sa)
                if cut is not None:  # cut short: pick a' in s' now, with the next step's dice
                    un = u[:, i + 1] if i + 1 < BLOCK else dice.peek()  # [R, streams]
                    a_next = np.where(
                        un[:, EXPLORE] < eps,
                        (un[:, RANDOM_ACTION] * n_actions).astype(np.int64),
                        _greedy_actions(q1.take(rows2, axis=0).T, un[:, TIE_KEYS:].T),
                    )
                    y = sarsa_target(r, q1.take(rows2, axis=0), a_next, gamma=gamma)
                    at_cut = np.where(cut, sa, scratch)
                    q_flat[at_cut] = td_update(q_flat[at_cut], y, alpha)
                    prev_j = np.where(cut, scratch, prev_j)

            log_o[i] = o
            rows = after_of[o]
            if cut is not None and sample_start is None:
                np.copyto(rows, start_row, where=cut)
            if sample_start is not None:
                fresh = ends_of[o] if cut is None else ends_of[o] | cut
            if epsilon_decay:
                episode = episode + ends_count[o] if cut is None else episode + (ends_of[o] | cut)
                eps = eps_v = epsilons[np.minimum(episode, episodes - 1)]
            if t >= next_finish_check:
                ended = ends_of[log_o[seen:i + 1]] | log_cut[seen:i + 1]
                last_seen = _last_end(ended, t_block + seen, last_seen)
                seen, episode_seen = i + 1, episode_seen + ended.sum(axis=0)
                newly = np.flatnonzero(((episode_seen >= episodes) | (t + 1 >= budget))
                                       & (finished_at == never))
                if newly.size:
                    if sarsa:  # a last update still waiting for a' is made now (target r)
                        last_j = prev_j[newly]
                        q_flat[last_j] = td_update(q_flat[last_j], prev_r[newly], alpha)
                        prev_j = prev_j.copy()
                        prev_j[newly] = scratch[newly]
                    finished_at[newly] = t
                    done_runs = lane_run[newly]
                    played[done_runs] = np.minimum(episode_seen[newly], episodes)
                    n_finished += newly.size
                    final_q[done_runs] = (
                        (tables[0, done_runs] + tables[1, done_runs]) / 2 if double
                        else tables[0, done_runs]
                    )
                if n_finished < runs:  # the soonest any other run can end its last episode
                    going = finished_at == never
                    now = to_end[rows[going]]
                    if sample_start is not None:  # a run that just ended starts afresh
                        now = np.where(fresh[going], least, now)
                    soonest = np.minimum(t + now, next_cut_check) + (
                        episodes - 1 - episode_seen[going]) * least
                    next_finish_check = min(int(soonest.min()), budget - 1)
            t += 1
            if n_finished == runs:
                break

        # Turn the block's step log into per-episode records and visit counts.
        n = t - t_block
        o_log = log_o[:n].T  # [L, n]
        ended = ends_of[o_log] | log_cut[:n].T
        ended_lane, ended_step = np.nonzero(ended)  # lane by lane
        per_lane = np.bincount(ended_lane, minlength=lanes)
        first = np.cumsum(per_lane) - per_lane
        ep_returns, carry = _episode_returns(
            reward_of[o_log], ended, ended_lane, ended_step, first, per_lane, carry, whole=whole
        )
        k = episode_at_block[ended_lane] + np.arange(len(ended_lane)) - first[ended_lane]
        keep = k < episodes
        run, k, step = lane_run[ended_lane[keep]], k[keep], ended_step[keep]
        returns[run, k] = ep_returns[keep]
        episode_end[run, k] = t_block + step
        truncated[run, k] = log_cut[step, ended_lane[keep]]
        episode_at_block = episode_at_block + per_lane
        some = per_lane > 0
        last_end[some] = t_block + ended_step[(first + per_lane - 1)[some]]
        row_log = (o_log % n_sa if n_outcomes > 1 else o_log) // n_actions
        if finished_at.min() < t - 1:  # steps after a lane's last episode are not counted
            row_log = row_log[t_block + np.arange(n) <= finished_at[:, None]]
        visits += np.bincount(row_log.ravel(), minlength=n_rows)

    lengths = np.diff(episode_end, axis=1, prepend=-1)
    lengths[np.arange(episodes) >= played[:, None]] = 0
    return _result(
        mdp, algorithm, returns, lengths, truncated, final_q, visits.reshape(runs, n_states),
        epsilons, played, alpha=alpha, gamma=gamma, seed=seed, max_steps=max_steps,
        max_total_steps=max_total_steps,
    )


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
