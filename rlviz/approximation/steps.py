"""The readable steps: semi-gradient TD, TDC and emphatic TD, sampled and expected."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlviz.approximation.problem import MAX_RUNS, MAX_STEPS, Problem, _count

__all__ = [
    "Transitions",
    "emphasis_step",
    "expected_etd_step",
    "expected_tdc_step",
    "expected_td_step",
    "sample_transitions",
    "semi_gradient_td_step",
    "tdc_step",
]


# --------------------------------------------------------------------------- the steps
def semi_gradient_td_step(w, x, x_next, reward, rho, *, gamma, alpha):
    r"""One step of off-policy semi-gradient TD(0) (Sutton & Barto 2018, eq. 11.2).

    ``δ = R + γ wᵀx' − wᵀx``, then ``w ← w + α ρ δ x``.

    Args:
        w: Weights ``[..., F]``.
        x: Features of ``S_t`` ``[..., F]``.
        x_next: Features of ``S_{t+1}`` ``[..., F]``.
        reward: ``R_{t+1}`` ``[...]``.
        rho: The importance ratio ``ρ_t`` ``[...]``.
        gamma: Discount γ.
        alpha: Step size α.
    """
    delta = reward + gamma * (w * x_next).sum(-1) - (w * x).sum(-1)
    return w + alpha * (rho * delta)[..., None] * x


def tdc_step(w, v, x, x_next, reward, rho, *, gamma, alpha, beta):
    r"""One step of TDC, gradient-corrected TD(0) (Sutton & Barto 2018, §11.7).

    ``δ = R + γ wᵀx' − wᵀx``;
    ``w ← w + α ρ (δ x − γ x' (xᵀv))``;  ``v ← v + β ρ (δ − vᵀx) x``.
    ``v`` learns the least-squares estimate of ``E[δ | x]`` from the features.
    """
    rho = np.asarray(rho)
    delta = reward + gamma * (w * x_next).sum(-1) - (w * x).sum(-1)
    vx = (v * x).sum(-1)
    w = w + alpha * rho[..., None] * (delta[..., None] * x - gamma * vx[..., None] * x_next)
    v = v + beta * (rho * (delta - vx))[..., None] * x
    return w, v


def expected_td_step(w, features, d, p, r, *, gamma, alpha):
    r"""One sweep of semi-gradient DP: the expected TD(0) update (Sutton & Barto 2018, eq. 11.9).

    ``δ̄(s) = r(s) + γ Σ_s' P(s, s') v̂(s') − v̂(s)`` for every state, then
    ``w ← w + α Σ_s d(s) δ̄(s) x(s)``. With the n-step model (``P ← Pⁿ``, ``γ ← γⁿ``, ``r`` the
    expected n-step reward) it is the expected n-step update.

    Args:
        w: Weights ``[..., F]``.
        features: ``X`` ``[..., S, F]``.
        d: Update distribution ``[..., S]``.
        p: Next-state matrix ``[..., S, S]``.
        r: Expected reward ``[..., S]``.
        gamma: Discount, a number or ``[...]``.
        alpha: Step size α.
    """
    v = np.einsum("...sf,...f->...s", features, w)
    delta = r + np.asarray(gamma)[..., None] * np.einsum("...st,...t->...s", p, v) - v
    return w + alpha * np.einsum("...s,...sf->...f", d * delta, features)


def expected_tdc_step(w, v, features, d, p, r, *, gamma, alpha, beta):
    r"""One sweep of expected TDC: each TDC update replaced by its expectation.

    With ``D = diag(d)``: ``w ← w + α (Xᵀ D δ̄ − γ Xᵀ Pᵀ D X v)`` and
    ``v ← v + β (Xᵀ D δ̄ − Xᵀ D X v)``, where ``δ̄ = r + γ P X w − X w``.
    """
    values = features @ w
    delta = r + gamma * p @ values - values
    dxv = d * (features @ v)
    w_next = w + alpha * (features.T @ (d * delta) - gamma * features.T @ (p.T @ dxv))
    v_next = v + beta * features.T @ (d * delta - dxv)
    return w_next, v_next


def emphasis_step(f, d, p, *, gamma, interest=1.0):
    r"""The expected followon trace, one step on: ``f ← d ∘ i + γ Pᵀ f``.

    ``f(s) = d(s) E[F_t | S_t = s]`` for the followon trace ``F_t = γ ρ_{t−1} F_{t−1} + I_t``
    (Sutton & Barto 2018, §11.8), starting from ``f = d ∘ i`` at ``t = 0``.
    """
    return d * interest + gamma * p.T @ f


def expected_etd_step(w, f, features, p, r, *, gamma, alpha):
    r"""One sweep of expected one-step emphatic TD: ``w ← w + α Σ_s f(s) δ̄(s) x(s)``.

    The sampled update is ``w ← w + α M_t ρ_t δ_t x_t`` with emphasis ``M_t = F_t`` (λ = 0);
    its expectation weights each state's expected TD error by ``f``, the expected emphasis.
    """
    values = features @ w
    delta = r + gamma * p @ values - values
    return w + alpha * features.T @ (f * delta)


# --------------------------------------------------------------------------- sampling
@dataclass(frozen=True)
class Transitions:
    """Sampled experience: independent streams of ``steps`` transitions each, side by side."""

    states: np.ndarray  # [T+1, R] S_0 .. S_T
    actions: np.ndarray  # [T, R] A_0 .. A_{T-1}
    rewards: np.ndarray  # [T, R] R_1 .. R_T
    rho: np.ndarray  # [T, R] ρ_0 .. ρ_{T-1} (1 where a stream follows π)
    on_policy: np.ndarray  # [R] whether each stream follows π (else the behaviour b)
    seed: int


def sample_transitions(problem: Problem, *, steps: int, runs: int, seed: int,
                       on_policy: bool | tuple[bool, ...] = False) -> Transitions:
    """Draw ``runs`` streams of experience following b (off-policy) or π (on-policy).

    With several flags, e.g. ``on_policy=(False, True)``, every flag gets the same ``runs``
    streams, stacked in that order, and stream ``i`` of each uses the same uniform numbers
    (start state, then one number per step that picks the action and the next state together):
    the off- and on-policy learners differ by the policy they follow, not by luck. S_0 follows
    the behaviour's stationary distribution.
    """
    steps = _count("Steps", steps, 1, MAX_STEPS)
    runs = _count("Runs", runs, 1, MAX_RUNS)
    flags = (on_policy,) if isinstance(on_policy, bool) else tuple(on_policy)
    n_states, n_actions = problem.behaviour.shape
    width = n_actions * n_states
    rng = np.random.default_rng(seed)
    u_start, u_step = np.tile(rng.random(runs), len(flags)), np.tile(rng.random((steps, runs)),
                                                                    (1, len(flags)))
    # One draw picks (a, s') jointly. Row j = k·S + s holds the cumulative probabilities of
    # (a, s') from state s under the k-th stream kind's policy, shifted by j, and the rows are
    # laid end to end: searchsorted(rows, j + u) then lands in row j.
    policies = np.stack([problem.target if f else problem.behaviour for f in flags])
    joint = (policies[..., None] * problem.transitions).reshape(len(flags) * n_states, width)
    rows = np.cumsum(joint, axis=1) + np.arange(len(joint))[:, None]
    rows[:, -1] = np.arange(1, len(joint) + 1)  # each row ends exactly at j + 1
    rows = rows.ravel()
    offset = np.repeat(np.arange(len(flags)) * n_states, runs)
    start = np.cumsum(problem.behaviour_distribution)
    start[-1] = 1.0
    states = np.empty((steps + 1, runs * len(flags)), dtype=np.int64)
    actions = np.empty((steps, runs * len(flags)), dtype=np.int64)
    states[0] = np.searchsorted(start, u_start, side="right")
    for t in range(steps):
        row = states[t] + offset
        k = np.searchsorted(rows, row + u_step[t], side="right") - row * width
        actions[t], states[t + 1] = np.divmod(k, n_states)
    follows = np.repeat(np.array(flags, dtype=bool), runs)
    ratio = np.where(follows, 1.0, problem.rho[states[:-1], actions])
    return Transitions(states=states, actions=actions,
                       rewards=problem.rewards[states[:-1], actions], rho=ratio,
                       on_policy=follows, seed=int(seed))
