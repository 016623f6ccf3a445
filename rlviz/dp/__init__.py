r"""Dynamic programming on tabular MDPs: policy evaluation, value iteration, policy iteration.

Every solver returns a frozen trace holding the **whole history**: the values after every sweep,
the greedy policy after every sweep, the largest change per sweep, and when the greedy policy
last changed. A page scrubs that history; nothing here animates.

Backups work on the sparse outcome table of ``rlviz.mdp.TabularMDP`` (``next_state``, ``prob``,
``reward``, each ``[S, A, K]``): one sweep gathers ``V`` at every successor and contracts over
outcomes and actions at once, so its cost is ``S * A * K`` rather than the ``S * A * S`` of a
dense table.

Two ways to sweep (Sutton & Barto, 2018, section 4.1):

* **synchronous** ("two arrays"): every state is backed up from the previous sweep's values;
* **in place** ("one array"): states are backed up in index order (row by row on a grid), each
  using the values already updated earlier in the same sweep.

In-place sweeps are sequential by nature. They are vectorised exactly by grouping the states into
*levels*: a state's level is one more than the highest level among its lower-numbered
successors, so the states of one level never need each other's new values and can be backed up
together, while each still reads the old value of every higher-numbered successor. The result
equals the state-by-state loop element for element (on an open grid the levels are the
anti-diagonals).

With ``gamma = 1`` the sweeps converge only when every state reaches a terminal state; otherwise
they stop at ``max_sweeps`` and the trace says so (``converged`` is False and ``message``
explains why). Values stay finite: they grow at most ``max_sweeps`` times the largest reward.

The package is split by concern: ``traces`` (results, Figure 4.1, input checks), ``sweeps`` (the
backup engine), ``solvers`` (the three algorithms), ``checks`` (error bound, exact comparison),
``gamma_sweeps``, ``problems`` (the page's MDPs) and ``rollouts`` (gymnasium checks).
"""

from __future__ import annotations

from rlviz.dp.checks import (
    ErrorBound,
    ExactComparison,
    compare_with_exact,
    evaluation_error_bound,
)
from rlviz.dp.gamma_sweeps import (
    GammaSweeps,
    join_sweeps,
    sweeps_by_gamma,
)
from rlviz.dp.problems import (
    PROBLEMS,
    Problem,
    make_problem,
)
from rlviz.dp.rollouts import (
    ROLLOUT_STEP_BUDGET as ROLLOUT_STEP_BUDGET,
)
from rlviz.dp.rollouts import (
    RolloutCheck,
    episodes_within_budget,
    expected_episode_length,
    greedy_rollouts,
)
from rlviz.dp.solvers import (
    policy_evaluation,
    policy_iteration,
    trace_tables,
    value_iteration,
)
from rlviz.dp.sweeps import (
    _Backup as _Backup,
)
from rlviz.dp.sweeps import (
    _iterate as _iterate,
)
from rlviz.dp.sweeps import (
    _levels as _levels,
)
from rlviz.dp.traces import (
    FIGURE_4_1,
    NOT_IMPROVED,
    EvaluationTrace,
    PolicyIterationTrace,
    SweepTrace,
    uniform_policy,
)

__all__ = [
    "NOT_IMPROVED",
    "PROBLEMS",
    "ErrorBound",
    "EvaluationTrace",
    "ExactComparison",
    "FIGURE_4_1",
    "GammaSweeps",
    "PolicyIterationTrace",
    "Problem",
    "RolloutCheck",
    "SweepTrace",
    "compare_with_exact",
    "evaluation_error_bound",
    "episodes_within_budget",
    "expected_episode_length",
    "greedy_rollouts",
    "join_sweeps",
    "make_problem",
    "policy_evaluation",
    "policy_iteration",
    "sweeps_by_gamma",
    "trace_tables",
    "uniform_policy",
    "value_iteration",
]
