"""The short corridor (Example 13.1), the softmax policy, and its exact values and gradients."""

from __future__ import annotations

import math

import numpy as np
from scipy.special import expit

from rlviz.errors import InputError

__all__ = [
    "ACTIONS",
    "AC_STEP_BUDGET",
    "BOOK_BASELINE",
    "BOOK_REINFORCE",
    "CRITICS",
    "FEATURES",
    "GOAL",
    "LEFT",
    "MAX_STEPS",
    "NEXT",
    "REWARD",
    "RIGHT",
    "START",
    "STEP_BUDGET",
    "argmax_value",
    "closed_form_gradient",
    "closed_form_value",
    "epsilon_greedy_values",
    "exact_gradient",
    "initial_theta",
    "optimal_probability",
    "policy",
    "score",
    "softmax",
    "start_value",
    "state_values",
    "transition_matrix",
    "visits",
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
"""The reward of every step, the one into the goal included (a whole number: episodes hold
their rewards as integers)."""
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
_GAPS = np.array([[1.0, -1.0], [-1.0, 1.0]])
"""``θ @ _GAPS`` = ``[θ_right − θ_left, θ_left − θ_right]``: each action's lead in preference."""


def softmax(h: np.ndarray) -> np.ndarray:
    r"""``e^{h_a} / Σ_b e^{h_b}`` over the last axis, the largest preference subtracted first."""
    h = np.asarray(h, dtype=np.float64)
    e = np.exp(h - h.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def policy(theta: np.ndarray) -> np.ndarray:
    r"""The agent's policy: a softmax over action preferences ``h(s, a, θ) = θᵀ x(s, a)``.

    With the book's one-hot features ``h(s, a, θ) = θ_a`` in every state (eq. 13.2), and with two
    actions the softmax is the logistic function of the gap in preferences,
    ``π(a) = 1 / (1 + e^{−(h(a) − h(b))})``, ``b`` the other action (``scipy.special.expit``,
    which cannot overflow).

    Args:
        theta: ``[..., 2]`` preferences (right, left), one row per run.

    Returns:
        ``[..., 2]`` π(right), π(left).
    """
    return expit(theta @ _GAPS)


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
        return FEATURES.take(action, axis=0) - pi
    return features[action] - pi @ features
