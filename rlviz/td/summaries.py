"""Summaries of a control run: the greedy path, the learning curve, and the optimal values."""

from __future__ import annotations

import numpy as np

from rlviz.errors import InputError
from rlviz.mdp import TabularMDP
from rlviz.td.results import Curve, GreedyPath, _check_settings

__all__ = [
    "greedy_path",
    "greedy_return",
    "learning_curve",
    "optimal_values",
]


# --------------------------------------------------------------------------- summaries
def greedy_path(mdp: TabularMDP, q: np.ndarray, *, max_len: int | None = None) -> GreedyPath:
    """Follow the greedy policy of ``q`` from the start, taking each action's likeliest outcome.

    Ties between actions go to the first one. The walk stops at a terminal state, on returning
    to a state already on the path (a loop it would repeat forever), or after ``max_len`` moves
    (default: the number of states, which a loop-free walk cannot exceed).

    Args:
        mdp: The environment.
        q: ``[S, A]`` action values.
        max_len: Largest number of moves to follow.

    Returns:
        The path, whether it reaches a goal, and whether it loops.
    """
    q = np.asarray(q, dtype=np.float64)
    if q.shape != (mdp.n_states, mdp.n_actions):
        raise ValueError(f"q must have shape [{mdp.n_states}, {mdp.n_actions}]; got {q.shape}")
    max_len = mdp.n_states if max_len is None else int(max_len)
    likeliest = np.take_along_axis(
        mdp.next_state, mdp.prob.argmax(axis=2)[..., None], axis=2
    )[..., 0]
    greedy = q.argmax(axis=1)
    s = mdp.start_state
    states, actions, seen = [s], [], {s}
    loops = False
    while not mdp.terminal[s] and len(actions) < max_len:
        a = int(greedy[s])
        s = int(likeliest[s, a])
        states.append(s)
        actions.append(a)
        if s in seen:
            loops = True
            break
        seen.add(s)
    goal = bool(mdp.terminal[s]) and (mdp.grid is None or mdp.grid.char(*mdp.grid.cells[s]) != "H")
    return GreedyPath(
        states=np.array(states, dtype=np.int64),
        actions=np.array(actions, dtype=np.int64),
        reaches_goal=goal,
        loops=loops,
    )


def learning_curve(values: np.ndarray, *, window: int = 1) -> Curve:
    r"""Smooth each run's per-episode values, then average over runs with a 95% band.

    Each run is smoothed by a trailing moving average over ``window`` episodes (fewer at the
    start). The band is the t-interval of the mean across the runs,
    :math:`\bar x \pm t_{0.975, n-1}\, s / \sqrt{n}`; with one run it has zero width. NaN marks
    an episode a run did not play: it is left out, and an episode no run played stays NaN.

    Args:
        values: ``[R, N]`` a value per run and episode (e.g. returns).
        window: Episodes in the moving average, ≥ 1.

    Returns:
        Mean, low and high, each ``[N]``.
    """
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 2 or values.shape[1] == 0:
        raise ValueError(f"values must have shape [runs, episodes]; got {values.shape}")
    if int(window) < 1:
        raise InputError(f"the smoothing window must be at least 1 episode; got {window}")
    window = int(window)
    seen = ~np.isnan(values)

    def trailing(x):
        csum = np.cumsum(x, axis=1)
        lagged = np.zeros_like(csum)
        lagged[:, window:] = csum[:, :-window]
        return csum - lagged

    with np.errstate(invalid="ignore", divide="ignore"):
        smooth = trailing(np.where(seen, values, 0.0)) / trailing(seen.astype(np.float64))
        smooth[~seen] = np.nan
        n = seen.sum(axis=0)
        mean = np.nansum(smooth, axis=0) / n
        mean[n == 0] = np.nan
        spread = np.sqrt(np.nansum((smooth - mean) ** 2, axis=0) / (n - 1))
    half = np.zeros_like(mean)
    several = n > 1
    if several.any():
        from scipy.stats import t as student_t

        half[several] = student_t.ppf(0.975, n[several] - 1) * spread[several] / np.sqrt(
            n[several]
        )
    half[n == 0] = np.nan
    return Curve(mean=mean, low=mean - half, high=mean + half)


def optimal_values(
    mdp: TabularMDP, *, gamma: float = 1.0, tol: float = 1e-12, max_sweeps: int = 100_000
) -> np.ndarray:
    r"""Optimal state values by value iteration, the reference line of the learning curves.

    .. math:: V(s) \leftarrow \max_a \sum_{s'} P(s' \mid s, a) \big[r + \gamma V(s')\big]

    With ``gamma = 1`` this converges when every state can reach a terminal state and the
    rewards are negative, as on the cliff (Sutton & Barto (2018), Section 4.4).

    Args:
        mdp: The environment.
        gamma: Discount factor in [0, 1].
        tol: Stop when no value changes by more than this.
        max_sweeps: Give up after this many sweeps.

    Returns:
        ``[S]`` optimal values (0 at terminal states).

    Raises:
        InputError: if the values do not converge.
    """
    _check_settings(gamma=gamma)
    v = np.zeros(mdp.n_states)
    for _ in range(max_sweeps):
        new = (mdp.prob * (mdp.reward + gamma * v[mdp.next_state])).sum(axis=2).max(axis=1)
        new[mdp.terminal] = 0.0
        if np.abs(new - v).max() <= tol:
            return new
        v = new
    raise InputError("value iteration did not converge; the goal may be unreachable")


def greedy_return(mdp: TabularMDP, q: np.ndarray) -> float | None:
    r"""Exact expected return (undiscounted) from the start of the greedy policy of ``q``.

    Over the states the policy :math:`\pi(s) = \arg\max_a q(s, a)` (ties to the first action)
    can reach from the start, solves :math:`(I - P_\pi) V = R_\pi` (Sutton & Barto (2018),
    eq. 4.4 with γ = 1, as a linear system).

    Args:
        mdp: The environment.
        q: ``[S, A]`` action values.

    Returns:
        The expected sum of rewards, or None when the policy can go round forever.
    """
    q = np.asarray(q, dtype=np.float64)
    if q.shape != (mdp.n_states, mdp.n_actions):
        raise ValueError(f"q must have shape [{mdp.n_states}, {mdp.n_actions}]; got {q.shape}")
    every = np.arange(mdp.n_states)
    action = q.argmax(axis=1)
    succ, prob = mdp.next_state[every, action], mdp.prob[every, action]  # [S, K]
    reward = (prob * mdp.reward[every, action]).sum(axis=1)
    reached = mdp.start > 0
    frontier = reached.copy()
    while frontier.any():
        nxt = np.zeros_like(reached)
        nxt[succ[frontier][prob[frontier] > 0]] = True
        frontier = nxt & ~reached & ~mdp.terminal[every]
        reached |= nxt
    live = np.flatnonzero(reached & ~mdp.terminal)
    index = np.full(mdp.n_states, -1)
    index[live] = np.arange(live.size)
    system = np.eye(live.size)
    for k in range(succ.shape[1]):
        inside = index[succ[live, k]] >= 0
        np.add.at(system, (np.flatnonzero(inside), index[succ[live, k][inside]]),
                  -prob[live, k][inside])
    if live.size and np.linalg.cond(system) > 1e12:
        return None
    values = np.zeros(mdp.n_states)
    values[live] = np.linalg.solve(system, reward[live]) if live.size else []
    return float(mdp.start @ values)
