"""The sweep engine: synchronous and in-place backups on the sparse outcome table.

In-place sweeps are vectorised exactly by grouping the states into *levels*: a state's level is
one more than the highest level among its lower-numbered successors, so the states of one level
never need each other's new values and can be backed up together.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rlviz.dp.traces import TIE_RTOL
from rlviz.mdp import TabularMDP, action_values, reaches_terminal

__all__: list[str] = []


# --------------------------------------------------------------------------- sweeps


# The reductions of ndarray.sum / ndarray.max without their Python wrappers (same results);
# an in-place sweep makes a few of these calls per level.
_sum = np.add.reduce
_max = np.maximum.reduce


@dataclass(frozen=True, eq=False)
class _Level:
    """The states of one in-place level and their outcome tables, outcomes and actions first."""

    states: np.ndarray  # [n] int
    source: np.ndarray  # [K, A, n] int index into [V_k | V_{k+1}] (length 2S) of each successor
    gamma_prob: np.ndarray  # [K, A, n]
    reward: np.ndarray  # [A, n] expected reward
    weights: np.ndarray | None  # [A, n] policy, or None for a max backup


def _levels(next_state: np.ndarray, prob: np.ndarray) -> np.ndarray:
    """``[S]`` in-place level of each state: 1 + the highest level of a lower-numbered successor."""
    n_states = next_state.shape[0]
    own = np.arange(n_states)[:, None, None]
    depends = (next_state < own) & (prob > 0)  # [S, A, K]
    level = np.zeros(n_states, dtype=np.int64)
    # Longest-path relaxation on a DAG (edges always point to lower indices): it settles after
    # at most (depth + 1) rounds.
    for _ in range(n_states + 1):
        reached = np.where(depends, level[next_state] + 1, 0).max(axis=(1, 2))
        if np.array_equal(reached, level):
            break
        level = reached
    return level


@dataclass(frozen=True, eq=False)
class _Backup:
    """Everything one sweep needs, prepared once per run."""

    next_state: np.ndarray  # [S, A, K]
    gamma_prob: np.ndarray  # [S, A, K] gamma * p(s'|s, a)
    reward: np.ndarray  # [S, A] r(s, a)
    weights: np.ndarray | None  # [S, A] pi(a|s), or None for max_a
    levels: tuple[_Level, ...] = ()

    @classmethod
    def build(
        cls, mdp: TabularMDP, gamma: float, weights: np.ndarray | None, in_place: bool
    ) -> _Backup:
        gamma_prob = gamma * mdp.prob
        reward = np.asarray(mdp.R)
        levels: tuple[_Level, ...] = ()
        if in_place:
            level = _levels(mdp.next_state, mdp.prob)
            order = np.argsort(level, kind="stable")
            bounds = np.flatnonzero(np.diff(level[order])) + 1
            groups = np.split(order, bounds)
            n_states = mdp.n_states
            def outcomes_first(table: np.ndarray) -> np.ndarray:  # [n, A, K] -> [K, A, n]
                return np.ascontiguousarray(table.transpose(2, 1, 0))

            levels = tuple(
                _Level(
                    states=idx,
                    # A successor numbered below the state was updated earlier in this sweep:
                    # read it from the second half of the buffer, which holds V_{k+1}.
                    source=outcomes_first(mdp.next_state[idx]
                                          + n_states * (mdp.next_state[idx] < idx[:, None, None])),
                    gamma_prob=outcomes_first(gamma_prob[idx]),
                    reward=np.ascontiguousarray(reward[idx].T),
                    weights=None if weights is None else np.ascontiguousarray(weights[idx].T),
                )
                for idx in groups
            )
        return cls(mdp.next_state, gamma_prob, reward, weights, levels)

    def q(self, values: np.ndarray) -> np.ndarray:
        """``Q(s, a) = r(s, a) + gamma * sum_k p_k V(s'_k)`` for ``values [..., S]``."""
        return self.reward + _sum(self.gamma_prob * values[..., self.next_state], axis=-1)

    def synchronous(self, values: np.ndarray) -> np.ndarray:
        q = self.q(values)
        if self.weights is None:
            return _max(q, axis=1)
        return _sum(self.weights * q, axis=1)

    def in_place(self, values: np.ndarray) -> np.ndarray:
        n_states = len(values)
        buffer = np.concatenate([values, values])  # [V_k | V_{k+1}, filled level by level]
        for lv in self.levels:
            # Reductions over the first axis add whole rows: faster than over a short last
            # axis, and the same numbers (both add x[0] + x[1] + ... in order).
            q = lv.reward + _sum(lv.gamma_prob * buffer.take(lv.source), axis=0)  # [A, n]
            buffer[n_states + lv.states] = (
                _max(q, axis=0) if lv.weights is None else _sum(lv.weights * q, axis=0)
            )
        return buffer[n_states:]


def _iterate(
    backup: _Backup,
    start: np.ndarray,
    *,
    theta: float,
    max_sweeps: int,
    in_place: bool,
    record: bool = True,
) -> tuple[list[np.ndarray], list[float], bool]:
    """Sweep until the largest change is below ``theta`` or ``max_sweeps`` sweeps are done.

    Returns:
        ``(values, deltas, converged)``: the values after each sweep (just the last one when
        ``record`` is False), the largest change of each sweep, and whether it converged.
    """
    sweep = backup.in_place if in_place else backup.synchronous
    v = start
    history: list[np.ndarray] = []
    deltas: list[float] = []
    for _ in range(max_sweeps):
        new = sweep(v)
        delta = float(np.max(np.abs(new - v)))
        deltas.append(delta)
        v = new
        if record:
            history.append(v)
        if delta < theta:
            return (history if record else [v]), deltas, True
    return (history if record else [v]), deltas, False


def _greedy_masks(values: np.ndarray, backup: _Backup) -> np.ndarray:
    """``[K+1, S, A]`` greedy action sets of every row of ``values [K+1, S]``, in chunks."""
    n_rows, n_states = values.shape
    n_actions, n_outcomes = backup.next_state.shape[1:]
    chunk = max(1, 2_000_000 // max(n_states * n_actions * n_outcomes, 1))
    out = np.empty((n_rows, n_states, n_actions), dtype=bool)
    for lo in range(0, n_rows, chunk):
        q = backup.q(values[lo : lo + chunk])  # [c, S, A]
        best = q.max(axis=-1, keepdims=True)
        out[lo : lo + chunk] = q >= best - TIE_RTOL * (1.0 + np.abs(best))
    return out


def _last_change(greedy: np.ndarray) -> int:
    changed = np.flatnonzero((greedy[1:] != greedy[:-1]).any(axis=(1, 2)))
    return int(changed[-1] + 1) if changed.size else 0


def _message(converged: bool, deltas: Sequence[float], gamma: float, theta: float,
             max_sweeps: int, what: str, mdp: TabularMDP | None = None,
             policy: np.ndarray | None = None) -> str:
    """One sentence on how a run ended, and, when it stopped at the limit, the true reason.

    With ``gamma = 1`` the reason is one of three: some state can never reach a terminal state
    (under ``policy``, or under any action when it is None); every state can, but the values
    still grow, because some loop collects reward forever; or the values are settling, only too
    slowly for the budget.
    """
    k = len(deltas)
    last = deltas[-1]
    if converged:
        return (
            f"{what} converged after {k} sweep{'s' if k != 1 else ''}: the last change, "
            f"{last:.3g}, is below θ = {theta:.3g}."
        )
    text = (
        f"{what} stopped at the limit of {max_sweeps} sweeps without converging: the last "
        f"sweep still changed a value by {last:.3g} (θ = {theta:.3g})."
    )
    if gamma < 1.0:
        more = (math.ceil(math.log(theta / last) / math.log(gamma)) if gamma > 0 and last > 0
                else 1)
        return text + f" Each sweep shrinks the error by γ = {gamma:g} at least; about {more} " \
            "more sweeps would do, so raise the sweep limit or θ."
    stuck = None if mdp is None else ~reaches_terminal(mdp, policy)
    if stuck is not None and stuck.any():
        where = ("this policy" if policy is not None else "any sequence of moves")
        return text + (
            f" With γ = 1 the values settle only if every state reaches a terminal state; "
            f"under {where}, {int(stuck.sum())} state(s) never do, so their values keep "
            "drifting. Lower γ, or add a goal they can reach."
        )
    window = deltas[-min(k, 50):]
    rate = (window[-1] / window[0]) ** (1 / (len(window) - 1)) if (
        len(window) > 1 and window[0] > 0 and window[-1] > 0) else 1.0
    if mdp is not None and rate < 1.0:
        more = math.ceil(math.log(theta / last) / math.log(rate))
        return text + (
            " Every state does reach a terminal state, so the values are settling, only "
            f"slowly: each sweep now shrinks the change by a factor of about {rate:.6g}, so "
            f"about {more:,} more sweeps would do. A larger θ, a smaller γ or a higher sweep "
            "limit ends it sooner."
        )
    if mdp is not None:
        return text + (
            " Every state can reach a terminal state, yet the values keep growing: with γ = 1 "
            "a loop that collects reward can be followed forever. Lower γ, or make such "
            "loops cost something."
        )
    return text


def _trace_fields(
    mdp: TabularMDP,
    backup: _Backup,
    history: list[np.ndarray],
    deltas: list[float],
    *,
    gamma: float,
) -> dict:
    values = np.stack(history)
    greedy = _greedy_masks(values, backup)
    return dict(
        values=values,
        greedy=greedy,
        deltas=np.asarray(deltas, dtype=np.float64),
        q=action_values(mdp, values[-1], gamma),
        policy_last_changed=_last_change(greedy),
    )


def _freeze(*arrays: np.ndarray | None) -> None:
    for a in arrays:
        if a is not None:
            a.setflags(write=False)
