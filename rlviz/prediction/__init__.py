r"""Prediction on the random walks: TD(0) and Monte Carlo, n-step TD, the λ-return and TD(λ).

Sutton & Barto (2018): Example 6.2 (the 5-state walk, TD(0) against constant-α Monte Carlo),
Example 7.1 and Figure 7.2 (the 19-state walk, n-step TD for n = 1 … 512), Figures 12.3, 12.6 and
12.8 (the offline λ-return algorithm, TD(λ) with accumulating traces and true online TD(λ) on the
same walk). Values are tabular: one number per state, the terminal states worth 0.

**Runs and lanes.** A *run* is one sequence of episodes, the same for every method and setting
(paired random numbers, as in the book's figures: every n, λ and α sees the same episodes). A
run's episodes are laid back to back in a *stream* of steps ``k``. A *lane* is one run learned
with one setting (n or λ, and α); every lane of every run advances one stream step at a time, so
the update rules below are written once, on arrays with one row per lane, and a single call
serves one lane or ten thousand. Runs are ordered longest first, so the runs still going at step
``k`` are a prefix of the rows.

**The readable steps** (``n_step_td_step``, ``td_lambda_step``, ``true_online_td_lambda_step``,
``offline_lambda_return_update``) are the book's updates; the engines (``n_step_td``,
``td_lambda``, ``true_online_td_lambda``, ``offline_lambda_return``) gather the rows, call the
step and book the episodes. The returns themselves come from :mod:`rlviz.returns`.

**Divergence.** TD(λ) and the offline methods can grow without bound at large α (several
visits to a state within one episode add up). A lane whose TD error, or whose value after an
offline update, passes ``DIVERGED`` in size is frozen there (its α set to 0, its values
cleared) and reported as diverged from that episode on: its errors are infinite and its values
NaN, never drawn.
"""

from __future__ import annotations

from rlviz.prediction.engines import (
    Sweep,
    SweepSummary,
    TdVsMc,
    constant_alpha_mc,
    n_step_td,
    offline_lambda_return,
    run_sweep,
    td_lambda,
    td_vs_mc,
    true_online_td_lambda,
)
from rlviz.prediction.engines import (
    _start_values as _start_values,
)
from rlviz.prediction.known import (
    BOOK_EPISODES,
    BOOK_RUNS,
    Known,
    known_answers,
)
from rlviz.prediction.known import (
    FIGURES as FIGURES,
)
from rlviz.prediction.steps import (
    _later_visits as _later_visits,
)
from rlviz.prediction.steps import (
    n_step_td_step,
    offline_lambda_return_update,
    td_lambda_step,
    true_online_td_lambda_step,
)
from rlviz.prediction.views import (
    Backup,
    Identities,
    episode_views,
    identities,
    lambda_return_increments,
    monte_carlo_increments,
    n_step_backup,
    online_lambda_return,
    true_online_steps,
    whiteboard_gap,
)
from rlviz.prediction.walks import (
    ALPHAS,
    ALPHAS_7_2,
    DIVERGED,
    EXAMPLE_6_2,
    LAMBDAS,
    METHODS,
    NS,
    WALKS,
    Runs,
    Walk,
    linear_true_values,
    sample_runs,
    true_values,
)

__all__ = [
    "ALPHAS",
    "ALPHAS_7_2",
    "BOOK_EPISODES",
    "BOOK_RUNS",
    "DIVERGED",
    "EXAMPLE_6_2",
    "LAMBDAS",
    "METHODS",
    "NS",
    "WALKS",
    "Backup",
    "Identities",
    "Known",
    "Runs",
    "Sweep",
    "SweepSummary",
    "TdVsMc",
    "Walk",
    "constant_alpha_mc",
    "episode_views",
    "identities",
    "known_answers",
    "lambda_return_increments",
    "linear_true_values",
    "n_step_backup",
    "n_step_td",
    "n_step_td_step",
    "offline_lambda_return",
    "offline_lambda_return_update",
    "monte_carlo_increments",
    "online_lambda_return",
    "run_sweep",
    "sample_runs",
    "td_lambda",
    "td_lambda_step",
    "td_vs_mc",
    "true_online_steps",
    "true_online_td_lambda",
    "true_online_td_lambda_step",
    "true_values",
    "whiteboard_gap",
]
