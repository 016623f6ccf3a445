r"""Deep exploration: dithering, optimism and posterior sampling on RiverSwim and the deep sea.

Two episodic chain problems, each a ``rlviz.mdp.TabularMDP`` over chain positions with a fixed
episode length ``H`` (the agent starts at the left end every episode):

* **RiverSwim** (Strehl & Littman, 2008, Figure 1; the episodic six-state version of Osband,
  Russo & Van Roy, 2013, Figure 2, with rewards scaled to [0, 1] and ``H = 20``). Swimming left
  always succeeds; swimming right against the current succeeds with probability 0.35, stays with
  0.6 and is swept back with 0.05 (0.6 forward / 0.4 stay at the left bank, 0.6 stay / 0.4
  back at the right bank). Swimming left at the left bank pays 5/1000; swimming right at the
  right bank pays 1.
* **The deep sea of size N** (Osband et al., 2019, "Deep exploration via randomized value
  functions", JMLR 20(124), section 7.1; ``deep_sea`` of bsuite, Osband et al., 2020, without
  action randomisation). The episode lasts ``N`` steps; "right" moves one column right and costs
  0.01/N, "left" moves one column left (or stays at the wall) and costs nothing; "right" in the
  last column pays 1. Row ``h`` of the deep-sea grid is step ``h`` of the episode on a chain of
  ``N`` columns, so the treasure needs ``N`` rights in a row and is worth 1 − 0.01 = 0.99.

The learners share the same dice (below) and differ only in how they explore:

* **ε-greedy Q-learning** (dithering): ``Q_h(s, a)`` from 0, a random action with probability ε.
* **Optimistic initial values**: the same Q-learning, greedy, from ``Q_h = (H − h) r_max``, an
  upper bound on every return-to-go (Sutton & Barto, 2018, section 2.6).
* **Count-based bonus** (MBIE-EB, Strehl & Littman, 2008, section 5): plan each episode in the
  empirical model with reward ``R̂(s, a) + β/√N(s, a)``; an untried pair is taken to pay
  ``r_max + β`` and stay put, the most it could be worth.
* **Posterior sampling for RL** (PSRL; Strens, 2000; Osband, Russo & Van Roy, 2013): each
  episode, draw one MDP from the posterior (a Dirichlet over each pair's next position, a Gaussian
  over its mean reward) and follow its optimal policy for the whole episode.

Both model-based learners know that the dynamics do not depend on the step (they pool every
step's data into one model over positions) and that a move goes back, stays or goes forward;
the Q-learners keep one table per step, ``Q_h``, as finite-horizon Q-learning must.

Planning is backward induction, which is value iteration with γ = 1 started from ``V_0 = 0``
(``rlviz.dp``'s synchronous backup, to the bit): sweep ``k`` is the optimal value with ``k``
steps to go, and its greedy sets are the optimal non-stationary policy (step ``h`` acts
greedily on ``V_{H−h−1}``). All runs' models are planned at once, as one batch.

Random numbers. Run ``r`` owns ``SeedSequence(seed).spawn(runs)[r]``, which spawns two streams:
one gives each (episode, step) a row of uniforms (exploration coin, random action, tie-break,
transition) that every learner of run ``r`` uses, so they differ by algorithm, not luck; the
other draws PSRL's posterior samples.

The package is split by concern: ``problems`` (RiverSwim, the deep sea), ``exact`` (planning and
exact answers), ``steps`` (the learners' readable steps), ``engine`` (the simulation) and
``studies``.
"""

from __future__ import annotations

from rlviz.errors import InputError as InputError
from rlviz.exploration.engine import (
    BLOCK as BLOCK,
)
from rlviz.exploration.engine import (
    simulate,
)
from rlviz.exploration.exact import (
    Plan,
    backward_induction,
    finite_horizon_plan,
    first_reach_probability,
    policy_value_exact,
    random_walk_episodes,
)
from rlviz.exploration.problems import (
    DEEP_SEA_COST as DEEP_SEA_COST,
)
from rlviz.exploration.problems import (
    DEEP_SEA_SIZES,
    LABELS,
    LEARNERS,
    Problem,
    deep_sea,
    make_problem,
    riverswim,
)
from rlviz.exploration.problems import (
    LEFT as LEFT,
)
from rlviz.exploration.problems import (
    RIGHT as RIGHT,
)
from rlviz.exploration.problems import (
    RIVERSWIM_REWARDS as RIVERSWIM_REWARDS,
)
from rlviz.exploration.problems import (
    RIVERSWIM_RIGHT as RIVERSWIM_RIGHT,
)
from rlviz.exploration.steps import (
    TRANSITION as TRANSITION,
)
from rlviz.exploration.steps import (
    bonus_model,
    choose_actions,
    plan_models,
    posterior_sample,
    q_learning_step,
)
from rlviz.exploration.studies import (
    Study,
    Sweep,
    run_study,
    sweep_first_reach,
)

__all__ = [
    "DEEP_SEA_SIZES",
    "LABELS",
    "LEARNERS",
    "Plan",
    "Problem",
    "Study",
    "Sweep",
    "backward_induction",
    "bonus_model",
    "choose_actions",
    "deep_sea",
    "finite_horizon_plan",
    "first_reach_probability",
    "make_problem",
    "plan_models",
    "policy_value_exact",
    "posterior_sample",
    "q_learning_step",
    "random_walk_episodes",
    "riverswim",
    "run_study",
    "simulate",
    "sweep_first_reach",
]
