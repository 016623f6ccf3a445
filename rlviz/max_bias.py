r"""Maximization bias: why Q-learning overestimates and Double Q-learning does not.

The MDP of Sutton & Barto (2018), Example 6.7 and Figure 6.5. Every episode starts in A, which has
two actions: *right* ends the episode with reward 0; *left* gives reward 0 and leads to B. B has
``m`` actions, each ending the episode with a reward drawn afresh from :math:`N(\mu, \sigma^2)`,
:math:`\mu = -0.1`. Going left is worth :math:`\gamma\mu < 0`, so right is optimal and an
ε-greedy learner that knows it still goes left with probability ε/2. Early on, though, the
largest of B's noisy estimates is above zero, so Q-learning's target for Q(A, left) is too: it
goes left far more often, and for a long time.

Two learners are compared on this MDP with every other method of TD control here:

* ``run`` trains Q-learning, Double Q-learning and Expected SARSA, many independent runs at once,
  one episode per lockstep (an episode is one or two steps). The readable step is ``episode``;
  it calls the target functions of ``rlviz.td`` (``q_learning_target``, ``double_q_target``,
  ``expected_sarsa_target``, ``td_update``) on arrays whose leading axis is the run, and
  ``epsilon_greedy`` for the behaviour. ``run_loop`` is the same algorithm one run and one step at
  a time; the two agree draw for draw.
* ``estimator_study`` is the statistics underneath: the largest of ``m`` sample means as an
  estimate of the largest true mean (the *single* estimator, biased upward), against choosing the
  action with one half of the samples and valuing it with the other (the *double* estimator,
  van Hasselt 2010), by Monte Carlo and by numerical integration.

The book's MDP is not a ``TabularMDP``: that class gives every state the same action set (here A
has 2 actions and B has ``m``) and a fixed reward per outcome (here B's reward is Gaussian), so
the MDP is described by ``MaxBiasMDP`` and trained by its own small engine.

Random numbers. Episode ``e`` of run ``r`` owns one row of uniforms, each column with one purpose
(``A_EXPLORE`` … ``COIN_B``), and one standard normal for B's reward. So with the same seed the
three methods see the same dice wherever their decisions coincide, and they differ by algorithm,
not by luck. The dice come in blocks of ``BLOCK`` episodes, block ``k`` from its own generator
``SeedSequence(seed, spawn_key=(k, stream))`` filled run by run, so run ``r`` gets the same dice
whether 1 or 10,000 runs are trained.

References: Sutton & Barto (2018), *Reinforcement Learning: An Introduction*, 2nd ed., Section 6.7,
Example 6.7, Figure 6.5; H. van Hasselt (2010), "Double Q-learning", NeurIPS 23; J. E. Smith and
R. L. Winkler (2006), "The optimizer's curse", Management Science 52(3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rlviz.errors import InputError
from rlviz.td import double_q_target, expected_sarsa_target, q_learning_target, td_update

__all__ = [
    "BLOCK",
    "BOOK",
    "LEFT",
    "MAX_ACTIONS",
    "MAX_EPISODES",
    "MAX_RUNS",
    "MAX_SAMPLES",
    "MAX_TRIALS",
    "METHODS",
    "RIGHT",
    "Curve",
    "EstimatorStudy",
    "Known",
    "MaxBiasMDP",
    "MethodResult",
    "Result",
    "WorkedTargets",
    "double_estimator_bias",
    "episode",
    "epsilon_greedy",
    "estimator_study",
    "expected_max_of_normals",
    "known_answers",
    "max_estimators",
    "run",
    "run_loop",
    "single_estimator_bias",
    "worked_targets",
]

METHODS: tuple[str, ...] = ("q_learning", "double_q", "expected_sarsa")
LEFT, RIGHT = 0, 1
BLOCK = 32
"""Episodes of dice drawn at a time (one block of every run's uniforms stays small in memory)."""
MAX_ACTIONS = 100
MAX_RUNS = 10_000
MAX_EPISODES = 1000
MAX_SAMPLES = 1000
MAX_TRIALS = 20_000
BOOK = dict(n_actions=10, mean=-0.1, sigma=1.0, epsilon=0.1, alpha=0.1, gamma=1.0, episodes=300,
            runs=10_000)
"""Sutton & Barto's protocol for Figure 6.5 (the book says "many" actions at B; 10 is the usual
choice): ε = α = 0.1, γ = 1, Q starting at 0, ties broken at random, 300 episodes, 10,000 runs."""

# Columns of an episode's row of uniforms: which decision each one drives.
A_EXPLORE, A_PICK, B_EXPLORE, B_PICK, COIN_A, COIN_B = range(6)
N_UNIFORMS = 6
SOURCE = "Sutton & Barto (2018)"


# --------------------------------------------------------------------------- the MDP
@dataclass(frozen=True)
class MaxBiasMDP:
    r"""The MDP of Sutton & Barto (2018), Example 6.7.

    Description: two non-terminal states. Every episode starts in A.
    Action space: in A, ``LEFT`` (0) and ``RIGHT`` (1); in B, ``n_actions`` actions.
    Rewards: 0 for both actions of A; each action of B draws a reward from
    :math:`N(\mu, \sigma^2)` every time it is taken.
    Episode end: right from A, or any action of B.

    Attributes:
        n_actions: Actions at B, m ≥ 1.
        mean: Mean reward of every action at B (the book's −0.1).
        sigma: Standard deviation of that reward (the book's 1).
    """

    n_actions: int = 10
    mean: float = -0.1
    sigma: float = 1.0

    def __post_init__(self) -> None:
        m = self.n_actions
        if isinstance(m, bool) or not isinstance(m, int | np.integer) or not 1 <= m <= MAX_ACTIONS:
            raise InputError(f"B needs between 1 and {MAX_ACTIONS} actions; got {m}")
        if not (math.isfinite(self.mean) and abs(self.mean) <= 100):
            raise InputError(f"B's mean reward must be a number in [−100, 100]; got {self.mean}")
        if not (math.isfinite(self.sigma) and 0 <= self.sigma <= 100):
            raise InputError(f"the reward noise σ must be in [0, 100]; got {self.sigma}")
        object.__setattr__(self, "n_actions", int(m))

    def q_left(self, gamma: float = 1.0) -> float:
        """True value of left from A: reward 0, then any action of B is worth μ."""
        return gamma * self.mean

    @staticmethod
    def optimal_left_fraction(epsilon: float) -> float:
        """How often an ε-greedy learner that knows right is better still goes left: ε/2."""
        return epsilon / 2


# --------------------------------------------------------------------------- the step
def epsilon_greedy(q, explore_u, pick_u, epsilon):
    r"""ε-greedy actions from two uniforms per decision, ties among the best broken at random.

    With probability ε (``explore_u < ε``) any action, else one of the greedy actions; in either
    case ``pick_u`` picks uniformly among the candidates: the k-th one, ``k = ⌊pick_u · n⌋``.

    .. math:: \pi(a \mid s) = \frac{\varepsilon}{|\mathcal A|} + (1 - \varepsilon)
        \frac{[a \in \arg\max Q(s, \cdot)]}{|\arg\max Q(s, \cdot)|}

    Source: Sutton & Barto (2018), Section 2.2 and Figure 6.5 ("any ties in ε-greedy action
    selection were broken randomly").

    Args:
        q: ``[..., A]`` action values.
        explore_u: ``[...]`` uniforms in [0, 1): explore when below ε.
        pick_u: ``[...]`` uniforms in [0, 1): which candidate.
        epsilon: Exploration rate in [0, 1].

    Returns:
        ``[...]`` the chosen actions.
    """
    explore = np.asarray(explore_u) < epsilon
    candidates = explore[..., None] | (q == q.max(axis=-1, keepdims=True))
    count = candidates.sum(axis=-1, dtype=np.int16)  # (small whole numbers: quick to add up)
    k = (pick_u * count).astype(np.int16)  # 0 <= k < count
    # The k-th candidate (from 0) is the action with exactly k candidates before it: count the
    # actions whose running number of candidates is still at most k.
    seen = np.zeros_like(k)
    action = np.zeros_like(k)
    for a in range(q.shape[-1] - 1):
        seen += candidates[..., a]
        action += seen <= k
    return action


def episode(q_a, q_b, u, z, *, algorithm, epsilon, alpha, gamma, mean, sigma):
    r"""One episode from A, in every run at once: the tables learn, and who went left is returned.

    In A choose ε-greedily (Double Q acts on :math:`Q_1 + Q_2`). Right ends the episode with
    reward 0: its target is 0. Left gives reward 0 and moves to B, and the three methods differ
    only in how the target of Q(A, left) values B:

    .. math::
        y_{\text{Q}} = \gamma \max_b Q(B, b), \qquad
        y_{\text{Exp. SARSA}} = \gamma \textstyle\sum_b \pi(b \mid B)\, Q(B, b), \qquad
        y_{\text{Double}} = \gamma\, Q_2\big(B, \arg\max_b Q_1(B, b)\big)

    (Double Q updates :math:`Q_1` or, on the other side of a fair coin, :math:`Q_2` with the
    roles swapped). Then in B choose ε-greedily again and receive :math:`r \sim N(\mu,
    \sigma^2)`; B's actions end the episode, so every method's target there is the reward:
    :math:`Q(B, b) \leftarrow Q(B, b) + \alpha [r - Q(B, b)]`. Sutton & Barto (2018), Section 6.7.

    Args:
        q_a: ``[T, R, 2]`` values of A's actions, one table (T = 1) or Double Q's two.
        q_b: ``[T, R, m]`` values of B's actions.
        u: ``[6, R]`` this episode's uniforms, one row per purpose (``A_EXPLORE`` …).
        z: ``[R]`` this episode's standard normal, for B's reward.
        algorithm: One of ``METHODS``.
        epsilon: Exploration rate of the behaviour (and of Expected SARSA's target policy).
        alpha: Step size.
        gamma: Discount.
        mean: Mean reward at B.
        sigma: Standard deviation of B's reward.

    Returns:
        ``[R]`` whether each run went left. The tables are updated in place, as the book's
        :math:`Q(S, A) \leftarrow \dots` (they belong to ``run``, which hands them over).
    """
    double = algorithm == "double_q"
    a = epsilon_greedy(q_a.sum(axis=0), u[A_EXPLORE], u[A_PICK], epsilon)
    left = a == LEFT
    right, went = np.flatnonzero(~left), np.flatnonzero(left)  # runs that end now, or go to B
    qb = _take_runs(q_b, went)  # [T, L, m] Q(B, ·) of the runs that went left
    heads = u[COIN_A, went] < 0.5  # Double Q: update Q1 (heads) or Q2

    # The target of Q(A, left): reward 0 plus the discounted value of B, as each method sees it.
    if algorithm == "q_learning":
        target = q_learning_target(0.0, qb[0], gamma=gamma)
    elif algorithm == "expected_sarsa":  # (each run's row contiguous, so that its sum over the
        # actions is added in the same order as a single run's)
        target = expected_sarsa_target(0.0, np.ascontiguousarray(qb[0]), gamma=gamma,
                                       epsilon=epsilon)
    elif double:  # heads: Q1 picks b* and Q2 values it; tails: the other way round
        picks = np.where(heads[:, None], qb[0], qb[1])
        values = np.where(heads[:, None], qb[1], qb[0])
        target = double_q_target(0.0, picks, values, gamma=gamma)
    else:
        raise ValueError(f"unknown algorithm {algorithm!r}")

    t_right = (u[COIN_A, right] >= 0.5).astype(np.int64) if double else 0
    t_left = (~heads).astype(np.int64) if double else 0  # Double Q: which table learns
    q_a[t_right, right, RIGHT] = td_update(q_a[t_right, right, RIGHT], 0.0, alpha)  # r = 0, ends
    q_a[t_left, went, LEFT] = td_update(q_a[t_left, went, LEFT], target, alpha)

    # In B: choose, receive the reward, and move Q(B, b) towards it (the episode ends).
    b = epsilon_greedy(qb.sum(axis=0), u[B_EXPLORE, went], u[B_PICK, went], epsilon)
    r = mean + sigma * z[went]
    t_b = (u[COIN_B, went] >= 0.5).astype(np.int64) if double else 0
    q_b[t_b, went, b] = td_update(q_b[t_b, went, b], r, alpha)
    return left


def _take_runs(q, runs):
    """``q[:, runs]``, kept in the same memory order (actions outermost, runs contiguous)."""
    return np.take(q.transpose(0, 2, 1), runs, axis=2).transpose(0, 2, 1)


# --------------------------------------------------------------------------- validation
def _check_count(name: str, value, high: int, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or not (
        low <= value <= high
    ):
        raise InputError(f"the number of {name} must be a whole number in [{low}, {high}]; "
                         f"got {value}")
    return int(value)


def _check_settings(epsilon, alpha, gamma) -> None:
    if not (math.isfinite(epsilon) and 0 <= epsilon <= 1):
        raise InputError(f"the exploration rate ε must be between 0 and 1; got {epsilon}")
    if not (math.isfinite(alpha) and 0 < alpha <= 1):
        raise InputError(f"the step size α must be in (0, 1]; got {alpha}")
    if not (math.isfinite(gamma) and 0 <= gamma <= 1):
        raise InputError(f"the discount γ must be between 0 and 1; got {gamma}")


def _check_methods(algorithms) -> tuple[str, ...]:
    algorithms = tuple(algorithms)
    if not algorithms:
        raise InputError("choose at least one method")
    unknown = [a for a in algorithms if a not in METHODS]
    if unknown:
        raise ValueError(f"unknown algorithm {unknown[0]!r}; choose from {', '.join(METHODS)}")
    return algorithms


# --------------------------------------------------------------------------- dice
def _dice(seed: int, runs: int, block: int, columns=range(N_UNIFORMS)):
    """Block ``block`` of every run's dice: uniforms ``[BLOCK, 6, R]`` and normals ``[BLOCK, R]``.

    Each column (purpose) of each block has its own generator, filled run by run
    (``[R, BLOCK]`` in C order), so the first runs' numbers do not depend on how many runs there
    are, and a method draws only the columns it uses (the others are NaN). The numbers are then
    laid out episode-major for the lockstep.
    """
    u = np.full((BLOCK, N_UNIFORMS, runs), np.nan)
    for c in columns:
        gen = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(block, c)))
        u[:, c] = gen.random((runs, BLOCK)).T
    gen = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(block, N_UNIFORMS)))
    return u, np.ascontiguousarray(gen.standard_normal((runs, BLOCK)).T)


def _columns(algorithms) -> tuple[int, ...]:
    """The dice columns these methods use: the table coins only for Double Q."""
    if "double_q" in algorithms:
        return tuple(range(N_UNIFORMS))
    return (A_EXPLORE, A_PICK, B_EXPLORE, B_PICK)


# --------------------------------------------------------------------------- results
@dataclass(frozen=True)
class Curve:
    """A per-episode quantity summarised across runs: mean and a 95% confidence band."""

    mean: np.ndarray  # [N] mean over runs after each episode
    low: np.ndarray  # [N] lower end of the 95% interval of the mean
    high: np.ndarray  # [N] upper end


@dataclass(frozen=True)
class MethodResult:
    """One method trained on the MDP for ``runs`` independent runs of ``episodes`` episodes."""

    algorithm: str
    left: Curve  # fraction of runs that went left from A in each episode
    q_left: Curve  # Q(A, left) after each episode (Double Q: the mean of its two tables)
    q_right: Curve  # Q(A, right) after each episode
    final_q_a: np.ndarray  # [R, 2] Q(A, ·) after the last episode (Double Q: mean of tables)
    final_q_b: np.ndarray  # [R, m] Q(B, ·) after the last episode
    kept_q_a: np.ndarray  # [K, N + 1, T, 2] the first K runs' tables before/after each episode
    kept_q_b: np.ndarray  # [K, N + 1, T, m]
    kept_left: np.ndarray  # [K, N] bool, whether each of those runs went left

    @property
    def episodes(self) -> int:
        """Episodes per run N."""
        return len(self.left.mean)

    def left_fraction(self, first: int, last: int) -> float:
        """Mean fraction of left from A over episodes ``first``–``last`` (1-based, inclusive)."""
        return float(self.left.mean[first - 1:last].mean())


@dataclass(frozen=True)
class Result:
    """Every method on one MDP, with the same seed (so the same dice)."""

    mdp: MaxBiasMDP
    methods: dict[str, MethodResult]
    epsilon: float
    alpha: float
    gamma: float
    episodes: int
    runs: int
    seed: int


def _t_band(total: np.ndarray, squares: np.ndarray, n: int) -> Curve:
    """Mean and t-interval from per-episode sums and sums of squares over ``n`` runs."""
    mean = total / n
    if n == 1:
        return Curve(mean=mean, low=mean.copy(), high=mean.copy())
    from scipy.stats import t as student_t

    var = np.maximum(squares - total * mean, 0.0) / (n - 1)
    half = student_t.ppf(0.975, n - 1) * np.sqrt(var / n)
    return Curve(mean=mean, low=mean - half, high=mean + half)


def _proportion_band(count: np.ndarray, n: int) -> Curve:
    """A fraction of runs with its 95% Wilson interval (sensible at 0, 1 and few runs)."""
    p = count / n
    z = 1.959963984540054
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return Curve(mean=p, low=np.maximum(centre - half, 0.0), high=np.minimum(centre + half, 1.0))


# --------------------------------------------------------------------------- training
def run(
    mdp: MaxBiasMDP,
    *,
    algorithms=METHODS,
    episodes: int = 300,
    runs: int = 1000,
    epsilon: float = 0.1,
    alpha: float = 0.1,
    gamma: float = 1.0,
    seed: int = 0,
    keep: int = 1,
) -> Result:
    r"""Train each method for ``runs`` independent runs on the MDP, all runs in lockstep.

    Each episode is one call of ``episode`` per method on arrays over the runs; Q starts at 0.
    Every method uses the same seed, so the same dice. Per episode the runs are summarised as
    they go (how many went left, the mean and spread of Q(A, ·) and of the target), so memory
    does not grow with ``runs × episodes``; the first ``keep`` runs are also kept in full.
    Sutton & Barto (2018), Section 6.7, Figure 6.5.

    Args:
        mdp: The MDP.
        algorithms: Methods from ``METHODS``.
        episodes: Episodes per run, N.
        runs: Independent runs, R.
        epsilon: Exploration rate in [0, 1].
        alpha: Step size in (0, 1].
        gamma: Discount in [0, 1].
        seed: Seed of every random draw.
        keep: Runs whose every table is kept (for the worked update, and tests).

    Returns:
        The per-episode curves of every method.

    Raises:
        InputError: if a setting is out of range.
    """
    algorithms = _check_methods(algorithms)
    episodes = _check_count("episodes", episodes, MAX_EPISODES)
    runs = _check_count("runs", runs, MAX_RUNS)
    keep = _check_count("runs kept", keep, runs, low=0)
    _check_settings(epsilon, alpha, gamma)
    m = mdp.n_actions
    settings = dict(epsilon=epsilon, alpha=alpha, gamma=gamma, mean=mdp.mean, sigma=mdp.sigma)
    tables = {a: 2 if a == "double_q" else 1 for a in algorithms}
    # Tables are [T, R, A] views of arrays laid out [T, A, R]: each action's values over the runs
    # are contiguous, so a max or a sum over the actions is a few whole-array operations.
    q = {a: (np.zeros((t, 2, runs)).transpose(0, 2, 1), np.zeros((t, m, runs)).transpose(0, 2, 1))
         for a, t in tables.items()}
    stats = {a: np.zeros((5, episodes)) for a in algorithms}  # counts, sums, sums of squares
    kept = {a: (np.zeros((keep, episodes + 1, t, 2)), np.zeros((keep, episodes + 1, t, m)),
                np.zeros((keep, episodes), dtype=bool)) for a, t in tables.items()}
    columns = _columns(algorithms)
    for block in range((episodes + BLOCK - 1) // BLOCK):
        u, z = _dice(seed, runs, block, columns)
        for i in range(min(BLOCK, episodes - block * BLOCK)):
            e = block * BLOCK + i
            for algo in algorithms:
                q_a, q_b = q[algo]
                left = episode(q_a, q_b, u[i], z[i], algorithm=algo, **settings)
                _book(stats[algo], e, q_a, left)
                if keep:
                    kq_a, kq_b, k_left = kept[algo]
                    kq_a[:, e + 1] = q_a[:, :keep].swapaxes(0, 1)
                    kq_b[:, e + 1] = q_b[:, :keep].swapaxes(0, 1)
                    k_left[:, e] = left[:keep]
    methods = {}
    for algo in algorithms:
        s, (q_a, q_b) = stats[algo], q[algo]
        for arr in kept[algo]:
            arr.setflags(write=False)
        methods[algo] = MethodResult(
            algorithm=algo, left=_proportion_band(s[0], runs), q_left=_t_band(s[1], s[2], runs),
            q_right=_t_band(s[3], s[4], runs), final_q_a=q_a.mean(axis=0),
            final_q_b=q_b.mean(axis=0), kept_q_a=kept[algo][0], kept_q_b=kept[algo][1],
            kept_left=kept[algo][2],
        )
    return Result(mdp=mdp, methods=methods, epsilon=float(epsilon), alpha=float(alpha),
                  gamma=float(gamma), episodes=episodes, runs=runs, seed=int(seed))


def _book(stats: np.ndarray, e: int, q_a: np.ndarray, left: np.ndarray) -> None:
    """Add episode ``e``'s count of left, and sums and sums of squares of Q(A, ·), to ``stats``."""
    values = (q_a[0] + q_a[1]) / 2 if len(q_a) > 1 else q_a[0]  # [R, 2] (Double Q: the mean)
    q_left, q_right = values[:, LEFT], values[:, RIGHT]  # contiguous: actions are outermost
    stats[0, e] = np.count_nonzero(left)
    stats[1, e], stats[2, e] = q_left.sum(), q_left @ q_left
    stats[3, e], stats[4, e] = q_right.sum(), q_right @ q_right


def run_loop(
    mdp: MaxBiasMDP,
    *,
    algorithm: str,
    episodes: int = 300,
    runs: int = 1,
    epsilon: float = 0.1,
    alpha: float = 0.1,
    gamma: float = 1.0,
    seed: int = 0,
) -> dict[str, np.ndarray]:
    """``run`` one run at a time and one step at a time, as in the book's boxed pseudocode.

    The reference the lockstep must equal draw for draw: the same dice (episode ``e`` of run
    ``r``), the same target functions, called on one run's rows.

    Returns:
        ``q_a [R, N + 1, T, 2]`` and ``q_b [R, N + 1, T, m]`` (the tables before and after each
        episode) and ``left [R, N]``.
    """
    (algorithm,) = _check_methods([algorithm])
    _check_settings(epsilon, alpha, gamma)
    n_tables = 2 if algorithm == "double_q" else 1
    m = mdp.n_actions
    out_a = np.zeros((runs, episodes + 1, n_tables, 2))
    out_b = np.zeros((runs, episodes + 1, n_tables, m))
    out_left = np.zeros((runs, episodes), dtype=bool)
    dice = [_dice(seed, runs, k, _columns([algorithm]))
            for k in range((episodes + BLOCK - 1) // BLOCK)]
    for r in range(runs):
        q_a, q_b = np.zeros((n_tables, 2)), np.zeros((n_tables, m))  # Q(A, ·), Q(B, ·)
        for e in range(episodes):
            u_all, z_all = dice[e // BLOCK]
            u, z = u_all[e % BLOCK, :, r], z_all[e % BLOCK, r]
            a = int(epsilon_greedy(q_a.sum(axis=0), u[A_EXPLORE], u[A_PICK], epsilon))
            if algorithm == "double_q":  # the coin: update Q1 (heads) or Q2
                one, other = (0, 1) if u[COIN_A] < 0.5 else (1, 0)
                target = double_q_target(0.0, q_b[one], q_b[other], gamma=gamma)
            elif algorithm == "q_learning":
                one, target = 0, q_learning_target(0.0, q_b[0], gamma=gamma)
            else:
                one = 0
                target = expected_sarsa_target(0.0, q_b[0], gamma=gamma, epsilon=epsilon)
            if a == RIGHT:  # the episode ends with reward 0
                q_a[one, RIGHT] = td_update(q_a[one, RIGHT], 0.0, alpha)
            else:  # reward 0, on to B
                q_a[one, LEFT] = td_update(q_a[one, LEFT], target, alpha)
                b = int(epsilon_greedy(q_b.sum(axis=0), u[B_EXPLORE], u[B_PICK], epsilon))
                reward = mdp.mean + mdp.sigma * z
                t = 1 if algorithm == "double_q" and u[COIN_B] >= 0.5 else 0
                q_b[t, b] = td_update(q_b[t, b], reward, alpha)  # B's actions end the episode
            out_a[r, e + 1], out_b[r, e + 1] = q_a, q_b
            out_left[r, e] = a == LEFT
    return {"q_a": out_a, "q_b": out_b, "left": out_left}


# --------------------------------------------------------------------------- one update by hand
@dataclass(frozen=True)
class WorkedTargets:
    """The targets of Q(A, left) at the start of one episode of one run, worked by each method."""

    episode: int  # 1-based
    q_b: dict[str, np.ndarray]  # method -> [T, m] its Q(B, ·) before the episode
    chosen: dict[str, int]  # method -> the action of B whose value the target reads
    # (Expected SARSA: its greedy action), for Double Q the one Q1 picks
    value: dict[str, float]  # method -> the value of B in its target (Double Q: Q2 at Q1's pick)
    target: dict[str, float]  # method -> y = 0 + γ · value
    q_left: dict[str, float]  # method -> Q(A, left) before (the table Double Q's heads update)
    new_q_left: dict[str, float]  # method -> after the update, if the run goes left
    gamma: float
    alpha: float
    epsilon: float
    mean: float  # μ, the true value of every action of B
    true_value: float  # γ μ, the true value of left from A


def worked_targets(result: Result, episode_number: int) -> WorkedTargets:
    """Run 1's targets of Q(A, left) at the start of episode ``episode_number`` (1-based).

    Each method's own Q(B, ·) at that moment, the target its update would use were the run to go
    left (Double Q as if its coin said heads: Q1 picks, Q2 values), computed by the same target
    functions as the training.

    Raises:
        InputError: if the episode is outside the run, or no run was kept.
    """
    n = result.episodes
    if not 1 <= episode_number <= n:
        raise InputError(f"choose an episode between 1 and {n}; got {episode_number}")
    gamma, eps, alpha = result.gamma, result.epsilon, result.alpha
    out: dict[str, dict] = {k: {} for k in ("q_b", "chosen", "value", "target", "q", "new")}
    for algo, res in result.methods.items():
        if res.kept_q_b.shape[0] == 0:
            raise InputError("no run was kept to work an update by hand")
        q_b = res.kept_q_b[0, episode_number - 1]
        q_a = res.kept_q_a[0, episode_number - 1]
        if algo == "double_q":
            chosen = int(q_b[0].argmax())
            y = float(double_q_target(0.0, q_b[0], q_b[1], gamma=gamma))
            value = float(q_b[1, chosen])
        elif algo == "q_learning":
            chosen = int(q_b[0].argmax())
            y = float(q_learning_target(0.0, q_b[0], gamma=gamma))
            value = float(q_b[0, chosen])
        else:
            chosen = int(q_b[0].argmax())
            y = float(expected_sarsa_target(0.0, q_b[0], gamma=gamma, epsilon=eps))
            value = float(expected_sarsa_target(0.0, q_b[0], gamma=1.0, epsilon=eps))
        out["q_b"][algo], out["chosen"][algo] = q_b, chosen
        out["value"][algo], out["target"][algo] = value, y
        out["q"][algo] = float(q_a[0, LEFT])
        out["new"][algo] = float(td_update(q_a[0, LEFT], y, alpha))
    return WorkedTargets(
        episode=episode_number, q_b=out["q_b"], chosen=out["chosen"], value=out["value"],
        target=out["target"], q_left=out["q"], new_q_left=out["new"], gamma=gamma,
        alpha=alpha, epsilon=eps, mean=result.mdp.mean, true_value=result.mdp.q_left(gamma),
    )


# --------------------------------------------------------------------------- the estimators
def max_estimators(half_a, half_b):
    r"""The single and the double estimator of :math:`\max_i \mu_i` from two halves of samples.

    Each action's samples are split into two halves with sample means :math:`\hat\mu^A_i` and
    :math:`\hat\mu^B_i`. The single estimator is the largest mean of all the samples; the double
    estimator picks the action with half A and reads its value in half B, which is independent
    of the choice:

    .. math:: \hat\mu_{\text{single}} = \max_i \tfrac12(\hat\mu^A_i + \hat\mu^B_i), \qquad
        \hat\mu_{\text{double}} = \hat\mu^B_{a^*}, \quad a^* = \arg\max_i \hat\mu^A_i

    So :math:`E[\hat\mu_{\text{double}}] = \sum_i P(a^* = i)\, \mu_i \le \max_i \mu_i`, with
    equality when all the means are equal; :math:`E[\hat\mu_{\text{single}}] \ge \max_i \mu_i`.
    Source: van Hasselt (2010), Section 2; Sutton & Barto (2018), Section 6.7.

    Args:
        half_a: ``[..., m]`` each action's mean over the first half of its samples.
        half_b: ``[..., m]`` the same over the second half.

    Returns:
        ``(single, double)``, each ``[...]``.
    """
    single = ((half_a + half_b) / 2).max(axis=-1)
    chosen = half_a.argmax(axis=-1)
    double = np.take_along_axis(half_b, chosen[..., None], axis=-1)[..., 0]
    return single, double


def expected_max_of_normals(m: int) -> float:
    r"""The expected largest of ``m`` independent standard normal draws, by integration.

    .. math:: E\big[\max_{i \le m} X_i\big] = \int_{-\infty}^{\infty} m\, x\, \varphi(x)\,
        \Phi(x)^{m-1}\, dx, \qquad X_i \sim N(0, 1)

    (the density of the maximum is :math:`\tfrac{d}{dx}\Phi(x)^m`). 0 for one draw, about 1.54
    for ten (the best arm of the 10-armed testbed, Sutton & Barto (2018), Section 2.3), growing
    like :math:`\sqrt{2 \ln m}`.

    Args:
        m: Number of draws, ≥ 1.

    Returns:
        The expectation.
    """
    from scipy import integrate
    from scipy.special import log_ndtr

    if m == 1:
        return 0.0

    def integrand(x):  # Φ^(m-1) through its logarithm: no underflow far in the left tail
        return m * x * math.exp(-0.5 * x * x + (m - 1) * float(log_ndtr(x))) / math.sqrt(
            2 * math.pi)

    value, _ = integrate.quad(integrand, -12.0, 12.0, points=[0.0, math.sqrt(2 * math.log(m))],
                              epsabs=1e-13, epsrel=1e-12, limit=200)
    return float(value)


def single_estimator_bias(m: int, sigma: float, samples: int, gap: float = 0.0) -> float:
    r"""``E[max_i mean_i] − max_i μ_i`` for ``m`` actions with ``samples`` samples each.

    Each sample mean is :math:`N(\mu_i, s^2)`, :math:`s = \sigma / \sqrt n`. With all means
    equal (``gap = 0``) the bias is :math:`s\, E[\max \text{ of } m\ N(0, 1)]`
    (``expected_max_of_normals``); with the best action ``gap`` above the other ``m − 1`` it is
    :math:`\int x\, dF(x)`, :math:`F(x) = \Phi(x/s)\, \Phi((x + \Delta)/s)^{m-1}`, integrated
    numerically.
    """
    if sigma == 0 or m == 1:
        return 0.0
    s = sigma / math.sqrt(samples)
    if gap == 0:
        return s * expected_max_of_normals(m)
    from scipy import integrate
    from scipy.special import log_ndtr

    d = gap / s

    def density(x):  # of the largest standardised sample mean, best action at 0
        lb, lo = float(log_ndtr(x)), float(log_ndtr(x + d))
        best = math.exp(-0.5 * x * x + (m - 1) * lo)
        rest = (m - 1) * math.exp(-0.5 * (x + d) ** 2 + lb + (m - 2) * lo)
        return x * (best + rest) / math.sqrt(2 * math.pi)

    value, _ = integrate.quad(density, -d - 12.0, 12.0, points=[-d, 0.0], epsabs=1e-13,
                              epsrel=1e-12, limit=200)
    return s * float(value)


def double_estimator_bias(m: int, sigma: float, samples: int, gap: float = 0.0) -> float:
    r"""``E[double estimate] − max_i μ_i``: half A picks, half B (independent) values.

    .. math:: E[\hat\mu^B_{a^*}] - \mu^* = -\Delta\, \big(1 - P(a^* \text{ is the best})\big),
        \quad P(a^* \text{ is the best}) = \int \varphi(x)\, \Phi(x + \Delta/s_A)^{m-1}\, dx

    with :math:`s_A = \sigma / \sqrt{n/2}` the noise of a half's mean: 0 when all the means are
    equal, below 0 otherwise.
    """
    if gap == 0 or m == 1:
        return 0.0
    if sigma == 0:
        return 0.0  # the best action is always picked
    from scipy import integrate
    from scipy.special import log_ndtr

    d = gap / (sigma / math.sqrt(samples / 2))

    def density(x):
        return math.exp(-0.5 * x * x + (m - 1) * float(log_ndtr(x + d))) / math.sqrt(2 * math.pi)

    p_best, _ = integrate.quad(density, -12.0, 12.0, epsabs=1e-13, epsrel=1e-12, limit=200)
    return -gap * (1.0 - min(float(p_best), 1.0))


ACTION_GRID = (1, 2, 3, 5, 10, 20, 50, 100)
SAMPLE_GRID = (2, 4, 6, 10, 20, 50, 100, 200, 500, 1000)


@dataclass(frozen=True)
class EstimatorStudy:
    """Bias of the single and double estimators, by Monte Carlo and in closed form.

    ``by_actions`` rows follow ``actions`` (at ``samples`` per action); ``by_samples`` rows follow
    ``sample_grid`` (at ``m`` actions). Each Monte Carlo entry is the mean over ``trials`` with
    the half-width of its 95% interval.
    """

    actions: tuple[int, ...]
    sample_grid: tuple[int, ...]
    m: int
    samples: int
    sigma: float
    gap: float
    trials: int
    seed: int
    single_mc: np.ndarray  # [len(actions)] mean bias of the single estimator
    single_half: np.ndarray  # [len(actions)] its 95% half-width
    double_mc: np.ndarray  # [len(actions)]
    double_half: np.ndarray  # [len(actions)]
    single_exact: np.ndarray  # [len(actions)] closed form
    double_exact: np.ndarray  # [len(actions)]
    by_samples_single_mc: np.ndarray  # [len(sample_grid)]
    by_samples_single_half: np.ndarray
    by_samples_double_mc: np.ndarray
    by_samples_double_half: np.ndarray
    by_samples_single_exact: np.ndarray
    by_samples_double_exact: np.ndarray
    max_of_normals: np.ndarray  # [len(actions)] E[max of m N(0, 1)]


def _mean_half(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean over the first axis and its 95% half-width (normal quantile: many trials)."""
    n = x.shape[0]
    sd = x.std(axis=0, ddof=1) if n > 1 else np.zeros(x.shape[1:])
    return x.mean(axis=0), 1.959963984540054 * sd / math.sqrt(n)


def estimator_study(
    *,
    m: int = 10,
    sigma: float = 1.0,
    samples: int = 10,
    gap: float = 0.0,
    trials: int = 4000,
    seed: int = 0,
    actions: tuple[int, ...] = ACTION_GRID,
    sample_grid: tuple[int, ...] = SAMPLE_GRID,
) -> EstimatorStudy:
    r"""The single and double estimators of the largest of ``m`` true means, as m and n vary.

    The best action's true mean is 0 and the other ``m − 1`` sit ``gap`` below it (``gap = 0``:
    all equal, as at B), every sample has noise σ, and each action has ``samples`` samples (an
    even number: two halves). A half's mean is :math:`N(\mu_i, \sigma^2 / (n/2))`, drawn
    directly (the same numbers as averaging ``n/2`` draws). The trials are shared across the
    grid: the first ``k`` actions of each trial are the ``k`` actions of its point on the action
    axis, and the same standard normals are scaled for each ``n``, so curves are smooth.

    Args:
        m: Actions for the study against the number of samples.
        sigma: Noise of one sample.
        samples: Samples per action for the study against the number of actions (even, ≥ 2).
        gap: How far the other actions' means are below the best one's.
        trials: Monte Carlo repetitions.
        seed: Seed of the draws.
        actions: The action counts of the first study.
        sample_grid: The sample counts of the second study.

    Returns:
        Monte Carlo means with 95% half-widths, and the closed forms.

    Raises:
        InputError: if a setting is out of range.
    """
    m = _check_count("actions", m, MAX_ACTIONS)
    samples = _check_count("samples per action", samples, MAX_SAMPLES, low=2)
    if samples % 2:
        raise InputError(f"the samples per action must be even (two halves); got {samples}")
    trials = _check_count("trials", trials, MAX_TRIALS, low=2)
    if not (math.isfinite(sigma) and 0 <= sigma <= 100):
        raise InputError(f"the noise σ must be in [0, 100]; got {sigma}")
    if not (math.isfinite(gap) and 0 <= gap <= 100):
        raise InputError(f"the gap must be in [0, 100]; got {gap}")
    actions = tuple(sorted(set(actions) | {m}))
    sample_grid = tuple(sorted(set(sample_grid) | {samples}))
    widest = max(actions)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(7,)))
    z = rng.standard_normal((2, trials, widest))  # the two halves' standardised means

    def bias(k: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        means = np.where(np.arange(k) == 0, 0.0, -gap)
        s = sigma / math.sqrt(n / 2)
        single, double = max_estimators(means + s * z[0, :, :k], means + s * z[1, :, :k])
        return single, double  # the largest true mean is 0: the estimates are the biases

    per_k = [bias(k, samples) for k in actions]
    per_n = [bias(m, n) for n in sample_grid]
    s_mc, s_half = _mean_half(np.stack([s for s, _ in per_k], axis=1))
    d_mc, d_half = _mean_half(np.stack([d for _, d in per_k], axis=1))
    ns_mc, ns_half = _mean_half(np.stack([s for s, _ in per_n], axis=1))
    nd_mc, nd_half = _mean_half(np.stack([d for _, d in per_n], axis=1))
    exact = np.array([single_estimator_bias(k, sigma, samples, gap) for k in actions])
    exact_d = np.array([double_estimator_bias(k, sigma, samples, gap) for k in actions])
    exact_n = np.array([single_estimator_bias(m, sigma, n, gap) for n in sample_grid])
    exact_nd = np.array([double_estimator_bias(m, sigma, n, gap) for n in sample_grid])
    return EstimatorStudy(
        actions=actions, sample_grid=sample_grid, m=m, samples=samples, sigma=float(sigma),
        gap=float(gap), trials=trials, seed=int(seed), single_mc=s_mc, single_half=s_half,
        double_mc=d_mc, double_half=d_half, single_exact=exact, double_exact=exact_d,
        by_samples_single_mc=ns_mc, by_samples_single_half=ns_half, by_samples_double_mc=nd_mc,
        by_samples_double_half=nd_half, by_samples_single_exact=exact_n,
        by_samples_double_exact=exact_nd,
        max_of_normals=np.array([expected_max_of_normals(k) for k in actions]),
    )


# --------------------------------------------------------------------------- known answers
@dataclass(frozen=True)
class Known:
    """One known answer: a live number against a textbook value or a derived identity."""

    label: str
    value: float | str
    reference: float | str
    tol: float = 0.0
    source: str = ""
    passed: bool | None = None
    fmt: str = ".4g"


def first_run_dice(seed: int, episodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Run 1's dice: uniforms ``[N, 6]`` and normals ``[N]`` (the same whatever the run count)."""
    blocks = [_dice(seed, 1, k) for k in range((episodes + BLOCK - 1) // BLOCK)]
    u = np.concatenate([b[0][:, :, 0] for b in blocks])[:episodes]
    z = np.concatenate([b[1][:, 0] for b in blocks])[:episodes]
    return u, z


def whiteboard_replay(result: Result) -> float:
    """Largest gap between the whiteboard's Double Q and the library's, replaying run 1.

    The whiteboard version (``rlviz.interview.whiteboard.max_bias``) plays run 1's episodes with
    run 1's dice; 0 means every value of both tables agrees after every episode.
    """
    from rlviz.interview.whiteboard import max_bias as wb

    res = result.methods["double_q"]
    mdp = result.mdp
    u, z = first_run_dice(result.seed, result.episodes)
    q1 = {"A": np.zeros(2), "B": np.zeros(mdp.n_actions)}
    q2 = {"A": np.zeros(2), "B": np.zeros(mdp.n_actions)}
    gap = 0.0
    for e in range(result.episodes):
        wb.double_q_episode(q1, q2, u[e], z[e], result.epsilon, result.alpha, result.gamma,
                            mdp.mean, mdp.sigma)
        ours_a, ours_b = res.kept_q_a[0, e + 1], res.kept_q_b[0, e + 1]
        gap = max(gap, float(np.abs(ours_a - np.stack([q1["A"], q2["A"]])).max()),
                  float(np.abs(ours_b - np.stack([q1["B"], q2["B"]])).max()))
    return gap


def book_settings(result: Result) -> bool:
    """Whether a view has the settings of Sutton & Barto's Figure 6.5 (and 1,000 runs or more)."""
    mdp = result.mdp
    return (mdp.n_actions, mdp.mean, mdp.sigma, result.epsilon, result.alpha, result.gamma,
            result.episodes) == (BOOK["n_actions"], BOOK["mean"], BOOK["sigma"],
                                 BOOK["epsilon"], BOOK["alpha"], BOOK["gamma"],
                                 BOOK["episodes"]) and result.runs >= 1000


def known_answers(result: Result, study: EstimatorStudy) -> list[Known]:
    """The page's checks: closed forms, identities, the whiteboard, and the book's figure.

    Sutton & Barto's Figure 6.5 is checked at its own settings only (``book_settings``).
    """
    eps = result.epsilon
    u, _ = _dice(result.seed, result.runs, 0)
    greedy_right = np.broadcast_to(np.array([result.mdp.q_left(result.gamma), 0.0]),
                                   (u.shape[0], u.shape[2], 2))  # Q(A, ·) known exactly
    went = epsilon_greedy(greedy_right, u[:, A_EXPLORE], u[:, A_PICK], eps) == LEFT
    sd = math.sqrt(max(eps / 2 * (1 - eps / 2), 1e-12) / went.size)
    i = study.actions.index(study.m)
    gap = whiteboard_replay(result) if "double_q" in result.methods else None
    rng = np.random.default_rng(np.random.SeedSequence(result.seed, spawn_key=(11,)))
    samples = rng.normal(size=(8, 50, study.m, study.samples))
    from rlviz.interview.whiteboard import max_bias as wb

    halves = samples.reshape(8, 50, study.m, 2, study.samples // 2).mean(axis=-1)
    ours = max_estimators(halves[..., 0], halves[..., 1])
    theirs = np.array([[wb.max_estimators(s) for s in row] for row in samples])
    wb_gap = float(max(np.abs(ours[k] - theirs[..., k]).max() for k in (0, 1)))

    s_label = f"m = {study.m}, σ = {study.sigma:g}, n = {study.samples}"
    out = [
        Known("E[max of 10 N(0, 1)] by integration: the 10-armed testbed's best arm",
              expected_max_of_normals(10), 1.5387527308351729, 1e-9,
              f"{SOURCE} §2.3 (\"about 1.55\"); rlviz.bandits.book", fmt=".10f"),
        Known("E[max of 2 N(0, 1)] by integration = 1/√π", expected_max_of_normals(2),
              1 / math.sqrt(math.pi), 1e-12,
              "max(a, b) = (a + b)/2 + half their distance, which averages 2/√π", fmt=".10f"),
        Known(f"Single estimator's bias ({s_label}): Monte Carlo vs (σ/√n)·E[max of m]"
              if study.gap == 0 else f"Single estimator's bias ({s_label}, gap {study.gap:g}): "
              "Monte Carlo vs integral", float(study.single_mc[i]), float(study.single_exact[i]),
              max(2 * float(study.single_half[i]), 1e-12),
              f"closed form; tolerance 2× the 95% half-width of {study.trials:,} trials"),
        Known("Double estimator's bias, all true values equal: Monte Carlo vs 0 (unbiased)"
              if study.gap == 0 else
              f"Double estimator's bias (gap {study.gap:g}): Monte Carlo vs −Δ(1 − P(best picked))",
              float(study.double_mc[i]), float(study.double_exact[i]),
              max(2 * float(study.double_half[i]), 1e-12),
              "van Hasselt (2010), Lemma 1 and Theorem 1"),
        Known(f"ε-greedy on the true values goes left ε/2 of the time ({went.size:,} draws of "
              "this view's dice)", float(went.mean()), eps / 2, max(4 * sd, 1e-12),
              f"{SOURCE}, Example 6.7: 5% at ε = 0.1"),
    ]
    if gap is not None:
        out.append(Known("Whiteboard version equals rlviz on this view: Double Q replaying run 1, "
                         "and the two estimators: largest gap", max(gap, wb_gap), 0.0, 1e-12,
                         "rlviz.interview.whiteboard.max_bias"))
    if not book_settings(result) or not {"q_learning", "double_q"} <= set(result.methods):
        return out
    q, d = result.methods["q_learning"], result.methods["double_q"]
    peak = int(q.left.mean.argmax())
    out += [
        Known("Figure 6.5: Q-learning at first goes left much more often than right (its peak)",
              f"{100 * q.left.mean[peak]:.1f}% at episode {peak + 1}", "well above 50%",
              source=f"{SOURCE}, Figure 6.5", passed=q.left.mean[peak] > 0.6),
        Known("Figure 6.5: … and always significantly more often than ε/2 (lowest 95% band)",
              f"{100 * q.left.low.min():.1f}%", "above 5%", source=f"{SOURCE}, Figure 6.5",
              passed=bool((q.left.low > eps / 2).all())),
        Known("Figure 6.5: Double Q-learning is essentially unaffected (% left, episodes "
              "251–300)", 100 * d.left_fraction(251, 300), 100 * eps / 2, 3.0,
              f"{SOURCE}, Figure 6.5: near the 5% optimum", fmt=".2f"),
    ]
    return out
