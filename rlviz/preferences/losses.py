"""The losses and estimators: Bradley-Terry, DPO, the sampled KL, best-of-n, the KL penalty."""

from __future__ import annotations

import numpy as np

from rlviz.errors import InputError

__all__ = [
    "ESTIMATORS",
    "best_of_n",
    "bradley_terry_loss",
    "dpo_loss",
    "kl_penalised_advantages",
    "sampled_kl",
]


ArrayLike = np.ndarray | float


ESTIMATORS = ("k1", "k2", "k3")


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
