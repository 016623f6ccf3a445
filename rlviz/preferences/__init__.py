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

The package is split by concern: ``losses``, ``space`` (the toy response space, the pairs and
exact scoring), ``training`` (reward model, DPO, policy gradient, their optima) and
``experiments`` (best-of-n, the frontier, the data, alignment and its verification).
"""

from __future__ import annotations

from rlviz.preferences.experiments import (
    BETAS,
    BestOfN,
    Data,
    Frontier,
    PolicyRun,
    Verification,
    alignment,
    best_of_n_stats,
    frontier,
    gao_fit,
    preference_data,
    verify,
)
from rlviz.preferences.losses import (
    ESTIMATORS,
    best_of_n,
    bradley_terry_loss,
    dpo_loss,
    kl_penalised_advantages,
    sampled_kl,
)
from rlviz.preferences.space import (
    GOLD_PEAK,
    MAX_PAIRS,
    MAX_RESPONSES,
    Pairs,
    ResponseSpace,
    Scores,
    kl_objective,
    kl_optimal_policy,
    label_accuracy,
    pair_accuracy,
    response_space,
    sample_pairs,
    scores,
)
from rlviz.preferences.space import (
    _log_normalise as _log_normalise,
)
from rlviz.preferences.training import (
    DPO_LR as DPO_LR,
)
from rlviz.preferences.training import (
    L2 as L2,
)
from rlviz.preferences.training import (
    POLICIES,
    RewardModel,
    Training,
    dpo_population_fit,
    fit_reward_model,
    numerical_optimum,
    train_dpo,
    train_policy_gradient,
)
from rlviz.preferences.training import (
    _policy as _policy,
)
from rlviz.preferences.training import (
    _sample as _sample,
)

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
