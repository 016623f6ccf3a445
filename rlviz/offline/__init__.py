r"""Offline RL: datasets from a behaviour policy, fitted Q-learning, and conservative Q-learning.

Learning Q from a fixed dataset, the ``max`` in the Bellman target looks at every action, but
the data corrects only the actions the behaviour policy tried. Whatever the learner holds on the
others (its initial values, or what a network extrapolates) goes unchecked, and the greedy policy
chases it. Conservative Q-learning (CQL(H), Kumar et al. 2020, eq. 4) adds

.. math::  \alpha \, \mathbb{E}_{s \sim D}\Big[\log \textstyle\sum_a e^{Q(s, a)}
           - \mathbb{E}_{a \sim D(\cdot|s)} Q(s, a)\Big]

to the squared TD loss: it pushes Q down where the softmax of Q puts mass and up on the actions
in the data, so unsupported actions sink and α trades optimism for pessimism.

Two problems are built here: a single state with many actions on a line (a true reward curve,
data covering only part of the line) and a gridworld with a behaviour policy that keeps to a safe
path. Both learners (a table and a small MLP) are trained for many values of α at once, as a
batch dimension, so a sweep over α costs one training run.

The one-state fixed point. With ``n_a`` samples of action ``a`` out of ``N``, mean reward
``r̄_a`` and ``p̂_a = n_a / N``, the loss ``L(Q) = (1/N) Σ_i [½ (Q_{a_i} - r_i)² + α (lse(Q) -
Q_{a_i})]`` has gradient ``∂L/∂Q_a = p̂_a (Q_a - r̄_a) + α (π_a - p̂_a)`` with ``π = softmax(Q)``.
On seen actions the stationary point is ``Q_a = r̄_a + α (1 - π_a / p̂_a)``; on unseen ones the
gradient ``α π_a`` is positive for every finite ``Q_a``, so the loss keeps decreasing as they go
to ``-∞``: the fixed point gives them no softmax mass at all. ``one_state_fixed_point`` solves the
seen-action equations exactly (Wright omega function plus a one-dimensional root), independently
of the torch learner.

The package is split by concern: ``problems`` (the problems and their datasets), ``losses``,
``learners`` (the table and the MLP), ``oracle`` (fixed points and exact fitted Q) and
``experiments`` (what the page runs, and the evaluation of the greedy policies).
"""

from __future__ import annotations

from rlviz.offline.experiments import (
    GridResult,
    OneStateResult,
    error_split,
    greedy_path,
    grid_experiment,
    one_state_experiment,
)
from rlviz.offline.experiments import (
    _start_values as _start_values,
)
from rlviz.offline.learners import (
    Training,
    train_mlp,
    train_table,
)
from rlviz.offline.learners import (
    _Recorder as _Recorder,
)
from rlviz.offline.losses import (
    _rows as _rows,
)
from rlviz.offline.losses import (
    bellman_targets,
    cql_gap,
    offline_loss,
    offline_loss_grad,
)
from rlviz.offline.oracle import (
    FixedPoint,
    cql_fixed_point,
    exact_fitted_q,
    one_state_fixed_point,
)
from rlviz.offline.problems import (
    ALPHAS,
    CURVES,
    GRIDS,
    MAX_ACTIONS,
    MAX_DATASET,
    MAX_STEPS,
    Dataset,
    GridProblem,
    OneStateProblem,
    grid_problem,
    one_state_problem,
    sample_grid,
    sample_one_state,
)
from rlviz.offline.problems import (
    _optimal_q as _optimal_q,
)
from rlviz.offline.problems import (
    _policy_values as _policy_values,
)

__all__ = [
    "ALPHAS",
    "CURVES",
    "GRIDS",
    "MAX_ACTIONS",
    "MAX_DATASET",
    "MAX_STEPS",
    "Dataset",
    "FixedPoint",
    "GridProblem",
    "GridResult",
    "OneStateProblem",
    "OneStateResult",
    "Training",
    "bellman_targets",
    "cql_fixed_point",
    "cql_gap",
    "error_split",
    "exact_fitted_q",
    "grid_experiment",
    "grid_problem",
    "greedy_path",
    "one_state_experiment",
    "one_state_fixed_point",
    "one_state_problem",
    "offline_loss",
    "offline_loss_grad",
    "sample_grid",
    "sample_one_state",
    "train_mlp",
    "train_table",
]
