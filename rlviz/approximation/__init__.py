r"""Off-policy prediction with linear function approximation: the deadly triad.

Sutton & Barto (2018), chapter 11. Values are linear in features, ``v̂(s, w) = x(s)ᵀ w``, with the
features of all states stacked as the rows of ``X`` (``[S, F]``). A *sampled* method learns from
transitions ``(S_t, A_t, R_{t+1}, S_{t+1})`` drawn by a behaviour policy ``b`` and reweighted by
the importance ratio ``ρ_t = π(A_t | S_t) / b(A_t | S_t)`` of the target policy ``π``; an
*expected* method replaces each sampled update by its expectation under the distribution ``d``
of the states it updates (the book's "semi-gradient DP", eq. 11.9), so it has no noise at all.

Every step function is written on arrays with a leading batch axis, so one call advances one run
or many (independent seeds, or different problems side by side), and the engines below call
exactly these steps. Runs stop once a weight passes ``DIVERGED`` in size: a diverging run is
reported as such and never produces an infinity or a NaN.

Baird's counterexample (Example 11.1): seven states, two actions. *Dashed* goes to one of the six
upper states with equal probability, *solid* goes to the seventh (lower) state; every reward is
0, so the true value of every policy is 0 everywhere. The behaviour policy takes dashed with
probability 6/7 and solid with 1/7, so every next state is equally likely and the behaviour's
state distribution is uniform. The book's target policy always takes solid; here ``target_solid``
is π(solid | s) in any state, 1 by default. Upper state ``i`` has value ``2 w_i + w_8``, the
lower state ``w_7 + 2 w_8``.

The package is split by concern: ``problem`` (Baird's problem and its errors), ``steps`` (the
readable updates and the sampling), ``runs``, ``studies`` (stability, the experiments, two
states, the switchboard) and ``known`` (known answers).
"""

from __future__ import annotations

from rlviz.approximation.known import (
    Known,
    book_settings,
    known_answers,
    whiteboard_gap,
)
from rlviz.approximation.problem import (
    BOOK_START,
    DIVERGED,
    MAX_RUNS,
    MAX_STEPS,
    NULL_WEIGHTS,
    Problem,
    baird,
    baird_features,
    projected_bellman_error,
    projection,
    value_error,
)
from rlviz.approximation.problem import (
    DASHED as DASHED,
)
from rlviz.approximation.problem import (
    SOLID as SOLID,
)
from rlviz.approximation.runs import (
    RECORDED as RECORDED,
)
from rlviz.approximation.runs import (
    Run,
    n_step_model,
    run_expected_etd,
    run_expected_td,
    run_expected_tdc,
    run_td,
    run_tdc,
)
from rlviz.approximation.steps import (
    Transitions,
    emphasis_step,
    expected_etd_step,
    expected_td_step,
    expected_tdc_step,
    sample_transitions,
    semi_gradient_td_step,
    tdc_step,
)
from rlviz.approximation.studies import (
    BairdExperiment,
    GradientExperiment,
    Switchboard,
    TwoState,
    baird_experiment,
    critical_gamma,
    drift,
    gradient_experiment,
    growth_per_sweep,
    switchboard,
    two_state,
    two_state_growth,
)

__all__ = [
    "BOOK_START",
    "DIVERGED",
    "MAX_RUNS",
    "MAX_STEPS",
    "NULL_WEIGHTS",
    "BairdExperiment",
    "GradientExperiment",
    "Known",
    "Problem",
    "Run",
    "Switchboard",
    "Transitions",
    "TwoState",
    "baird",
    "baird_experiment",
    "baird_features",
    "book_settings",
    "critical_gamma",
    "drift",
    "emphasis_step",
    "expected_etd_step",
    "expected_tdc_step",
    "expected_td_step",
    "gradient_experiment",
    "growth_per_sweep",
    "known_answers",
    "n_step_model",
    "projected_bellman_error",
    "projection",
    "run_expected_etd",
    "run_expected_tdc",
    "run_expected_td",
    "run_td",
    "run_tdc",
    "sample_transitions",
    "semi_gradient_td_step",
    "switchboard",
    "tdc_step",
    "two_state",
    "two_state_growth",
    "value_error",
    "whiteboard_gap",
]
