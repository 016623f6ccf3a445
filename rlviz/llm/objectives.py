"""The advantages (REINFORCE, RLOO, GRPO, Dr. GRPO), the KL estimators and the losses."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from rlviz.errors import InputError

if TYPE_CHECKING:
    import torch

__all__ = [
    "AGGREGATIONS",
    "ESTIMATORS",
    "GROUP_TRAINERS",
    "TRAINERS",
    "dr_grpo_advantages",
    "grpo_advantages",
    "grpo_loss",
    "kl_estimates",
    "policy_loss",
    "reinforce_advantages",
    "rloo_advantages",
    "token_weights",
]


TRAINERS = ("reinforce", "rloo", "grpo", "dr_grpo", "ppo")
GROUP_TRAINERS = ("reinforce", "rloo", "grpo", "dr_grpo")
"""The trainers whose advantage is one number per response, computed from its group."""
AGGREGATIONS = {
    "reinforce": "sequence_sum",
    "rloo": "sequence_sum",
    "grpo": "sequence_mean",
    "dr_grpo": "constant",
    "ppo": "token_mean",
}
"""How each trainer's loss sums its tokens (see ``token_weights``)."""
ESTIMATORS = ("k1", "k2", "k3")
KL_PLACES = ("loss", "reward")


GRPO_EPS = 1e-4
"""Added to the group's standard deviation (as in Hugging Face TRL's GRPOTrainer)."""


# --------------------------------------------------------------------------- advantages
def _group_rewards(rewards) -> torch.Tensor:
    import torch

    # a copy: the rewards may be a read-only array of a shared result
    r = rewards if isinstance(rewards, torch.Tensor) else torch.tensor(
        np.asarray(rewards, dtype=np.float64))
    if r.ndim == 0 or r.shape[-1] < 2:
        raise InputError("a group needs at least two responses to compare")
    if not bool(torch.isfinite(r).all()):
        raise InputError("every reward in the group must be a finite number")
    return r.to(torch.float64)


def reinforce_advantages(rewards) -> torch.Tensor:
    r"""REINFORCE without a baseline: each response's advantage is its own reward.

    ``A_i = r_i``. Unbiased, but every response of a group with positive rewards is pushed up,
    right or wrong; only their relative sizes steer. Williams (1992).

    Args:
        rewards: ``[..., G]`` the rewards of each group's ``G`` responses.

    Returns:
        ``[..., G]`` advantages.
    """
    return _group_rewards(rewards).clone()


def rloo_advantages(rewards) -> torch.Tensor:
    r"""REINFORCE leave-one-out: the baseline of response ``i`` is the mean of the others.

    ``A_i = r_i - 1/(G-1) sum_{j != i} r_j = G/(G-1) (r_i - mean r)``. The baseline does not
    depend on ``r_i``, so the estimator stays unbiased; the advantages of a group sum to zero.
    Kool, van Hoof & Welling (2019); Ahmadian et al. (2024), eq. 4.

    Args:
        rewards: ``[..., G]`` rewards, ``G >= 2``.

    Returns:
        ``[..., G]`` advantages.
    """
    r = _group_rewards(rewards)
    g = r.shape[-1]
    return (g * r - r.sum(dim=-1, keepdim=True)) / (g - 1)


def grpo_advantages(rewards, *, eps: float = GRPO_EPS) -> torch.Tensor:
    r"""GRPO's group-relative advantage: the reward standardised within its group.

    ``A_i = (r_i - mean r) / (std r + eps)`` with the sample standard deviation (``G - 1`` in
    the denominator, as ``torch.std``). A group whose rewards are all equal gets zero advantage
    (``0 / eps``), never NaN. Shao et al. (2024), "DeepSeekMath", section 4.1.2.

    Args:
        rewards: ``[..., G]`` rewards, ``G >= 2``.
        eps: Added to the standard deviation, positive.

    Returns:
        ``[..., G]`` advantages with mean 0 in every group.
    """
    r = _group_rewards(rewards)
    centred = r - r.mean(dim=-1, keepdim=True)
    return centred / (r.std(dim=-1, keepdim=True) + eps)


def dr_grpo_advantages(rewards) -> torch.Tensor:
    r"""Dr. GRPO's advantage: the reward minus its group's mean, not divided by the std.

    ``A_i = r_i - mean r``. Dividing by the std weights each prompt by ``1/std``, so prompts
    that are almost always solved or almost never solved get the largest updates; Dr. GRPO drops
    it. It equals RLOO's advantage times ``(G-1)/G``. Liu et al. (2025), section 3.2.

    Args:
        rewards: ``[..., G]`` rewards, ``G >= 2``.

    Returns:
        ``[..., G]`` advantages.
    """
    r = _group_rewards(rewards)
    return r - r.mean(dim=-1, keepdim=True)


ADVANTAGES: dict[str, Callable] = {
    "reinforce": reinforce_advantages,
    "rloo": rloo_advantages,
    "grpo": grpo_advantages,
    "dr_grpo": dr_grpo_advantages,
}


# --------------------------------------------------------------------------- KL and the loss
def kl_estimates(logp, logp_ref):
    r"""Per-token estimators of ``KL(pi || pi_ref)`` from tokens sampled by ``pi``.

    With ``rho = pi_ref(x) / pi(x)``: ``k1 = -log rho`` (unbiased, can be negative),
    ``k2 = (log rho)^2 / 2`` (biased, never negative) and ``k3 = (rho - 1) - log rho`` (unbiased,
    never negative: ``rho - 1 >= log rho``). Summed over a response's tokens, ``k1`` and ``k3``
    stay unbiased for the KL between whole responses (the chain rule). The same estimators as
    ``rlviz.ppo.approx_kl``, with the sampler in the role of ``pi_old``. J. Schulman (2020),
    "Approximating KL divergence"; GRPO uses ``k3`` (Shao et al. 2024, eq. 4).

    Args:
        logp: ``[...]`` log-probabilities of the sampled tokens under ``pi`` (the sampler).
        logp_ref: ``[...]`` the same under the reference model.

    Returns:
        ``rlviz.ppo.KLEstimates`` ``(k1, k2, k3)`` of ``[...]`` tensors; gradients flow through
        ``logp``.
    """
    from rlviz import ppo

    return ppo.approx_kl(logp_ref, logp)


def token_weights(mask, aggregation: str, *, max_tokens: int | None = None) -> torch.Tensor:
    r"""The weight of each token in a loss ``-sum_{i,t} w_{i,t} psi_{i,t}``, by aggregation.

    With ``N`` responses in the batch, ``m_{i,t}`` the mask (1 where the loss counts the token)
    and ``n_i = sum_t m_{i,t}``:

    * ``sequence_sum``: ``w = m / N`` (the response's log-probability, REINFORCE and RLOO);
    * ``sequence_mean``: ``w = m / (N n_i)`` (GRPO: each response's tokens averaged first, so a
      long response's tokens count less);
    * ``constant``: ``w = m / (N T)`` with ``T = max_tokens`` (Dr. GRPO: no length
      normalisation, one constant for all);
    * ``token_mean``: ``w = m / sum m`` (PPO implementations: every counted token alike).

    Args:
        mask: ``[..., N, T]`` True where the loss counts the token (response tokens, and the
            prompt's when it is not masked).
        aggregation: One of the four above.
        max_tokens: ``T`` for ``constant`` (default: the mask's last axis).

    Returns:
        ``[..., N, T]`` float64 weights; zero where the mask is.
    """
    import torch

    m = mask.to(torch.float64)
    n = m.shape[-2]
    if aggregation == "sequence_sum":
        return m / n
    if aggregation == "sequence_mean":
        return m / (n * m.sum(dim=-1, keepdim=True).clamp(min=1.0))
    if aggregation == "constant":
        return m / (n * (m.shape[-1] if max_tokens is None else max_tokens))
    if aggregation == "token_mean":
        return m / m.sum(dim=(-2, -1), keepdim=True).clamp(min=1.0)
    raise ValueError(f"unknown aggregation {aggregation!r}")


def policy_loss(logp, logp_old, advantages, weights, *, epsilon: float) -> torch.Tensor:
    r"""The clipped policy loss, each token weighted by its aggregation weight.

    ``loss = -sum_{i,t} w_{i,t} min(rho A, clip(rho, 1-eps, 1+eps) A)`` with
    ``rho_{i,t} = pi(x_t)/pi_old(x_t)``; the surrogate is ``rlviz.ppo.clipped_surrogate``
    (Schulman et al. 2017, eq. 7). On the first update ``rho = 1`` and its gradient is the
    policy gradient ``-sum w A grad log pi``. With ``token_mean`` weights, zero log-ratios and
    unit advantages the loss is exactly -1.

    Args:
        logp: ``[..., T]`` log-probabilities of the tokens under the current policy.
        logp_old: ``[..., T]`` the same under the policy that sampled them (a constant).
        advantages: ``[..., T]`` each token's advantage.
        weights: ``[..., T]`` aggregation weights (``token_weights``).
        epsilon: Clip range, in (0, 1).

    Returns:
        A scalar tensor: the sum over every leading axis (runs are independent, so each run's
        gradient is its own loss's).
    """
    import torch

    from rlviz import ppo

    ratio = torch.exp(logp - logp_old.detach())
    return -(weights * ppo.clipped_surrogate(ratio, advantages, epsilon=epsilon)).sum()


def grpo_loss(logp, logp_old, logp_ref, rewards, mask, *, epsilon: float = 0.2,
              beta: float = 0.04) -> torch.Tensor:
    r"""GRPO's loss for one group, from this module's pieces (Shao et al. 2024, eq. 3).

    ``-1/G sum_i 1/|o_i| sum_t [min(rho A_i, clip(rho) A_i) - beta k3_t]``: ``grpo_advantages``,
    ``token_weights(..., "sequence_mean")``, ``policy_loss`` and ``kl_estimates``, as
    ``train_step`` combines them for its GRPO runs with the KL in the loss.

    Args:
        logp: ``[G, T]`` token log-probabilities under the current policy.
        logp_old: ``[G, T]`` the same under the policy that sampled the group.
        logp_ref: ``[G, T]`` the same under the reference model.
        rewards: ``[G]`` the group's rewards.
        mask: ``[G, T]`` True on the tokens the loss counts.
        epsilon: Clip range.
        beta: KL coefficient.

    Returns:
        A scalar tensor.
    """
    import torch

    lp, lo, lr = (torch.tensor(np.asarray(x, dtype=np.float64)) for x in
                  (logp, logp_old, logp_ref))
    m = torch.tensor(np.asarray(mask, dtype=bool))
    w = token_weights(m, "sequence_mean")
    adv = grpo_advantages(rewards)[:, None].expand(lp.shape)
    kl = (w * kl_estimates(lp, lr).k3).sum()
    return policy_loss(lp, lo, adv, w, epsilon=epsilon) + beta * kl
