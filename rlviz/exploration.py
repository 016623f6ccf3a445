r"""Deep exploration: dithering, optimism and posterior sampling on RiverSwim and the deep sea.

Two episodic chain problems, each a ``rlviz.mdp.TabularMDP`` over chain positions with a fixed
episode length ``H`` (the agent starts at the left end every episode):

* **RiverSwim** (Strehl & Littman, 2008, Figure 1; the episodic six-state version of Osband,
  Russo & Van Roy, 2013, Figure 2, with rewards scaled to [0, 1] and ``H = 20``). Swimming left
  always succeeds; swimming right against the current succeeds with probability 0.35, stays with
  0.6 and is swept back with 0.05 (0.6 forward / 0.4 stay at the left bank, 0.6 stay / 0.4
  back at the right bank). Swimming left at the left bank pays 5/1000; swimming right at the
  right bank pays 1.
* **The deep sea of size N** (Osband et al., 2019, "Deep exploration via randomized value
  functions", JMLR 20(124), section 7.1; ``deep_sea`` of bsuite, Osband et al., 2020, without
  action randomisation). The episode lasts ``N`` steps; "right" moves one column right and costs
  0.01/N, "left" moves one column left (or stays at the wall) and costs nothing; "right" in the
  last column pays 1. Row ``h`` of the deep-sea grid is step ``h`` of the episode on a chain of
  ``N`` columns, so the treasure needs ``N`` rights in a row and is worth 1 − 0.01 = 0.99.

The learners share the same dice (below) and differ only in how they explore:

* **ε-greedy Q-learning** (dithering): ``Q_h(s, a)`` from 0, a random action with probability ε.
* **Optimistic initial values**: the same Q-learning, greedy, from ``Q_h = (H − h) r_max``, an
  upper bound on every return-to-go (Sutton & Barto, 2018, section 2.6).
* **Count-based bonus** (MBIE-EB, Strehl & Littman, 2008, section 5): plan each episode in the
  empirical model with reward ``R̂(s, a) + β/√N(s, a)``; an untried pair is taken to pay
  ``r_max + β`` and stay put, the most it could be worth.
* **Posterior sampling for RL** (PSRL; Strens, 2000; Osband, Russo & Van Roy, 2013): each
  episode, draw one MDP from the posterior (a Dirichlet over each pair's next position, a Gaussian
  over its mean reward) and follow its optimal policy for the whole episode.

Both model-based learners know that the dynamics do not depend on the step (they pool every
step's data into one model over positions) and that a move goes back, stays or goes forward;
the Q-learners keep one table per step, ``Q_h``, as finite-horizon Q-learning must.

Planning is ``rlviz.dp.value_iteration`` with γ = 1 started from ``V_0 = 0``: its sweep ``k``
is the optimal value with ``k`` steps to go, so ``H`` sweeps are backward induction, and the
trace's greedy sets are the optimal non-stationary policy (step ``h`` acts greedily on
``V_{H−h−1}``). All runs' models are planned at once as one block-diagonal model.

Random numbers. Run ``r`` owns ``SeedSequence(seed).spawn(runs)[r]``, which spawns two streams:
one gives each (episode, step) a row of uniforms (exploration coin, random action, tie-break,
transition) that every learner of run ``r`` uses, so they differ by algorithm, not luck; the
other draws PSRL's posterior samples.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rlviz import dp, td
from rlviz.errors import InputError
from rlviz.mdp import TabularMDP, policy_value

__all__ = [
    "DEEP_SEA_SIZES",
    "LABELS",
    "LEARNERS",
    "Plan",
    "Problem",
    "Study",
    "Sweep",
    "bonus_model",
    "choose_actions",
    "deep_sea",
    "finite_horizon_plan",
    "first_reach_probability",
    "make_problem",
    "plan_models",
    "policy_value_exact",
    "posterior_sample",
    "q_learning_step",
    "random_walk_episodes",
    "riverswim",
    "run_study",
    "simulate",
    "sweep_first_reach",
]

LEARNERS: tuple[str, ...] = ("epsilon_greedy", "optimistic", "bonus", "psrl")
LABELS = {
    "epsilon_greedy": "ε-greedy Q-learning",
    "optimistic": "optimistic Q-learning",
    "bonus": "count bonus β/√N",
    "psrl": "posterior sampling",
    "random": "random walker (ε = 1)",
}
MODEL_BASED = frozenset({"bonus", "psrl"})
KINDS = (*LEARNERS, "random")

N_SLOTS = 3
"""Outcomes of every move: back, stay, forward (``BACK, STAY, FORWARD``)."""
BACK, STAY, FORWARD = range(N_SLOTS)
LEFT, RIGHT = 0, 1
EXPLORE, RANDOM_ACTION, TIE, TRANSITION = range(4)
"""Columns of a run's row of uniforms at each (episode, step)."""

RIVERSWIM_HORIZON = 20
RIVERSWIM_REWARDS = (5 / 1000, 1.0)
RIVERSWIM_RIGHT = {"left bank": (0.0, 0.4, 0.6), "middle": (0.05, 0.6, 0.35),
                   "right bank": (0.4, 0.6, 0.0)}
"""(back, stay, forward) probabilities of swimming right (Osband, Russo & Van Roy, 2013, Fig. 2)."""
DEEP_SEA_COST = 0.01
DEEP_SEA_SIZES = (2, 3, 4, 5, 6, 8, 10, 12, 14, 16, 20)
MIN_SIZE, MAX_SIZE = 2, 40
DIRICHLET_PRIOR = 1.0
"""PSRL's prior: Dirichlet(1, 1, 1) over (back, stay, forward) for every pair."""
REWARD_PRIOR_SD = 1.0
REWARD_NOISE_SD = 0.5
"""PSRL's reward model: each pair's mean reward is N(0, 1) a priori, and an observed reward is
that mean plus Gaussian noise of sd 1/2 (the sub-Gaussian scale of any reward in [0, 1])."""
PLAN_THETA = 1e-300
"""Value iteration's stopping threshold for planning: it stops early only at an exact fixed
point, after which every further sweep would return the same values."""
BLOCK = 32
"""Episodes of uniforms each run draws at a time."""


# --------------------------------------------------------------------------- problems
@dataclass(frozen=True, eq=False)
class Problem:
    """An episodic chain problem: a tabular model, an episode length and where the far reward is.

    Attributes:
        key: ``"riverswim"`` or ``"deep_sea"``.
        label: A human-readable name ("RiverSwim", "deep sea, N = 10").
        mdp: The chain over positions ``0..S-1``; outcome ``k`` of every move is back, stay or
            forward (clipped at the ends), the layout every learner assumes.
        horizon: Steps per episode ``H``.
        far_state: The position at the far (right) end.
        far_action: The action that collects the far reward there (right).
        r_max: The largest reward of one step, for the optimistic learners.
        source: Where the problem is from.
    """

    key: str
    label: str
    mdp: TabularMDP
    horizon: int
    far_state: int
    far_action: int
    r_max: float
    source: str

    @property
    def n_states(self) -> int:
        """Number of chain positions S."""
        return self.mdp.n_states

    @property
    def size(self) -> int:
        """The problem's N: its number of positions."""
        return self.mdp.n_states


def _chain(probs: np.ndarray, rewards: np.ndarray, name: str) -> TabularMDP:
    """A chain whose outcome slots are (back, stay, forward), clipped at both ends.

    Args:
        probs: ``[S, A, 3]`` probability of going back, staying, going forward.
        rewards: ``[S, A]`` reward of each move, whatever its outcome.
        name: The model's label.
    """
    n_states, n_actions, _ = probs.shape
    s = np.arange(n_states)[:, None, None]
    moves = np.array([-1, 0, 1])[None, None, :]
    next_state = np.broadcast_to(np.clip(s + moves, 0, n_states - 1), probs.shape)
    start = np.zeros(n_states)
    start[0] = 1.0
    return TabularMDP(
        next_state=next_state, prob=probs,
        reward=np.broadcast_to(rewards[..., None], probs.shape),
        terminal=np.zeros(n_states, dtype=bool), start=start,
        action_names=("left", "right")[:n_actions], name=name,
    )


def riverswim(*, horizon: int = RIVERSWIM_HORIZON) -> Problem:
    """The six-state RiverSwim of Strehl & Littman (2008) as an episodic problem.

    Left moves back with probability 1; right goes (back, stay, forward) with
    ``RIVERSWIM_RIGHT``; left at position 0 pays 5/1000 and right at position 5 pays 1 (the
    scaling of Osband, Russo & Van Roy, 2013). Episodes last ``horizon`` steps from position 0.
    """
    n = 6
    probs = np.zeros((n, 2, N_SLOTS))
    probs[:, LEFT, BACK] = 1.0
    probs[0, RIGHT] = RIVERSWIM_RIGHT["left bank"]
    probs[1:-1, RIGHT] = RIVERSWIM_RIGHT["middle"]
    probs[-1, RIGHT] = RIVERSWIM_RIGHT["right bank"]
    rewards = np.zeros((n, 2))
    rewards[0, LEFT], rewards[-1, RIGHT] = RIVERSWIM_REWARDS
    return Problem(
        key="riverswim", label="RiverSwim", mdp=_chain(probs, rewards, "RiverSwim"),
        horizon=int(horizon), far_state=n - 1, far_action=RIGHT, r_max=max(RIVERSWIM_REWARDS),
        source="Strehl & Littman (2008), Fig. 1; episodic, H = 20: Osband, Russo & Van Roy "
        "(2013), Fig. 2",
    )


def deep_sea(n: int) -> Problem:
    """The deterministic deep sea of size ``n`` as a chain of ``n`` columns and ``n`` steps.

    Right moves forward and costs ``0.01 / n``; left moves back (stays at column 0) for free;
    right in the last column pays 1 (less the cost). Only ``n`` rights in a row find it.
    """
    n = int(n)
    probs = np.zeros((n, 2, N_SLOTS))
    probs[:, LEFT, BACK] = 1.0
    probs[:, RIGHT, FORWARD] = 1.0
    rewards = np.zeros((n, 2))
    rewards[:, RIGHT] = -DEEP_SEA_COST / n
    rewards[-1, RIGHT] += 1.0
    return Problem(
        key="deep_sea", label=f"deep sea, N = {n}", mdp=_chain(probs, rewards, f"deep sea {n}"),
        horizon=n, far_state=n - 1, far_action=RIGHT, r_max=1.0 - DEEP_SEA_COST / n,
        source="Osband et al. (2019), JMLR 20(124), §7.1; bsuite deep_sea (Osband et al., 2020)",
    )


def make_problem(key: str, n: int = 10) -> Problem:
    """``riverswim()`` or ``deep_sea(n)`` by name, checking the user's choice.

    Raises:
        InputError: for an unknown name or a size outside [2, 40].
    """
    if key == "riverswim":
        return riverswim()
    if key == "deep_sea":
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or not (
            MIN_SIZE <= n <= MAX_SIZE
        ):
            raise InputError(f"The deep sea's size N must be a whole number from {MIN_SIZE} to "
                             f"{MAX_SIZE}; got {n!r}.")
        return deep_sea(int(n))
    raise InputError(f"Unknown problem {key!r}: choose RiverSwim or the deep sea.")


# --------------------------------------------------------------------------- exact answers
@dataclass(frozen=True, eq=False)
class Plan:
    """The finite-horizon solution of a model by value iteration.

    Attributes:
        values: ``V_k``, the optimal value with ``k`` steps to go, for ``k = 0..H``.
        greedy: The optimal actions at step ``h`` of the episode (ties included).
        q: ``Q_h(s, a)``, the optimal action values at step ``h``.
    """

    values: np.ndarray  # [H+1, S] V_k with k steps to go
    greedy: np.ndarray  # [H, S, A] bool, optimal actions at step h
    q: np.ndarray | None  # [H, S, A] Q_h(s, a) at step h (None if not asked for)

    @property
    def horizon(self) -> int:
        """Steps per episode H."""
        return len(self.greedy)

    @property
    def start_values(self) -> np.ndarray:
        """``[S]`` the optimal value of each position at the start of an episode."""
        return self.values[-1]


def finite_horizon_plan(mdp: TabularMDP, horizon: int, *, with_q: bool = True) -> Plan:
    r"""Backward induction over ``horizon`` steps, as ``horizon`` sweeps of value iteration.

    .. math:: V_0 = 0, \qquad V_k(s) = \max_a \Big[ r(s, a) + \sum_{s'} p(s' \mid s, a)\,
        V_{k-1}(s') \Big], \qquad \pi_h(s) \in \arg\max_a \big[ r(s, a) + P V_{H-h-1} \big]

    Synchronous value iteration with γ = 1 from ``V_0 = 0`` computes exactly these iterates
    (Puterman, 1994, section 4.5; Sutton & Barto, 2018, section 4.4), so its trace is the
    plan: sweep ``k`` is the value with ``k`` steps to go, and step ``h`` of an episode (with
    ``H − h`` steps to go) acts greedily on ``V_{H−h−1}``.

    Args:
        mdp: The model (no terminal states needed: the horizon ends the episode).
        horizon: Steps per episode ``H >= 1``.
        with_q: Also return the optimal action values (planners only need the actions).

    Returns:
        The plan: values with ``k`` steps to go, optimal actions and values at each step.
    """
    trace = dp.value_iteration(mdp, gamma=1.0, theta=PLAN_THETA, max_sweeps=int(horizon))
    values, greedy = trace.values, trace.greedy
    if len(values) < horizon + 1:  # stopped at a fixed point: every later sweep repeats it
        pad = horizon + 1 - len(values)
        values = np.concatenate([values, np.repeat(values[-1:], pad, axis=0)])
        greedy = np.concatenate([greedy, np.repeat(greedy[-1:], pad, axis=0)])
    q = None
    if with_q:
        to_go = values[:horizon]  # V_0 .. V_{H-1}
        q = (mdp.R[None] + (mdp.prob[None] * to_go[:, mdp.next_state]).sum(axis=-1))[::-1]
    return Plan(values=values[: horizon + 1], greedy=greedy[:horizon][::-1], q=q)


def time_expanded(problem: Problem) -> TabularMDP:
    """The problem as one MDP over (step, position) pairs, ending in a terminal state.

    State ``h * S + s`` is position ``s`` at step ``h``; the last state is terminal and follows
    every move of the last step. Its values at step 0 are the episode's values.
    """
    mdp, horizon = problem.mdp, problem.horizon
    n_states, n_actions, n_out = mdp.next_state.shape
    end = horizon * n_states
    h = np.arange(horizon)[:, None, None, None]
    following = np.where(h + 1 < horizon, (h + 1) * n_states + mdp.next_state[None], end)
    next_state = np.concatenate([following.reshape(end, n_actions, n_out),
                                 np.full((1, n_actions, n_out), end)])
    prob = np.concatenate([np.broadcast_to(mdp.prob, (horizon, *mdp.prob.shape))
                           .reshape(end, n_actions, n_out), np.eye(n_out)[[0] * n_actions][None]])
    reward = np.concatenate([np.broadcast_to(mdp.reward, (horizon, *mdp.reward.shape))
                             .reshape(end, n_actions, n_out), np.zeros((1, n_actions, n_out))])
    terminal = np.zeros(end + 1, dtype=bool)
    terminal[end] = True
    return TabularMDP(next_state=next_state, prob=prob, reward=reward, terminal=terminal,
                      start=np.concatenate([mdp.start, np.zeros(end + 1 - n_states)]),
                      action_names=mdp.action_names, name=f"{mdp.name} over (step, position)")


def policy_value_exact(problem: Problem, policy: np.ndarray) -> np.ndarray:
    r"""Exact values of a step-dependent policy by one linear solve on the (step, position) MDP.

    Solves :math:`(I - P_\pi) V = R_\pi` (``rlviz.mdp.policy_value`` with γ = 1), independently
    of value iteration.

    Args:
        problem: The problem.
        policy: ``[H, S, A]`` action probabilities at each step, or a boolean set of actions
            (spread evenly over the set).

    Returns:
        ``[H, S]`` the value of each position at each step.
    """
    pi = np.asarray(policy, dtype=np.float64)
    pi = pi / pi.sum(axis=-1, keepdims=True)
    horizon, n_states, n_actions = pi.shape
    flat = np.concatenate([pi.reshape(horizon * n_states, n_actions),
                           np.full((1, n_actions), 1.0 / n_actions)])
    values = policy_value(time_expanded(problem), flat, 1.0)
    return values[:-1].reshape(horizon, n_states)


def first_reach_probability(problem: Problem, epsilon: float = 1.0) -> float:
    r"""Chance that a uniformly random walker collects the far reward in one episode.

    The walker takes each action with probability 1/A. With ``m_h(s)`` the chance of being at
    ``s`` at step ``h`` without having collected it yet,

    .. math:: p = \sum_{h < H} m_h(s_{far}) / A, \qquad
        m_{h+1}(s') = \sum_{s, a} m_h(s)\, \tfrac1A\, P(s' \mid s, a)\,
        [(s, a) \ne (s_{far}, a_{far})]

    On the deep sea of size N the far reward needs N rights in a row, so ``p = 2^{-N}``.
    Episodes of an ε = 1 learner are independent, so its first success is geometric with mean
    ``1 / p`` episodes.

    Args:
        problem: The problem.
        epsilon: Must be 1 (the walker); kept for the formula's name.

    Returns:
        The probability ``p`` per episode.
    """
    if epsilon != 1.0:
        raise InputError("The closed form is for the uniformly random walker (ε = 1) only.")
    mdp = problem.mdp
    n_actions = mdp.n_actions
    mass = mdp.start.copy()
    found = 0.0
    for _ in range(problem.horizon):
        found += mass[problem.far_state] / n_actions
        weight = np.broadcast_to(mass[:, None, None] / n_actions * mdp.prob, mdp.prob.shape).copy()
        weight[problem.far_state, problem.far_action] = 0.0
        mass = np.bincount(mdp.next_state.ravel(), weights=weight.ravel(),
                           minlength=mdp.n_states)
    return float(found)


def random_walk_episodes(problem: Problem, episodes: int, *, seed: int) -> float:
    """Monte-Carlo estimate of ``first_reach_probability``.

    The share of ``episodes`` uniformly random episodes that collect the far reward, all walked
    at once, one step at a time.
    """
    rng = np.random.default_rng(seed)
    mdp = problem.mdp
    state = np.full(episodes, mdp.start_state)
    found = np.zeros(episodes, dtype=bool)
    for _ in range(problem.horizon):
        action = rng.integers(mdp.n_actions, size=episodes)
        found |= (state == problem.far_state) & (action == problem.far_action)
        state, _ = mdp.step(state, action, rng.random(episodes))
    return float(found.mean())


# --------------------------------------------------------------------------- the learners' steps
def _by_action(x):
    """The ``A`` columns of ``x [L, A]``: loops over a handful of actions beat reductions."""
    return [x[:, a] for a in range(x.shape[-1])]


def choose_actions(scores, epsilon, u):
    r"""ε-greedy on ``scores``, ties between the best actions broken uniformly at random.

    .. math:: a = \begin{cases} \text{uniform over } \mathcal A & \text{if } u_0 < \varepsilon \\
        \text{uniform over } \arg\max_a \text{scores}(a) & \text{otherwise} \end{cases}

    One row of uniforms per lane decides: ``u[:, EXPLORE]`` the coin, ``u[:, RANDOM_ACTION]``
    the random action, ``u[:, TIE]`` which of the tied best actions. Q-learners pass their
    ``Q_h(s, ·)``; planners pass their plan's optimal-action set with ε = 0.

    Args:
        scores: ``[L, A]`` what each lane maximises.
        epsilon: ``[L]`` exploration rates.
        u: ``[L, 4]`` uniforms in [0, 1).

    Returns:
        ``[L]`` actions.
    """
    columns = _by_action(scores)
    top = functools.reduce(np.maximum, columns)
    is_best = [c == top for c in columns]
    pick = (u[:, TIE] * sum(is_best)).astype(np.int64)  # take the pick-th tied best action
    greedy, seen = np.zeros(len(top), dtype=np.int64), np.zeros(len(top), dtype=np.int64)
    for a, best in enumerate(is_best):
        greedy = np.where(best & (seen == pick), a, greedy)
        seen = seen + best
    random = (u[:, RANDOM_ACTION] * len(columns)).astype(np.int64)
    return np.where(u[:, EXPLORE] < epsilon, random, greedy)


def q_learning_step(q_sa, r, q_next, *, alpha, last_step):
    r"""Finite-horizon Q-learning: one update of ``Q_h(s, a)`` per lane.

    .. math:: Q_h(s, a) \leftarrow Q_h(s, a) + \alpha \big[ r + \max_{a'} Q_{h+1}(s', a')
        - Q_h(s, a) \big], \qquad Q_H \equiv 0

    (Watkins, 1989; undiscounted, with one table per step as the horizon is fixed.) The update
    is ``rlviz.td.td_update``.

    Args:
        q_sa: ``[L]`` current ``Q_h(s, a)``.
        r: ``[L]`` rewards.
        q_next: ``[L, A]`` ``Q_{h+1}(s', ·)``.
        alpha: Step size (scalar or ``[L]``).
        last_step: ``[L]`` whether ``h = H − 1`` (nothing follows).

    Returns:
        ``[L]`` new values of ``Q_h(s, a)``.
    """
    best_next = functools.reduce(np.maximum, _by_action(q_next))
    target = r + np.where(last_step, 0.0, best_next)
    return td.td_update(q_sa, target, alpha)


def bonus_model(counts, reward_sum, *, beta, r_max):
    r"""The optimistic model a count-based learner plans in (MBIE-EB).

    .. math:: \tilde r(s, a) = \hat r(s, a) + \frac{\beta}{\sqrt{N(s, a)}}, \qquad
        \tilde P(\cdot \mid s, a) = \hat P(\cdot \mid s, a) = \frac{N(s, a, \cdot)}{N(s, a)}

    An untried pair (``N = 0``) is taken to stay put and pay ``r_max + β`` every step, the most
    it could be worth. Source: Strehl & Littman (2008), section 5 (there with discounting).

    Args:
        counts: ``[L, S, A, 3]`` observed (back, stay, forward) outcomes.
        reward_sum: ``[L, S, A]`` total reward observed.
        beta: Bonus scale β ≥ 0.
        r_max: ``[L]`` largest one-step reward of each lane's problem.

    Returns:
        ``(prob [L, S, A, 3], reward [L, S, A])``.
    """
    n = counts.sum(axis=-1)
    seen = n > 0
    safe = np.maximum(n, 1)
    stay = np.eye(N_SLOTS)[STAY]
    prob = np.where(seen[..., None], counts / safe[..., None], stay)
    optimistic = np.broadcast_to(np.asarray(r_max, dtype=np.float64)[:, None, None] + beta,
                                 n.shape)
    reward = np.where(seen, reward_sum / safe + beta / np.sqrt(safe), optimistic)
    return prob, reward


def posterior_sample(counts, reward_sum, rng):
    r"""One MDP drawn from PSRL's posterior, for every lane given.

    .. math:: \tilde P(\cdot \mid s, a) \sim \mathrm{Dirichlet}\big(1 + N(s, a, \cdot)\big),
        \qquad \tilde r(s, a) \sim \mathcal N\Big(\frac{\sum r / \sigma^2}{1 + N/\sigma^2},
        \frac{1}{1 + N/\sigma^2}\Big)

    The first is the posterior of the (back, stay, forward) probabilities under a uniform
    prior; the second that of a mean reward with prior N(0, 1) after ``N`` observations with
    noise of sd σ = 1/2. A Dirichlet sample is a normalised vector of Gamma draws.
    Source: Osband, Russo & Van Roy (2013), Algorithm 1; Strens (2000).

    Args:
        counts: ``[L, S, A, 3]`` observed (back, stay, forward) outcomes.
        reward_sum: ``[L, S, A]`` total reward observed.
        rng: The posterior stream.

    Returns:
        ``(prob [L, S, A, 3], reward [L, S, A])``.
    """
    g = rng.standard_gamma(DIRICHLET_PRIOR + counts)
    prob = g / g.sum(axis=-1, keepdims=True)
    n = counts.sum(axis=-1)
    precision = 1.0 / REWARD_PRIOR_SD**2 + n / REWARD_NOISE_SD**2
    mean = reward_sum / REWARD_NOISE_SD**2 / precision
    reward = mean + rng.standard_normal(n.shape) / np.sqrt(precision)
    return prob, reward


def plan_models(next_state, prob, reward, horizons, *, steps=None):
    """Plan every lane's model at once: one value iteration on their block-diagonal union.

    Args:
        next_state: ``[L, S, A, 3]`` each lane's chain layout (positions ``0..S-1``).
        prob: ``[L, S, A, 3]`` outcome probabilities.
        reward: ``[L, S, A]`` rewards.
        horizons: ``[L]`` episode lengths; a lane with a shorter episode uses the last steps of
            the longest plan (the same number of steps to go).
        steps: Steps to return (at least the longest horizon; by default exactly that).

    Returns:
        ``[L, steps, S, A]`` bool, each lane's optimal actions at its step ``h`` (steps beyond
        its horizon are False).
    """
    n_lanes, n_states, n_actions, n_out = prob.shape
    offset = (np.arange(n_lanes) * n_states)[:, None, None, None]
    start = np.zeros(n_lanes * n_states)
    start[0] = 1.0
    union = TabularMDP(
        next_state=(next_state + offset).reshape(-1, n_actions, n_out),
        prob=prob.reshape(-1, n_actions, n_out),
        reward=np.broadcast_to(reward[..., None], prob.shape).reshape(-1, n_actions, n_out),
        terminal=np.zeros(n_lanes * n_states, dtype=bool), start=start,
        action_names=("left", "right")[:n_actions], name="sampled models",
    )
    horizons = np.asarray(horizons)
    longest = int(horizons.max())
    greedy = finite_horizon_plan(union, longest, with_q=False).greedy.reshape(
        longest, n_lanes, n_states, n_actions).swapaxes(0, 1)  # [L, H_max, S, A]
    steps = longest if steps is None else int(steps)
    if steps == longest and (horizons == longest).all():
        return greedy
    step = np.arange(steps)[None, :] + (longest - horizons)[:, None]  # row of lane's step h
    inside = step < longest
    out = np.take_along_axis(greedy, np.minimum(step, longest - 1)[..., None, None], axis=1)
    return out & inside[..., None, None]


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


# --------------------------------------------------------------------------- studies
def mean_band(values: np.ndarray, axis: int = 0, level: float = 0.95):
    r"""Mean over ``axis`` with its t-interval (zero width for one sample).

    .. math:: \bar x \pm t_{(1+\mathrm{level})/2,\,n-1}\, s / \sqrt n

    Returns:
        ``(mean, low, high)``.
    """
    values = np.asarray(values, dtype=np.float64)
    n = values.shape[axis]
    mean = values.mean(axis=axis)
    if n < 2:
        return mean, mean.copy(), mean.copy()
    from scipy.stats import t as student_t

    half = student_t.ppf(0.5 + level / 2, n - 1) * values.std(axis=axis, ddof=1) / math.sqrt(n)
    return mean, mean - half, mean + half


@dataclass(frozen=True, eq=False)
class Study:
    """The learners on one problem: regret, first reach and where they went.

    Regret is paired: in each run, episode ``e``'s regret is the return the optimal policy
    collects on the same dice minus the learner's, so its expectation is
    ``V*(s_0) − E[G_e]`` and a learner that has found the optimal policy adds exactly 0.

    Attributes:
        problem: The problem.
        kinds: The learners.
        runs, episodes, seed, epsilon, alpha, beta: The settings.
        plan: The optimal plan of the true model.
        returns: Each learner's return per run and episode.
        optimal_returns: The optimal policy's returns on the same dice.
        regret: Cumulative regret after each episode.
        first_reach: Episode (from 1) of the first far reward, 0 if none.
        visit_share: Share of episodes that were at position ``s`` at step ``h``.
        lure_value: Expected return of always moving left, toward the small nearby reward.
    """

    problem: Problem
    kinds: tuple[str, ...]
    runs: int
    episodes: int
    seed: int
    epsilon: float
    alpha: float
    beta: float
    plan: Plan
    returns: np.ndarray  # [K, R, E]
    optimal_returns: np.ndarray  # [R, E]
    regret: np.ndarray  # [K, R, E] cumulative
    first_reach: np.ndarray  # [K, R] int, 0 = not reached
    visit_share: np.ndarray  # [K, H, S] in [0, 1]
    lure_value: float

    @property
    def optimal_value(self) -> float:
        """``V*(s_0)``: the optimal expected return of an episode."""
        return float(self.plan.start_values[self.problem.mdp.start_state])

    def regret_band(self, level: float = 0.95):
        """``(mean, low, high)``, each ``[K, E]``: cumulative regret over runs with its band."""
        return mean_band(self.regret, axis=1, level=level)

    def index(self, kind: str) -> int:
        """Position of a learner in ``kinds``."""
        return self.kinds.index(kind)


def run_study(
    problem: Problem,
    kinds: Sequence[str],
    *,
    runs: int,
    episodes: int,
    seed: int,
    epsilon: float,
    alpha: float,
    beta: float,
) -> Study:
    """Train the learners on ``problem`` beside the optimal policy on the same dice.

    Args:
        problem: From ``make_problem``.
        kinds: Learners from ``LEARNERS`` (at least one).
        runs: Independent runs.
        episodes: Episodes per run.
        seed: Seed of everything random.
        epsilon: ε of the ε-greedy learner.
        alpha: Step size of the Q-learners.
        beta: Bonus scale of the count-based learner.

    Returns:
        The study.

    Raises:
        InputError: for a setting out of range or no learner.
    """
    kinds = tuple(kinds)
    if not kinds:
        raise InputError("Choose at least one learner.")
    if any(k not in LEARNERS for k in kinds):
        raise InputError(f"Choose learners among {', '.join(LEARNERS)}; got {list(kinds)}.")
    sim = simulate([problem], (*kinds, "optimal"), runs=runs, episodes=episodes, seed=seed,
                   epsilon=epsilon, alpha=alpha, beta=beta)
    returns, best = sim.returns[:-1, 0], sim.returns[-1, 0]
    regret = np.cumsum(best[None] - returns, axis=-1)
    share = sim.visits[:-1, 0, : problem.horizon, : problem.n_states] / (runs * episodes)
    arrays = dict(returns=returns, optimal_returns=best, regret=regret,
                  first_reach=sim.first_reach[:-1, 0], visit_share=share)
    for a in arrays.values():
        a.setflags(write=False)
    left = np.zeros((problem.horizon, problem.n_states, problem.mdp.n_actions))
    left[..., LEFT] = 1.0
    lure = policy_value_exact(problem, left)[0, problem.mdp.start_state]
    return Study(problem=problem, kinds=kinds, runs=runs, episodes=episodes, seed=seed,
                 epsilon=float(epsilon), alpha=float(alpha), beta=float(beta),
                 plan=finite_horizon_plan(problem.mdp, problem.horizon), lure_value=float(lure),
                 **arrays)


@dataclass(frozen=True, eq=False)
class Sweep:
    """Episodes until each learner first collects the deep sea's treasure, size by size.

    Attributes:
        sizes: The deep-sea sizes N.
        kinds: The learners (``"random"`` is ε-greedy with ε = 1).
        runs: Runs per (learner, size).
        cap: Runs give up after this many episodes (then "not reached within ``cap``").
        first_reach: The first successful episode (from 1), 0 if not within ``cap``.
        expected_random: ``2^N``, the random walker's expected episodes (closed form).
    """

    sizes: tuple[int, ...]
    kinds: tuple[str, ...]
    runs: int
    cap: int
    seed: int
    first_reach: np.ndarray  # [K, T, R] int, 0 = not reached within cap
    expected_random: np.ndarray  # [T] 2^N

    def reached(self) -> np.ndarray:
        """``[K, T]`` runs that found the treasure within the cap."""
        return (self.first_reach > 0).sum(axis=-1)

    def mean_band(self, level: float = 0.95):
        """``(mean, low, high)``, each ``[K, T]``, over runs; NaN where a run did not reach."""
        mean, low, high = mean_band(self.first_reach, axis=-1, level=level)
        missing = self.reached() < self.runs
        for a in (mean, low, high):
            a[missing] = np.nan
        return mean, low, high

    def at_least(self) -> np.ndarray:
        """``[K, T]`` a lower bound on the mean episodes (unfinished runs count as cap + 1)."""
        capped = np.where(self.first_reach > 0, self.first_reach, self.cap + 1)
        return capped.mean(axis=-1)

    def censoring(self) -> np.ndarray:
        """``[T]`` chance that an ε = 1 run goes ``cap`` episodes without the treasure."""
        return (1.0 - 1.0 / self.expected_random) ** self.cap


def sweep_first_reach(
    sizes: Sequence[int],
    kinds: Sequence[str],
    *,
    runs: int,
    cap: int,
    seed: int,
    epsilon: float,
    alpha: float,
    beta: float,
) -> Sweep:
    """Run each learner on the deep sea of every size until it first finds the treasure.

    All sizes run in one lockstep ``simulate(..., until_reached=True)``; a run stops after its
    first success or after ``cap`` episodes.

    Raises:
        InputError: for a size outside [2, 40] or a setting out of range.
    """
    sizes = tuple(int(n) for n in sizes)
    if not sizes:
        raise InputError("Give at least one deep-sea size.")
    problems = [make_problem("deep_sea", n) for n in sizes]
    sim = simulate(problems, kinds, runs=runs, episodes=cap, seed=seed, epsilon=epsilon,
                   alpha=alpha, beta=beta, until_reached=True, record_visits=False)
    reach = sim.first_reach
    reach.setflags(write=False)
    expected = np.array([1.0 / first_reach_probability(p) for p in problems])
    expected.setflags(write=False)
    return Sweep(sizes=sizes, kinds=sim.kinds, runs=runs, cap=int(cap), seed=seed,
                 first_reach=reach, expected_random=expected)
