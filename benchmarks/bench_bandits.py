"""Bandit races: 2000 runs x 1000 steps x 10 arms per agent, against the per-run Python loop."""

from benchmarks import case, page_first_view, page_rerun
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
ALL_GAUSSIAN = ALL[:5] + (B.GaussianThompson(),) + ALL[6:]
# The page (pages/bandits.py) races live what bandits.race_seconds puts at LIVE_SECONDS or less,
# with runs and steps from these sliders and at most 20 arms from the arms slider.
LIVE_SECONDS = 1.6
PAGE_RUNS = (20, 50, 100, 200, 500, 1000, 2000)
PAGE_STEPS = (100, 200, 500, 1000, 2000, 5000, 10000)


def largest_live(agents: tuple[B.Agent, ...], testbed: B.Testbed) -> tuple[int, int, float]:
    """The (runs, steps) the page races live with the largest estimate, and that estimate."""
    estimates = ((B.race_seconds(agents, testbed, runs=r, steps=t), r, t)
                 for r in PAGE_RUNS for t in PAGE_STEPS)
    seconds, runs, steps = max(e for e in estimates if e[0] <= LIVE_SECONDS)
    return runs, steps, seconds


def register_worst(title: str, agents: tuple[B.Agent, ...], testbed: B.Testbed) -> None:
    runs, steps, seconds = largest_live(agents, testbed)

    def worst():
        return B.race(agents, testbed, runs=runs, steps=steps, seed=0)

    case(f"page worst case: {title}, {runs}x{steps}", group="bandits", budget=2.0, repeat=3,
         note=f"the largest race the page runs live for this line-up (estimated {seconds:.2f} s, "
         f"limit {LIVE_SECONDS:g} s)")(worst)


register_worst("8 racers, 20 Bernoulli arms", ALL, B.BernoulliTestbed(arms=20))
register_worst("Thompson + 2 gradients, 20 arms", (ALL[5], ALL[6], ALL[7]),
               B.BernoulliTestbed(arms=20))
register_worst("8 racers, 20 drifting arms", ALL_GAUSSIAN, B.RandomWalkTestbed(arms=20))
register_worst("8 racers, 20 Gaussian arms", ALL_GAUSSIAN, B.GaussianTestbed(arms=20))


@case("8 racers, 20 Bernoulli arms, 2000x1000 (above the live limit)", group="bandits",
      repeat=1, note="the page's largest race before its limit followed the estimated time")
def above_the_limit():
    return B.race(ALL, B.BernoulliTestbed(arms=20), runs=2000, steps=1000, seed=0)


page_rerun("bandits")
page_first_view("bandits")
