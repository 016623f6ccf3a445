r"""Maximization bias: why Q-learning overestimates and Double Q-learning does not.

The MDP of Sutton & Barto (2018), Example 6.7 and Figure 6.5. Every episode starts in A, which has
two actions: *right* ends the episode with reward 0; *left* gives reward 0 and leads to B. B has
``m`` actions, each ending the episode with a reward drawn afresh from :math:`N(\mu, \sigma^2)`,
:math:`\mu = -0.1`. Going left is worth :math:`\gamma\mu < 0`, so right is optimal and an
ε-greedy learner that knows it still goes left with probability ε/2. Early on, though, the
largest of B's noisy estimates is above zero, so Q-learning's target for Q(A, left) is too: it
goes left far more often, and for a long time.

Two learners are compared on this MDP with every other method of TD control here:

* ``run`` trains Q-learning, Double Q-learning and Expected SARSA, many independent runs at once,
  one episode per lockstep (an episode is one or two steps). The readable step is ``episode``;
  it calls the target functions of ``rlviz.td`` (``q_learning_target``, ``double_q_target``,
  ``expected_sarsa_target``, ``td_update``) on arrays whose leading axis is the run, and
  ``epsilon_greedy`` for the behaviour. ``run_loop`` is the same algorithm one run and one step at
  a time; the two agree draw for draw.
* ``estimator_study`` is the statistics underneath: the largest of ``m`` sample means as an
  estimate of the largest true mean (the *single* estimator, biased upward), against choosing the
  action with one half of the samples and valuing it with the other (the *double* estimator,
  van Hasselt 2010), by Monte Carlo and by numerical integration.

The book's MDP is not a ``TabularMDP``: that class gives every state the same action set (here A
has 2 actions and B has ``m``) and a fixed reward per outcome (here B's reward is Gaussian), so
the MDP is described by ``MaxBiasMDP`` and trained by its own small engine.

Random numbers. Episode ``e`` of run ``r`` owns one row of uniforms, each column with one purpose
(``A_EXPLORE`` … ``COIN_B``), and one standard normal for B's reward. So with the same seed the
three methods see the same dice wherever their decisions coincide, and they differ by algorithm,
not by luck. The dice come in blocks of ``BLOCK`` episodes, block ``k`` from its own generator
``SeedSequence(seed, spawn_key=(k, stream))`` filled run by run, so run ``r`` gets the same dice
whether 1 or 10,000 runs are trained. Methods trained one call each (to report progress
between them) draw those dice once inside ``shared_dice()``.

References: Sutton & Barto (2018), *Reinforcement Learning: An Introduction*, 2nd ed., Section 6.7,
Example 6.7, Figure 6.5; H. van Hasselt (2010), "Double Q-learning", NeurIPS 23; J. E. Smith and
R. L. Winkler (2006), "The optimizer's curse", Management Science 52(3).
"""

from rlviz.max_bias.estimators import (
    ACTION_GRID,
    SAMPLE_GRID,
    EstimatorStudy,
    double_estimator_bias,
    estimator_study,
    expected_max_of_normals,
    max_estimators,
    single_estimator_bias,
)
from rlviz.max_bias.known import (
    Known,
    book_settings,
    first_run_dice,
    known_answers,
    whiteboard_replay,
)
from rlviz.max_bias.learning import (
    Curve,
    MethodResult,
    Result,
    WorkedTargets,
    episode,
    epsilon_greedy,
    run,
    run_loop,
    worked_targets,
)
from rlviz.max_bias.mdp import (
    A_EXPLORE,
    A_PICK,
    B_EXPLORE,
    B_PICK,
    BLOCK,
    BOOK,
    COIN_A,
    COIN_B,
    LEFT,
    MAX_ACTIONS,
    MAX_EPISODES,
    MAX_RUNS,
    MAX_SAMPLES,
    MAX_TRIALS,
    METHODS,
    N_UNIFORMS,
    RIGHT,
    SOURCE,
    MaxBiasMDP,
    shared_dice,
)
from rlviz.max_bias.mdp import _dice as _dice

__all__ = [
    "A_EXPLORE",
    "A_PICK",
    "ACTION_GRID",
    "B_EXPLORE",
    "B_PICK",
    "BLOCK",
    "BOOK",
    "COIN_A",
    "COIN_B",
    "LEFT",
    "MAX_ACTIONS",
    "MAX_EPISODES",
    "MAX_RUNS",
    "MAX_SAMPLES",
    "MAX_TRIALS",
    "METHODS",
    "N_UNIFORMS",
    "RIGHT",
    "SAMPLE_GRID",
    "SOURCE",
    "Curve",
    "EstimatorStudy",
    "Known",
    "MaxBiasMDP",
    "MethodResult",
    "Result",
    "WorkedTargets",
    "book_settings",
    "double_estimator_bias",
    "episode",
    "epsilon_greedy",
    "estimator_study",
    "expected_max_of_normals",
    "first_run_dice",
    "known_answers",
    "max_estimators",
    "run",
    "run_loop",
    "shared_dice",
    "single_estimator_bias",
    "whiteboard_replay",
    "worked_targets",
]
