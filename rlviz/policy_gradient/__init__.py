r"""Policy gradients on the short corridor: REINFORCE, REINFORCE with a baseline, actor-critic.

The short corridor with switched actions (Sutton & Barto 2018, Example 13.1): three states and
a goal in a row, actions *right* and *left*, a reward of −1 on every step, the step into the goal
included. In the second state the actions are reversed. The agent's features cannot tell the
states apart (``x(s, right) = [1, 0]``, ``x(s, left) = [0, 1]`` in every state), so its policy is
one probability ``p`` of going right, the same everywhere. The deterministic policies never
finish (always right bounces between the first two states, always left never leaves the
first), ε-greedy ones are poor, and the best coin is ``p* = 2 − √2``.

What is exact here. ``J(p) = v_π(S)`` solves a 3-state linear system (``state_values``);
``exact_gradient`` differentiates that system, so ``dJ/dθ`` needs no sampling. The closed forms
``J(p) = (2p − 4) / (p(1 − p))`` and its derivative are kept beside them as checks.

The learners, as in Chapter 13 with γ = 1:

* REINFORCE (§13.3): after each episode ``θ ← θ + α Σ_t G_t ∇ln π(A_t | θ)``.
* REINFORCE with a baseline (§13.4): the same with ``G_t − w_t``, where the baseline ``w`` moves
  toward every return in turn, ``w ← w + α_w (G_t − w)``.
* One-step actor-critic (§13.5): every step ``δ = R + v̂(S') − v̂(S)``, ``v̂(S) ← v̂(S) + α_w δ``,
  ``θ ← θ + α_θ δ ∇ln π(A | θ)``, with a critic of one value per state (or one value for all).

The Monte-Carlo learners sum an episode's terms at the θ the episode was played with
(Williams 1992), so each update is α times the single-episode gradient estimate that
``gradient_study`` samples. The book's boxed pseudocode applies the terms one by one, each at
the θ left by the ones before; the two differ at second order in α, but from ``p = 0.05`` at
α = 2⁻¹² the one-by-one form can run away inside a single long episode.

Compiled. ``train`` trains each run of each learner with a plain loop written as the book's
pseudocode (``reinforce_run``, ``actor_critic_run`` in ``learners``) and compiled to machine code
(``rlviz.compiled``): actor-critic's policy changes after every step, so its steps cannot be
batched, and a loop of plain floats beats a numpy call per step. The gradient study, whose
policy is fixed, plays its episodes batched instead (``play_episodes``: an episode is a table
look-up per sixteen steps for all lanes at once).

Random numbers. Run ``r`` owns the generator ``SeedSequence(seed).spawn(runs)[r]``; its n-th
environment step, in any learner, reads number n of that stream and goes right when it is below
π(right). So every learner's first episode is the same, later two learners' actions differ only
where their policies do, and run ``r`` is the same whatever the number of runs.

Limits. A policy pushed to p ≈ 0 or p ≈ 1 almost never reaches the goal: an episode that
reaches ``max_steps`` steps stops its run (it ran away), and the run's remaining episodes are
scored ``−max_steps`` (their true returns would be lower still). A run also starts no episode
once it has taken ``budget`` steps in all, which bounds the work of the slowest settings; the
book's stay well inside.

Reference: Sutton & Barto (2018), *Reinforcement Learning: An Introduction*, 2nd ed.,
Chapter 13; Williams (1992), *Simple statistical gradient-following algorithms for
connectionist reinforcement learning*.

The package is split by concern: ``corridor`` (the problem, the softmax policy, exact values and
gradients), ``learners`` (the three learners, compiled loops), ``steps`` (the readable steps of
the batched episodes), ``engines`` (batched episodes, training, curves) and ``studies`` (the
gradient study, a worked score, the whiteboard check).
"""

from __future__ import annotations

from rlviz.policy_gradient.corridor import (
    AC_STEP_BUDGET,
    ACTIONS,
    BOOK_BASELINE,
    BOOK_REINFORCE,
    CRITICS,
    FEATURES,
    GOAL,
    LEFT,
    MAX_STEPS,
    NEXT,
    REWARD,
    RIGHT,
    START,
    STEP_BUDGET,
    argmax_value,
    closed_form_gradient,
    closed_form_value,
    epsilon_greedy_values,
    exact_gradient,
    initial_theta,
    optimal_probability,
    policy,
    score,
    softmax,
    start_value,
    state_values,
    transition_matrix,
    visits,
)
from rlviz.policy_gradient.engines import (
    Curve,
    Episodes,
    Method,
    Training,
    learning_curve,
    play_episodes,
    train,
)
from rlviz.policy_gradient.learners import actor_critic_run, reinforce_run
from rlviz.policy_gradient.steps import corridor_step, episode_gradient, returns_to_go
from rlviz.policy_gradient.studies import (
    ESTIMATORS,
    GradientStudy,
    WorkedScore,
    gradient_study,
    whiteboard_gap,
    worked_score,
)

__all__ = [
    "ACTIONS",
    "AC_STEP_BUDGET",
    "BOOK_BASELINE",
    "BOOK_REINFORCE",
    "CRITICS",
    "ESTIMATORS",
    "FEATURES",
    "GOAL",
    "LEFT",
    "MAX_STEPS",
    "NEXT",
    "REWARD",
    "RIGHT",
    "START",
    "STEP_BUDGET",
    "Curve",
    "Episodes",
    "GradientStudy",
    "Method",
    "Training",
    "WorkedScore",
    "actor_critic_run",
    "argmax_value",
    "closed_form_gradient",
    "closed_form_value",
    "corridor_step",
    "episode_gradient",
    "epsilon_greedy_values",
    "exact_gradient",
    "gradient_study",
    "initial_theta",
    "learning_curve",
    "optimal_probability",
    "play_episodes",
    "policy",
    "reinforce_run",
    "returns_to_go",
    "score",
    "softmax",
    "start_value",
    "state_values",
    "train",
    "transition_matrix",
    "visits",
    "whiteboard_gap",
    "worked_score",
]
