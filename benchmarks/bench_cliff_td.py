"""Q-learning vs SARSA: the book's protocol per algorithm, the page's worst case, its warm rerun."""

from functools import partial

from benchmarks import case, page_first_view, page_rerun
from rlviz import td
from rlviz.envs import cliff_walking

CLIFF = cliff_walking()
# Sutton & Barto (2018), Example 6.6 / Figure 6.4: 50 runs of 500 episodes, ε = 0.1, α = 0.5.
BOOK = dict(episodes=500, runs=50, epsilon=0.1, alpha=0.5, gamma=1.0, seed=0)


def _register(algorithm: str) -> None:
    fast = partial(td.run_control, CLIFF, algorithm=algorithm, **BOOK)
    slow = partial(td.run_control_loop, CLIFF, algorithm=algorithm, **BOOK)
    case(
        f"cliff 4x12 {algorithm}: 50 runs x 500 episodes", group="cliff_td", budget=1.0,
        # One call of the compiled loop per run (what the page's code panel shows first), about
        # 50-100 ns a step: 130-440x the plain Python loop measured on the 2-core reference
        # machine while it was busy with other work (about 300x when it was not).
        reference=slow, min_ratio=50, repeat=5, reference_repeat=1,
        note="a compiled loop per run; the reference is the same loop in Python, numpy per step",
    )(fast)


for _algorithm in td.ALGORITHMS:
    _register(_algorithm)

# The page's heaviest settings: every algorithm, its most runs (60) of 500 episodes on the
# largest slippery grid, with a discount and exploration under which the learners wander, so
# episodes hit the step cap and every run uses up the page's budget of 30,000 steps.
WORST = cliff_walking(rows=8, cols=16, slip=0.3)


@case("page worst case: 4 algorithms, 8x16 slip 0.3, γ 0.5, ε 0.5, 60 runs", group="cliff_td",
      budget=2.0, repeat=3, note="7.2 million steps, bounded by the step budget; a learner that "
      "takes over 0.25 s brings up a bar of the learners trained so far, and the page stays "
      "responsive between them (next case)")
def worst_case():
    return [
        td.run_control(WORST, algorithm=a, episodes=500, runs=60, epsilon=0.5, alpha=0.5,
                       gamma=0.5, max_steps=1000, max_total_steps=30_000, seed=0)
        for a in td.ALGORITHMS
    ]


@case("page worst case, the slowest learner alone (Double Q)", group="cliff_td", budget=1.0,
      repeat=3, note="the longest the page goes without answering a moved control")
def worst_learner():
    return td.run_control(WORST, algorithm="double_q", episodes=500, runs=60, epsilon=0.5,
                          alpha=0.5, gamma=0.5, max_steps=1000, max_total_steps=30_000, seed=0)


page_rerun("cliff_td")
page_first_view("cliff_td")
