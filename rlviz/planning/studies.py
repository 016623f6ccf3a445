"""The Dyna page's studies, each a frozen result of ``run_dyna`` calls.

Figure 8.2's protocol with Figure 8.3's halfway policy, and the mazes that change (Figures 8.4
and 8.5).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlviz.errors import InputError
from rlviz.planning.engine import DynaResult, agent, run_dyna
from rlviz.planning.mazes import (
    BLOCKING_MAZE,
    PLANNERS,
    SHORTCUT_MAZE,
    Maze,
    greedy_path_length,
    maze,
    random_walk_steps,
)

SOURCE = "Sutton & Barto (2018)"
BOOK_NS = (0, 5, 50)
"""Figure 8.2's planning budgets."""
BOOK_SETTINGS = dict(epsilon=0.1, alpha=0.1, gamma=0.95)
"""Figure 8.2's ε, α and γ (the book's text beside it)."""
CHANGES = {"blocking": (BLOCKING_MAZE, 1000, 3000), "shortcut": (SHORTCUT_MAZE, 3000, 6000)}
"""Figures 8.4 and 8.5: the two layouts, the step at which the maze changes, the steps run."""


@dataclass(frozen=True)
class PlanningStudy:
    """Figure 8.2's protocol on one maze: Dyna-Q with several planning budgets, paired dice."""

    maze: Maze
    results: dict[int, DynaResult]  # by n
    walk: float  # expected length of the first episode (the random walk)
    halfway: dict[int, tuple[np.ndarray, int, int]]  # n -> (Q [C, A], steps into episode 2,
    # its length)

    @property
    def ns(self) -> tuple[int, ...]:
        """The planning budgets, in increasing order."""
        return tuple(self.results)

    def mean_lengths(self, n: int) -> np.ndarray:
        """``[N]`` mean steps of each episode over the runs that finished it."""
        res = self.results[n]
        played = np.arange(res.lengths.shape[2]) < res.played[0][:, None]
        with np.errstate(invalid="ignore"):
            return np.where(played, res.lengths[0], 0).sum(0) / played.sum(0)


def planning_study(layout: str, *, ns=BOOK_NS, runs: int = 30, episodes: int = 50,
                   epsilon: float = 0.1, alpha: float = 0.1, gamma: float = 0.95, seed: int = 0,
                   progress=None) -> PlanningStudy:
    """Dyna-Q with each ``n`` in ``ns`` on one maze (Sutton & Barto, Figure 8.2), paired dice.

    Also the greedy policy of run 1 halfway through its second episode for the smallest and
    largest ``n`` (Figure 8.3).

    Args:
        layout: The maze as text.
        ns: Planning budgets, distinct, at least one.
        runs: Independent runs per budget.
        episodes: Episodes per run.
        epsilon: Exploration rate ε.
        alpha: Step size α.
        gamma: Discount γ.
        seed: Seed of every random draw.
        progress: Called with the fraction done after each budget, or None.
    """
    ns = tuple(sorted({int(n) for n in ns}))
    if not ns:
        raise InputError("choose at least one planning budget n")
    m = maze(layout)
    settings = dict(runs=runs, episodes=episodes, epsilon=epsilon, alpha=alpha, gamma=gamma,
                    seed=seed)
    # The budgets that plan share one call: their lanes step together, so a step costs max(n)
    # planning rounds, not their sum. Each run's dice are its own, so this equals one call per
    # n exactly (tested); n = 0 runs alone, as it makes no rounds and runs longest.
    results = {}
    groups = [g for g in ((0,) if 0 in ns else (), tuple(n for n in ns if n > 0)) if g]
    done = 0
    for group in groups:
        both = run_dyna(m, planners=("dyna_q",) * len(group), n=group, **settings)
        results.update({n: agent(both, i) for i, n in enumerate(group)})
        done += len(group)
        if progress is not None:
            progress(done / len(ns))
    results = {n: results[n] for n in ns}
    halfway = {}
    for n in sorted({ns[0], ns[-1]}):
        halfway[n] = halfway_values(m, results[n], n=n, **{k: v for k, v in settings.items()
                                                          if k not in ("runs", "episodes")})
    return PlanningStudy(maze=m, results=results, walk=random_walk_steps(m.mdps[0]),
                         halfway=halfway)


def halfway_values(maze_: Maze, res: DynaResult, *, n: int, episode: int = 2, **settings):
    """Run 1's action values halfway through an episode (Sutton & Barto, Figure 8.3).

    The run is replayed alone (run 1 draws the same dice whatever the number of runs) and
    stopped after the middle step of ``episode``.

    Returns:
        ``(Q [C, A], steps into that episode, its length)``; the final ``Q`` (and 0, 0) when
        run 1 never finished that episode.
    """
    lengths = res.lengths[0, 0]
    if res.played[0, 0] < episode:
        return res.q[0, 0], 0, 0
    into = int(lengths[episode - 1] // 2)
    stop = int(lengths[: episode - 1].sum()) + into
    alone = run_dyna(maze_, n=n, runs=1, episodes=episode, max_steps=stop, **settings)
    return alone.q[0, 0], into, int(lengths[episode - 1])


@dataclass(frozen=True)
class ChangingStudy:
    """Dyna-Q and Dyna-Q+ on a maze that changes (Sutton & Barto, Figures 8.4 and 8.5)."""

    maze: Maze
    result: DynaResult
    change_at: int

    def gain_after(self) -> dict[str, float]:
        """Mean reward each planner collected after the change."""
        total = self.result.cumulative_reward()
        before = total[:, :, self.change_at - 1] if self.change_at > 0 else 0.0
        return {p: float((total[i, :, -1] - (before[i] if self.change_at > 0 else 0)).mean())
                for i, p in enumerate(self.result.planners)}

    def path_lengths(self) -> dict[str, np.ndarray]:
        """``[R]`` moves of each run's final greedy path in the new maze (0: never arrives)."""
        return {p: np.array([greedy_path_length(self.maze, self.result.q[i, r]) or 0
                             for r in range(self.result.runs)])
                for i, p in enumerate(self.result.planners)}


def changing_study(before: str, after: str, *, change_at: int, steps: int, n: int = 10,
                   kappa: float = 1e-3, runs: int = 10, epsilon: float = 0.1,
                   alpha: float = 1.0, gamma: float = 0.95, seed: int = 0) -> ChangingStudy:
    """Dyna-Q and Dyna-Q+ (paired dice) on a maze whose layout changes at step ``change_at``."""
    if not 0 < change_at < steps:
        raise InputError(f"the maze must change between step 1 and step {steps - 1}; "
                         f"got {change_at}")
    m = maze(before, after)
    res = run_dyna(m, planners=PLANNERS, n=n, runs=runs, steps=steps, change_at=change_at,
                   epsilon=epsilon, alpha=alpha, gamma=gamma, kappa=kappa, seed=seed)
    return ChangingStudy(maze=m, result=res, change_at=change_at)


def settled_at(mean_lengths: np.ndarray, *, slack: float = 1.25, last: int = 10) -> int | None:
    """The first episode (from 1) after which the mean length stays near its final level.

    Near: within ``slack`` × its mean over the ``last`` episodes. None if there are too few
    episodes to say.
    """
    mean_lengths = np.asarray(mean_lengths, dtype=np.float64)
    if len(mean_lengths) < 2 * last or not np.isfinite(mean_lengths).all():
        return None
    level = mean_lengths[-last:].mean()
    above = np.flatnonzero(mean_lengths > slack * level)
    return 1 if above.size == 0 else int(above[-1]) + 2
