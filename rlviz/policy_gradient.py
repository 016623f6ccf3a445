r"""Policy gradients on the short corridor: REINFORCE, REINFORCE with a baseline, actor-critic.

The short corridor with switched actions (Sutton & Barto 2018, Example 13.1): three states and
a goal in a row, actions *right* and *left*, a reward of −1 on every step, the step into the goal
included. In the second state the actions are reversed. The agent's features cannot tell the
states apart (``x(s, right) = [1, 0]``, ``x(s, left) = [0, 1]`` in every state), so its policy is
one probability ``p`` of going right, the same everywhere. The deterministic policies never
finish (always right bounces between the first two states, always left never leaves the
first), ε-greedy ones are poor, and the best coin is ``p* = 2 − √2``.

What is exact here. ``J(p) = v_π(S)`` solves a 3-state linear system (``state_values``);
``exact_gradient`` differentiates that system, so ``dJ/dθ`` needs no sampling. The closed forms
``J(p) = (2p − 4) / (p(1 − p))`` and its derivative are kept beside them as checks.

The learners, as in Chapter 13 with γ = 1:

* REINFORCE (§13.3): after each episode ``θ ← θ + α Σ_t G_t ∇ln π(A_t | θ)``.
* REINFORCE with a baseline (§13.4): the same with ``G_t − w_t``, where the baseline ``w`` moves
  toward every return in turn, ``w ← w + α_w (G_t − w)``.
* One-step actor-critic (§13.5): every step ``δ = R + v̂(S') − v̂(S)``, ``v̂(S) ← v̂(S) + α_w δ``,
  ``θ ← θ + α_θ δ ∇ln π(A | θ)``, with a critic of one value per state (or one value for all).

The Monte-Carlo learners sum an episode's terms at the θ the episode was played with
(Williams 1992), so each update is α times the single-episode gradient estimate that
``gradient_study`` samples. The book's boxed pseudocode applies the terms one by one, each at
the θ left by the ones before; the two differ at second order in α, but from ``p = 0.05`` at
α = 2⁻¹² the one-by-one form can run away inside a single long episode.

Vectorised. ``train`` plays every run of every Monte-Carlo learner in lockstep, one episode
each at a time (``play_episodes``: each lane keeps its own fixed policy, so an episode is a
table look-up per step for all lanes), and updates them with the readable functions on
``[runs, steps]`` arrays. Actor-critic's policy changes every step, so its runs step together
(``actor_critic_step`` on ``[runs]`` arrays), each starting its next episode when the last ends.

Random numbers. Run ``r`` owns the generator ``SeedSequence(seed).spawn(runs)[r]``; its n-th
environment step, in any learner, reads number n of that stream and goes right when it is below
π(right). So every learner's first episode is the same, later two learners' actions differ only
where their policies do, and run ``r`` is the same whatever the number of runs.

Limits. A policy pushed to p ≈ 0 or p ≈ 1 almost never reaches the goal: an episode that
reaches ``max_steps`` steps stops its run (it ran away), and the run's remaining episodes are
scored ``−max_steps`` (their true returns would be lower still). A run also starts no episode
once it has taken ``budget`` steps in all, which bounds the work of the slowest settings; the
book's stay well inside.

Reference: Sutton & Barto (2018), *Reinforcement Learning: An Introduction*, 2nd ed.,
Chapter 13; Williams (1992), *Simple statistical gradient-following algorithms for
connectionist reinforcement learning*.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from rlviz.errors import InputError

__all__ = [
    "ACTIONS",
    "AC_STEP_BUDGET",
    "BOOK_BASELINE",
    "BOOK_REINFORCE",
    "CRITICS",
    "ESTIMATORS",
    "FEATURES",
    "GOAL",
    "LEFT",
    "MAX_STEPS",
    "NEXT",
    "REWARD",
    "RIGHT",
    "START",
    "STEP_BUDGET",
    "Curve",
    "Episodes",
    "GradientStudy",
    "Method",
    "Training",
    "WorkedScore",
    "actor_critic_step",
    "argmax_value",
    "baseline_trace",
    "closed_form_gradient",
    "closed_form_value",
    "corridor_step",
    "episode_gradient",
    "epsilon_greedy_values",
    "exact_gradient",
    "gradient_study",
    "initial_theta",
    "learning_curve",
    "optimal_probability",
    "play_episodes",
    "policy",
    "reinforce_baseline_update",
    "reinforce_update",
    "returns_to_go",
    "score",
    "softmax",
    "start_value",
    "state_values",
    "train",
    "transition_matrix",
    "visits",
    "whiteboard_gap",
    "worked_score",
]

RIGHT, LEFT = 0, 1
"""Action indices, in the order of the book's features."""
ACTIONS = ("right", "left")
FEATURES = np.eye(2)
"""``x(s, a)``, one row per action: ``x(s, right) = [1, 0]``, ``x(s, left) = [0, 1]``, every s."""
START, GOAL = 0, 3
STATES = ("S", "2 (reversed)", "3", "G")
NEXT = np.array([[1, 0], [0, 2], [3, 1], [3, 3]], dtype=np.intp)
"""``NEXT[s, a]``: the state after action a in state s (columns right, left); G is absorbing.
In the second state (index 1), the reversed one, right leads back to S and left on to the
third."""
REWARD = -1.0
"""The reward of every step, the one into the goal included."""
MAX_STEPS = 2_000
"""An episode this long stops its run (see the module notes). At p = 0.05 an episode lasts that
long with probability 4·10⁻¹³, at p = 0.95 with 3·10⁻²¹."""
STEP_BUDGET = 40_000
"""Steps a Monte-Carlo run may take in all: it starts no episode after that. The book's settings
stay well inside (REINFORCE at 2^-14 from p = 0.05, the slowest, takes about 31,000)."""
AC_STEP_BUDGET = 18_000
"""The same for actor-critic, whose step costs about ten Monte-Carlo steps (it updates after
every step). With a critic of one value per state and α_θ ≥ 2^-9 it needs under 17,000."""
CRITICS = {
    "per_state": np.array([0, 1, 2, 3], dtype=np.intp),
    "one_value": np.array([0, 0, 0, 1], dtype=np.intp),
}
"""The critic's cell of each state (S, 1, 2, G): one value per state, or one value for the three
states the actor cannot tell apart. The goal's cell (the last) stays 0."""
BOOK_REINFORCE = (2.0**-12, 2.0**-13, 2.0**-14)
"""REINFORCE's step sizes in Figure 13.1; 2^-13 is the one Figure 13.2 compares against."""
BOOK_BASELINE = (2.0**-9, 2.0**-6)
"""REINFORCE with baseline in Figure 13.2: α_θ and α_w."""
ESTIMATORS = ("none", "constant", "learned", "true_v", "optimal", "td_true", "td_one")
"""The single-episode gradient estimators of ``gradient_study``, in display order."""

_CHUNK, _MAX_CHUNK = 32, 1024  # steps per look-up block of play_episodes (doubling)
_AC_BLOCK = 256  # actor-critic steps per block of random numbers
_TRACE_BLOCK = 128  # steps of the baseline unrolled at once
_RESTART = np.array([0, 1, 2, START], dtype=np.intp)  # the state after each, goal → S


# --------------------------------------------------------------------------- validation
def _probability(p, name: str = "π(right)") -> np.ndarray:
    arr = np.asarray(p, dtype=np.float64)
    if not np.isfinite(arr).all() or (arr <= 0).any() or (arr >= 1).any():
        raise InputError(f"{name} must lie strictly between 0 and 1 (both 0 and 1 never reach "
                         "the goal)")
    return arr


def _step_size(x, name: str) -> float:
    try:
        x = float(x)
    except (TypeError, ValueError):
        raise InputError(f"the step size {name} must be a number") from None
    if not math.isfinite(x) or x <= 0:
        raise InputError(f"the step size {name} must be a positive number; got {x:g}")
    return x


def _count(x, name: str, lo: int, hi: int) -> int:
    if isinstance(x, bool) or not isinstance(x, int | np.integer) or not lo <= x <= hi:
        raise InputError(f"{name} must be a whole number from {lo:,} to {hi:,}; got {x!r}")
    return int(x)


def _seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise InputError(f"the seed must be a whole number, 0 or more; got {seed!r}")
    return int(seed)


# --------------------------------------------------------------------------- exact values
def transition_matrix(p) -> np.ndarray:
    r"""``P[..., s, s']``: probability of moving between the non-terminal states under π.

    Built from the corridor's table ``NEXT``: ``P[s, NEXT[s, a]] += π(a)``; the row of the third
    state sums to ``1 − p``, the rest of its mass going to the goal.

    Args:
        p: π(right), a number or an array in (0, 1).

    Returns:
        ``[..., 3, 3]``.
    """
    p = _probability(p)
    probs = np.stack([p, 1.0 - p], axis=-1)  # [..., 2] π(right), π(left)
    out = np.zeros(p.shape + (3, 3))
    for s in range(3):
        for a in (RIGHT, LEFT):
            if NEXT[s, a] != GOAL:
                out[..., s, NEXT[s, a]] += probs[..., a]
    return out


def state_values(p) -> np.ndarray:
    r"""``v_π`` of the three states: the solution of ``(I − P_π) v = r_π``.

    ``v(s) = Σ_a π(a) [−1 + v(NEXT[s, a])]`` with ``v(G) = 0`` (Bellman equation, Sutton & Barto
    2018, eq. 3.14, γ = 1).

    Args:
        p: π(right), a number or an array in (0, 1).

    Returns:
        ``[..., 3]`` values of S, the reversed second state and the third.
    """
    P = transition_matrix(p)
    rhs = np.full(P.shape[:-1] + (1,), REWARD)
    return np.linalg.solve(np.eye(3) - P, rhs)[..., 0]


def start_value(p) -> np.ndarray | float:
    r"""``J(p) = v_π(S)``, the expected return from the start, by the linear system."""
    v = state_values(p)[..., START]
    return float(v) if np.ndim(v) == 0 else v


def closed_form_value(p) -> np.ndarray | float:
    r"""``J(p) = (2p − 4) / (p (1 − p))``, the linear system solved by hand."""
    p = _probability(p)
    out = (2.0 * p - 4.0) / (p * (1.0 - p))
    return float(out) if out.ndim == 0 else out


def optimal_probability() -> float:
    r"""``p* = 2 − √2 ≈ 0.5858``: ``J'(p) ∝ 2p² − 8p + 4 = 0`` on (0, 1)."""
    return 2.0 - math.sqrt(2.0)


def argmax_value(tol: float = 1e-10) -> float:
    r"""The p that maximises ``start_value`` on (0, 1), by golden-section search.

    In partial fractions ``J(p) = −4/p − 2/(1 − p)``, a concave function, so a bracketing search
    on the whole interval finds its one maximum.
    """
    lo, hi = 1e-6, 1.0 - 1e-6
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    fa, fb = start_value(a), start_value(b)
    while hi - lo > tol:
        if fa < fb:
            lo, a, fa = a, b, fb
            b = lo + ratio * (hi - lo)
            fb = start_value(b)
        else:
            hi, b, fb = b, a, fa
            a = hi - ratio * (hi - lo)
            fa = start_value(a)
    return 0.5 * (lo + hi)


def epsilon_greedy_values(epsilon: float = 0.1) -> dict[str, float]:
    r"""The start value of the two ε-greedy deterministic policies.

    With two actions, ε-greedy takes the greedy action with probability ``1 − ε/2``: greedy
    right has ``p = 1 − ε/2``, greedy left ``p = ε/2``.

    Returns:
        ``{"right": J(1 − ε/2), "left": J(ε/2)}``.
    """
    try:
        epsilon = float(epsilon)
    except (TypeError, ValueError):
        raise InputError("ε must be a number") from None
    if not 0.0 < epsilon < 1.0:
        raise InputError(f"ε must lie strictly between 0 and 1; got {epsilon:g}")
    return {"right": start_value(1.0 - epsilon / 2), "left": start_value(epsilon / 2)}


def visits(p) -> np.ndarray:
    r"""``η(s)``: expected visits to each state in one episode from S, ``e_Sᵀ (I − P_π)^{-1}``.

    ``Σ_s η(s) = E[T] = −J(p)``, the expected episode length.
    """
    P = transition_matrix(p)
    start = np.zeros(P.shape[:-1])
    start[..., START] = 1.0
    return np.linalg.solve(np.swapaxes(np.eye(3) - P, -1, -2), start[..., None])[..., 0]


def exact_gradient(theta) -> np.ndarray:
    r"""``∇_θ J``, by differentiating the Bellman linear system.

    From ``(I − P) v = r`` with ``r`` independent of θ: ``(I − P) ∂v = (∂P) v``, and
    ``∂P/∂p = P_right − P_left`` (the table's moves), so
    ``dJ/dp = e_Sᵀ (I − P)^{-1} (P_right − P_left) v``. The softmax gives
    ``∂p/∂θ = p (1 − p) [1, −1]``.

    Args:
        theta: ``[..., 2]`` action preferences (right, left).

    Returns:
        ``[..., 2]`` the gradient; its two entries are opposite.
    """
    theta = _theta(theta)
    p = policy(theta)[..., RIGHT]
    P = transition_matrix(p)
    v = state_values(p)
    moves = np.zeros((2, 3, 3))
    for s in range(3):
        for a in (RIGHT, LEFT):
            if NEXT[s, a] != GOAL:
                moves[a, s, NEXT[s, a]] = 1.0
    dv = np.linalg.solve(np.eye(3) - P, ((moves[RIGHT] - moves[LEFT]) @ v[..., None]))[..., 0]
    dj_dp = dv[..., START]
    return (dj_dp * p * (1.0 - p))[..., None] * np.array([1.0, -1.0])


def closed_form_gradient(p) -> np.ndarray | float:
    r"""``∂J/∂θ_right = (2p² − 8p + 4) / (p (1 − p))``: ``J'(p)`` times ``p (1 − p)``."""
    p = _probability(p)
    out = (2.0 * p * p - 8.0 * p + 4.0) / (p * (1.0 - p))
    return float(out) if out.ndim == 0 else out


def initial_theta(p0: float) -> np.ndarray:
    r"""Preferences ``[ℓ/2, −ℓ/2]`` with ``ℓ = ln(p0 / (1 − p0))``, so that π(right) = p0."""
    p0 = float(_probability(p0, "the initial π(right)"))
    half = 0.5 * math.log(p0 / (1.0 - p0))
    return np.array([half, -half])


def _theta(theta) -> np.ndarray:
    arr = np.asarray(theta, dtype=np.float64)
    if arr.shape[-1:] != (2,):
        raise InputError("θ needs one preference per action (right, left)")
    if not np.isfinite(arr).all():
        raise InputError("every preference in θ must be a finite number")
    return arr


# --------------------------------------------------------------------------- the policy
def softmax(h: np.ndarray) -> np.ndarray:
    r"""``e^{h_a} / Σ_b e^{h_b}`` over the last axis, the largest preference subtracted first."""
    h = np.asarray(h, dtype=np.float64)
    e = np.exp(h - h.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def policy(theta: np.ndarray) -> np.ndarray:
    r"""The agent's policy: a softmax over action preferences ``h(s, a, θ) = θᵀ x(s, a)``.

    With the book's one-hot features ``h(s, a, θ) = θ_a`` in every state (eq. 13.2), and with two
    actions the softmax is the logistic function of the gap in preferences,
    ``π(a) = 1 / (1 + e^{−(h(a) − h(b))}) = (1 + tanh((h(a) − h(b)) / 2)) / 2``, ``b`` the other
    action (the tanh form cannot overflow).

    Args:
        theta: ``[..., 2]`` preferences (right, left), one row per run.

    Returns:
        ``[..., 2]`` π(right), π(left).
    """
    return 0.5 + 0.5 * np.tanh(0.5 * (theta - theta[..., ::-1]))


def score(pi: np.ndarray, action: np.ndarray, features: np.ndarray = FEATURES) -> np.ndarray:
    r"""``∇_θ ln π(a | s, θ) = x(s, a) − Σ_b π(b | s, θ) x(s, b)`` (Sutton & Barto eq. 13.9).

    For one-hot features (the default) this is ``onehot(a) − π``. Its mean under π is zero:
    ``Σ_a π(a) ∇ln π(a) = ∇ Σ_a π(a) = 0``, which is why a baseline adds no bias.

    Args:
        pi: ``[..., A]`` the policy the action was drawn from.
        action: ``[...]`` action indices.
        features: ``[A, d]`` the feature vector of each action.

    Returns:
        ``[..., d]``.
    """
    if features is FEATURES:  # one-hot: Σ_b π(b) x(s, b) is π itself
        return FEATURES[action] - pi
    return features[action] - pi @ features


def corridor_step(state: np.ndarray, action: np.ndarray) -> tuple[np.ndarray, float]:
    r"""One step of the short corridor for every run: next state and reward.

    Right moves right and left moves left, except in the second state (index 1) where they are
    reversed; left in S stays in S. Every step earns −1, the step into the goal too.

    Args:
        state: ``[...]`` current states (0 = S, 1 the reversed one, 2), never the goal.
        action: ``[...]`` ``RIGHT`` or ``LEFT``.

    Returns:
        ``[...]`` next states (3 = G), and the reward (the same −1 for every run).
    """
    return NEXT[state, action], REWARD


# --------------------------------------------------------------------------- Monte Carlo
def returns_to_go(rewards: np.ndarray) -> np.ndarray:
    r"""``G_t = Σ_{k ≥ t} R_{k+1}``: the undiscounted return from each step (γ = 1).

    Args:
        rewards: ``[..., T]`` reward after each step (0 after the episode's end).
    """
    return np.cumsum(rewards[..., ::-1], axis=-1)[..., ::-1]


def episode_gradient(pi: np.ndarray, actions: np.ndarray, weights: np.ndarray) -> np.ndarray:
    r"""``Σ_t ψ_t ∇_θ ln π(A_t | S_t, θ)``: one episode's score-function gradient estimate.

    ``ψ_t = G_t`` is REINFORCE, ``G_t − b(S_t)`` REINFORCE with a baseline, ``δ_t`` the
    actor-critic's TD error (Sutton & Barto 2018, eqs. 13.8, 13.11, 13.12). Within an episode the
    policy is fixed and the same in every state, so ``∇ln π(A_t)`` depends on the action only
    and the sum groups by action: ``Σ_b W_b ∇ln π(b)`` with ``W_b = Σ_{t: A_t = b} ψ_t``.

    Args:
        pi: ``[..., 2]`` the policy of the episode.
        actions: ``[..., T]`` ``A_t``, ``RIGHT`` (0) or ``LEFT`` (1).
        weights: ``[..., T]`` ``ψ_t``, 0 after the episode's end.

    Returns:
        ``[..., 2]``.
    """
    weights = np.asarray(weights, dtype=np.float64)
    w_left = np.einsum("...t,...t->...", weights, actions)  # LEFT is 1: the steps that went left
    w_right = weights.sum(axis=-1) - w_left  # and the rest went right
    return w_right[..., None] * score(pi, RIGHT) + w_left[..., None] * score(pi, LEFT)


def reinforce_update(theta: np.ndarray, actions: np.ndarray, rewards: np.ndarray, *,
                     alpha: float) -> np.ndarray:
    r"""REINFORCE after one episode: ``θ ← θ + α Σ_t G_t ∇ln π(A_t | θ)`` (§13.3, γ = 1).

    Args:
        theta: ``[R, 2]`` preferences the episodes were played with.
        actions: ``[R, T]`` actions, one episode per row.
        rewards: ``[R, T]`` rewards, 0 after each episode's end.
        alpha: Step size α (or ``[R, 1]``, one per run).

    Returns:
        ``[R, 2]`` the new θ.
    """
    returns = returns_to_go(rewards)
    return theta + alpha * episode_gradient(policy(theta), actions, returns)


def baseline_trace(w: np.ndarray, returns: np.ndarray, *, alpha_w: float) -> np.ndarray:
    r"""The baseline before each step, when it moves toward every return in turn.

    ``w_{t+1} = w_t + α_w (G_t − w_t)`` (the book's per-step update of ``v̂ = w``), unrolled over
    blocks of up to 128 steps: from a block's first value ``w_s``,
    ``w_{s+i} = (1 − α_w)^i w_s + α_w Σ_{j<i} (1 − α_w)^{i−1−j} G_{s+j}``.

    Args:
        w: ``[R]`` the baseline at the episode's start.
        returns: ``[R, T]`` ``G_t``.
        alpha_w: Step size in (0, 1).

    Returns:
        ``[R, T + 1]`` ``w_0 … w_T``.
    """
    decay = 1.0 - alpha_w
    length = returns.shape[-1]
    out = np.empty(returns.shape[:-1] + (length + 1,))
    out[..., 0] = w
    i = np.arange(1, _TRACE_BLOCK + 1, dtype=np.float64)
    for s in range(0, length, _TRACE_BLOCK):
        g = returns[..., s:s + _TRACE_BLOCK]
        n = g.shape[-1]
        grown = np.cumsum(g * decay ** -i[:n], axis=-1)  # Σ_{j<i} (1 − α_w)^{−(j+1)} G_{s+j}
        out[..., s + 1:s + n + 1] = decay ** i[:n] * (out[..., s, None] + alpha_w * grown)
    return out


def reinforce_baseline_update(theta: np.ndarray, w: np.ndarray, actions: np.ndarray,
                              rewards: np.ndarray, alive: np.ndarray, *, alpha_theta: float,
                              alpha_w: float) -> tuple[np.ndarray, np.ndarray]:
    r"""REINFORCE with a learned baseline after one episode (§13.4, γ = 1).

    ``δ_t = G_t − w_t``, ``w ← w + α_w δ_t`` step by step, and
    ``θ ← θ + α_θ Σ_t δ_t ∇ln π(A_t | θ)``. The baseline is one number: the agent's features
    cannot tell the states apart, so neither can its value estimate ``v̂(s, w) = w``.

    Args:
        theta: ``[R, 2]`` preferences the episodes were played with.
        w: ``[R]`` baselines.
        actions: ``[R, T]`` the actions.
        rewards: ``[R, T]`` the rewards, 0 after the end.
        alive: ``[R, T]`` step t was played.
        alpha_theta: Step size of θ.
        alpha_w: Step size of w.

    Returns:
        ``[R, 2]`` the new θ and ``[R]`` the new w.
    """
    returns = returns_to_go(rewards)
    trace = baseline_trace(w, returns, alpha_w=alpha_w)
    deltas = (returns - trace[..., :-1]) * alive
    theta = theta + alpha_theta * episode_gradient(policy(theta), actions, deltas)
    lengths = alive.sum(axis=-1)
    return theta, np.take_along_axis(trace, lengths[..., None], axis=-1)[..., 0]


# --------------------------------------------------------------------------- actor-critic
def actor_critic_step(theta: np.ndarray, v: np.ndarray, pi: np.ndarray, cell: np.ndarray,
                      action: np.ndarray, reward: float | np.ndarray, next_cell: np.ndarray, *,
                      alpha_theta: float, alpha_w: float
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""One step of one-step actor-critic for every run (§13.5, γ = 1 so I = 1).

    ``δ = R + v̂(S') − v̂(S)`` (``v̂(G) = 0``), ``w ← w + α_w δ ∇v̂(S)``,
    ``θ ← θ + α_θ δ ∇ln π(A | S, θ)``. The critic is a table, ``v̂(S) = v[cell]``, so its
    gradient picks out the one entry of S.

    Args:
        theta: ``[R, 2]`` preferences.
        v: ``[K]`` the critic's values, one per (run, cell); the goal's entries stay 0.
        pi: ``[R, 2]`` ``policy(theta)``, which drew the action.
        cell: ``[R]`` the entry of ``v`` that holds v̂(S).
        action: ``[R]`` A.
        reward: R.
        next_cell: ``[R]`` the entry that holds v̂(S').
        alpha_theta: The actor's step size.
        alpha_w: The critic's step size.

    Returns:
        ``[R, 2]`` new θ, ``[K]`` new critic, ``[R]`` the TD errors δ.
    """
    v_s = v[cell]
    delta = reward + v[next_cell] - v_s
    v = v.copy()
    v[cell] = v_s + alpha_w * delta
    theta = theta + (alpha_theta * delta)[:, None] * score(pi, action)
    return theta, v, delta


# --------------------------------------------------------------------------- the engines
class _Streams:
    """Uniform numbers per lane, each lane reading the stream of its run.

    Lane ``l`` reads the stream of run ``run_of[l]`` through a window of the numbers from the
    lane's current episode on; ``_end[l]`` is the stream index just past the window.
    """

    def __init__(self, seed: int, runs: int, run_of: np.ndarray, width: int = 4 * _MAX_CHUNK):
        children = np.random.SeedSequence(seed).spawn(runs)
        self._gens = [np.random.default_rng(children[r]) for r in run_of]
        self._buf = np.stack([g.random(width) for g in self._gens])
        self._end = np.full(len(run_of), width, dtype=np.int64)
        self._views: dict[int, np.ndarray] = {}

    def take(self, lanes: np.ndarray, base: np.ndarray, t0: int, n: int) -> np.ndarray:
        """``[len(lanes), n]``: numbers ``base + t0 … base + t0 + n − 1`` of each lane's stream.

        ``base``, the start of the lane's episode, never decreases.
        """
        width = self._buf.shape[1]
        if t0 + n > width:  # a very long episode: widen every window
            more = np.stack([g.random(t0 + n - width) for g in self._gens])
            lo = self._end - width
            self._buf = np.concatenate([self._buf, more], axis=1)
            width = t0 + n
            self._end = lo + width
            self._views = {}
        short = base + (t0 + n) > self._end[lanes]
        if short.any():
            for lane, at in zip(lanes[short], base[short], strict=True):
                lo = self._end[lane] - width
                keep = self._buf[lane, at - lo:].copy()
                self._buf[lane, : keep.size] = keep
                self._buf[lane, keep.size:] = self._gens[lane].random(width - keep.size)
                self._end[lane] = at + width
        view = self._views.get(n)
        if view is None:  # every run of n numbers in the windows, without copying
            view = self._views[n] = np.lib.stride_tricks.sliding_window_view(self._buf, n, 1)
        return view[lanes, base + t0 - (self._end[lanes] - width)]


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
        """``[N, L]`` −1 on every step played, 0 after."""
        return self.alive * REWARD


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
    at = np.full(n_lanes, _CODES * START, dtype=np.intp)  # 2¹⁶ × the state: a row of the table
    lengths = np.zeros(n_lanes, dtype=np.intp)
    pieces = []  # (lanes, first step, moves, states) of each block of steps
    # A first block four times the longest expected episode (−J(p), largest at an end of the
    # lanes' range of p) is mostly enough; later blocks play only the lanes still going.
    ends = (min(max(float(p), 1e-6), 1.0 - 1e-6) for p in (p_right.min(), p_right.max()))
    expected = max((4.0 - 2.0 * p) / (p * (1.0 - p)) for p in ends)
    chunk = int(min(max(_CHUNK * math.ceil(4 * expected / _CHUNK), _CHUNK), _MAX_CHUNK))
    rows, t0 = np.arange(n_lanes), 0
    while t0 <= max_steps and rows.size:
        left = uniforms(t0, chunk, rows) >= p_right[rows, None]
        # Sixteen moves to a code: bit i of code b is move 16 b + i.
        codes = np.packbits(left, axis=1, bitorder="little").view("<u2").T.astype(np.intp)
        s = np.empty((rows.size, chunk), dtype=np.int8) if states else None
        here, steps = at[rows], lengths[rows]
        for b, code in enumerate(codes):
            row = here + code
            if states:
                s[:, b * _MOVES:(b + 1) * _MOVES] = path[row]
            steps += made[row]
            here = end[row]
            if b % 2 == 1 and not (here != _CODES * GOAL).any():
                break
        used = (b + 1) * _MOVES
        at[rows], lengths[rows] = here, steps
        pieces.append((rows, t0, left[:, :used].view(np.int8), s[:, :used] if states else None))
        rows = rows[here != _CODES * GOAL]
        t0 += chunk
        chunk = min(2 * chunk, _MAX_CHUNK)
    finished = lengths <= max_steps
    lengths = np.minimum(lengths, max_steps)
    longest = int(lengths.max())
    A = _assemble(pieces, 2, n_lanes, longest, 0)  # LEFT = 1, RIGHT = 0 after the end
    S = _assemble(pieces, 3, n_lanes, longest, GOAL) if states else None
    return Episodes(states=S, actions=A, alive=np.arange(longest) < lengths[:, None],
                    lengths=lengths, finished=finished)


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

    The Monte-Carlo learners play all their runs in lockstep, one episode of each at a time
    (``play_episodes``), and update them with ``reinforce_update`` or
    ``reinforce_baseline_update`` on those arrays; actor-critic steps all its runs together
    with ``actor_critic_step``.

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
    reinforce = [i for i, m in enumerate(methods) if m.kind == "reinforce"]
    if reinforce:  # every step size in one lockstep
        _train_monte_carlo([methods[i] for i in reinforce], reinforce, out, theta0, seed,
                           max_steps, budget)
    for i, m in enumerate(methods):
        if m.kind == "actor_critic":
            _train_actor_critic(m, i, out, theta0, seed, max_steps, ac_budget)
        elif m.kind == "reinforce_with_baseline":
            _train_monte_carlo([m], [i], out, theta0, seed, max_steps, budget)
    for i in range(len(methods)):
        for r in np.flatnonzero(out["ran_away"][i] >= 0):
            out["returns"][i, r, out["ran_away"][i, r]:] = -float(max_steps)
    return Training(methods=methods, p0=float(p0), seed=seed, max_steps=max_steps,
                    budget=budget, ac_budget=ac_budget, **out)


def _train_monte_carlo(group: list[Method], rows: list[int], out: dict, theta0: np.ndarray,
                       seed: int, max_steps: int, budget: int) -> None:
    """All runs of some Monte-Carlo learners of one kind in lockstep.

    One episode of every run (``play_episodes``), then the update of every run, then the next.
    REINFORCE at several step sizes shares the lockstep: lane ``c · R + r`` is run r of the c-th
    step size, with its own α.
    """
    runs, episodes = out["returns"].shape[1:]
    n = len(group) * runs
    streams = _Streams(seed, runs, np.tile(np.arange(runs), len(group)))
    theta = np.tile(theta0, (n, 1))
    alpha = np.repeat([m.alpha_theta for m in group], runs)[:, None]
    w = np.zeros(n)
    used = np.zeros(n, dtype=np.int64)  # random numbers (= steps) each lane has used
    lane = np.arange(n)  # the lanes still going
    returns = np.full((n, episodes), np.nan, dtype=np.float32)
    p_right = np.full((n, episodes), np.nan, dtype=np.float32)
    ran_away = np.full(n, -1, dtype=np.int64)
    cut = np.full(n, -1, dtype=np.int64)
    kind = group[0].kind
    for k in range(episodes):
        p = policy(theta)[:, RIGHT]
        if k:  # the policy after the last update
            p_right[lane, k - 1] = p
        if used[lane].max() >= budget:  # these have used their steps: they start no episode
            spent = used[lane] >= budget
            cut[lane[spent]] = k
            lane, theta, w, p, alpha = (x[~spent] for x in (lane, theta, w, p, alpha))
            if not lane.size:
                break
        ep = play_episodes(
            p, lambda t0, m, rows, lane=lane, base=used[lane]: streams.take(lane[rows],
                                                                          base[rows], t0, m),
            max_steps=max_steps,
        )
        used[lane] += ep.lengths
        if kind == "reinforce":
            theta = reinforce_update(theta, ep.actions, ep.rewards, alpha=alpha)
        else:
            theta, w = reinforce_baseline_update(theta, w, ep.actions, ep.rewards, ep.alive,
                                                 alpha_theta=group[0].alpha_theta,
                                                 alpha_w=group[0].alpha_w)
        if ep.finished.all():
            returns[lane, k] = -ep.lengths
            continue
        # Lanes whose episode reached max_steps ran away: they stop here.
        keep = ep.finished
        returns[lane[keep], k] = -ep.lengths[keep]
        p_right[lane[keep], k] = policy(theta[keep])[:, RIGHT]
        ran_away[lane[~keep]] = k
        lane, theta, w, alpha = lane[keep], theta[keep], w[keep], alpha[keep]
        if not lane.size:
            break
    else:
        p_right[lane, episodes - 1] = policy(theta)[:, RIGHT]
    for c, row in enumerate(rows):
        mine = slice(c * runs, (c + 1) * runs)
        out["returns"][row], out["p_right"][row] = returns[mine], p_right[mine]
        out["ran_away"][row], out["cut"][row] = ran_away[mine], cut[mine]
        out["steps"][row] = used[mine]


def _train_actor_critic(m: Method, row: int, out: dict, theta0: np.ndarray, seed: int,
                        max_steps: int, budget: int) -> None:
    """All runs of one actor-critic learner stepping together.

    Each run starts its next episode as soon as the last one ends. The episodes are booked, and
    the runs that are done (all episodes played, ran away, or out of steps) are dropped, once
    per block of steps.
    """
    runs, episodes = out["returns"].shape[1:]
    cells = CRITICS[m.critic]
    width = int(cells.max()) + 1
    streams = _Streams(seed, runs, np.arange(runs))
    lane = np.arange(runs)  # the run of each lane still going
    theta = np.tile(theta0, (runs, 1))
    v = np.zeros(runs * width)  # the critic of lane l is v[l * width:(l + 1) * width]
    state = np.full(runs, START, dtype=np.intp)
    book = _Book(out, row, episodes, max_steps, budget, runs)
    next_log = np.empty((_AC_BLOCK, runs), dtype=np.intp)
    theta_log = np.empty((_AC_BLOCK, runs, 2))
    one_per_state = bool((cells == np.arange(4)).all())
    alpha_theta, alpha_w = m.alpha_theta, m.alpha_w
    step = 0
    while lane.size:
        n = lane.size
        first = width * np.arange(n)
        u = streams.take(lane, np.full(n, step), 0, _AC_BLOCK).T  # [B, n]
        for j in range(_AC_BLOCK):
            pi = policy(theta)
            action = (u[j] >= pi[:, RIGHT]).astype(np.intp)  # right when u < π(right)
            next_state, reward = corridor_step(state, action)
            if one_per_state:
                cell, next_cell = first + state, first + next_state
            else:
                cell, next_cell = first + cells[state], first + cells[next_state]
            theta, v, _ = actor_critic_step(theta, v, pi, cell, action, reward, next_cell,
                                            alpha_theta=alpha_theta, alpha_w=alpha_w)
            next_log[j, :n] = next_state
            theta_log[j, :n] = theta
            state = _RESTART[next_state]  # the goal starts the next episode in S
        step += _AC_BLOCK
        keep = book.block(lane, next_log[:, :n] == GOAL, theta_log[:, :n], step)
        if not keep.all():
            lane, theta, state = lane[keep], theta[keep], state[keep]
            v = v.reshape(n, width)[keep].ravel()


class _Book:
    """Actor-critic's bookkeeping: which episodes ended when, in blocks of steps.

    The loop that the block engine must equal, per run: an episode starts only while the run has
    taken fewer than ``budget`` steps; an episode that reaches ``max_steps`` steps without the
    goal makes the run stop (it ran away).
    """

    def __init__(self, out: dict, row: int, episodes: int, max_steps: int, budget: int,
                 runs: int):
        self.out, self.row, self.episodes = out, row, episodes
        self.max_steps, self.budget = max_steps, budget
        self.played = np.zeros(runs, dtype=np.int64)  # episodes finished, per lane
        self.began = np.zeros(runs, dtype=np.int64)  # step at which the current episode began

    def block(self, lane: np.ndarray, done_log: np.ndarray, theta_log: np.ndarray,
              step: int) -> np.ndarray:
        """Book a block of ``B`` steps ending at ``step``; returns which lanes go on."""
        out, row, n = self.out, self.row, lane.size
        who, when = np.nonzero(done_log.T)  # every episode end, by lane, then by step
        ends = step - done_log.shape[0] + when + 1  # steps the run had taken at that end
        head = np.r_[True, who[1:] != who[:-1]][: who.size]  # a lane's first end here
        starts = np.flatnonzero(head)
        rank = np.arange(who.size) - starts[np.cumsum(head) - 1]
        since = np.where(head, self.began[who], np.r_[0, ends[:-1]][: who.size])
        k = self.played[who] + rank
        length = ends - since
        # The first end that the loop would not have booked stops the lane's booking.
        late, long = since >= self.budget, length > self.max_steps
        bad = late | long | (k >= self.episodes)
        first_bad = np.full(n, np.iinfo(np.int64).max)
        np.minimum.at(first_bad, who[bad], rank[bad])
        ok = rank < first_bad[who]
        out["returns"][row, lane[who[ok]], k[ok]] = -length[ok]
        p_after = policy(theta_log[when[ok], who[ok]])[:, RIGHT]
        out["p_right"][row, lane[who[ok]], k[ok]] = p_after
        np.add.at(self.played, who[ok], 1)
        last_ok = np.flatnonzero(ok & np.r_[who[1:] != who[:-1], True][: who.size] | ok & (
            np.r_[~ok[1:], True][: who.size]))
        self.began[who[last_ok]] = ends[last_ok]
        finished = self.played >= self.episodes
        out["steps"][row, lane[finished]] = self.began[finished]
        # Why each unfinished lane stops, if it does: at its first bad end, or now.
        stopper = bad & (rank == first_bad[who])
        ran_away = np.zeros(n, dtype=bool)
        spent = np.zeros(n, dtype=bool)
        ran_away[who[stopper & long & ~late]] = True
        spent[who[stopper & late]] = True
        start = self.began.copy()
        start[who[stopper]] = since[stopper]
        going = ~finished & ~ran_away & ~spent
        spent |= going & (start >= self.budget)
        ran_away |= going & ~spent & (step - start >= self.max_steps)
        out["ran_away"][row, lane[ran_away]] = self.played[ran_away]
        out["steps"][row, lane[ran_away]] = start[ran_away] + self.max_steps
        out["cut"][row, lane[spent]] = self.played[spent]
        out["steps"][row, lane[spent]] = start[spent]
        keep = ~(finished | ran_away | spent)
        self.played, self.began = self.played[keep], self.began[keep]
        return keep


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
    csum = np.cumsum(np.where(seen, values, 0.0), axis=1)
    count = np.cumsum(seen, axis=1, dtype=np.float64)
    csum[:, window:] -= csum[:, :-window].copy()
    count[:, window:] -= count[:, :-window].copy()
    with np.errstate(invalid="ignore", divide="ignore"):
        smooth = np.where(seen, csum / count, np.nan)
        n = seen.sum(axis=0)
        mean = np.nansum(smooth, axis=0) / n
        var = np.nansum((smooth - mean) ** 2, axis=0) / (n - 1)
    from scipy.stats import t as student_t

    half = np.where(n > 1, student_t.ppf(0.975, np.maximum(n - 1, 1)) * np.sqrt(
        np.where(n > 1, var, 0.0) / np.maximum(n, 1)), 0.0)
    mean = np.where(n > 0, mean, np.nan)
    return Curve(mean=mean, low=mean - half, high=mean + half)


# --------------------------------------------------------------------------- gradient study
_GROUP = 1000  # episodes played at once by gradient_study


@dataclass(frozen=True)
class GradientStudy:
    """Single-episode gradient estimates at one fixed policy, all on the same episodes.

    Values are ``∂J/∂θ_right`` (``∂J/∂θ_left`` is its negative).
    """

    p: float
    exact: float  # ∂J/∂θ_right
    samples: np.ndarray  # [K, N] one estimate per estimator (ESTIMATORS) and episode
    constant: float  # the constant baseline c
    learned: float  # REINFORCE-with-baseline's w at its fixed point for this policy
    true_values: np.ndarray  # [3] v_π
    optimal: np.ndarray  # [3] b*(s), the per-state baseline of least variance here
    one_value: float  # the one-value critic at its TD fixed point, J(p)
    lengths: np.ndarray  # [N] episode lengths
    moments: np.ndarray  # [3] var(X), cov(X, Y), var(Y): the parabola of a constant baseline

    @property
    def n(self) -> int:
        """Episodes sampled."""
        return self.samples.shape[1]

    @property
    def means(self) -> np.ndarray:
        """``[K]`` each estimator's mean over the episodes."""
        return self.samples.mean(axis=1)

    @property
    def variances(self) -> np.ndarray:
        """``[K]`` each estimator's variance over the episodes."""
        return self.samples.var(axis=1, ddof=1)

    @property
    def half_widths(self) -> np.ndarray:
        """95% half-widths of the means (normal approximation)."""
        return 1.96 * np.sqrt(self.variances / self.n)

    def variance_at(self, b: np.ndarray) -> np.ndarray:
        """Variance of the constant-baseline estimator ``X − bY`` on these episodes."""
        vx, cxy, vy = self.moments
        return vx - 2.0 * b * cxy + b * b * vy

    @property
    def best_constant(self) -> float:
        """The constant baseline with the least variance on these episodes, Cov(X, Y)/Var(Y)."""
        return float(self.moments[1] / self.moments[2])

    def index(self, name: str) -> int:
        """Row of an estimator in ``samples``."""
        return ESTIMATORS.index(name)


def gradient_study(p: float, *, episodes: int, constant: float, seed: int) -> GradientStudy:
    r"""Sample single-episode policy-gradient estimates at π(right) = p, one per episode.

    Every estimator is ``Σ_t ψ_t ∇ln π(A_t)`` (``episode_gradient``) on the same N episodes.

    * Monte Carlo, ``ψ_t = G_t − b(S_t)``. Being linear in b, the estimate is
      ``X − Σ_s b(s) Y_s`` with ``X`` the estimate without baseline and ``Y_s`` the scores
      summed over the visits to s (each ``E[Y_s] = 0``, so every baseline is unbiased). Baselines:
      none; a constant c; the learned one (the fixed point of ``w ← w + α_w (G_t − w)``,
      ``Σ_s η(s) v(s) / Σ_s η(s)``); the true ``v_π(s)``; and ``b*(s)``, the per-state baseline
      with the least variance on these episodes (least squares of X on the ``Y_s``; in
      expectation ``E[X Y_s] / E[Y_s²]``).
    * Actor-critic, ``ψ_t = δ_t = R + v̂(S') − v̂(S)``: with the true ``v_π`` (unbiased), and with a
      one-value critic at its TD fixed point ``v̂ = J(p)`` (biased: every δ is −1 but the last,
      so its mean is ``−J(p)(1 − p)``, always "go right").

    Args:
        p: π(right) in (0, 1).
        episodes: N, 10–100000.
        constant: The constant baseline c.
        seed: Seed of the episodes.

    Returns:
        The estimates, with the exact ``∂J/∂θ_right`` to compare.
    """
    p = float(_probability(p))
    n = _count(episodes, "the number of episodes", 10, 100_000)
    seed = _seed(seed)
    try:
        constant = float(constant)
    except (TypeError, ValueError):
        raise InputError("the constant baseline must be a number") from None
    if not math.isfinite(constant):
        raise InputError("the constant baseline must be a finite number")
    rng = np.random.default_rng(seed)
    pi = np.array([p, 1.0 - p])
    v = np.append(state_values(p), 0.0)  # v(G) = 0
    one = np.append(np.full(3, start_value(p)), 0.0)
    X, Y, td_true, td_one, lengths = [], [], [], [], []
    for first in range(0, n, _GROUP):
        m = min(_GROUP, n - first)
        ep = play_episodes(np.full(m, p), lambda t0, k, rows: rng.random((rows.size, k)),
                           states=True)
        nxt = np.concatenate([ep.states[:, 1:], np.full((m, 1), GOAL, np.int8)], axis=1)
        G = returns_to_go(ep.rewards)

        def estimate(psi, ep=ep):
            return episode_gradient(pi, ep.actions, psi)[:, RIGHT]

        X.append(estimate(G))
        Y.append(np.stack([estimate(ep.states == s) for s in range(3)], axis=1))
        td_true.append(estimate((REWARD + v[nxt] - v[ep.states]) * ep.alive))
        td_one.append(estimate((REWARD + one[nxt] - one[ep.states]) * ep.alive))
        lengths.append(ep.lengths)
    X, Y = np.concatenate(X), np.concatenate(Y)
    # The least-variance b(s): least squares of X on Y_1..Y_3 (with an intercept).
    centred = Y - Y.mean(axis=0)
    optimal = np.linalg.lstsq(centred, X - X.mean(), rcond=None)[0]
    eta = visits(p)
    learned = float(eta @ v[:3] / eta.sum())
    mc = {"none": np.zeros(3), "constant": np.full(3, constant), "learned": np.full(3, learned),
          "true_v": v[:3], "optimal": optimal}
    est = {k: X - Y @ b for k, b in mc.items()}
    est["td_true"], est["td_one"] = np.concatenate(td_true), np.concatenate(td_one)
    y = Y.sum(axis=1)
    cov = np.cov(X, y)
    return GradientStudy(
        p=p, exact=float(exact_gradient(np.log(pi))[RIGHT]),
        samples=np.stack([est[k] for k in ESTIMATORS]), constant=constant, learned=learned,
        true_values=v[:3], optimal=optimal, one_value=float(one[0]),
        lengths=np.concatenate(lengths), moments=np.array([cov[0, 0], cov[0, 1], cov[1, 1]]),
    )


# --------------------------------------------------------------------------- worked score
@dataclass(frozen=True)
class WorkedScore:
    """One softmax-gradient step worked with numbers (see ``worked_score``)."""

    theta: np.ndarray  # [2] θ (right, left)
    action: int
    ret: float  # G
    baseline: float  # b
    alpha: float
    exp_h: np.ndarray  # [2] e^{h(a)}
    pi: np.ndarray  # [2]
    expected_x: np.ndarray  # [2] Σ_b π(b) x(s, b)
    score: np.ndarray  # [2] x(s, a) − Σ_b π(b) x(s, b)
    step: np.ndarray  # [2] α (G − b) ∇ln π
    new_theta: np.ndarray  # [2]
    new_pi: np.ndarray  # [2]
    finite_difference: np.ndarray  # [2] central differences of ln π(a) in θ

    @property
    def x(self) -> np.ndarray:
        """``[2]`` the features of the action taken."""
        return FEATURES[self.action]


def worked_score(theta_right: float, theta_left: float, action: int, *, ret: float,
                 baseline: float, alpha: float) -> WorkedScore:
    r"""∇_θ ln π(a) for the softmax policy, and the REINFORCE step it gives, with numbers.

    ``π(a) = e^{θ_a} / Σ_b e^{θ_b}``, ``∇ln π(a) = x(s, a) − Σ_b π(b) x(s, b)``,
    ``θ ← θ + α (G − b) ∇ln π(a)``; checked against central finite differences of ``ln π(a)``.

    Args:
        theta_right: Preference of right.
        theta_left: Preference of left.
        action: ``RIGHT`` or ``LEFT``.
        ret: The return G that followed.
        baseline: b.
        alpha: Step size.
    """
    values = {"θ(right)": theta_right, "θ(left)": theta_left, "G": ret, "b": baseline,
              "α": alpha}
    for name, x in values.items():
        if not isinstance(x, int | float | np.floating | np.integer) or not math.isfinite(x):
            raise InputError(f"{name} must be a finite number")
    if abs(theta_right - theta_left) > 700:
        raise InputError("θ(right) and θ(left) may differ by at most 700 (e^700 is the largest "
                         "power a float holds)")
    if action not in (RIGHT, LEFT):
        raise InputError("the action must be right or left")
    theta = np.array([theta_right, theta_left], dtype=np.float64)
    exp_h = np.exp(theta - theta.max())
    pi = softmax(theta)
    sc = score(pi, np.intp(action))
    step = alpha * (ret - baseline) * sc
    h = 1e-6
    fd = np.array([(np.log(softmax(theta + h * e)[action]) - np.log(softmax(theta - h * e)[action]))
                   / (2 * h) for e in np.eye(2)])
    return WorkedScore(theta=theta, action=int(action), ret=float(ret), baseline=float(baseline),
                       alpha=float(alpha), exp_h=exp_h, pi=pi, expected_x=pi @ FEATURES,
                       score=sc, step=step, new_theta=theta + step,
                       new_pi=softmax(theta + step), finite_difference=fd)


def whiteboard_gap(p: float, constant: float, seed: int, episodes: int = 20) -> float:
    """Largest difference between the whiteboard REINFORCE estimate and ``episode_gradient``.

    On ``episodes`` episodes at π(right) = p with the constant baseline, the check the page
    shows live (``rlviz.interview.whiteboard.policy_gradient``).
    """
    from rlviz.interview.whiteboard import policy_gradient as whiteboard

    p = float(_probability(p))
    rng = np.random.default_rng(_seed(seed))
    ep = play_episodes(np.full(episodes, p), lambda t0, n, rows: rng.random((rows.size, n)))
    psi = (returns_to_go(ep.rewards) - constant) * ep.alive
    ours = episode_gradient(np.array([p, 1.0 - p]), ep.actions, psi)
    theirs = [whiteboard.reinforce_gradient(np.log([p, 1.0 - p]), ep.actions[i, :t],
                                            ep.rewards[i, :t], constant)
              for i, t in enumerate(ep.lengths)]
    return float(np.abs(ours - np.array(theirs)).max())
