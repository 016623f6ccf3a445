"""Q-learning, Double Q-learning and Expected SARSA on the MDP.

The readable episode, the lockstep over runs that calls it, the one-run loop it must equal, and
one update by hand.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlviz.errors import InputError
from rlviz.max_bias.mdp import (
    A_EXPLORE,
    A_PICK,
    B_EXPLORE,
    B_PICK,
    BLOCK,
    COIN_A,
    COIN_B,
    LEFT,
    MAX_EPISODES,
    MAX_RUNS,
    METHODS,
    RIGHT,
    MaxBiasMDP,
    _check_count,
    _check_methods,
    _check_settings,
    _columns,
    _dice,
)
from rlviz.td import double_q_target, expected_sarsa_target, q_learning_target, td_update


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
    dice = None
    for block in range((episodes + BLOCK - 1) // BLOCK):
        dice = u, z = _dice(seed, runs, block, columns, out=dice)
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
