r"""Tabular TD control: Q-learning, SARSA, Expected SARSA and Double Q-learning.

The single-update targets are small functions of arrays (one per algorithm, terminal handling
included), and ``run_control`` trains many independent runs at once: every run keeps its own
episode counter and its own episodes end independently, but all runs step together so each step
is a handful of numpy operations over the run axis. ``run_control_loop`` is the same algorithm
written one run at a time, step by step, as in the book's boxed pseudocode; the two agree draw
for draw.

Random numbers. Run ``r`` owns the generator ``SeedSequence(seed).spawn(runs)[r]`` and draws one
row of uniforms per step of its own life, in blocks of ``BLOCK`` rows. Column ``k`` of row ``t``
always serves the same purpose (the exploration coin, the random action, the transition noise,
the Double-Q table coin, the start state, then one tie-break key per action), so with the same
seed two algorithms see the same dice wherever their decisions coincide, and run ``r`` is the
same whether 1 or 100 runs are trained.

Speed. A lockstep step is about thirty numpy calls on arrays of R elements. Whatever does not
depend on Q is prepared for a block of steps at once: the dice, each step's candidate actions in
tie-break order (looked up from pairwise key comparisons, exploring steps folded in), which
outcome each transition takes, Double Q's coins. The model is copied once per run and indexed
like Q, so a transition is a table look-up. A step only logs its outcome index; returns, lengths
and visits come from the log once per block (whole-number rewards are summed as differences of
running totals, which is exact). The lockstep lasts until the run with the most steps finishes;
runs that have finished are dropped at the next block, so that wait costs less per step.

Reference: Sutton & Barto (2018), *Reinforcement Learning: An Introduction*, 2nd ed., Sections
6.4-6.7 and Example 6.6 (cliff walking).
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass

import numpy as np

from rlviz.errors import InputError
from rlviz.mdp import TabularMDP

__all__ = [
    "ALGORITHMS",
    "BLOCK",
    "DEFAULT_MAX_STEPS",
    "ControlResult",
    "Curve",
    "GreedyPath",
    "WorkedUpdate",
    "double_q_target",
    "epsilon_greedy_probs",
    "epsilon_schedule",
    "expected_sarsa_target",
    "greedy_path",
    "greedy_return",
    "learning_curve",
    "optimal_values",
    "q_learning_target",
    "run_control",
    "run_control_loop",
    "sarsa_target",
    "td_update",
    "worked_update",
]

ALGORITHMS: tuple[str, ...] = ("q_learning", "sarsa", "expected_sarsa", "double_q")
DEFAULT_MAX_STEPS = 1000
"""Steps after which an episode is cut short. With Q starting at 0 the first episodes are long
(about 500 steps on the 4x12 cliff at the book's settings, as the zero estimates send the agent
to every corner), so the cap sits well above that and the book's protocol is essentially never
cut. It bounds the work when a policy learns to wander: heavy exploration on a big slippery grid,
or a discount well below 1, under which wandering forever costs little more than the walk to
the goal."""

BLOCK = 256
"""Rows of uniforms each run draws from its generator at a time, and steps ``run_control``
prepares at once (a block's dice and tables then stay in cache)."""

# Columns of a run's row of uniforms: which decision each one drives. The last ``A`` columns
# are tie-break keys, one per action.
EXPLORE, RANDOM_ACTION, TRANSITION, TABLE_COIN, START, TIE_KEYS = range(6)


# --------------------------------------------------------------------------- single updates
def _check_probability(name: str, value) -> None:
    arr = np.asarray(value, dtype=np.float64)
    if not (np.isfinite(arr).all() and (arr >= 0).all() and (arr <= 1).all()):
        raise InputError(f"{name} must be between 0 and 1; got {value}")


def _discount(gamma, terminal):
    """γ, or 0 where the next state is terminal (nothing follows it)."""
    return gamma if terminal is False else gamma * np.logical_not(terminal)


def _chosen(q_t, a_t):
    """``Q(s_t, a_t)`` in every row: ``q_t [..., A]`` read at the actions ``a_t [...]``."""
    if q_t.ndim == 1:
        return q_t[a_t]
    if q_t.ndim == 2:  # one row per run: the engine's case, kept quick
        return q_t[_rows(len(q_t)), a_t]
    return np.take_along_axis(q_t, np.asarray(a_t)[..., None], axis=-1)[..., 0]


@functools.lru_cache(maxsize=64)
def _rows(n: int) -> np.ndarray:
    """``0, 1, …, n - 1``, made once per size."""
    rows = np.arange(n)
    rows.setflags(write=False)
    return rows


def _expected_value(q_t, epsilon):
    """``sum_a pi(a|s) Q(s, a)`` under ε-greedy, from values ``q_t [..., A]``.

    Tied greedy actions share one value, so the greedy share is ``(1 - ε) max Q`` however the
    ties are split. One row of ``q_t`` or many, each row is summed the same way, so a single
    run and a batch of runs get the same bits.
    """
    total = np.add.reduce(q_t, axis=-1)
    best = _chosen(q_t, q_t.argmax(axis=-1))
    return epsilon * (total / q_t.shape[-1]) + (1.0 - epsilon) * best


def q_learning_target(r_t, q_t, *, gamma, terminal=False):
    r"""Q-learning's target: the reward plus the discounted best next action value.

    .. math:: y = r_t + \gamma \max_{a'} Q(s_t, a'), \qquad y = r_t \text{ if } s_t
        \text{ is terminal.}

    Source: Watkins (1989); Sutton & Barto (2018), eq. 6.8.

    Args:
        r_t: ``[...]`` reward received on arriving in ``s_t``.
        q_t: ``[..., A]`` action values of the next state ``s_t``.
        gamma: Discount factor in [0, 1] (scalar or ``[...]``).
        terminal: ``[...]`` whether ``s_t`` ends the episode.

    Returns:
        ``[...]`` the target.
    """
    q_t = np.asarray(q_t, dtype=np.float64)
    best = _chosen(q_t, q_t.argmax(axis=-1))  # max_a' Q(s_t, a'): the greedy action's value
    return r_t + _discount(gamma, terminal) * best


def sarsa_target(r_t, q_t, a_t, *, gamma, terminal=False):
    r"""SARSA's target: the reward plus the discounted value of the next action actually taken.

    .. math:: y = r_t + \gamma Q(s_t, a_t), \qquad y = r_t \text{ if } s_t \text{ is terminal.}

    Source: Rummery & Niranjan (1994); Sutton & Barto (2018), eq. 6.7.

    Args:
        r_t: ``[...]`` reward received on arriving in ``s_t``.
        q_t: ``[..., A]`` action values of the next state ``s_t``.
        a_t: ``[...]`` the next action ``a'``, chosen by the behaviour policy in ``s_t``.
        gamma: Discount factor in [0, 1].
        terminal: ``[...]`` whether ``s_t`` ends the episode (then ``a_t`` is ignored).

    Returns:
        ``[...]`` the target.
    """
    q_t = np.asarray(q_t, dtype=np.float64)
    return r_t + _discount(gamma, terminal) * _chosen(q_t, a_t)


def epsilon_greedy_probs(q, epsilon) -> np.ndarray:
    r"""The ε-greedy policy, with the greedy share split equally between tied best actions.

    .. math:: \pi(a \mid s) = \frac{\varepsilon}{|A|} + (1 - \varepsilon)
        \frac{[a \in \arg\max Q(s, \cdot)]}{|\arg\max Q(s, \cdot)|}

    Source: Sutton & Barto (2018), Section 5.4.

    Args:
        q: ``[..., A]`` action values.
        epsilon: Exploration rate in [0, 1] (scalar or ``[...]``).

    Returns:
        ``[..., A]`` action probabilities.
    """
    q = np.asarray(q, dtype=np.float64)
    eps = np.asarray(epsilon, dtype=np.float64)[..., None]
    best = q == q.max(axis=-1, keepdims=True)
    greedy = best / best.sum(axis=-1, keepdims=True)
    return eps / q.shape[-1] + (1.0 - eps) * greedy


def expected_sarsa_target(r_t, q_t, *, gamma, epsilon, terminal=False):
    r"""Expected SARSA's target: the reward plus the discounted ε-greedy expectation of Q.

    .. math:: y = r_t + \gamma \sum_{a'} \pi(a' \mid s_t) Q(s_t, a')
        = r_t + \gamma \Big[\varepsilon \tfrac{1}{|A|} \sum_{a'} Q(s_t, a')
        + (1 - \varepsilon) \max_{a'} Q(s_t, a')\Big]

    (the second form holds because tied greedy actions share one value). With ``epsilon = 0`` it
    is Q-learning's target. Source: van Seijen et al. (2009); Sutton & Barto (2018), eq. 6.9.

    Args:
        r_t: ``[...]`` reward received on arriving in ``s_t``.
        q_t: ``[..., A]`` action values of the next state ``s_t``.
        gamma: Discount factor in [0, 1].
        epsilon: Exploration rate of the ε-greedy target policy (scalar or ``[...]``).
        terminal: ``[...]`` whether ``s_t`` ends the episode.

    Returns:
        ``[...]`` the target.
    """
    expected = _expected_value(np.asarray(q_t, dtype=np.float64), epsilon)
    return r_t + _discount(gamma, terminal) * expected


def double_q_target(r_t, q_select_t, q_evaluate_t, *, gamma, terminal=False):
    r"""Double Q-learning's target: one table picks the next action, the other values it.

    .. math:: y = r_t + \gamma Q_2\big(s_t, \arg\max_{a'} Q_1(s_t, a')\big)

    Decoupling the choice from the evaluation removes the maximisation bias of
    ``max_a Q``. Ties in the argmax go to the first action. Source: van Hasselt (2010);
    Sutton & Barto (2018), Section 6.7.

    Args:
        r_t: ``[...]`` reward received on arriving in ``s_t``.
        q_select_t: ``[..., A]`` values of ``s_t`` in the table being updated (``Q_1``).
        q_evaluate_t: ``[..., A]`` values of ``s_t`` in the other table (``Q_2``).
        gamma: Discount factor in [0, 1].
        terminal: ``[...]`` whether ``s_t`` ends the episode.

    Returns:
        ``[...]`` the target.
    """
    best = np.asarray(q_select_t, dtype=np.float64).argmax(axis=-1)
    chosen = _chosen(np.asarray(q_evaluate_t, dtype=np.float64), best)
    return r_t + _discount(gamma, terminal) * chosen


def td_update(q_tm1, target, alpha):
    r"""Move an action value a fraction α of the way to its target.

    .. math:: Q(s, a) \leftarrow Q(s, a) + \alpha \big[y - Q(s, a)\big]

    Args:
        q_tm1: ``[...]`` the current value ``Q(s, a)``.
        target: ``[...]`` the target ``y``.
        alpha: Step size in (0, 1] (scalar or ``[...]``).

    Returns:
        ``[...]`` the new value.
    """
    return q_tm1 + alpha * (target - q_tm1)


@dataclass(frozen=True)
class WorkedUpdate:
    """One TD update worked three ways, every intermediate number kept for display."""

    q_sa: float
    reward: float
    q_next: np.ndarray  # [A] Q(s', ·)
    a_next: int
    gamma: float
    alpha: float
    epsilon: float
    terminal: bool
    greedy_next: int  # first action with the largest Q(s', ·)
    max_next: float  # max_a Q(s', a)
    policy_next: np.ndarray  # [A] ε-greedy probabilities in s'
    expected_next: float  # sum_a π(a|s') Q(s', a)
    targets: dict[str, float]  # algorithm -> target y
    td_errors: dict[str, float]  # algorithm -> y - Q(s, a)
    new_values: dict[str, float]  # algorithm -> Q(s, a) after the update


def worked_update(
    q_sa: float,
    reward: float,
    q_next,
    a_next: int,
    *,
    gamma: float,
    alpha: float,
    epsilon: float,
    terminal: bool = False,
) -> WorkedUpdate:
    r"""One update of Q(s, a) by Q-learning, SARSA and Expected SARSA, step by step.

    For each algorithm: target ``y``, TD error ``δ = y − Q(s, a)`` and new value
    ``Q(s, a) + α δ`` (Sutton & Barto (2018), eqs. 6.7-6.9). When ``s'`` is terminal every
    target is just ``r``.

    Args:
        q_sa: The current ``Q(s, a)``.
        reward: The reward ``r`` of the transition.
        q_next: ``[A]`` action values ``Q(s', ·)`` of the next state.
        a_next: Index of the next action ``a'`` (used by SARSA).
        gamma: Discount factor in [0, 1].
        alpha: Step size in (0, 1].
        epsilon: Exploration rate of the ε-greedy policy (used by Expected SARSA).
        terminal: Whether ``s'`` is terminal.

    Returns:
        The worked update.

    Raises:
        InputError: if a number is missing or out of range, or ``a'`` is not an action.
    """
    q_next = np.asarray(q_next, dtype=np.float64)
    if q_next.ndim != 1 or q_next.size == 0:
        raise InputError("Q(s', ·) needs one value per action (at least one)")
    for name, value in (("Q(s, a)", q_sa), ("r", reward)):
        if not np.isfinite(value):
            raise InputError(f"{name} must be a finite number; got {value}")
    if not np.isfinite(q_next).all():
        raise InputError("every Q(s', ·) must be a finite number")
    _check_settings(gamma=gamma, alpha=alpha, epsilon=epsilon)
    if not 0 <= int(a_next) < q_next.size:
        raise InputError(f"a' must be one of the {q_next.size} actions; got {a_next}")
    a_next = int(a_next)
    targets = {
        "q_learning": float(q_learning_target(reward, q_next, gamma=gamma, terminal=terminal)),
        "sarsa": float(sarsa_target(reward, q_next, a_next, gamma=gamma, terminal=terminal)),
        "expected_sarsa": float(
            expected_sarsa_target(reward, q_next, gamma=gamma, epsilon=epsilon, terminal=terminal)
        ),
    }
    policy = epsilon_greedy_probs(q_next, epsilon)
    return WorkedUpdate(
        q_sa=float(q_sa),
        reward=float(reward),
        q_next=q_next,
        a_next=a_next,
        gamma=float(gamma),
        alpha=float(alpha),
        epsilon=float(epsilon),
        terminal=bool(terminal),
        greedy_next=int(q_next.argmax()),
        max_next=float(q_next.max()),
        policy_next=policy,
        expected_next=float(policy @ q_next),
        targets=targets,
        td_errors={k: y - float(q_sa) for k, y in targets.items()},
        new_values={k: float(td_update(q_sa, y, alpha)) for k, y in targets.items()},
    )


# --------------------------------------------------------------------------- validation
def _check_settings(*, gamma=None, alpha=None, epsilon=None) -> None:
    if alpha is not None and not (np.isfinite(alpha) and 0.0 < alpha <= 1.0):
        raise InputError(f"the step size α must be in (0, 1]; got {alpha}")
    if epsilon is not None:
        _check_probability("the exploration rate ε", epsilon)
    if gamma is not None:
        _check_probability("the discount γ", gamma)


def _check_run(
    mdp, algorithm, episodes, runs, epsilon, alpha, gamma, max_steps, max_total_steps
) -> None:
    if not isinstance(mdp, TabularMDP):
        raise TypeError(f"expected a TabularMDP; got {type(mdp).__name__}")
    if algorithm not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {algorithm!r}; choose one of {', '.join(ALGORITHMS)}")
    counts = [("episodes", episodes), ("runs", runs), ("max_steps", max_steps)]
    if max_total_steps is not None:
        counts.append(("max_total_steps", max_total_steps))
    for name, value in counts:
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise InputError(f"the number of {name} must be a whole number ≥ 1; got {value}")
    _check_settings(gamma=gamma, alpha=alpha, epsilon=epsilon)
    if (mdp.start[mdp.terminal] > 0).any():
        raise InputError("an episode cannot start in a terminal state")


def epsilon_schedule(epsilon: float, episodes: int, *, decay: bool = False) -> np.ndarray:
    r"""The exploration rate of each episode: constant, or decaying linearly to zero.

    .. math:: \varepsilon_k = \varepsilon \Big(1 - \frac{k}{N - 1}\Big), \quad k = 0, \dots, N-1

    so the last episode is fully greedy (a GLIE-style schedule, Sutton & Barto (2018), Sec. 5.4).

    Args:
        epsilon: Initial exploration rate in [0, 1].
        episodes: Number of episodes N.
        decay: Decay linearly to 0 instead of staying constant.

    Returns:
        ``[N]`` ε of each episode.
    """
    _check_probability("the exploration rate ε", epsilon)
    if not decay or episodes == 1:
        return np.full(episodes, float(epsilon))
    return float(epsilon) * (1.0 - np.arange(episodes) / (episodes - 1))


# --------------------------------------------------------------------------- results
@dataclass(frozen=True)
class GreedyPath:
    """Where the greedy policy leads from the start, following each action's likeliest outcome.

    The walk stops at a terminal state, or when it comes back to a state it has already visited
    (then it would go round forever: ``loops`` is True), or after ``max_len`` moves.
    """

    states: np.ndarray  # [L + 1] states visited, the start first
    actions: np.ndarray  # [L] greedy action taken in each but the last
    reaches_goal: bool  # ends in a goal (a terminal state that is not a hole)
    loops: bool  # returns to a state already on the path

    @property
    def length(self) -> int:
        """Number of moves."""
        return len(self.actions)


@dataclass(frozen=True)
class ControlResult:
    """``runs`` independent learners of one algorithm, trained for ``episodes`` episodes each.

    A run whose step budget ran out played fewer episodes: the ones it never played have a NaN
    return and length 0.
    """

    algorithm: str
    returns: np.ndarray  # [R, N] undiscounted sum of rewards of each episode (online), NaN unplayed
    lengths: np.ndarray  # [R, N] steps of each episode, 0 unplayed
    truncated: np.ndarray  # [R, N] bool, episode cut short (max_steps or the step budget)
    q: np.ndarray  # [R, S, A] final action values (Double Q: the mean of its two tables)
    visits: np.ndarray  # [R, S] times each state was visited (an action taken there)
    epsilons: np.ndarray  # [N] ε of each episode
    path_lengths: np.ndarray  # [R] moves of each run's greedy path, -1 if it misses the goal
    path: GreedyPath  # the greedy path of the run-averaged Q
    played: np.ndarray  # [R] episodes each run played (N unless its step budget ran out)
    alpha: float
    gamma: float
    seed: int
    max_steps: int
    max_total_steps: int | None

    @property
    def runs(self) -> int:
        """Number of independent runs R."""
        return self.returns.shape[0]

    @property
    def episodes(self) -> int:
        """Episodes per run N."""
        return self.returns.shape[1]

    @property
    def mean_q(self) -> np.ndarray:
        """``[S, A]`` action values averaged over runs."""
        return self.q.mean(axis=0)

    @property
    def stopped_early(self) -> np.ndarray:
        """``[R]`` runs whose step budget ran out before their last episode."""
        return self.played < self.episodes

    def mean_return(self, last: int = 100) -> float:
        """Average online return over the last ``last`` episodes each run played."""
        played = np.arange(self.episodes) < self.played[:, None]
        recent = np.arange(self.episodes) >= self.played[:, None] - last
        window = played & recent
        per_run = np.where(window, self.returns, 0.0).sum(axis=1) / window.sum(axis=1)
        return float(per_run.mean())


@dataclass(frozen=True)
class Curve:
    """A learning curve summarised across runs."""

    mean: np.ndarray  # [N] mean over runs of the smoothed per-episode value
    low: np.ndarray  # [N] lower end of the 95% confidence interval of the mean
    high: np.ndarray  # [N] upper end


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


def run_control_loop(
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
    """``run_control`` one run at a time, step by step, in the book's order.

    The reference the vectorised version must equal draw for draw: the same algorithms, the same
    uniforms (row ``t`` of run ``r``), the same target functions; only the bookkeeping differs.
    SARSA here chooses ``a'`` in ``s'`` before updating ``Q(s, a)``, as in Sutton & Barto
    (2018), Section 6.4. Arguments and result as in ``run_control``.
    """
    _check_run(
        mdp, algorithm, episodes, runs, epsilon, alpha, gamma, max_steps, max_total_steps
    )
    n_states, n_actions = mdp.n_states, mdp.n_actions
    epsilons = epsilon_schedule(epsilon, episodes, decay=epsilon_decay)
    sample_start = _start_sampler(mdp)
    cum_prob = mdp.cumulative_prob
    n_outcomes = cum_prob.shape[2]

    def choose(q_row, eps, u) -> int:
        if u[EXPLORE] < eps:
            return int(u[RANDOM_ACTION] * n_actions)
        best = np.flatnonzero(q_row == q_row.max())
        keys = u[TIE_KEYS:]
        return int(best[keys[best].argmax()])

    def step(s, a, u):
        k = min(int((cum_prob[s, a] <= u[TRANSITION]).sum()), n_outcomes - 1)
        return int(mdp.next_state[s, a, k]), float(mdp.reward[s, a, k])

    shape = (runs, episodes)
    returns, lengths = np.full(shape, np.nan), np.zeros(shape, dtype=np.int64)
    truncated = np.zeros(shape, dtype=bool)
    played = np.zeros(runs, dtype=np.int64)
    budget = np.inf if max_total_steps is None else max_total_steps
    visits = np.zeros((runs, n_states), dtype=np.int64)
    final_q = np.zeros((runs, n_states, n_actions))
    for i, gen in enumerate(_generators(seed, runs)):
        dice = _RunDice(gen, n_actions)
        q1, q2 = np.zeros((n_states, n_actions)), np.zeros((n_states, n_actions))
        t = 0
        for k in range(episodes):
            eps = epsilons[k]
            u = dice.row(t)
            s = mdp.start_state if sample_start is None else int(sample_start(u[START]))
            a = choose(q1[s] + q2[s] if algorithm == "double_q" else q1[s], eps, u)
            total, n = 0.0, 0
            while True:
                visits[i, s] += 1
                s2, r = step(s, a, u)
                total += r
                n += 1
                term = bool(mdp.terminal[s2])
                cut = (n >= max_steps or t + 1 >= budget) and not term
                u_next = dice.row(t + 1)
                if algorithm == "q_learning":
                    y = q_learning_target(r, q1[s2], gamma=gamma, terminal=term)
                    q1[s, a] = td_update(q1[s, a], y, alpha)
                elif algorithm == "sarsa":
                    a2 = choose(q1[s2], eps, u_next) if not term else 0
                    y = sarsa_target(r, q1[s2], a2, gamma=gamma, terminal=term)
                    q1[s, a] = td_update(q1[s, a], y, alpha)
                elif algorithm == "expected_sarsa":
                    y = expected_sarsa_target(r, q1[s2], gamma=gamma, epsilon=eps, terminal=term)
                    q1[s, a] = td_update(q1[s, a], y, alpha)
                else:
                    qa, qb = (q1, q2) if u[TABLE_COIN] < 0.5 else (q2, q1)
                    y = double_q_target(r, qa[s2], qb[s2], gamma=gamma, terminal=term)
                    qa[s, a] = td_update(qa[s, a], y, alpha)
                t += 1
                u = u_next
                if term or cut:
                    break
                if algorithm != "sarsa":
                    a2 = choose(q1[s2] + q2[s2] if algorithm == "double_q" else q1[s2], eps, u)
                s, a = s2, a2
            returns[i, k], lengths[i, k], truncated[i, k] = total, n, cut
            played[i] = k + 1
            if t >= budget:
                break
        final_q[i] = (q1 + q2) / 2 if algorithm == "double_q" else q1
    return _result(
        mdp, algorithm, returns, lengths, truncated, final_q, visits, epsilons, played,
        alpha=alpha, gamma=gamma, seed=seed, max_steps=max_steps,
        max_total_steps=max_total_steps,
    )


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
