r"""Preference learning on a response space small enough to enumerate.

Reward models, the KL-regularised optimum, DPO, best-of-n and over-optimisation.

The toy. One prompt, ``K`` candidate responses ordered by length ``x ∈ [0, 1]``. A hidden *gold*
reward ``r*(x) = 3 sin(3.4 x)`` stands in for what people really want: longer answers are better
up to a point (``x ≈ 0.46``), then worse. The reference policy ``π_ref`` (the supervised model)
writes short answers, ``π_ref(y) ∝ exp(−(x_y − 0.3)² / 2σ²)``. Pairs of responses are drawn from
``π_ref`` and labelled by Bradley–Terry on the gold reward,

.. math::  P(y_1 \succ y_2) = \sigma\big(r^*(y_1) - r^*(y_2)\big),

optionally with a share of labels flipped. A reward model ``r̂(y) = φ(y)ᵀθ`` on Legendre
features of the length is fitted to those pairs by the Bradley–Terry loss; with degree 1 it
learns "longer is better", which is right where the pairs are and wrong beyond them.

Every policy is scored exactly, by enumeration: its KL to ``π_ref``, and its expected proxy
(``r̂``) and gold (``r*``) rewards, both relative to ``π_ref``'s. The policies are

* the closed-form optimum of ``E_π[r̂] − β KL(π‖π_ref)``: ``π* ∝ π_ref exp(r̂/β)`` (for a sweep
  of β, and at the chosen one);
* best-of-n from ``π_ref`` ranked by ``r̂``: its exact distribution, ties included;
* DPO, trained by gradient steps on the same pairs (no reward model, no sampling);
* a KL-penalised policy gradient from samples (REINFORCE with a leave-one-out baseline on
  ``r̂(y) − β (log π(y) − log π_ref(y))``: the PPO-RLHF objective with the KL folded into the
  reward), several seeded runs at once along a leading axis.

DPO and the policy gradient use one policy class: ``log π_u = log π_ref + Φ u / β − log Z``,
with ``Φ`` the reward model's features (``policy="features"``) or the identity (one logit per
response, ``policy="table"``). ``u`` is in reward units: ``β log(π_u / π_ref) = Φ u + const``,
so an Adam step moves the policy equally far at every β. On the features, ``π*`` lies in the
class (``u = θ``), and DPO's loss in ``u`` *is* the Bradley–Terry loss in ``θ``: DPO lands on the
closed form of the reward model (Rafailov et al. 2023, §4).

Training is plain numpy with the textbook gradients (DPO's, Rafailov et al. eq. 8, and the
softmax policy's ``∇ log π``), stepped by a small Adam. Written with torch autograd and
``torch.optim.Adam`` the same loop is an order of magnitude slower on this toy (the benchmarks
time both, and a test holds the two to the same numbers): each step's arithmetic takes
microseconds, and the autograd and optimiser machinery costs far more than that.
``import rlviz.preferences`` loads neither torch nor scipy.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from numpy.polynomial import legendre

from rlviz.errors import InputError

ArrayLike = np.ndarray | float

__all__ = [
    "BETAS",
    "ESTIMATORS",
    "GOLD_PEAK",
    "MAX_PAIRS",
    "MAX_RESPONSES",
    "POLICIES",
    "BestOfN",
    "Data",
    "Frontier",
    "Pairs",
    "PolicyRun",
    "ResponseSpace",
    "RewardModel",
    "Scores",
    "Training",
    "Verification",
    "alignment",
    "best_of_n",
    "best_of_n_stats",
    "bradley_terry_loss",
    "dpo_loss",
    "dpo_population_fit",
    "fit_reward_model",
    "frontier",
    "gao_fit",
    "kl_objective",
    "kl_optimal_policy",
    "kl_penalised_advantages",
    "label_accuracy",
    "numerical_optimum",
    "pair_accuracy",
    "preference_data",
    "response_space",
    "sample_pairs",
    "sampled_kl",
    "scores",
    "train_dpo",
    "train_policy_gradient",
    "verify",
]

MAX_RESPONSES = 256
MAX_PAIRS = 5000
MAX_DEGREE = 6
MAX_STEPS = 2000
MAX_RUNS = 16
MAX_BATCH = 256
POLICIES = ("features", "table")
"""DPO's and the policy gradient's parameterisations: on the reward model's features, or one
logit per response."""
ESTIMATORS = ("k1", "k2", "k3")
GOLD_PEAK = math.pi / (2 * 3.4)
"""Length at which the gold reward ``3 sin(3.4 x)`` peaks."""
BETAS = tuple(float(b) for b in np.geomspace(0.01, 10.0, 61))
"""The β sweep of the over-optimisation chart (log-spaced)."""
BON_NS = tuple(int(n) for n in np.unique(np.round(np.geomspace(1, 1024, 72)).astype(int)))
"""The n of best-of-n on the over-optimisation chart (1 to 1024)."""
L2 = 1e-3
"""Ridge weight on θ (reward model) and on u (DPO): the same, so that their optima coincide."""
DPO_LR = 0.2
"""Adam's learning rate for DPO, in reward units (full batch: deterministic, so it can be large)."""
PG_LR = 0.1
"""Adam's learning rate for the policy gradient, in reward units (from samples: noisier)."""
FLOOR = 1e-250
"""Probabilities below this count as zero in the numerical optimiser."""


# ------------------------------------------------------------------------------ the losses
def _sigmoid(z: np.ndarray) -> np.ndarray:
    """``1 / (1 + e^{−z}) = (1 + tanh(z/2)) / 2``: no overflow, one transcendental call."""
    return 0.5 + 0.5 * np.tanh(0.5 * z)


def bradley_terry_loss(r_chosen: ArrayLike, r_rejected: ArrayLike) -> np.ndarray:
    r"""Bradley–Terry negative log-likelihood of one preference, elementwise.

    ``−log σ(r_w − r_l) = log(1 + e^{−(r_w − r_l)})``, computed as a softplus so that a large
    margin of either sign neither overflows nor loses precision. Only the difference of the two
    rewards enters: adding a constant to every reward changes nothing.

    Source: Bradley & Terry (1952); the reward-model loss of Ouyang et al. (2022), eq. 1.

    Args:
        r_chosen: Reward of the preferred response ``y_w`` (array or float).
        r_rejected: Reward of the other one ``y_l``, the same shape.

    Returns:
        The loss of each pair.
    """
    return np.logaddexp(0.0, -(np.asarray(r_chosen) - np.asarray(r_rejected)))


def dpo_loss(logp_chosen: ArrayLike, logp_rejected: ArrayLike, ref_chosen: ArrayLike,
             ref_rejected: ArrayLike, *, beta: float) -> np.ndarray:
    r"""Direct preference optimisation loss of one pair, elementwise.

    ``−log σ(β[(log π(y_w) − log π_ref(y_w)) − (log π(y_l) − log π_ref(y_l))])``: the
    Bradley–Terry loss of the implicit reward ``β log(π/π_ref)``, whose partition function
    cancels in the difference. At ``π = π_ref`` it is ``log 2``.

    Source: Rafailov et al. (2023), "Direct Preference Optimization", eq. 7.

    Args:
        logp_chosen: ``log π(y_w)`` of the policy being trained.
        logp_rejected: ``log π(y_l)``.
        ref_chosen: ``log π_ref(y_w)``.
        ref_rejected: ``log π_ref(y_l)``.
        beta: KL coefficient β > 0.

    Returns:
        The loss of each pair.
    """
    return bradley_terry_loss(beta * (logp_chosen - ref_chosen),
                              beta * (logp_rejected - ref_rejected))


def sampled_kl(logp: ArrayLike, logp_ref: ArrayLike, *, estimator: str = "k1") -> np.ndarray:
    r"""Single-sample estimates of ``KL(π‖π_ref)`` at responses ``y ~ π``, elementwise.

    With ``ρ = π_ref(y)/π(y)``: ``k1 = −log ρ`` (unbiased, can be negative; the one folded into
    the PPO-RLHF reward), ``k2 = ½(log ρ)²`` (biased, low variance), ``k3 = (ρ − 1) − log ρ``
    (unbiased and never negative). The mean of k1 or k3 over ``π`` is the exact KL.

    Source: Schulman (2020), "Approximating KL divergence" (k1, k2, k3).

    Args:
        logp: ``log π(y)`` of the sampled responses.
        logp_ref: ``log π_ref(y)``, the same shape.
        estimator: ``"k1"``, ``"k2"`` or ``"k3"``.

    Returns:
        One estimate per sample.
    """
    log_ratio = np.asarray(logp_ref) - np.asarray(logp)
    if estimator == "k1":
        return -log_ratio
    if estimator == "k2":
        return 0.5 * log_ratio**2
    if estimator == "k3":
        return np.expm1(log_ratio) - log_ratio
    raise InputError(f"the KL estimator must be one of {', '.join(ESTIMATORS)}; got {estimator!r}")


def best_of_n(p_ref: np.ndarray, reward: np.ndarray, n: ArrayLike) -> np.ndarray:
    r"""Exact distribution of best-of-n: draw n responses from ``π_ref``, keep the best by reward.

    With ``F(y) = π_ref(r ≤ r(y))``, ``F⁻(y) = π_ref(r < r(y))`` and the tied mass
    ``T(y) = F(y) − F⁻(y)``, the kept response has reward ``r(y)`` with probability
    ``F(y)ⁿ − F⁻(y)ⁿ``; a tie among the draws is broken uniformly, so within a tied group each
    response gets its share ``π_ref(y)/T(y)``:

    ``P_n(y) = π_ref(y) / T(y) · (F(y)ⁿ − F⁻(y)ⁿ)``, computed as
    ``F(y)ⁿ · (1 − (1 − T(y)/F(y))ⁿ)`` so that a tiny atom near the top keeps its precision.

    Source: Beirami et al. (2024), "Theoretical guarantees on the best-of-n alignment policy", §2.

    Args:
        p_ref: ``[K]`` reference probabilities.
        reward: ``[K]`` the ranking reward.
        n: Number of draws: an int or an array of them (any shape ``S``).

    Returns:
        ``[*S, K]`` the probability of each response under best-of-n.
    """
    p_ref, reward = np.asarray(p_ref, dtype=np.float64), np.asarray(reward, dtype=np.float64)
    levels, group = np.unique(reward, return_inverse=True)  # tied rewards share a group
    tied = np.bincount(group, weights=p_ref, minlength=levels.size)  # T per group
    upper = np.minimum(np.cumsum(tied), 1.0)  # F per group
    n = np.asarray(n, dtype=np.float64)[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(tied > 0, tied / upper, 0.0)
        top = upper**n * -np.expm1(n * np.log1p(-share))  # F^n − F⁻^n per group
        per_unit = np.where(tied > 0, top / tied, 0.0)
    return p_ref * per_unit[..., group]


def kl_penalised_advantages(reward: np.ndarray, logp: np.ndarray, logp_ref: np.ndarray, *,
                            beta: float) -> np.ndarray:
    r"""Advantages of a batch on the KL-penalised reward, with a leave-one-out baseline.

    Each sample's score is ``s_i = r(y_i) − β·k1(y_i)``: the sampled KL folded into the reward,
    as in PPO-RLHF. Its baseline is the mean score of the *other* samples, which does not depend
    on ``y_i``, so ``(1/B) Σᵢ A_i ∇log π(y_i)`` is an unbiased estimate of
    ``∇(E_π[r] − β KL(π‖π_ref))``:

    ``A_i = s_i − (1/(B−1)) Σ_{j≠i} s_j``.

    Source: Ziegler et al. (2019), eq. 2 (KL in the reward); Ahmadian et al. (2024), RLOO.

    Args:
        reward: ``[..., B]`` the reward model's ``r̂(y_i)`` of the sampled responses.
        logp: ``[..., B]`` ``log π(y_i)``.
        logp_ref: ``[..., B]`` ``log π_ref(y_i)``.
        beta: KL coefficient β.

    Returns:
        ``[..., B]`` the advantage of each sample.
    """
    score = reward - beta * sampled_kl(logp, logp_ref, estimator="k1")
    batch = score.shape[-1]
    return score - (score.sum(-1, keepdims=True) - score) / (batch - 1)


# --------------------------------------------------------------------------- the toy space
def _gold(x: np.ndarray) -> np.ndarray:
    return 3.0 * np.sin(3.4 * x)


@dataclass(frozen=True, eq=False)
class ResponseSpace:
    """K responses ordered by length, their features, the gold reward and ``π_ref``.

    Attributes:
        x: ``[K]`` length of each response, 0 (shortest) to 1 (longest).
        features: ``[K, d]`` the reward model's features: Legendre polynomials P₁…P_d of 2x − 1.
        gold: ``[K]`` the hidden gold reward ``r*``.
        log_ref: ``[K]`` ``log π_ref``.
    """

    x: np.ndarray  # [K]
    features: np.ndarray  # [K, d]
    gold: np.ndarray  # [K]
    log_ref: np.ndarray  # [K]

    @property
    def n(self) -> int:
        """Number of responses K."""
        return int(self.x.size)

    @property
    def p_ref(self) -> np.ndarray:
        """``[K]`` reference probabilities."""
        return np.exp(self.log_ref)


def _log_normalise(logits: np.ndarray) -> np.ndarray:
    """``logits − log Σ exp(logits)`` along the last axis (max subtracted first)."""
    top = np.max(logits, axis=-1, keepdims=True)
    return logits - top - np.log(np.sum(np.exp(logits - top), axis=-1, keepdims=True))


def response_space(n_responses: int = 64, *, degree: int = 1, ref_width: float = 0.1,
                   ref_centre: float = 0.3) -> ResponseSpace:
    """The toy: K responses on a length axis, the reward model's features, gold and ``π_ref``.

    Args:
        n_responses: K, from 8 to ``MAX_RESPONSES``.
        degree: Degree d of the reward model's polynomial features, 1 (linear) to 6.
        ref_width: Spread σ of ``π_ref`` over the length, 0.02 to 1.
        ref_centre: Centre of ``π_ref`` on the length axis.

    Returns:
        The response space.
    """
    if not (isinstance(n_responses, int | np.integer) and 8 <= n_responses <= MAX_RESPONSES):
        raise InputError(f"the number of responses must be a whole number from 8 to "
                         f"{MAX_RESPONSES}; got {n_responses!r}")
    if not (isinstance(degree, int | np.integer) and 1 <= degree <= MAX_DEGREE):
        raise InputError(f"the reward model's degree must be 1 to {MAX_DEGREE}; got {degree!r}")
    if not 0.02 <= float(ref_width) <= 1.0:
        raise InputError(f"π_ref's spread σ must be in [0.02, 1]; got {ref_width!r}")
    if not 0.0 <= float(ref_centre) <= 1.0:
        raise InputError(f"π_ref's centre must be in [0, 1]; got {ref_centre!r}")
    x = np.linspace(0.0, 1.0, int(n_responses))
    t = 2.0 * x - 1.0
    features = np.stack([legendre.legval(t, np.eye(degree + 1)[k])
                         for k in range(1, degree + 1)], axis=1)
    log_ref = _log_normalise(-((x - ref_centre) ** 2) / (2.0 * float(ref_width) ** 2))
    return ResponseSpace(x=x, features=features, gold=_gold(x), log_ref=log_ref)


@dataclass(frozen=True, eq=False)
class Pairs:
    """Labelled preference pairs: ``chosen[i]`` was preferred to ``rejected[i]``.

    Attributes:
        chosen: ``[N]`` index of the preferred response ``y_w``.
        rejected: ``[N]`` index of the other one ``y_l``.
        flip: Share of labels flipped after the Bradley–Terry draw.
    """

    chosen: np.ndarray  # [N] int
    rejected: np.ndarray  # [N] int
    flip: float = 0.0

    @property
    def n(self) -> int:
        """Number of pairs N."""
        return int(self.chosen.size)

    def counts(self, n_responses: int) -> np.ndarray:
        """``[K]`` how many pairs each response appears in."""
        return np.bincount(np.concatenate([self.chosen, self.rejected]), minlength=n_responses)


def sample_pairs(space: ResponseSpace, n_pairs: int, *, flip: float = 0.0,
                 rng: np.random.Generator) -> Pairs:
    """Pairs of two different responses from ``π_ref``, labelled by Bradley–Terry on gold.

    Each pair's label is drawn with ``P(y₁ ≻ y₂) = σ(r*(y₁) − r*(y₂))`` and then flipped with
    probability ``flip`` (a careless labeller). The uniform numbers behind the labels are drawn
    before the flips, so a different flip rate relabels the same pairs.

    Args:
        space: The response space.
        n_pairs: N, 1 to ``MAX_PAIRS``.
        flip: Share of flipped labels, in [0, 0.5].
        rng: Random generator.

    Returns:
        The labelled pairs.
    """
    if not (isinstance(n_pairs, int | np.integer) and 1 <= n_pairs <= MAX_PAIRS):
        raise InputError(f"the number of pairs must be 1 to {MAX_PAIRS}; got {n_pairs!r}")
    if not 0.0 <= float(flip) <= 0.5:
        raise InputError(f"the label flip rate must be in [0, 0.5]; got {flip!r}")
    p = space.p_ref
    first = rng.choice(space.n, size=n_pairs, p=p)
    second = rng.choice(space.n, size=n_pairs, p=p)
    for _ in range(1000):  # redraw the second response of a pair of identical ones
        same = first == second
        if not same.any():
            break
        second[same] = rng.choice(space.n, size=int(same.sum()), p=p)
    same = first == second  # π_ref on a single response: take a neighbour
    second[same] = np.where(first[same] + 1 < space.n, first[same] + 1, first[same] - 1)
    u_label, u_flip = rng.random(n_pairs), rng.random(n_pairs)
    first_wins = u_label < 1.0 / (1.0 + np.exp(space.gold[second] - space.gold[first]))
    first_wins ^= u_flip < float(flip)
    return Pairs(chosen=np.where(first_wins, first, second),
                 rejected=np.where(first_wins, second, first), flip=float(flip))


# ------------------------------------------------------------------------- exact scoring
def kl_optimal_policy(log_ref: np.ndarray, reward: np.ndarray, beta: ArrayLike) -> np.ndarray:
    r"""The maximiser of ``E_π[r] − β KL(π‖π_ref)``: ``π*(y) = π_ref(y) e^{r(y)/β} / Z``.

    Source: the Gibbs variational principle; Rafailov et al. (2023), eq. 4.

    Args:
        log_ref: ``[K]`` ``log π_ref``.
        reward: ``[K]`` the reward.
        beta: β > 0, a float or an array of shape ``S``.

    Returns:
        ``[*S, K]`` ``log π*``.
    """
    beta = np.asarray(beta, dtype=np.float64)[..., None]
    return _log_normalise(log_ref + reward / beta)


def kl_objective(logp: np.ndarray, log_ref: np.ndarray, reward: np.ndarray,
                 beta: float) -> np.ndarray:
    """``E_π[r] − β KL(π‖π_ref)`` of policies ``[..., K]`` given as log-probabilities."""
    p = np.exp(logp)
    with np.errstate(invalid="ignore"):
        terms = np.where(p > 0, p * (logp - log_ref), 0.0)  # 0·log 0 = 0
    return p @ reward - beta * terms.sum(axis=-1)


@dataclass(frozen=True)
class Scores:
    """A policy's exact scores on the enumerated space (rewards relative to ``π_ref``'s).

    Attributes:
        kl: ``KL(π‖π_ref)`` in nats.
        proxy: ``E_π[r̂] − E_ref[r̂]``.
        gold: ``E_π[r*] − E_ref[r*]``.
    """

    kl: np.ndarray
    proxy: np.ndarray
    gold: np.ndarray

    @property
    def sqrt_kl(self) -> np.ndarray:
        """``d = √KL``, the x-axis of Gao et al. (2022)."""
        return np.sqrt(np.maximum(self.kl, 0.0))


def scores(logp: np.ndarray, space: ResponseSpace, proxy: np.ndarray) -> Scores:
    """Exact KL, proxy and gold of policies ``[..., K]`` (log-probabilities)."""
    logp = np.asarray(logp, dtype=np.float64)
    p, p_ref = np.exp(logp), space.p_ref
    with np.errstate(invalid="ignore"):
        terms = np.where(p > 0, p * (logp - space.log_ref), 0.0)
    return Scores(kl=np.maximum(terms.sum(axis=-1), 0.0), proxy=p @ proxy - p_ref @ proxy,
                  gold=p @ space.gold - p_ref @ space.gold)


def _probs_scores(p: np.ndarray, space: ResponseSpace, proxy: np.ndarray) -> Scores:
    with np.errstate(divide="ignore"):
        logp = np.log(p)
    return scores(logp, space, proxy)


def pair_accuracy(reward: np.ndarray, truth: np.ndarray, q: np.ndarray) -> float:
    """How often ``reward`` orders a pair of different responses from ``q`` as ``truth`` does.

    Exact, over all pairs ``y ≠ y'`` weighted ``q(y) q(y')``; a tie in ``reward`` counts half,
    pairs tied in ``truth`` are left out.

    Args:
        reward: ``[K]`` the reward being judged.
        truth: ``[K]`` the reward that decides (the gold reward).
        q: ``[K]`` the distribution pairs are drawn from.

    Returns:
        The share of agreeing pairs.
    """
    d_r = np.sign(reward[:, None] - reward[None, :])
    d_t = np.sign(truth[:, None] - truth[None, :])
    w = q[:, None] * q[None, :] * (d_t != 0)
    agree = np.where(d_r == 0, 0.5, (d_r == d_t).astype(np.float64))
    return float((w * agree).sum() / max(w.sum(), 1e-300))


def label_accuracy(reward: np.ndarray, space: ResponseSpace, flip: float) -> float:
    """Expected accuracy of ``reward`` on a fresh labelled pair from ``π_ref`` (ties half).

    The label of ``y ≻ y'`` is the Bradley–Terry draw on gold, flipped with probability ``flip``;
    pairs of identical responses are not drawn (as in ``sample_pairs``).
    """
    g = space.gold
    p_gold = 1.0 / (1.0 + np.exp(g[None, :] - g[:, None]))
    p_label = (1 - flip) * p_gold + flip * (1 - p_gold)
    d_r = np.sign(reward[:, None] - reward[None, :])
    hit = np.where(d_r > 0, p_label, np.where(d_r < 0, 1 - p_label, 0.5))
    q = space.p_ref
    w = q[:, None] * q[None, :]
    np.fill_diagonal(w, 0.0)
    return float((w * hit).sum() / max(w.sum(), 1e-300))


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


# --------------------------------------------------------------------- best-of-n, frontier
@dataclass(frozen=True)
class BestOfN:
    """Best-of-n by the reward model at one n, exactly.

    Attributes:
        n: Number of draws.
        probs: ``[K]`` its distribution.
        kl: Exact ``KL(P_n‖π_ref)``.
        kl_bound: ``log n − (n − 1)/n`` (exact for continuous rewards, an upper bound here).
        win_rate: P(its response beats a fresh ``π_ref`` draw by ``r̂``), ties counting half.
        win_bound: ``n/(n + 1)``.
        win_slack: Largest possible gap below ``n/(n+1)``: half the largest ``π_ref`` atom.
    """

    n: int
    probs: np.ndarray
    kl: float
    kl_bound: float
    win_rate: float
    win_bound: float
    win_slack: float


def best_of_n_stats(space: ResponseSpace, reward: np.ndarray, n: int) -> BestOfN:
    """Exact KL and win rate of best-of-n beside the formulas ``log n − (n−1)/n`` and n/(n+1).

    Per tied group of rewards (cumulative masses ``a < b``), the win rate with ties at half is
    ``(bⁿ − aⁿ)(a + b)/2``, against ``∫ₐᵇ n uⁿ du`` for a continuous reward: never more, and
    short by at most ``(b − a)/2`` of the group's probability, so ``n/(n+1) − W ≤ max π_ref / 2``.

    Source: Beirami et al. (2024), Theorem 3.1 (KL bound) and §5 (win rate).
    """
    if not (isinstance(n, int | np.integer) and 1 <= n <= 1024):
        raise InputError(f"best-of-n takes n from 1 to 1024; got {n!r}")
    p_ref = space.p_ref
    probs = best_of_n(p_ref, reward, n)
    sc = _probs_scores(probs, space, reward)
    below = (p_ref[None, :] * (reward[None, :] < reward[:, None])).sum(1)
    tied = (p_ref[None, :] * (reward[None, :] == reward[:, None])).sum(1)
    win = float(probs @ (below + 0.5 * tied))
    return BestOfN(n=int(n), probs=probs, kl=float(sc.kl), kl_bound=math.log(n) - (n - 1) / n,
                   win_rate=win, win_bound=n / (n + 1), win_slack=float(p_ref.max()) / 2)


def gao_fit(d: np.ndarray, gold: np.ndarray, form: str) -> tuple[float, float]:
    r"""Least-squares fit of Gao, Schulman & Hilton's (2022) functional forms, ``R(0) = 0``.

    ``"bon"``: ``R(d) = d(α − β d)``; ``"rl"``: ``R(d) = d(α − β log d)``, with ``d = √KL``.

    Returns:
        ``(α, β)`` (their coefficients, not the KL β).
    """
    d, gold = np.asarray(d, dtype=np.float64), np.asarray(gold, dtype=np.float64)
    keep = d > 1e-9
    d, gold = d[keep], gold[keep]
    if d.size < 2:
        return 0.0, 0.0
    second = d**2 if form == "bon" else d * np.log(d)
    coef, *_ = np.linalg.lstsq(np.stack([d, -second], axis=1), gold, rcond=None)
    return float(coef[0]), float(coef[1])


@dataclass(frozen=True)
class Frontier:
    """Gold and proxy reward against KL: the β sweep of ``π*`` and best-of-n for every n.

    Attributes:
        betas: ``[B]`` the β sweep.
        sweep: Scores of ``π*_β`` (of the reward model) at each β.
        gold_sweep: Scores of the gold reward's own ``π*_β``: the best gold at each KL.
        ns: ``[M]`` the n of best-of-n.
        bon: Scores of best-of-n (by the reward model) at each n.
        bon_kl_bound: ``[M]`` ``log n − (n−1)/n``.
        fit_sweep: Gao et al.'s RL form ``(α, β)`` fitted to the sweep's gold.
        fit_bon: Their best-of-n form fitted to best-of-n's gold.
    """

    betas: np.ndarray
    sweep: Scores
    gold_sweep: Scores
    ns: np.ndarray
    bon: Scores
    bon_kl_bound: np.ndarray
    fit_sweep: tuple[float, float]
    fit_bon: tuple[float, float]

    @property
    def peak(self) -> int:
        """Index of the β whose ``π*`` has the highest gold reward."""
        return int(np.argmax(self.sweep.gold))


def frontier(space: ResponseSpace, proxy: np.ndarray, *, betas=BETAS, ns=BON_NS) -> Frontier:
    """The over-optimisation curves: ``π*_β`` of the proxy over a β sweep, best-of-n over n."""
    betas, ns = np.asarray(betas, dtype=np.float64), np.asarray(ns)
    sweep = scores(kl_optimal_policy(space.log_ref, proxy, betas), space, proxy)
    gold_sweep = scores(kl_optimal_policy(space.log_ref, space.gold, betas), space, proxy)
    bon = _probs_scores(best_of_n(space.p_ref, proxy, ns), space, proxy)
    return Frontier(
        betas=betas, sweep=sweep, gold_sweep=gold_sweep, ns=ns, bon=bon,
        bon_kl_bound=np.log(ns) - (ns - 1) / ns,
        fit_sweep=gao_fit(sweep.sqrt_kl, sweep.gold, "rl"),
        fit_bon=gao_fit(bon.sqrt_kl, bon.gold, "bon"),
    )


# ------------------------------------------------------------------------- the experiment
@dataclass(frozen=True, eq=False)
class Data:
    """The response space, the pairs, the reward model fitted to them and its frontier.

    Attributes:
        space: The toy response space.
        pairs: The labelled pairs (the same ones for the reward model and for DPO).
        reward_model: The Bradley–Terry reward model.
        frontier: Gold and proxy against KL for the β sweep and best-of-n.
        accuracy: Expected accuracy of ``r̂`` on fresh labelled pairs from ``π_ref``.
        ceiling: The same for the gold reward itself (no model can do better on average).
    """

    space: ResponseSpace
    pairs: Pairs
    reward_model: RewardModel
    frontier: Frontier
    accuracy: float
    ceiling: float

    @property
    def proxy(self) -> np.ndarray:
        """``[K]`` the reward model's values ``r̂``."""
        return self.reward_model.values

    @property
    def counts(self) -> np.ndarray:
        """``[K]`` appearances of each response in the pairs."""
        return self.pairs.counts(self.space.n)

    def aligned(self, reward: np.ndarray) -> np.ndarray:
        """``reward`` shifted to the gold reward's mean under ``π_ref``.

        A Bradley–Terry reward is identified only up to a constant.
        """
        p = self.space.p_ref
        return reward - p @ reward + p @ self.space.gold


def preference_data(n_responses: int = 64, degree: int = 1, ref_width: float = 0.1,
                    n_pairs: int = 200, flip: float = 0.0, seed: int = 0) -> Data:
    """Build the toy, sample and label the pairs, fit the reward model, trace its frontier.

    Args:
        n_responses: K responses.
        degree: Degree of the reward model's features.
        ref_width: Spread σ of ``π_ref`` over the length.
        n_pairs: Number of labelled pairs N.
        flip: Share of flipped labels.
        seed: Seed of the pairs and labels.

    Returns:
        The data and the reward model.
    """
    space = response_space(n_responses, degree=degree, ref_width=ref_width)
    pairs = sample_pairs(space, n_pairs, flip=flip, rng=np.random.default_rng(seed))
    rm = fit_reward_model(space, pairs)
    return Data(space=space, pairs=pairs, reward_model=rm, frontier=frontier(space, rm.values),
                accuracy=label_accuracy(rm.values, space, pairs.flip),
                ceiling=label_accuracy(space.gold, space, pairs.flip))


@dataclass(frozen=True, eq=False)
class PolicyRun:
    """The policies at one β (and best-of-n at one n), with their exact scores.

    Attributes:
        beta: KL coefficient β.
        logp: Log-policies by name: ``reference``, ``closed_form``, ``dpo``, ``policy_gradient``
            (the runs' mean policy), ``best_of_n``.
        dpo: DPO's training.
        pg: The policy gradient's training (R runs).
        bon: Best-of-n at the chosen n.
        dpo_curves: Scores of DPO at its recorded steps (``[T]`` each).
        pg_curves: Scores of every policy-gradient run at its recorded steps (``[T, R]`` each).
        pg_batch: Samples per policy-gradient step.
        policy: The parameterisation of DPO and the policy gradient (``POLICIES``).
    """

    beta: float
    logp: dict[str, np.ndarray]
    dpo: Training
    pg: Training
    bon: BestOfN
    dpo_curves: Scores
    pg_curves: Scores
    pg_batch: int
    policy: str

    def table(self, data: Data) -> dict[str, Scores]:
        """Exact scores of each policy."""
        return {name: scores(lp, data.space, data.proxy) for name, lp in self.logp.items()}

    def objective(self, data: Data) -> dict[str, float]:
        """``E_π[r̂] − β KL(π‖π_ref)`` of each policy."""
        return {name: float(kl_objective(lp, data.space.log_ref, data.proxy, self.beta))
                for name, lp in self.logp.items()}


def alignment(data: Data, *, beta: float = 0.2, n: int = 16, policy: str = "features",
              dpo_steps: int = 500, pg_steps: int = 300, batch: int = 64, runs: int = 8,
              seed: int = 0) -> PolicyRun:
    """The closed-form optimum, DPO and the policy gradient at one β, best-of-n at one n.

    Args:
        data: The data and reward model (``preference_data``).
        beta: KL coefficient β.
        n: Best-of-n's n.
        policy: DPO's and the policy gradient's parameterisation (``POLICIES``).
        dpo_steps: DPO's Adam steps.
        pg_steps: The policy gradient's Adam steps.
        batch: Samples per policy-gradient step.
        runs: Independent policy-gradient runs.
        seed: Seed of the policy gradient's sampling.

    Returns:
        The policies and their training.
    """
    space, proxy = data.space, data.proxy
    dpo = train_dpo(space, data.pairs, beta=beta, steps=dpo_steps, policy=policy)
    pg = train_policy_gradient(space, proxy, beta=beta, steps=pg_steps, batch=batch, runs=runs,
                               policy=policy, seed=seed)
    bon = best_of_n_stats(space, proxy, n)
    with np.errstate(divide="ignore"):
        logp = {
            "reference": space.log_ref,
            "closed_form": kl_optimal_policy(space.log_ref, proxy, beta),
            "dpo": dpo.logp[-1, 0],
            "policy_gradient": np.log(np.exp(pg.logp[-1]).mean(axis=0)),
            "best_of_n": np.log(bon.probs),
        }
    return PolicyRun(beta=float(beta), logp=logp, dpo=dpo, pg=pg, bon=bon,
                     dpo_curves=scores(dpo.logp[:, 0], space, proxy),
                     pg_curves=scores(pg.logp, space, proxy), pg_batch=int(batch), policy=policy)


@dataclass(frozen=True)
class Verification:
    """Live numbers for the page's known-answer checks.

    Attributes:
        shift_gap: Largest change of the mean Bradley–Terry loss, the DPO loss and ``log π*``
            when a constant is added to every reward (0 up to rounding).
        objective: ``E_π[r̂] − β KL`` of each policy, and of ``numerical``: the numerical
            optimiser's policy.
        implicit_error: Tabular DPO on exact, plentiful pairs: the largest gap between its
            implicit reward differences and the gold reward's, over all pairs of responses.
        tv_dpo: Total variation between DPO's policy and ``π*``.
        tv_pg: The same for the policy gradient's mean policy.
        kl_identity: Largest ``|E_π[k1] − KL|`` and ``|E_π[k3] − KL|`` over the runs'
            final policies, the expectations taken exactly.
        k1_error: Mean over runs of (batch mean of k1 − exact KL) at the last recorded step.
        k1_se: Its standard error, from the exact variance of k1 under each run's policy.
        agree_ref: How often the reward model orders a pair from ``π_ref`` as gold does.
        agree_star: The same for pairs from ``π*`` at this β.
    """

    shift_gap: float
    objective: dict[str, float]
    implicit_error: float
    tv_dpo: float
    tv_pg: float
    kl_identity: float
    k1_error: float
    k1_se: float
    agree_ref: float
    agree_star: float


def verify(data: Data, run: PolicyRun, *, shift: float = 5.0) -> Verification:
    """Compute the page's known-answer numbers for one view (see ``Verification``)."""
    space, proxy, beta = data.space, data.proxy, run.beta
    w, lo = data.pairs.chosen, data.pairs.rejected
    logp = run.logp["dpo"]
    gaps = [
        bradley_terry_loss(proxy[w] + shift, proxy[lo] + shift).mean()
        - bradley_terry_loss(proxy[w], proxy[lo]).mean(),
        np.max(np.abs(kl_optimal_policy(space.log_ref, proxy + shift, beta)
                      - run.logp["closed_form"])),
        dpo_loss(logp[w] + shift, logp[lo] + shift, space.log_ref[w] + shift,
                 space.log_ref[lo] + shift, beta=beta).mean()
        - dpo_loss(logp[w], logp[lo], space.log_ref[w], space.log_ref[lo], beta=beta).mean(),
    ]
    objective = run.objective(data)
    objective["numerical"] = float(kl_objective(numerical_optimum(space.log_ref, proxy, beta),
                                                space.log_ref, proxy, beta))
    implicit = dpo_population_fit(space, beta=beta)
    e = implicit - space.gold
    p_star = np.exp(run.logp["closed_form"])
    final = run.pg.logp[-1]  # [R, K]
    kl_exact = scores(final, space, proxy).kl  # [R]
    p_final = np.exp(final)
    k1 = sampled_kl(final, space.log_ref[None, :], estimator="k1")
    k3 = sampled_kl(final, space.log_ref[None, :], estimator="k3")
    identity = max(np.max(np.abs((p_final * k1).sum(1) - kl_exact)),
                   np.max(np.abs((p_final * k3).sum(1) - kl_exact)))
    var_k1 = (p_final * k1**2).sum(1) - kl_exact**2
    batch = run.pg_batch
    runs = final.shape[0]
    k1_error = float(np.mean(run.pg.kl_estimate[-1] - kl_exact))
    k1_se = float(np.sqrt(np.maximum(var_k1, 0.0).sum() / batch) / runs)
    return Verification(
        shift_gap=float(np.max(np.abs(gaps))), objective=objective,
        implicit_error=float(e.max() - e.min()),
        tv_dpo=float(0.5 * np.abs(np.exp(logp) - p_star).sum()),
        tv_pg=float(0.5 * np.abs(np.exp(run.logp["policy_gradient"]) - p_star).sum()),
        kl_identity=float(identity), k1_error=k1_error, k1_se=k1_se,
        agree_ref=pair_accuracy(proxy, space.gold, space.p_ref),
        agree_star=pair_accuracy(proxy, space.gold, p_star),
    )
