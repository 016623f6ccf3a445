"""Episodes played in batches, the training of every learner, the learning curves."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from rlviz.errors import InputError
from rlviz.policy_gradient import learners
from rlviz.policy_gradient.corridor import (
    AC_STEP_BUDGET,
    CRITICS,
    GOAL,
    MAX_STEPS,
    REWARD,
    START,
    STEP_BUDGET,
    _count,
    _seed,
    _step_size,
    initial_theta,
)
from rlviz.policy_gradient.steps import corridor_step

__all__ = [
    "Curve",
    "Episodes",
    "Method",
    "Training",
    "learning_curve",
    "play_episodes",
    "train",
]


_CHUNK, _MAX_CHUNK = 32, 1024  # steps per look-up block of play_episodes (doubling)


# --------------------------------------------------------------------------- episodes
@dataclass(frozen=True)
class Episodes:
    """One episode per lane, padded to the longest."""

    states: np.ndarray | None  # [N, L] int8 S_t (G after the end), if asked for
    actions: np.ndarray  # [N, L] int8 A_t (meaningless after the end)
    alive: np.ndarray  # [N, L] bool, step t was played (t < T)
    lengths: np.ndarray  # [N] T, the number of steps (max_steps when cut)
    finished: np.ndarray  # [N] bool, reached the goal within max_steps

    @property
    def rewards(self) -> np.ndarray:
        """``[N, L]`` −1 on every step played, 0 after.

        Whole numbers, held as integers: their sums (the returns) are exact, and integer
        cumulative sums are several times faster than floating-point ones.
        """
        return self.alive * np.int8(REWARD)


_MOVES = 16  # moves looked up at once
_CODES = 1 << _MOVES


@functools.cache
def _sixteen_moves() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where sixteen moves lead from every state (each pair stepped with ``corridor_step``).

    For the code ``c`` whose bit i is 1 when move i goes left, and ``r = 2¹⁶ s + c``:
    ``PATH[r]`` are the sixteen states met (before each move), ``END[r]`` is 2¹⁶ times the
    state after them, and ``STEPS[r]`` how many of the moves were made before the goal.
    """
    s = np.repeat(np.arange(4), _CODES)
    code = np.tile(np.arange(_CODES), 4)
    path = np.empty((s.size, _MOVES), dtype=np.int8)
    for i in range(_MOVES):
        path[:, i] = s
        s = corridor_step(s, (code >> i) & 1)[0]
    return path, _CODES * s, (path != GOAL).sum(axis=1)


def _assemble(pieces: list, field: int, n_lanes: int, length: int, fill: int) -> np.ndarray:
    """``[N, length]`` from the blocks of steps each lane played (``fill`` after its last)."""
    lanes, t0, first = pieces[0][0], pieces[0][1], pieces[0][field]
    if len(pieces) == 1 and lanes.size == n_lanes and t0 == 0 and first.shape[1] >= length:
        return first[:, :length]
    out = np.full((n_lanes, length), fill, dtype=np.int8)
    for piece in pieces:
        lanes, t0, block = piece[0], piece[1], piece[field]
        width = min(block.shape[1], length - t0)
        if width > 0:
            out[lanes, t0:t0 + width] = block[:, :width]
    return out


def play_episodes(p_right: np.ndarray, uniforms: Callable[[int, int, np.ndarray], np.ndarray], *,
                  max_steps: int = MAX_STEPS, states: bool = False) -> Episodes:
    """Every lane plays one episode from S with its own fixed π(right).

    Step t of lane l goes right when its t-th random number is below ``p_right[l]``; the
    states follow from ``corridor_step``. Because the policy does not change during the
    episode, the moves are drawn for a block of steps at once, packed sixteen to a code, and
    where each code leads is looked up in a table built from ``corridor_step``, for every lane
    at once, until every lane has reached the goal or ``max_steps`` steps.

    Args:
        p_right: ``[N]`` π(right) of each lane.
        uniforms: ``(t0, n, lanes) -> [len(lanes), n]`` the random numbers of the lanes still
            going (indices into ``p_right``) for steps t0 … t0 + n − 1.
        max_steps: Longest episode.
        states: Whether to keep the states visited (the learners need only the actions).

    Returns:
        The episodes.
    """
    n_lanes = p_right.shape[0]
    path, end, made = _sixteen_moves()
    # A first block four times the longest expected episode (−J(p), largest at an end of the
    # lanes' range of p) is mostly enough; later blocks play only the lanes still going.
    expected = max(_expected_length(float(p_right.min())), _expected_length(float(p_right.max())))
    chunk = int(min(max(_CHUNK * math.ceil(4 * expected / _CHUNK), _CHUNK), _MAX_CHUNK))
    rows, t0 = np.arange(n_lanes), 0
    at = np.full(n_lanes, _CODES * START, dtype=np.intp)  # 2¹⁶ × the state: a row of the table
    lengths = np.zeros(n_lanes, dtype=np.intp)
    pieces = []  # (lanes, first step, moves, states) of each block of steps
    while t0 <= max_steps and rows.size:
        p = p_right[:, None] if t0 == 0 else p_right[rows, None]
        left = uniforms(t0, chunk, rows) >= p
        # Sixteen moves to a code: bit i of code b is move 16 b + i.
        codes = np.packbits(left, axis=1, bitorder="little").view("<u2").T
        visited = np.empty(codes.shape, dtype=np.intp)  # the table row of every sixteen moves
        here = at[rows]
        for b, code in enumerate(codes):
            visited[b] = row = here + code
            here = end[row]
            if b % 2 == 1 and here.min() == _CODES * GOAL:  # the goal is the largest state
                break
        visited = visited[: b + 1]
        lengths[rows] += made[visited].sum(axis=0)
        s = path[visited].transpose(1, 0, 2).reshape(rows.size, -1) if states else None
        pieces.append((rows, t0, left[:, : (b + 1) * _MOVES].view(np.int8), s))
        if here.min() == _CODES * GOAL:  # every lane has finished
            break
        at[rows] = here
        rows = rows[here != _CODES * GOAL]
        t0 += chunk
        chunk = min(2 * chunk, _MAX_CHUNK)
    longest = int(lengths.max())
    if longest <= max_steps:
        finished = np.ones(n_lanes, dtype=bool)
    else:
        finished = lengths <= max_steps
        lengths = np.minimum(lengths, max_steps)
        longest = max_steps
    A = _assemble(pieces, 2, n_lanes, longest, 0)  # LEFT = 1, RIGHT = 0 after the end
    S = _assemble(pieces, 3, n_lanes, longest, GOAL) if states else None
    return Episodes(states=S, actions=A, alive=np.arange(longest) < lengths[:, None],
                    lengths=lengths, finished=finished)


def _expected_length(p: float) -> float:
    """``−J(p)``, the expected number of steps of an episode (p kept off 0 and 1)."""
    p = min(max(p, 1e-6), 1.0 - 1e-6)
    return (4.0 - 2.0 * p) / (p * (1.0 - p))


@dataclass(frozen=True)
class Method:
    """One learner and its step sizes.

    Attributes:
        kind: ``"reinforce"``, ``"reinforce_with_baseline"`` or ``"actor_critic"``.
        alpha_theta: The actor's step size.
        alpha_w: The baseline's or critic's step size (unused by REINFORCE).
        critic: Actor-critic's critic: ``"per_state"`` or ``"one_value"``.
    """

    kind: str
    alpha_theta: float
    alpha_w: float = 0.0
    critic: str = "per_state"

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise InputError(f"unknown learner {self.kind!r}; choose one of {', '.join(KINDS)}")
        _step_size(self.alpha_theta, "α_θ")
        if self.kind != "reinforce":
            _step_size(self.alpha_w, "α_w")
            if self.alpha_w > 0.25:
                raise InputError(f"the step size α_w must be at most 1/4; got {self.alpha_w:g}")
        if self.critic not in CRITICS:
            raise InputError(f"unknown critic {self.critic!r}")

    @property
    def name(self) -> str:
        """A stable key: the kind and the step sizes as powers of two where they are."""
        parts = [self.kind, _power(self.alpha_theta)]
        if self.kind != "reinforce":
            parts.append(_power(self.alpha_w))
        if self.kind == "actor_critic" and self.critic != "per_state":
            parts.append(self.critic)
        return ":".join(parts)


KINDS = ("reinforce", "reinforce_with_baseline", "actor_critic")


def _power(x: float) -> str:
    k = math.log2(x)
    return f"2^{int(round(k))}" if abs(k - round(k)) < 1e-12 else f"{x:g}"


@dataclass(frozen=True)
class Training:
    """Learning curves of several learners on the same runs.

    A run stops early in two ways. It *runs away* when an episode reaches ``max_steps`` steps:
    that episode and the rest carry ``−max_steps`` in ``returns`` (their true returns would be
    lower still). It is *cut* when it has taken its budget of steps in all (``budget``,
    ``ac_budget`` for actor-critic): the episodes it did not start are NaN. Both carry NaN in
    ``p_right``.
    """

    methods: tuple[Method, ...]
    returns: np.ndarray  # [M, R, E] float32, return of each episode (−its length)
    p_right: np.ndarray  # [M, R, E] float32, π(right) after each episode's update(s)
    ran_away: np.ndarray  # [M, R] episode at which the run ran away, or −1
    cut: np.ndarray  # [M, R] first episode the run did not start for want of steps, or −1
    steps: np.ndarray  # [M, R] environment steps taken
    p0: float
    seed: int
    max_steps: int
    budget: int
    ac_budget: int

    @property
    def runs(self) -> int:
        """Independent runs per learner."""
        return self.returns.shape[1]

    @property
    def episodes(self) -> int:
        """Episodes per run."""
        return self.returns.shape[2]

    def index(self, method: Method) -> int:
        """Row of a learner."""
        return self.methods.index(method)

    @staticmethod
    def join(parts: Sequence[Training]) -> Training:
        """Several trainings of the same runs (runs, episodes, p0, seed, limits) as one."""
        first = parts[0]

        def key(t: Training) -> tuple:
            return t.runs, t.episodes, t.p0, t.seed, t.max_steps, t.budget, t.ac_budget

        if any(key(t) != key(first) for t in parts[1:]):
            raise InputError("only trainings of the same runs can be joined")
        fields = ("returns", "p_right", "ran_away", "cut", "steps")
        return Training(
            methods=tuple(m for t in parts for m in t.methods),
            **{f: np.concatenate([getattr(t, f) for t in parts]) for f in fields},
            p0=first.p0, seed=first.seed, max_steps=first.max_steps, budget=first.budget,
            ac_budget=first.ac_budget)

    def budget_of(self, method: Method) -> int:
        """The step budget of a learner's runs."""
        return self.ac_budget if method.kind == "actor_critic" else self.budget

    def final_mean(self, method: Method, last: int = 100) -> float:
        """Mean return over the last ``last`` episodes of the runs that played them, or NaN."""
        tail = self.returns[self.index(method), :, -last:]
        played = tail[np.isfinite(tail)]
        return float(played.mean()) if played.size else math.nan


def train(methods: Sequence[Method], *, runs: int, episodes: int, p0: float, seed: int,
          max_steps: int = MAX_STEPS, budget: int = STEP_BUDGET,
          ac_budget: int = AC_STEP_BUDGET) -> Training:
    """Train every learner on ``runs`` independent runs of ``episodes`` episodes.

    Each run of each learner is one call of a compiled loop, ``reinforce_run`` or
    ``actor_critic_run`` (``rlviz.policy_gradient.learners``); run r of every learner reads the
    random numbers of ``SeedSequence(seed).spawn(runs)[r]``.

    Args:
        methods: The learners (distinct).
        runs: Independent runs, 1–1000.
        episodes: Episodes per run, 1–10000.
        p0: Initial π(right), in (0, 1).
        seed: Seed of the runs' random numbers.
        max_steps: An episode this long makes its run stop (it ran away).
        budget: A Monte-Carlo run starts no episode once it has taken this many steps.
        ac_budget: The same for actor-critic.

    Returns:
        The learning curves.
    """
    methods = tuple(methods)
    if not methods or not all(isinstance(m, Method) for m in methods):
        raise InputError("choose at least one learner")
    if len(set(methods)) != len(methods):
        raise InputError("each learner may be chosen once")
    runs = _count(runs, "the number of runs", 1, 1000)
    episodes = _count(episodes, "the number of episodes", 1, 10_000)
    max_steps = _count(max_steps, "the longest episode", 1, 100_000)
    budget = _count(budget, "the step budget", 1, 10**9)
    ac_budget = _count(ac_budget, "actor-critic's step budget", 1, 10**9)
    seed = _seed(seed)
    theta0 = initial_theta(p0)
    shape = (len(methods), runs, episodes)
    # Returns are whole numbers and π(right) is for plotting: float32 holds both (and halves
    # what a page keeps in its cache).
    out = dict(returns=np.full(shape, np.nan, dtype=np.float32),
               p_right=np.full(shape, np.nan, dtype=np.float32),
               ran_away=np.full(shape[:2], -1, dtype=np.int64),
               cut=np.full(shape[:2], -1, dtype=np.int64),
               steps=np.zeros(shape[:2], dtype=np.int64))
    children = np.random.SeedSequence(seed).spawn(runs)
    for i, m in enumerate(methods):
        for r in range(runs):
            dice = np.random.default_rng(children[r])  # run r's numbers, in every learner
            out["steps"][i, r], out["ran_away"][i, r], out["cut"][i, r] = _train_run(
                m, dice, theta0, out["returns"][i, r], out["p_right"][i, r], max_steps,
                ac_budget if m.kind == "actor_critic" else budget)
    for i in range(len(methods)):
        for r in np.flatnonzero(out["ran_away"][i] >= 0):
            out["returns"][i, r, out["ran_away"][i, r]:] = -float(max_steps)
    return Training(methods=methods, p0=float(p0), seed=seed, max_steps=max_steps,
                    budget=budget, ac_budget=ac_budget, **out)


def _train_run(m: Method, dice: np.random.Generator, theta0: np.ndarray, returns: np.ndarray,
               p_right: np.ndarray, max_steps: int, budget: int) -> tuple[int, int, int]:
    """One run of one learner, written into its rows of returns and π(right).

    Returns the steps it took, the episode at which it ran away (or −1) and the first episode
    it did not start for want of steps (or −1).
    """
    args = (dice, float(theta0[0]), float(theta0[1]), m.alpha_theta, m.alpha_w)
    if m.kind == "actor_critic":
        return learners.actor_critic_run(*args, CRITICS[m.critic], max_steps, budget, returns,
                                         p_right)
    return learners.reinforce_run(*args, m.kind == "reinforce_with_baseline", max_steps, budget,
                                  returns, p_right)


# --------------------------------------------------------------------------- curves
@dataclass(frozen=True)
class Curve:
    """A per-episode mean over runs with its 95% band."""

    mean: np.ndarray  # [E]
    low: np.ndarray  # [E]
    high: np.ndarray  # [E]


def learning_curve(values: np.ndarray, *, window: int = 1) -> Curve:
    r"""Trailing moving average of each run, then the mean over runs ± its 95% t-interval.

    NaN entries (episodes a run did not play) are left out.

    Args:
        values: ``[R, E]``.
        window: Episodes in the moving average (fewer at the start).
    """
    values = np.asarray(values, dtype=np.float64)
    window = _count(window, "the smoothing window", 1, max(values.shape[1], 1))
    seen = ~np.isnan(values)
    if window == 1:  # no smoothing
        smooth = values
    else:
        csum = np.cumsum(np.where(seen, values, 0.0), axis=1)
        count = np.cumsum(seen, axis=1, dtype=np.float64)
        csum[:, window:] -= csum[:, :-window].copy()
        count[:, window:] -= count[:, :-window].copy()
        with np.errstate(invalid="ignore", divide="ignore"):
            smooth = np.where(seen, csum / count, np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        n = seen.sum(axis=0)
        mean = np.nansum(smooth, axis=0) / n
        var = np.nansum((smooth - mean) ** 2, axis=0) / (n - 1)
    from scipy.stats import t as student_t

    half = np.where(n > 1, student_t.ppf(0.975, np.maximum(n - 1, 1)) * np.sqrt(
        np.where(n > 1, var, 0.0) / np.maximum(n, 1)), 0.0)
    mean = np.where(n > 0, mean, np.nan)
    return Curve(mean=mean, low=mean - half, high=mean + half)
