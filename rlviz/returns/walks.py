"""The random walk: sampled episodes and the bias-variance study of the estimators."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlviz.errors import InputError
from rlviz.mdp import TabularMDP, action_values, policy_value
from rlviz.returns.filter import _discounted_sum
from rlviz.returns.steps import ArrayLike, td_error
from rlviz.returns.validation import _check_unit

__all__ = [
    "SUTTON_BARTO_WALKS",
    "StudyResult",
    "WalkSamples",
    "bias_variance_study",
    "expected_episode_length",
    "random_walk",
    "sample_walks",
]


# Rewards (left end, right end) of the random walks in Sutton & Barto (2018):
# Example 6.2 (5 states) and Example 7.1 (19 states).
SUTTON_BARTO_WALKS: dict[int, tuple[float, float]] = {5: (0.0, 1.0), 19: (-1.0, 1.0)}


# --------------------------------------------------------------------------- the random walk
def random_walk(n_states: int, *, left_reward: float, right_reward: float) -> TabularMDP:
    """The random-walk chain of Sutton & Barto (2018), Examples 6.2 and 7.1, as an MDP.

    States ``1 .. n`` in a row between two terminal states ``0`` and ``n + 1``; every episode
    starts in the centre ``(n + 1) // 2``. Action 0 steps left, action 1 right; stepping into
    the left end pays ``left_reward``, into the right end ``right_reward``, anything else 0.
    Under the uniform policy it is the Markov reward process of the book.

    Args:
        n_states: ``n``, the number of non-terminal states (at least 1).
        left_reward: Reward for leaving through the left end.
        right_reward: Reward for leaving through the right end.

    Returns:
        The MDP with ``n + 2`` states and actions ``("left", "right")``.
    """
    if isinstance(n_states, bool) or int(n_states) != n_states or n_states < 1:
        raise InputError(f"the walk needs a whole number of states, at least 1; got {n_states!r}")
    n = int(n_states)
    size = n + 2
    s = np.arange(size)
    nxt = np.stack([np.clip(s - 1, 0, size - 1), np.clip(s + 1, 0, size - 1)], axis=1)
    terminal = (s == 0) | (s == size - 1)
    nxt[terminal] = s[terminal, None]
    reward = np.where(nxt == 0, left_reward, np.where(nxt == size - 1, right_reward, 0.0))
    reward[terminal] = 0.0
    start = np.zeros(size)
    start[(n + 1) // 2] = 1.0
    return TabularMDP(
        next_state=nxt[:, :, None], prob=np.ones((size, 2, 1)), reward=reward[:, :, None],
        terminal=terminal, start=start, action_names=("left", "right"),
        name=f"{n}-state random walk",
    )


def expected_episode_length(n_states: int) -> int:
    """Mean steps of a walk episode from the centre ``k``: ``k (n + 1 - k)`` (gambler's ruin).

    Feller (1968), *An Introduction to Probability Theory*, Vol. 1, §XIV.3.
    """
    centre = (n_states + 1) // 2
    return centre * (n_states + 1 - centre)


@dataclass(frozen=True)
class WalkSamples:
    """Complete episodes of a random walk under the uniform policy, back to back in time."""

    states: np.ndarray  # [N] int, s_t in 1..n
    actions: np.ndarray  # [N] int, a_t: 0 left, 1 right
    rewards: np.ndarray  # [N] float, r_t
    next_states: np.ndarray  # [N] int, s_{t+1} in 0..n+1
    dones: np.ndarray  # [N] bool, s_{t+1} is terminal (the last step of each episode)
    lengths: np.ndarray  # [E] int, steps per episode


def sample_walks(
    n_states: int,
    n_episodes: int,
    rng: np.random.Generator,
    *,
    left_reward: float,
    right_reward: float,
    chunk: int | None = None,
) -> WalkSamples:
    """Sample whole episodes of the random walk, vectorised over episodes.

    Each episode's moves are drawn in chunks of ``chunk`` fair ±1 steps (row ``i`` of a chunk is
    episode ``i``); an episode stops at the first step that reaches an end, and the episodes
    still going draw another chunk. The expected length from the centre ``k`` is
    ``k (n + 1 - k)`` (the gambler's-ruin duration).

    Args:
        n_states: ``n``, the number of non-terminal states.
        n_episodes: How many episodes (at least 1).
        rng: The random generator (consumed).
        left_reward: Reward for leaving through the left end.
        right_reward: Reward for leaving through the right end.
        chunk: Steps drawn per round; by default a few times the expected length.

    Returns:
        The episodes, concatenated.
    """
    if n_episodes < 1:
        raise InputError(f"at least one episode is needed; got {n_episodes}")
    n = int(n_states)
    centre = (n + 1) // 2
    if chunk is None:
        chunk = max(16, 2 * expected_episode_length(n))
    # Positions stay within n + chunk of 0: small whole numbers add up faster in 16 bits.
    walk_dtype = np.int16 if n + 1 + chunk < np.iinfo(np.int16).max else np.int64
    position = np.full(n_episodes, centre, dtype=walk_dtype)
    alive = np.arange(n_episodes)
    pieces: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (episodes, moves, used)
    while alive.size:
        moves = rng.integers(0, 2, size=(alive.size, chunk), dtype=np.int8)
        path = position[alive, None] + np.cumsum(2 * moves - 1, axis=1, dtype=walk_dtype)
        ended = (path <= 0) | (path >= n + 1)
        finished = ended.any(axis=1)
        used = np.where(finished, ended.argmax(axis=1) + 1, chunk)
        pieces.append((alive, moves, used))
        position[alive] = path[:, -1]
        alive = alive[~finished]

    lengths = np.zeros(n_episodes, dtype=np.int64)
    for episodes, _, used in pieces:
        lengths[episodes] += used
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    total = int(lengths.sum())
    actions = np.empty(total, dtype=np.int64)
    offset = starts.copy()
    for episodes, moves, used in pieces:
        keep = np.arange(chunk) < used[:, None]  # each row keeps its first ``used`` moves
        before = np.cumsum(used) - used  # where each row's moves begin in moves[keep]
        where = np.arange(int(used.sum())) + np.repeat(offset[episodes] - before, used)
        actions[where] = moves[keep]
        offset[episodes] += used

    step = 2 * actions - 1
    walked = np.cumsum(step)
    before = np.repeat(walked[starts] - step[starts], lengths)  # progress before each episode
    next_states = centre + walked - before
    states = next_states - step
    ends = starts + lengths - 1
    dones = np.zeros(total, dtype=bool)
    dones[ends] = True
    rewards = np.zeros(total)  # only the last step of an episode reaches an end and pays
    rewards[ends] = np.where(next_states[ends] == 0, left_reward, right_reward)
    return WalkSamples(states, actions, rewards, next_states, dones, lengths)


@dataclass(frozen=True)
class StudyResult:
    """Bias, variance and mean squared error of GAE on a random walk, for a grid of λ."""

    lams: np.ndarray  # [L] the λ values
    bias2: np.ndarray  # [L] squared bias, averaged over visited (s, a)
    variance: np.ndarray  # [L] variance, averaged over visited (s, a)
    mse: np.ndarray  # [L] bias2 + variance
    best: int  # index of the λ with the smallest MSE
    true_values: np.ndarray  # [n+2] v(s) of the uniform policy (terminals 0)
    critic: np.ndarray  # [n+2] the critic V^(s) = v(s) + bias + noise (terminals 0)
    gamma: float
    n_episodes: int
    n_steps: int
    mean_length: float  # average episode length
    length_se: float  # its standard error

    @property
    def best_lam(self) -> float:
        """The λ with the smallest mean squared error."""
        return float(self.lams[self.best])


def bias_variance_study(
    *,
    n_states: int,
    left_reward: float,
    right_reward: float,
    gamma: float,
    lams: ArrayLike,
    critic_bias: float,
    critic_noise: float,
    n_episodes: int,
    seed: int,
) -> StudyResult:
    r"""How λ trades the critic's bias for the return's variance, measured on a random walk.

    A critic ``V^(s) = v(s) + b + sigma * z_s`` (``z_s ~ N(0, 1)`` drawn once per state) scores
    ``n_episodes`` sampled episodes of the walk under the uniform policy. Each step's GAE is
    compared with the true advantage of the step taken measured from the critic's baseline,
    ``Q(s_t, a_t) - V^(s_t)`` with ``Q(s, a) = r + gamma v(s')``; a baseline that depends on
    the state alone does not bias a policy gradient, so this is the error that matters
    (Schulman et al. 2016, §3: GAE(γ, 1) is unbiased whatever the critic; GAE(γ, λ < 1) is
    unbiased only for a correct critic). With ``eps_t = A_t - (Q(s_t, a_t) - V^(s_t))``,
    grouped by the state-action pair ``g = (s_t, a_t)`` over all visits::

        bias2 = sum_g p_g mean_g(eps)^2,  variance = sum_g p_g var_g(eps),  mse = bias2 + variance

    where ``p_g`` is the share of steps in group ``g``.

    Args:
        n_states: ``n``, non-terminal states of the walk.
        left_reward: Reward for leaving through the left end.
        right_reward: Reward for leaving through the right end.
        gamma: Discount factor in ``[0, 1]``.
        lams: ``[L]`` the λ values, each in ``[0, 1]``.
        critic_bias: ``b``, added to every non-terminal state's true value.
        critic_noise: ``sigma >= 0``, the spread of the critic's per-state errors.
        n_episodes: Number of sampled episodes.
        seed: Seeds the critic's errors and the episodes (independent streams).

    Returns:
        The bias², variance and MSE for each λ.
    """
    gamma = _check_unit("gamma", gamma)
    lams = np.atleast_1d(np.asarray(lams, dtype=np.float64))
    if lams.ndim != 1 or lams.size == 0:
        raise InputError("give at least one value of λ")
    for lam in lams:
        _check_unit("lam", lam)
    if not critic_noise >= 0:
        raise InputError(f"the critic's noise must be at least 0; got {critic_noise}")
    critic_rng, walk_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))

    walk = random_walk(n_states, left_reward=left_reward, right_reward=right_reward)
    uniform = np.full((walk.n_states, walk.n_actions), 0.5)
    v = policy_value(walk, uniform, gamma)
    q = action_values(walk, v, gamma)
    noise = critic_rng.standard_normal(walk.n_states)
    critic = np.where(walk.terminal, 0.0, v + critic_bias + critic_noise * noise)

    ep = sample_walks(n_states, n_episodes, walk_rng, left_reward=left_reward,
                      right_reward=right_reward)
    v_t = critic[ep.states]
    delta = td_error(ep.rewards, v_t, critic[ep.next_states], gamma=gamma)  # 0 at terminals
    group = ep.states * 2 + ep.actions  # the pair (s_t, a_t), as an index into q's entries
    target = q.take(group) - v_t
    cuts = np.flatnonzero(ep.dones)[:-1]  # where each episode but the last ends
    cuts = cuts if cuts.size else None
    counts = np.bincount(group, minlength=2 * walk.n_states)
    seen = counts > 0
    share = counts[seen] / group.size

    bias2 = np.empty(lams.size)
    variance = np.empty(lams.size)
    err = np.empty_like(delta)  # one scratch stream for every λ, reused in place
    for i, lam in enumerate(lams):
        np.copyto(err, delta)
        _discounted_sum(err, gamma * lam, cuts, overwrite=True)  # GAE(γ, λ) of every step
        err -= target
        mean = np.bincount(group, weights=err, minlength=counts.size)[seen] / counts[seen]
        bias2[i] = float(share @ mean**2)
        # The share-weighted variance within groups: the mean square less the squared means.
        # (einsum, not BLAS: a threaded dot product waits for cores a busy server lacks)
        variance[i] = max(float(np.einsum("i,i->", err, err)) / err.size - bias2[i], 0.0)
    mse = bias2 + variance
    lengths = ep.lengths.astype(np.float64)
    se = float(lengths.std(ddof=1) / np.sqrt(lengths.size)) if lengths.size > 1 else 0.0
    return StudyResult(
        lams=lams, bias2=bias2, variance=variance, mse=mse, best=int(np.argmin(mse)),
        true_values=v, critic=critic, gamma=gamma, n_episodes=int(n_episodes),
        n_steps=int(group.size), mean_length=float(lengths.mean()), length_se=se,
    )
