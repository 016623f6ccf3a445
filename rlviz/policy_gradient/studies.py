"""The gradient estimators' study, one score worked by hand, and the whiteboard check."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rlviz.errors import InputError
from rlviz.policy_gradient.corridor import (
    FEATURES,
    GOAL,
    LEFT,
    REWARD,
    RIGHT,
    _count,
    _probability,
    _seed,
    exact_gradient,
    score,
    softmax,
    start_value,
    state_values,
    visits,
)
from rlviz.policy_gradient.engines import play_episodes
from rlviz.policy_gradient.steps import episode_gradient, returns_to_go

__all__ = [
    "ESTIMATORS",
    "GradientStudy",
    "WorkedScore",
    "gradient_study",
    "whiteboard_gap",
    "worked_score",
]


ESTIMATORS = ("none", "constant", "learned", "true_v", "optimal", "td_true", "td_one")
"""The single-episode gradient estimators of ``gradient_study``, in display order."""


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
