r"""Tabular TD control: Q-learning, SARSA, Expected SARSA and Double Q-learning.

The single-update targets are small functions of arrays (one per algorithm, terminal handling
included), and ``run_control`` trains many independent runs at once: every run keeps its own
episode counter and its own episodes end independently, but all runs step together so each step
is a handful of numpy operations over the run axis. ``run_control_loop`` is the same algorithm
written one run at a time, step by step, as in the book's boxed pseudocode; the two agree draw
for draw.

Random numbers. Run ``r`` owns the generator ``SeedSequence(seed).spawn(runs)[r]`` and draws one
row of uniforms per step of its own life, in blocks of ``BLOCK`` rows. Column ``k`` of row ``t``
always serves the same purpose (the exploration coin, the random action, the transition noise,
the Double-Q table coin, the start state, then one tie-break key per action), so with the same
seed two algorithms see the same dice wherever their decisions coincide, and run ``r`` is the
same whether 1 or 100 runs are trained.

Speed. A lockstep step is about thirty numpy calls on arrays of R elements. Whatever does not
depend on Q is prepared for a block of steps at once: the dice, each step's candidate actions in
tie-break order (looked up from pairwise key comparisons, exploring steps folded in), which
outcome each transition takes, Double Q's coins. The model is copied once per run and indexed
like Q, so a transition is a table look-up. A step only logs its outcome index; returns, lengths
and visits come from the log once per block (whole-number rewards are summed as differences of
running totals, which is exact). The lockstep lasts until the run with the most steps finishes;
runs that have finished are dropped at the next block, so that wait costs less per step.

Reference: Sutton & Barto (2018), *Reinforcement Learning: An Introduction*, 2nd ed., Sections
6.4-6.7 and Example 6.6 (cliff walking).

The package is split by concern: ``updates`` (the readable targets and update), ``results``
(settings checks and result types), ``engine`` (the dice and the vectorised ``run_control``),
``loop`` (the plain loop reference) and ``summaries``.
"""

from __future__ import annotations

from rlviz.td.dice import BLOCK
from rlviz.td.dice import EXPLORE as EXPLORE
from rlviz.td.dice import RANDOM_ACTION as RANDOM_ACTION
from rlviz.td.dice import START as START
from rlviz.td.dice import TABLE_COIN as TABLE_COIN
from rlviz.td.dice import TIE_KEYS as TIE_KEYS
from rlviz.td.dice import TRANSITION as TRANSITION
from rlviz.td.dice import _greedy_order as _greedy_order
from rlviz.td.engine import _episode_returns as _episode_returns
from rlviz.td.engine import _steps_to_end as _steps_to_end
from rlviz.td.engine import run_control, run_control_many
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
    "double_q_target",
    "epsilon_greedy_probs",
    "epsilon_schedule",
    "expected_sarsa_target",
    "greedy_path",
    "greedy_return",
    "learning_curve",
    "optimal_values",
    "q_learning_target",
    "run_control",
    "run_control_loop",
    "run_control_many",
    "sarsa_target",
    "td_update",
    "worked_update",
]
