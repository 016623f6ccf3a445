"""The learners: the reward model, DPO and the KL-penalised policy gradient, and their optima."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from rlviz.errors import InputError
from rlviz.preferences.losses import (
    _sigmoid,
    bradley_terry_loss,
    dpo_loss,
    kl_penalised_advantages,
    sampled_kl,
)
from rlviz.preferences.space import Pairs, ResponseSpace, _log_normalise, kl_objective

__all__ = [
    "POLICIES",
    "RewardModel",
    "Training",
    "dpo_population_fit",
    "fit_reward_model",
    "numerical_optimum",
    "train_dpo",
    "train_policy_gradient",
]


MAX_STEPS = 2000
MAX_RUNS = 16
MAX_BATCH = 256
POLICIES = ("features", "table")
"""DPO's and the policy gradient's parameterisations: on the reward model's features, or one
logit per response."""


L2 = 1e-3
"""Ridge weight on θ (reward model) and on u (DPO): the same, so that their optima coincide."""
DPO_LR = 0.2
"""Adam's learning rate for DPO, in reward units (full batch: deterministic, so it can be large)."""
PG_LR = 0.1
"""Adam's learning rate for the policy gradient, in reward units (from samples: noisier)."""
FLOOR = 1e-250
"""Probabilities below this count as zero in the numerical optimiser."""


# ------------------------------------------------------------------------- reward model
@dataclass(frozen=True, eq=False)
class RewardModel:
    """A Bradley–Terry reward model ``r̂ = Φθ`` fitted to the pairs.

    Attributes:
        theta: ``[d]`` the weights.
        values: ``[K]`` ``r̂`` of every response.
        loss: Mean Bradley–Terry loss on the training pairs (without the ridge term).
    """

    theta: np.ndarray  # [d]
    values: np.ndarray  # [K]
    loss: float


def fit_reward_model(space: ResponseSpace, pairs: Pairs, *, l2: float = L2,
                     tol: float = 1e-12) -> RewardModel:
    r"""Fit ``r̂ = Φθ`` by the Bradley–Terry loss plus a ridge ``(l2/2)|θ|²``, to convergence.

    ``min_θ (1/N) Σᵢ −log σ(r̂(y_w,i) − r̂(y_l,i)) + (l2/2)|θ|²`` is a ridge logistic regression
    on the feature differences ``xᵢ = φ(y_w,i) − φ(y_l,i)``: convex, solved by Newton's method.
    With ``sᵢ = σ(−xᵢθ)``, the gradient is ``−(1/N) Σ sᵢ xᵢ + l2 θ`` and the Hessian
    ``(1/N) Σ sᵢ(1 − sᵢ) xᵢxᵢᵀ + l2 I``.

    Args:
        space: The response space (its features).
        pairs: The labelled pairs.
        l2: Ridge weight.
        tol: Stop when the Newton step is shorter than this.

    Returns:
        The fitted reward model.
    """
    x = space.features[pairs.chosen] - space.features[pairs.rejected]  # [N, d]
    theta = np.zeros(x.shape[1])
    for _ in range(100):
        s = _sigmoid(-(x @ theta))
        grad = -(s @ x) / pairs.n + l2 * theta
        hess = (x.T * (s * (1.0 - s))) @ x / pairs.n + l2 * np.eye(x.shape[1])
        step = np.linalg.solve(hess, grad)
        theta = theta - step
        if np.abs(step).max() < tol:
            break
    values = space.features @ theta
    loss = float(bradley_terry_loss(values[pairs.chosen], values[pairs.rejected]).mean())
    return RewardModel(theta=theta, values=values, loss=loss)


# ------------------------------------------------------------------------------ training
@dataclass(frozen=True, eq=False)
class Training:
    """Runs of a trained policy ``log π_u = log π_ref + Φu/β − log Z``.

    Attributes:
        steps: ``[T]`` the recorded gradient steps (0 is the start, ``π_ref``).
        logp: ``[T, R, K]`` each run's policy at the recorded steps.
        loss: ``[T, R]`` the training loss there (the DPO loss, or the policy gradient's
            surrogate ``−mean(A_i log π(y_i))``).
        kl_estimate: ``[T, R]`` mean sampled k1 of the batch (policy gradient), else None.
        params: ``[R, P]`` the final ``u``.
    """

    steps: np.ndarray  # [T]
    logp: np.ndarray  # [T, R, K]
    loss: np.ndarray  # [T, R]
    kl_estimate: np.ndarray | None  # [T, R]
    params: np.ndarray  # [R, P]


def _record_at(steps: int, points: int = 60) -> np.ndarray:
    return np.unique(np.round(np.linspace(0, steps, min(points, steps) + 1)).astype(int))


def _basis(space: ResponseSpace, policy: str) -> np.ndarray | None:
    """The policy's features Φ, or None for one logit per response (Φ = I)."""
    if policy == "features":
        return space.features
    if policy == "table":
        return None
    raise InputError(f"the policy class must be one of {', '.join(POLICIES)}; got {policy!r}")


def _check_training(beta: float, steps: int) -> None:
    if not (math.isfinite(beta) and beta > 0):
        raise InputError(f"β must be a positive number; got {beta!r}")
    if not (isinstance(steps, int | np.integer) and 1 <= steps <= MAX_STEPS):
        raise InputError(f"the number of gradient steps must be 1 to {MAX_STEPS}; got {steps!r}")


def _policy(u: np.ndarray, basis: np.ndarray | None, log_ref: np.ndarray,
            beta: float) -> np.ndarray:
    """``log π_u = log π_ref + Φu/β − log Z`` (``u``: ``[P]`` or ``[R, P]``)."""
    return _log_normalise(log_ref + (u if basis is None else u @ basis.T) / beta)


def _to_params(g: np.ndarray, basis: np.ndarray | None) -> np.ndarray:
    """A gradient with respect to each response's ``Φu`` (``[..., K]``), chained to ``u``."""
    return g if basis is None else g @ basis


class _Adam:
    """Adam (Kingma & Ba 2015, Algorithm 1) on one array, elementwise."""

    def __init__(self, lr: float, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8):
        self.lr, self.b1, self.b2, self.eps = lr, b1, b2, eps
        self.m = self.v = 0.0
        self.t = 0

    def step(self, params: np.ndarray, grad: np.ndarray) -> np.ndarray:
        self.t += 1
        self.m = self.b1 * self.m + (1 - self.b1) * grad
        self.v = self.b2 * self.v + (1 - self.b2) * grad**2
        m_hat, v_hat = self.m / (1 - self.b1**self.t), self.v / (1 - self.b2**self.t)
        return params - self.lr * m_hat / (np.sqrt(v_hat) + self.eps)


def train_dpo(space: ResponseSpace, pairs: Pairs, *, beta: float, steps: int = 500,
              policy: str = "features", lr: float = DPO_LR, l2: float = L2,
              weights: np.ndarray | None = None) -> Training:
    r"""DPO: Adam on the mean DPO loss of the pairs (full batch), from ``π = π_ref``.

    ``min_u (1/N) Σᵢ dpo_loss(log π_u(y_w), log π_u(y_l), log π_ref(y_w), log π_ref(y_l)) +
    (l2/2)|u|²`` with ``log π_u = log π_ref + Φu/β − log Z``. No reward model, no sampling.
    The gradient is the paper's: each pair pushes ``log π(y_w)`` up and ``log π(y_l)`` down,
    weighted by ``σ(−z)``, how wrong the policy's implicit reward still orders the pair:

    ``∇L = −β E[σ(−z) (∇log π(y_w) − ∇log π(y_l))]``, ``∂(β log π(y))/∂u = φ(y) − E_π φ``
    (the ``E_π φ`` parts cancel within a pair).

    Source: Rafailov et al. (2023), eqs. 7–8.

    Args:
        space: The response space.
        pairs: The labelled pairs.
        beta: KL coefficient β.
        steps: Adam steps.
        policy: ``"features"`` (Φ = the reward model's features) or ``"table"`` (Φ = I).
        lr: Adam's learning rate (u is in reward units).
        l2: Ridge weight on u (as on θ in ``fit_reward_model``).
        weights: ``[N]`` weight of each pair (default: equal).

    Returns:
        One run (R = 1).
    """
    _check_training(beta, steps)
    basis, log_ref, k = _basis(space, policy), space.log_ref, space.n
    weight = np.full(pairs.n, 1.0 / pairs.n) if weights is None else (
        np.asarray(weights, dtype=np.float64) / np.sum(weights))
    # The same loss over the distinct pairs, each weighted by how often it was drawn.
    distinct, which = np.unique(pairs.chosen * k + pairs.rejected, return_inverse=True)
    w, lo, weight = distinct // k, distinct % k, np.bincount(which, weight)
    u = np.zeros(k if basis is None else basis.shape[1])
    adam, record = _Adam(lr), set(_record_at(steps).tolist())
    history, losses = [], []
    for step in range(steps + 1):
        logp = _policy(u, basis, log_ref, beta)
        if step in record:
            loss = weight @ dpo_loss(logp[w], logp[lo], log_ref[w], log_ref[lo], beta=beta)
            history.append(logp)
            losses.append(float(loss))
        if step == steps:
            break
        z = beta * ((logp[w] - log_ref[w]) - (logp[lo] - log_ref[lo]))
        push = weight * _sigmoid(-z)  # σ(−z): how wrong the pair still is
        g = np.bincount(lo, push, minlength=k) - np.bincount(w, push, minlength=k)
        u = adam.step(u, _to_params(g, basis) + l2 * u)
    return Training(steps=_record_at(steps), logp=np.stack(history)[:, None, :],
                    loss=np.asarray(losses)[:, None], kl_estimate=None, params=u[None, :])


def _sample(logp: np.ndarray, uniform: np.ndarray) -> np.ndarray:
    """Inverse-CDF draws from each row of ``exp(logp)`` (``[R, K]``) at ``uniform`` (``[R, B]``).

    One sorted search over all rows: row r's cumulative probabilities are shifted to (r, r + 1].
    """
    cdf = np.cumsum(np.exp(logp), axis=1)
    rows = np.arange(logp.shape[0])[:, None]
    flat = (cdf / cdf[:, -1:] + rows).ravel()
    found = np.searchsorted(flat, (uniform + rows).ravel(), side="right").reshape(uniform.shape)
    return np.minimum(found - rows * logp.shape[1], logp.shape[1] - 1)


def _uniforms(rngs: list[np.random.Generator], steps: int, batch: int,
              chunk: int = 64) -> Iterator[np.ndarray]:
    """``[R, batch]`` uniform numbers per step, run r's from ``rngs[r]``, ``chunk`` steps a time."""
    for start in range(0, steps, chunk):
        block = np.stack([rng.random((min(chunk, steps - start), batch)) for rng in rngs], 1)
        yield from block


def train_policy_gradient(space: ResponseSpace, reward: np.ndarray, *, beta: float,
                          steps: int = 300, batch: int = 64, runs: int = 8,
                          policy: str = "features", lr: float = PG_LR,
                          seed: int = 0) -> Training:
    r"""KL-penalised policy gradient from samples: REINFORCE on ``r̂(y) − β·k1(y)``.

    Each step, each run samples ``batch`` responses ``y ~ π_u``, scores them with
    ``kl_penalised_advantages`` (the reward model minus the sampled KL, less a leave-one-out
    baseline) and takes an Adam step along ``(1/B) Σᵢ A_i ∇log π_u(y_i)``, with
    ``β ∇_u log π_u(y) = φ(y) − E_π φ`` (for one logit per response, ``onehot(y) − π``). In
    expectation that is the gradient of ``E_π[r̂] − β KL(π‖π_ref)``, whose maximiser is ``π*``.
    Runs are rows of one array; run r draws from its own generator, so it does not depend on
    how many runs there are.

    Source: Ziegler et al. (2019), eq. 2 (KL in the reward); Williams (1992), REINFORCE.

    Args:
        space: The response space.
        reward: ``[K]`` the reward model's values ``r̂``.
        beta: KL coefficient β.
        steps: Adam steps.
        batch: Samples per step and run (at least 2).
        runs: Independent runs R.
        policy: ``"features"`` or ``"table"``.
        lr: Adam's learning rate (u in reward units).
        seed: Seed of the runs (``SeedSequence(seed).spawn(R)``).

    Returns:
        R runs.
    """
    _check_training(beta, steps)
    if not (isinstance(batch, int | np.integer) and 2 <= batch <= MAX_BATCH):
        raise InputError(f"the batch must hold 2 to {MAX_BATCH} samples; got {batch!r}")
    if not (isinstance(runs, int | np.integer) and 1 <= runs <= MAX_RUNS):
        raise InputError(f"the number of runs must be 1 to {MAX_RUNS}; got {runs!r}")
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(runs)]
    basis, log_ref, k = _basis(space, policy), space.log_ref, space.n
    r_hat = np.asarray(reward, dtype=np.float64)
    u = np.zeros((runs, k if basis is None else basis.shape[1]))
    adam, record = _Adam(lr), set(_record_at(steps).tolist())
    rows = np.arange(runs)[:, None]
    history, losses, kls = [], [], []
    for step, uniform in enumerate(_uniforms(rngs, steps + 1, batch)):
        logp = _policy(u, basis, log_ref, beta)  # [R, K]
        y = _sample(logp, uniform)  # [R, B] responses drawn from π_u
        adv = kl_penalised_advantages(r_hat[y], logp[rows, y], log_ref[y], beta=beta)
        if step in record:
            history.append(logp)
            losses.append(-(adv * logp[rows, y]).mean(1))  # the surrogate whose gradient
            kls.append(sampled_kl(logp[rows, y], log_ref[y]).mean(1))  # is followed
        if step == steps:
            break
        # Σᵢ A_i (onehot(y_i) − π) per run, then chained to u: ascend, so the loss is minus it.
        per_response = np.bincount((rows * k + y).ravel(), adv.ravel(), minlength=runs * k)
        g = per_response.reshape(runs, k) - adv.sum(1, keepdims=True) * np.exp(logp)
        u = adam.step(u, -_to_params(g, basis) / (batch * beta))
    return Training(steps=_record_at(steps), logp=np.stack(history), loss=np.stack(losses),
                    kl_estimate=np.stack(kls), params=u)


def dpo_population_fit(space: ResponseSpace, *, beta: float, tol: float = 1e-10,
                       max_iter: int = 200) -> np.ndarray:
    r"""Tabular DPO on exact, plentiful pairs: every ordered pair, weighted by its BT probability.

    The loss ``Σ_{y≠y'} σ(r*(y) − r*(y')) · dpo_loss(y ≻ y')`` over one logit per response (no
    ridge), minimised from ``π_ref`` by steps along ``train_dpo``'s gradient, each response's
    step divided by the loss's curvature in its own logit (a diagonal Newton step). Its
    minimiser has ``β log(π/π_ref) = r* + const``: DPO recovers the reward that generated the
    preferences.

    Source: Rafailov et al. (2023), Theorem 1.

    Returns:
        ``[K]`` the implicit reward ``β log(π/π_ref)`` of the trained policy.
    """
    if not (math.isfinite(beta) and beta > 0):
        raise InputError(f"β must be a positive number; got {beta!r}")
    g, log_ref = space.gold, space.log_ref
    weight = _sigmoid(g[:, None] - g[None, :])  # P(y_i ≻ y_j) under gold
    np.fill_diagonal(weight, 0.0)
    weight /= weight.sum()
    u = np.zeros(space.n)
    for _ in range(max_iter):
        m = _policy(u, None, log_ref, beta) - log_ref  # log π/π_ref
        wrong = _sigmoid(-beta * (m[:, None] - m[None, :]))  # σ(−z) of every ordered pair
        push, bend = weight * wrong, weight * wrong * (1.0 - wrong)
        step = (push.sum(0) - push.sum(1)) / (bend.sum(0) + bend.sum(1))
        u = u - step
        if np.abs(step).max() < tol:
            break
    return beta * (_policy(u, None, log_ref, beta) - log_ref)


def numerical_optimum(log_ref: np.ndarray, reward: np.ndarray, beta: float, *,
                      tol: float = 1e-14, max_iter: int = 500) -> np.ndarray:
    r"""Maximise ``E_π[r] − β KL(π‖π_ref)`` over the simplex by Newton's method.

    An independent check of the closed form: the textbook method for a concave objective under
    the constraint ``Σ π = 1`` knows only the gradient ``g = r − β(log π − log π_ref) − β`` and
    the Hessian ``−β diag(1/π)``. Each step solves the equality-constrained Newton system,
    ``Δπ = (π/β)(g − λ)`` with λ such that ``Σ Δπ = 0``, then backtracks (staying inside the
    simplex) until the objective rises enough. It starts from the uniform policy and stops when
    half the squared Newton decrement falls below ``tol``. A response whose probability falls
    below ``FLOOR`` (it adds nothing to the objective) is dropped from the problem.

    Source: Boyd & Vandenberghe (2004), "Convex Optimization", Algorithm 10.1.

    Returns:
        ``[K]`` the log-policy it finds.
    """
    log_ref, reward = np.asarray(log_ref, np.float64), np.asarray(reward, np.float64)
    p = np.full(reward.size, 1.0 / reward.size)
    for _ in range(max_iter):
        live = p > FLOOR  # a response whose mass underflows leaves the problem (it adds 0)
        g = reward[live] - beta * (np.log(p[live]) - log_ref[live]) - beta
        h_inv = p[live] / beta
        lam = (h_inv @ g) / h_inv.sum()
        step = np.zeros_like(p)
        step[live] = h_inv * (g - lam)
        decrement = float(step[live] @ (g - lam))
        if decrement / 2 <= tol:
            break
        down = step < 0
        t = min(1.0, 0.99 * float(np.min(-p[down] / step[down]))) if down.any() else 1.0
        start = kl_objective(_log(p), log_ref, reward, beta)
        while t > 1e-12 and kl_objective(_log(p + t * step), log_ref, reward,
                                         beta) < start + 0.25 * t * decrement:
            t *= 0.5
        p = p + t * step
        p[p <= FLOOR] = 0.0
        p /= p.sum()
    return _log(p)


def _log(p: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(p)
