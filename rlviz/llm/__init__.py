r"""GRPO, PPO and their relatives on a toy language model small enough to enumerate.

The model is a bigram "language model": the probability of the next token depends only on the
previous one, ``pi(x_t | x_{t-1}) = softmax(theta[x_{t-1}])``, a ``[V, V]`` table of logits over the
vocabulary ``a b c d .``. The end-of-text token ``.`` also opens every text (as GPT-2's does), so
row ``.`` of the table is the distribution of a text's first token. A prompt is two tokens; the
response follows it and ends at ``.`` or at ``max_len`` tokens. With four content tokens and at
most five response tokens there are 1,365 possible responses per prompt, so every expectation
under the model (the expected reward, the mean length, ``KL(pi || pi_ref)`` over whole responses)
is an exact sum over all of them, never a sample mean. Sampling is only for training and for the
study of the KL estimators.

The reward is verifiable: 1 if the response contains the pattern (``a b`` by default) and ends
with ``.`` (a response cut at the length limit gives no answer), minus an optional penalty per
token. The four prompts end in ``c`` or ``d``, from which the reference model reaches the
pattern with different odds, so some groups are easy and some hard.

Five trainers share everything but the algorithm: the same prompts every step, the same uniform
random numbers for sampling (so at step 0 they see identical groups), the same Adam optimiser,
clip range and KL settings. They differ in the advantage and in how a loss sums over tokens:

============  ==============================================  =============================
trainer       advantage of response i (group of G)             token aggregation
============  ==============================================  =============================
reinforce     ``r_i``                                          sum over the response
rloo          ``r_i - mean_{j != i} r_j``                      sum over the response
grpo          ``(r_i - mean r) / (std r + eps)``               mean over the response
dr_grpo       ``r_i - mean r``                                 sum / (most tokens possible)
ppo           GAE(γ=1, λ) per token, learned value head        mean over the batch's tokens
============  ==============================================  =============================

Sources: Shao et al. (2024), "DeepSeekMath", arXiv:2402.03300 (GRPO, eq. 3 and 4); Liu et al.
(2025), "Understanding R1-Zero-Like Training: A Critical Perspective", arXiv:2503.20783 (Dr.
GRPO); Kool, van Hoof & Welling (2019), "Buy 4 REINFORCE samples, get a baseline for free!" and
Ahmadian et al. (2024), arXiv:2402.14740 (RLOO); Ouyang et al. (2022), "Training language models
to follow instructions with human feedback" (PPO with a per-token KL penalty in the reward);
J. Schulman (2020), "Approximating KL divergence" (k1, k2, k3).

Every tensor is float64 on the CPU; torch is imported inside the functions that need it, so
``import rlviz.llm`` stays light. Nothing changes torch's global state.

The package is split by concern: ``model`` (the toy model and its task), ``objectives``
(advantages, KL estimators, losses), ``exact`` (exact metrics), ``training`` (one step),
``comparison`` (the trainers side by side) and ``worked`` (one group by hand, the KL study).
"""

from __future__ import annotations

from rlviz.llm.comparison import (
    Comparison,
    compare,
)
from rlviz.llm.exact import (
    exact_metrics,
)
from rlviz.llm.model import (
    EOS,
    PROMPTS,
    REF_PROBS,
    VOCAB,
    Responses,
    Task,
    enumerate_responses,
    sample_responses,
)
from rlviz.llm.objectives import (
    AGGREGATIONS,
    ESTIMATORS,
    GROUP_TRAINERS,
    TRAINERS,
    dr_grpo_advantages,
    grpo_advantages,
    grpo_loss,
    kl_estimates,
    policy_loss,
    reinforce_advantages,
    rloo_advantages,
    token_weights,
)
from rlviz.llm.objectives import (
    GRPO_EPS as GRPO_EPS,
)
from rlviz.llm.objectives import (
    KL_PLACES as KL_PLACES,
)
from rlviz.llm.training import (
    MAX_STEPS as MAX_STEPS,
)
from rlviz.llm.training import (
    Settings,
    max_steps,
    train_step,
)
from rlviz.llm.training import (
    _gae_advantages as _gae_advantages,
)
from rlviz.llm.worked import (
    GroupView,
    KLStudy,
    WorkedGroup,
    kl_study,
    parse_rewards,
    replay_group,
    worked_group,
)

__all__ = [
    "AGGREGATIONS",
    "ESTIMATORS",
    "EOS",
    "GROUP_TRAINERS",
    "PROMPTS",
    "REF_PROBS",
    "TRAINERS",
    "VOCAB",
    "Comparison",
    "GroupView",
    "KLStudy",
    "Responses",
    "Settings",
    "Task",
    "WorkedGroup",
    "compare",
    "dr_grpo_advantages",
    "enumerate_responses",
    "exact_metrics",
    "grpo_advantages",
    "grpo_loss",
    "kl_estimates",
    "kl_study",
    "max_steps",
    "parse_rewards",
    "policy_loss",
    "reinforce_advantages",
    "replay_group",
    "rloo_advantages",
    "sample_responses",
    "token_weights",
    "train_step",
    "worked_group",
]
