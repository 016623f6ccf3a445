"""The book's race (Sutton & Barto 2018, chapter 2): its values, and the page's equations."""

from __future__ import annotations

import math
from dataclasses import dataclass

from rlviz.bandits.agents import UCB, Agent, EpsilonGreedy
from rlviz.bandits.races import Race, race
from rlviz.bandits.testbeds import GaussianTestbed


@dataclass(frozen=True)
class BookValue:
    """A number from Sutton & Barto (2018), chapter 2, that a race should reproduce.

    Attributes:
        source: Where it comes from, e.g. ``"Sutton & Barto (2018), Fig. 2.2"``.
        agent: The label of the ``BOOK_AGENTS`` racer it is about ("" for the testbed itself).
        quantity: ``"reward"`` (average reward), ``"optimal"`` (fraction of runs choosing an
            optimal arm) or ``"best"`` (the best arm's mean, averaged over runs).
        value: The book's value.
        tol: How far ours may be: the reading error of a printed curve plus the sampling error
            of a 2000-run average.
        steps: The steps (1-based, inclusive) whose average is compared.
    """

    source: str
    agent: str
    quantity: str
    value: float
    tol: float
    steps: tuple[int, int] = (951, 1000)

    @property
    def label(self) -> str:
        """What is compared, in words."""
        first, last = self.steps
        if self.quantity == "best":
            return "best possible average reward: the best arm's mean, over runs"
        what = "average reward" if self.quantity == "reward" else "fraction choosing the best arm"
        when = f"step {first}" if first == last else f"steps {first}–{last}"
        return f"{self.agent}: {what}, {when}"

    def ours(self, result: Race) -> float:
        """Our counterpart in ``result``: the quantity averaged over ``steps``."""
        if self.quantity == "best":
            return float(result.best_mean[0])
        curve = result.reward if self.quantity == "reward" else result.optimal
        first, last = self.steps
        return float(curve[result.labels.index(self.agent), first - 1:last].mean())


BOOK_AGENTS: tuple[Agent, ...] = (
    EpsilonGreedy(epsilon=0.0),
    EpsilonGreedy(epsilon=0.01),
    EpsilonGreedy(epsilon=0.1),
    UCB(c=2.0),
)

EXPECTED_MAX_OF_10 = 1.5387527308351729
"""``E[max of 10 independent N(0, 1)]``: the best possible average reward on the 10-armed
testbed (the book's "about 1.55"), by numerical integration of ``10 x φ(x) Φ(x)^9``."""

_FIG = "Sutton & Barto (2018), Fig. "
BOOK_VALUES: tuple[BookValue, ...] = (
    # Figure 2.2, read off the printed curves near step 1000 (the text: greedy earns "about 1"
    # and finds the optimal action in "approximately one-third of the tasks").
    BookValue(_FIG + "2.2", "greedy", "reward", 1.0, 0.07),
    BookValue(_FIG + "2.2", "ε-greedy ε=0.01", "reward", 1.3, 0.07),
    BookValue(_FIG + "2.2", "ε-greedy ε=0.1", "reward", 1.37, 0.07),
    BookValue(_FIG + "2.2", "greedy", "optimal", 0.35, 0.05),
    BookValue(_FIG + "2.2", "ε-greedy ε=0.01", "optimal", 0.55, 0.07),
    BookValue(_FIG + "2.2", "ε-greedy ε=0.1", "optimal", 0.8, 0.05),
    BookValue(_FIG + "2.4", "UCB c=2", "reward", 1.5, 0.07),
    # Exercise 2.8, UCB's spike at step 11: every arm has been pulled once, so UCB picks the
    # largest single sample q + n; E[q | q + n = s] = s/2 and the largest of 10 draws of
    # N(0, 2) has mean √2 · E[max of 10 N(0, 1)], so the expected reward is E_max / √2.
    BookValue("Exercise 2.8, the spike of Fig. 2.4: E[max] / √2, exact", "UCB c=2", "reward",
              EXPECTED_MAX_OF_10 / math.sqrt(2.0), 0.08, steps=(11, 11)),
    # The book's "best possible, about 1.55": 3 standard errors (sd of the max 0.587).
    BookValue("E[max of 10 N(0, 1)], exact", "", "best", EXPECTED_MAX_OF_10,
              round(3 * 0.587 / math.sqrt(2000), 3), steps=(1, 1)),
)


def book_race(seed: int = 0) -> Race:
    """The race behind Figures 2.2 and 2.4 of Sutton & Barto (2018).

    Greedy, ε = 0.01 and ε = 0.1 (sample averages) and UCB c = 2 on the 10-armed Gaussian
    testbed, 2000 runs of 1000 steps.
    """
    return race(BOOK_AGENTS, GaussianTestbed(), runs=2000, steps=1000, seed=seed)


EQUATIONS: tuple[tuple[str, str], ...] = (
    ("Regret after T steps, from the gaps Δₐ = max q* − q*(a) and the pulls Nₐ",
     r"\mathrm{Regret}_T=\sum_{t=1}^{T}\big(\max_a q_*(a)-q_*(A_t)\big)=\sum_a\Delta_a N_T(a)"),
    ("Action values: sample average (α = 1/n) or constant step size (Sutton & Barto eq. 2.5)",
     r"Q_{n+1}=Q_n+\alpha_n\,(R_n-Q_n)"),
    ("ε-greedy",
     r"A_t=\begin{cases}\text{a random arm}&\text{with probability }\varepsilon\\"
     r"\arg\max_a Q_t(a)&\text{otherwise}\end{cases}"),
    ("UCB, untried arms first (eq. 2.10; c = √2 is UCB1)",
     r"A_t=\arg\max_a\Big[Q_t(a)+c\sqrt{\tfrac{\ln t}{N_t(a)}}\Big]"),
    ("Thompson sampling on Bernoulli arms (s wins, f losses)",
     r"\theta_a\sim\mathrm{Beta}(1+s_a,\,1+f_a),\qquad A_t=\arg\max_a\theta_a"),
    ("Gradient bandit (eq. 2.12), baseline R̄ the average reward so far",
     r"H_{t+1}(a)=H_t(a)+\alpha\,(R_t-\bar R_t)\,(\mathbb 1_{a=A_t}-\pi_t(a)),"
     r"\quad\pi_t=\mathrm{softmax}(H_t)"),
    ("Lai & Robbins (1985): no consistent method's regret grows more slowly",
     r"\liminf_{T\to\infty}\frac{\mathbb E[\mathrm{Regret}_T]}{\ln T}\ge"
     r"\sum_{a:\,\Delta_a>0}\frac{\Delta_a}{\mathrm{KL}(\mu_a,\mu^*)}"),
    ("UCB1's finite-time bound (Auer, Cesa-Bianchi & Fischer 2002, Theorem 1)",
     r"\mathbb E[\mathrm{Regret}_n]\le\sum_{a:\,\Delta_a>0}\frac{8\ln n}{\Delta_a}+"
     r"\Big(1+\frac{\pi^2}{3}\Big)\sum_a\Delta_a"),
)
"""The page's equations as (caption, LaTeX) pairs."""
