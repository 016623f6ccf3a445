r"""Returns and advantages along trajectories: discounted, n-step and λ-returns, and GAE.

Time runs along the last axis. A trajectory of ``T`` steps is the sequence of transitions
``(s_t, r_t, s_{t+1})`` for ``t`` in ``[0, T-1]``: ``rewards[..., t]`` is ``r_t``, the reward
received after acting in ``s_t``, and ``values[..., t]`` is the critic's ``V(s_t)``. Leading axes
hold independent trajectories, so a batch of ``B`` rollouts is an array ``[B, T]``.

An episode can end inside a trajectory in two different ways, and they must not be confused:

* **termination** (``dones[..., t]``): ``s_{t+1}`` is a terminal state. Its value is zero by
  definition, so step ``t`` bootstraps from nothing.
* **truncation** (``truncated[..., t]``): a time limit cut the episode at ``s_{t+1}``, an ordinary
  state the agent simply never acted in. Step ``t`` bootstraps from ``V(s_{t+1})``, the value of
  the state where the episode was cut, given in ``truncated_values[..., t]``.

After either end the next entry, ``values[..., t+1]``, is the first state of a *new* episode, so
it is never the bootstrap of step ``t``; that is why a truncation needs its own value. The last
step ``T-1``, when it neither terminates nor is truncated, bootstraps from ``last_value`` (the
value of ``s_T``, the state the rollout stopped in). When a step is flagged both ways,
termination wins, as in gymnasium.

Every recursion here has the form ``y_t = x_t + c * y_{t+1}`` within an episode: one backward
loop over all trajectories laid end to end, restarting at every episode end (``_backward_sums``,
compiled by ``rlviz.compiled``, so each sum is exactly the book's step-by-step one). The plain
Python loops of the tests are the independent reference.

The package is split by concern: ``steps`` (the readable one-step rules), ``validation``,
``filter`` (the compiled backward sums), ``estimates`` (the returns and advantages),
``examples`` (one trajectory broken down, worked examples) and ``walks`` (the random walk study).
"""

from __future__ import annotations

from rlviz.returns.estimates import (
    discounted_returns,
    gae,
    lambda_returns,
    lambda_weights,
    n_step_returns,
    td_errors,
)
from rlviz.returns.examples import (
    EXAMPLES,
    AdvantageBreakdown,
    Example,
    breakdown,
    random_example,
)
from rlviz.returns.filter import (
    _backward_sums as _backward_sums,
)
from rlviz.returns.filter import (
    _discounted_sum as _discounted_sum,
)
from rlviz.returns.steps import (
    discounted_step,
    td_error,
)
from rlviz.returns.walks import (
    SUTTON_BARTO_WALKS,
    StudyResult,
    WalkSamples,
    bias_variance_study,
    expected_episode_length,
    random_walk,
    sample_walks,
)

__all__ = [
    "SUTTON_BARTO_WALKS",
    "EXAMPLES",
    "AdvantageBreakdown",
    "Example",
    "StudyResult",
    "WalkSamples",
    "bias_variance_study",
    "breakdown",
    "discounted_returns",
    "discounted_step",
    "expected_episode_length",
    "gae",
    "lambda_returns",
    "lambda_weights",
    "n_step_returns",
    "random_example",
    "random_walk",
    "sample_walks",
    "td_error",
    "td_errors",
]
