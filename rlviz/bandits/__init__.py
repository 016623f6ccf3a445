r"""Multi-armed bandits: testbeds, agents, vectorised regret races and the bounds on regret.

A *race* runs several agents on the same bandit problems. Everything random in it is a pure
function of ``(seed, stream, step, run, arm, draw)`` (see ``Noise``), which gives three
guarantees at once:

- **common random numbers**: every agent faces the same true arm means in run ``r``, and pulling
  arm ``a`` at step ``t`` of run ``r`` pays the same reward whoever pulls it, so differences
  between agents are differences between algorithms, not luck;
- **independence from the line-up**: an agent's curves do not change when another racer is added
  or removed, and run ``r`` does not depend on how many runs there are;
- **a plain loop can check the vectorised code draw for draw**: a per-run Python loop asks for
  the same numbers by index and must reproduce every action of every run.

Layout: per-run state is stored arms-major, ``[A, R]`` (arms x runs), so that a reduction over
arms is an element-wise operation across runs. Steps are numbered from 1 in text and in ``t``
arguments of formulas; arrays are indexed from 0 (index ``i`` holds step ``i + 1``).

The package is split by concern: ``noise`` (random streams), ``testbeds``, ``agents`` (each
agent's select and update steps), ``beta`` (the Beta draws of Thompson sampling), ``races`` (the
vectorised race that calls them), ``bounds`` and ``book`` (the book's race and its values).

Sources: Sutton & Barto, *Reinforcement Learning: An Introduction*, 2nd ed. (2018), chapter 2;
Auer, Cesa-Bianchi & Fischer (2002), *Finite-time analysis of the multiarmed bandit problem*;
Lai & Robbins (1985), *Asymptotically efficient adaptive allocation rules*; Thompson (1933);
Agrawal & Goyal (2012); Cheng (1978) for the Beta sampler.
"""

from __future__ import annotations

from rlviz.bandits.agents import (
    UCB,
    Agent,
    BetaThompson,
    Context,
    EpsilonGreedy,
    GaussianThompson,
    Gradient,
    Optimistic,
    compiled_steps,
)
from rlviz.bandits.beta import ATTEMPTS as BETA_ATTEMPTS
from rlviz.bandits.beta import MIN_PRIOR
from rlviz.bandits.book import (
    BOOK_AGENTS,
    BOOK_VALUES,
    EQUATIONS,
    EXPECTED_MAX_OF_10,
    BookValue,
    book_race,
)
from rlviz.bandits.bounds import kl_bernoulli, lai_robbins, ucb1_bound
from rlviz.bandits.noise import (
    BLOCK_CELLS,
    MAX_ARMS,
    MAX_RUNS,
    MAX_STEPS,
    Noise,
    Steps,
    Stream,
    gaussian,
    gaussian_rows,
    unit,
)
from rlviz.bandits.races import CHUNK_CELLS, RACE_COST, STEP_BLOCK, Race, race, race_seconds
from rlviz.bandits.testbeds import (
    BernoulliTestbed,
    GaussianTestbed,
    RandomWalkTestbed,
    Testbed,
    parse_probs,
)

__all__ = [
    "BETA_ATTEMPTS",
    "BLOCK_CELLS",
    "CHUNK_CELLS",
    "MAX_ARMS",
    "MAX_RUNS",
    "MAX_STEPS",
    "MIN_PRIOR",
    "RACE_COST",
    "STEP_BLOCK",
    "BOOK_AGENTS",
    "BOOK_VALUES",
    "EQUATIONS",
    "EXPECTED_MAX_OF_10",
    "UCB",
    "Agent",
    "BernoulliTestbed",
    "BetaThompson",
    "book_race",
    "BookValue",
    "compiled_steps",
    "Context",
    "EpsilonGreedy",
    "gaussian",
    "gaussian_rows",
    "GaussianTestbed",
    "GaussianThompson",
    "Gradient",
    "kl_bernoulli",
    "lai_robbins",
    "Noise",
    "Optimistic",
    "parse_probs",
    "Race",
    "race",
    "race_seconds",
    "RandomWalkTestbed",
    "Steps",
    "Stream",
    "Testbed",
    "ucb1_bound",
    "unit",
]
