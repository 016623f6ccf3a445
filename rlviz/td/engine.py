"""``run_control``: every run of a learner, one call of its compiled loop each.

Run ``r`` draws its dice from its own generator (``rlviz.td.dice``), so the plain loop of
``rlviz.td.loop`` can ask for the same numbers and must match the compiled loops of
``rlviz.td.learners`` draw for draw.
"""

from __future__ import annotations

import numpy as np

from rlviz.compiled import on_warm_up
from rlviz.mdp import TabularMDP
from rlviz.td import learners
from rlviz.td.dice import _generators
from rlviz.td.results import (
    ALGORITHMS,
    DEFAULT_MAX_STEPS,
    ControlResult,
    _check_run,
    epsilon_schedule,
)
from rlviz.td.summaries import greedy_path

__all__ = [
    "run_control",
]

_NO_BUDGET = np.iinfo(np.int64).max


def run_control(
    mdp: TabularMDP,
    *,
    algorithm: str,
    episodes: int,
    runs: int = 1,
    epsilon: float = 0.1,
    alpha: float = 0.5,
    gamma: float = 1.0,
    seed: int = 0,
    max_steps: int = DEFAULT_MAX_STEPS,
    epsilon_decay: bool = False,
    max_total_steps: int | None = None,
) -> ControlResult:
    r"""Train ``runs`` independent ε-greedy TD-control learners of one algorithm.

    Every step: choose :math:`a \sim \varepsilon\text{-greedy}(Q(s, \cdot))` (ties among the
    best actions broken at random; Double Q acts on :math:`Q_1 + Q_2`), observe :math:`r, s'`,
    and update

    .. math:: Q(s, a) \leftarrow Q(s, a) + \alpha \big[y - Q(s, a)\big]

    with the target ``y`` of Q-learning, SARSA (bootstrapping on the next action actually
    taken), Expected SARSA or Double Q-learning (a fair coin picks the table to update). Q
    starts at 0. An episode ends in a terminal state (target ``r``) or is cut short after
    ``max_steps`` steps; a cut is not a terminal state, so its last target still bootstraps from
    ``s'``. Each run stops after ``episodes`` episodes, or when it has taken ``max_total_steps``
    steps: the episode in progress is then cut short and the rest are not played. Sutton & Barto
    (2018), Sections 6.4-6.7.

    Each run is one call of the algorithm's compiled loop (``rlviz.td.learners``). Run ``r`` of
    every algorithm reads the dice of ``SeedSequence(seed).spawn(runs)[r]``, so algorithms
    trained with the same seed are compared on paired random numbers, and a run does not depend
    on how many runs there are.

    Args:
        mdp: The environment (its ``start`` distribution gives the first state of each episode).
        algorithm: One of ``ALGORITHMS``.
        episodes: Episodes per run, N ≥ 1.
        runs: Independent runs, R ≥ 1.
        epsilon: Exploration rate in [0, 1] (the first episode's, with ``epsilon_decay``).
        alpha: Step size in (0, 1].
        gamma: Discount factor in [0, 1].
        seed: Seed of every random draw.
        max_steps: Steps after which an episode is cut short.
        epsilon_decay: Decay ε linearly to 0 over the episodes (``epsilon_schedule``).
        max_total_steps: Steps each run may take in all, or None for no limit.

    Returns:
        The per-episode returns and lengths, final Q, visit counts and greedy paths.

    Raises:
        InputError: if a setting is out of range (a wrong ``mdp`` or an unknown algorithm name,
            a programming error, raises ``TypeError`` or ``ValueError``).
    """
    _check_run(mdp, algorithm, episodes, runs, epsilon, alpha, gamma, max_steps, max_total_steps)
    epsilons = epsilon_schedule(epsilon, episodes, decay=epsilon_decay)
    budget = _NO_BUDGET if max_total_steps is None else int(max_total_steps)
    learner = getattr(learners, f"{algorithm}_run")  # q_learning_run, …, double_q_run
    model = _model(mdp)
    tables = (2,) if algorithm == "double_q" else ()
    q = np.zeros((runs, *tables, mdp.n_states, mdp.n_actions))
    returns = np.full((runs, episodes), np.nan)
    lengths = np.zeros((runs, episodes), dtype=np.int64)
    truncated = np.zeros((runs, episodes), dtype=bool)
    visits = np.zeros((runs, mdp.n_states), dtype=np.int64)
    played = np.zeros(runs, dtype=np.int64)
    for r, dice in enumerate(_generators(seed, runs)):
        played[r] = learner(dice, q[r], epsilons, float(alpha), float(gamma), int(max_steps),
                            budget, model, (returns[r], lengths[r], truncated[r], visits[r]))
    if algorithm == "double_q":  # its Q is the mean of its two tables
        q = (q[:, 0] + q[:, 1]) / 2
    return _result(
        mdp, algorithm, returns, lengths, truncated, q, visits, epsilons, played, alpha=alpha,
        gamma=gamma, seed=seed, max_steps=max_steps, max_total_steps=max_total_steps,
    )


def _model(mdp: TabularMDP) -> tuple[np.ndarray, ...]:
    """The model as the compiled loops read it, in fresh C arrays of fixed types.

    Returns ``(next_state, reward, cum_prob, terminal, start_cum)``; fixed types mean that every
    model runs the same compiled code.
    """
    start_cum = np.cumsum(mdp.start)
    start_cum[-1] = 1.0
    return (np.array(mdp.next_state, dtype=np.int64), np.array(mdp.reward, dtype=np.float64),
            np.array(mdp.cumulative_prob, dtype=np.float64), np.array(mdp.terminal, dtype=bool),
            start_cum)


def _result(
    mdp, algorithm, returns, lengths, truncated, q, visits, epsilons, played, **settings
):
    paths = [greedy_path(mdp, q_run) for q_run in q]
    path_lengths = np.array([p.length if p.reaches_goal else -1 for p in paths], dtype=np.int64)
    for arr in (returns, lengths, truncated, q, visits, epsilons, path_lengths, played):
        arr.setflags(write=False)
    return ControlResult(
        algorithm=algorithm, returns=returns, lengths=lengths, truncated=truncated, q=q,
        visits=visits, epsilons=epsilons, path_lengths=path_lengths,
        path=greedy_path(mdp, q.mean(axis=0)), played=played, **settings,
    )


@on_warm_up
def _warm_up() -> None:
    """Compile (or load from disk) the four loops for the argument types ``run_control`` passes."""
    from rlviz.envs import cliff_walking

    mdp = cliff_walking(rows=2, cols=3)
    for algorithm in ALGORITHMS:
        run_control(mdp, algorithm=algorithm, episodes=2, max_steps=5, max_total_steps=8)
