r"""Tabular TD control: Q-learning, SARSA, Expected SARSA and Double Q-learning.

Each learner is a plain loop over one run, written as the book's boxed pseudocode (choose A from
S ε-greedily, take it, observe R and S', update Q(S, A) towards the target) and compiled to
machine code (``rlviz.compiled``): every step depends on the Q the step before left, so a run's
steps cannot be batched, and a numpy call per step costs more than the arithmetic.
``run_control`` calls the algorithm's loop once per run. ``run_control_loop`` is the same
algorithm in plain Python on numpy arrays, calling the readable target functions; the two agree
draw for draw.

Random numbers. Run ``r`` owns the generator ``SeedSequence(seed).spawn(runs)[r]`` and draws one
row of uniforms per step of its own life. Column ``k`` of row ``t`` always serves the same
purpose (the exploration coin, the random action, the transition noise, the Double-Q table coin,
the start state, then one tie-break key per action), so with the same seed two algorithms see
the same dice wherever their decisions coincide, and run ``r`` is the same whether 1 or 100 runs
are trained.

Reference: Sutton & Barto (2018), *Reinforcement Learning: An Introduction*, 2nd ed., Sections
6.4-6.7 and Example 6.6 (cliff walking).

The package is split by concern: ``updates`` (the readable targets and update, and the worked
update), ``results`` (settings checks and result types), ``dice`` (each run's uniforms),
``learners`` (the compiled loops), ``engine`` (``run_control``, which calls them), ``loop`` (the
plain loop reference) and ``summaries``.
"""

from __future__ import annotations

from rlviz.td.dice import BLOCK
from rlviz.td.dice import EXPLORE as EXPLORE
from rlviz.td.dice import RANDOM_ACTION as RANDOM_ACTION
from rlviz.td.dice import START as START
from rlviz.td.dice import TABLE_COIN as TABLE_COIN
from rlviz.td.dice import TIE_KEYS as TIE_KEYS
from rlviz.td.dice import TRANSITION as TRANSITION
from rlviz.td.engine import run_control
from rlviz.td.learners import double_q_run, expected_sarsa_run, q_learning_run, sarsa_run
from rlviz.td.loop import (
    run_control_loop,
)
from rlviz.td.results import (
    ALGORITHMS,
    DEFAULT_MAX_STEPS,
    ControlResult,
    Curve,
    GreedyPath,
    epsilon_schedule,
)
from rlviz.td.summaries import (
    greedy_path,
    greedy_return,
    learning_curve,
    optimal_values,
)
from rlviz.td.updates import (
    WorkedUpdate,
    double_q_target,
    epsilon_greedy_probs,
    expected_sarsa_target,
    q_learning_target,
    sarsa_target,
    td_update,
    worked_update,
)

__all__ = [
    "ALGORITHMS",
    "BLOCK",
    "DEFAULT_MAX_STEPS",
    "ControlResult",
    "Curve",
    "GreedyPath",
    "WorkedUpdate",
    "double_q_run",
    "double_q_target",
    "epsilon_greedy_probs",
    "epsilon_schedule",
    "expected_sarsa_run",
    "expected_sarsa_target",
    "greedy_path",
    "greedy_return",
    "learning_curve",
    "optimal_values",
    "q_learning_run",
    "q_learning_target",
    "run_control",
    "run_control_loop",
    "sarsa_run",
    "sarsa_target",
    "td_update",
    "worked_update",
]
