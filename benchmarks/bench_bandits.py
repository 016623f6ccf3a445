"""Bandit races: 2000 runs x 1000 steps x 10 arms per agent, against the per-run Python loop."""

from benchmarks import case, page_rerun
from rlviz import bandits as B
from tests.bandits_reference import race_loop

RUNS, STEPS, REF_RUNS = 2000, 1000, 20
GAUSSIAN = B.GaussianTestbed()
BERNOULLI = B.BernoulliTestbed(arms=10)
NOTE = (f"the per-run loop is timed on {REF_RUNS} of the {RUNS} runs and scaled by "
        f"{RUNS // REF_RUNS} (runs are independent; the loop reproduces those runs draw for draw)")


def register(agent: B.Agent, testbed: B.Testbed) -> None:
    def vectorised():
        return B.race([agent], testbed, runs=RUNS, steps=STEPS, seed=0)

    def loop():
        return race_loop([agent], testbed, runs=REF_RUNS, steps=STEPS, seed=0)

    where = {GAUSSIAN: "", BERNOULLI: " (Bernoulli)"}.get(testbed, " (random walk)")
    case(f"race {RUNS}x{STEPS}x10 {agent.label}{where}", group="bandits", budget=0.5,
         reference=loop, reference_scale=RUNS / REF_RUNS, min_ratio=100, repeat=3,
         note=NOTE)(vectorised)


for racer, bed in [
    (B.EpsilonGreedy(0.0), GAUSSIAN),
    (B.EpsilonGreedy(0.1), GAUSSIAN),
    (B.Optimistic(), GAUSSIAN),
    (B.UCB(2.0), GAUSSIAN),
    (B.GaussianThompson(), GAUSSIAN),
    (B.BetaThompson(), BERNOULLI),
    (B.Gradient(0.1), GAUSSIAN),
    (B.EpsilonGreedy(0.1, step_size=0.1), B.RandomWalkTestbed()),
]:
    register(racer, bed)


@case("book race: 4 racers, 2000x1000 (known answer)", group="bandits", budget=2.0, repeat=3)
def book():
    return B.book_race(0)


ALL = (B.EpsilonGreedy(0.0), B.EpsilonGreedy(0.1), B.EpsilonGreedy(0.01), B.Optimistic(),
       B.UCB(2.0), B.BetaThompson(), B.Gradient(0.1), B.Gradient(0.1, baseline=False))


@case("page worst case: 8 racers, 20 arms, 2000x1000", group="bandits", budget=2.0, repeat=1,
      note="the page's largest race (runs x steps <= 2,000,000; 8 racers; 20 Bernoulli arms, "
      "where Thompson sampling draws Beta samples); the page shows a spinner while it runs")
def worst():
    return B.race(ALL, B.BernoulliTestbed(arms=20), runs=2000, steps=1000, seed=0)


page_rerun("bandits")
