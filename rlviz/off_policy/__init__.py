r"""Importance sampling and off-policy evaluation: value a policy from another policy's episodes.

Episodes come from a *behaviour* policy ``b``; the value wanted is that of a *target* policy
``pi``. Each episode is reweighted by its importance ratio, the product over its steps of
``pi(A_t | S_t) / b(A_t | S_t)`` (Sutton & Barto 2018, eq. 5.3):

* **ordinary** IS averages ``rho * G`` over episodes: unbiased, with a variance that grows with
  the ratios and can be infinite (eq. 5.5, Example 5.5);
* **weighted** IS divides by the sum of the ratios instead of their count: biased for finitely
  many episodes (consistent as they grow), and never further from the returns than their range
  (eq. 5.6);
* **per-decision** IS weights the reward of step ``t`` by the ratios up to ``t`` only, dropping
  later factors whose expectation is 1 (Precup, Sutton & Singh 2000; S&B §5.9);
* **doubly robust** adds a critic ``Q^`` as a control variate: unbiased whatever the critic when
  the critic is independent of the episodes it corrects, and low-variance when the critic is good
  (Jiang & Li 2016; Thomas & Brunskill 2016).

Three settings are here, each a frozen result built from a seed:

* ``blackjack_study``: the state of Example 5.4 / Figure 5.3 (dealer shows a deuce, player 13
  with a usable ace), a random behaviour policy, the target that sticks only on 20 or 21; the
  exact value is computed by recursion over the infinite deck (``blackjack_value``).
* ``infinite_variance_study``: the one-state MDP of Example 5.5 / Figure 5.4.
* ``estimator_study``: a five-state chain where the target policy drifts away from the
  behaviour policy, comparing the four estimators' bias, variance, MSE and effective sample size.

``worked_per_decision`` works the per-decision ratio on one short episode.

The estimators are written once, on arrays whose last axes are episodes (and steps); leading axes
hold independent runs, so one call serves one data set or a thousand. The episode generators
play all episodes of all runs in lockstep, step by step as the book describes them, with one
``np.random.Generator`` made from the seed.

The package is split by concern: ``estimators``, ``blackjack`` (Example 5.4), ``one_state``
(Example 5.5), ``chain`` (the estimators compared) and ``worked`` (the per-decision ratio by
hand); ``_common`` holds the shared input checks and statistics.
"""

from __future__ import annotations

from rlviz.off_policy.blackjack import (
    BLACKJACK_BOOK_STATE,
    BLACKJACK_BOOK_VALUE,
    BlackjackState,
    BlackjackStudy,
    add_card,
    blackjack_episodes,
    blackjack_moment,
    blackjack_study,
    blackjack_value,
    dealer_final_probs,
    dealer_plays,
    draw_cards,
    target_hits,
)
from rlviz.off_policy.chain import (
    CRITICS,
    DELTA_GRID,
    Episodes,
    EstimatorStudy,
    chain_mdp,
    chain_policies,
    estimator_study,
    finite_horizon_q,
    fit_models,
    sample_episodes,
    weight_distribution,
)
from rlviz.off_policy.estimators import (
    ESTIMATORS,
    doubly_robust,
    importance_ratio,
    kish_ess,
    ordinary_is,
    ordinary_is_running,
    per_decision_is,
    weighted_is,
    weighted_is_running,
)
from rlviz.off_policy.one_state import (
    ONE_STATE_VALUE as ONE_STATE_VALUE,
)
from rlviz.off_policy.one_state import (
    InfiniteVarianceStudy,
    infinite_variance_study,
    one_state_episodes,
)
from rlviz.off_policy.worked import (
    WORKED_EPISODES,
    PerDecisionWorked,
    worked_per_decision,
)

__all__ = [
    "BLACKJACK_BOOK_STATE",
    "BLACKJACK_BOOK_VALUE",
    "CRITICS",
    "DELTA_GRID",
    "ESTIMATORS",
    "WORKED_EPISODES",
    "BlackjackState",
    "BlackjackStudy",
    "Episodes",
    "EstimatorStudy",
    "InfiniteVarianceStudy",
    "PerDecisionWorked",
    "add_card",
    "blackjack_episodes",
    "blackjack_moment",
    "blackjack_study",
    "blackjack_value",
    "chain_mdp",
    "chain_policies",
    "dealer_final_probs",
    "dealer_plays",
    "doubly_robust",
    "draw_cards",
    "estimator_study",
    "finite_horizon_q",
    "fit_models",
    "importance_ratio",
    "infinite_variance_study",
    "kish_ess",
    "one_state_episodes",
    "ordinary_is",
    "ordinary_is_running",
    "per_decision_is",
    "sample_episodes",
    "target_hits",
    "weight_distribution",
    "weighted_is",
    "weighted_is_running",
    "worked_per_decision",
]
