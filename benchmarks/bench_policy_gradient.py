"""Policy gradients on the short corridor: the book's learners, the gradient study, the page."""

from pathlib import Path

from benchmarks import case, page_rerun
from rlviz import policy_gradient as pg
from tests.policy_gradient_reference import run_loop

PAGE = Path(__file__).resolve().parents[1] / "pages" / "policy_gradient.py"
# Figures 13.1 and 13.2: 100 runs of 1000 episodes from π(right) = 0.05; the page's actor-critic.
BOOK = dict(runs=100, episodes=1000, p0=0.05, seed=0)
LEARNERS = [
    pg.Method("reinforce", 2.0**-13),
    pg.Method("reinforce_with_baseline", 2.0**-9, 2.0**-6),
    pg.Method("actor_critic", 2.0**-6, 2.0**-4),
]
LOOP_RUNS = 10


def _three_learners():  # each run of each learner one call of its compiled loop
    return pg.train(LEARNERS, **BOOK)


def _three_learners_loop():
    return [run_loop(m, **{**BOOK, "runs": LOOP_RUNS}) for m in LEARNERS]


case("REINFORCE, with baseline, actor-critic: 100 runs x 1000 episodes", group="policy_gradient",
     budget=1.5, reference=_three_learners_loop, min_ratio=20, repeat=5,
     reference_scale=BOOK["runs"] / LOOP_RUNS,
     note=f"the reference plays {LOOP_RUNS} of the 100 runs, one step at a time")(_three_learners)


@case("Figure 13.1: REINFORCE at 2^-12, 2^-13, 2^-14, 100 runs x 1000 episodes",
      group="policy_gradient", budget=1.5, repeat=3)
def figure_13_1():
    return pg.train([pg.Method("reinforce", a) for a in pg.BOOK_REINFORCE], **BOOK)


@case("gradient study at the defaults (p = 0.3, 2000 episodes)", group="policy_gradient",
      budget=0.3, repeat=5)
def study_defaults():
    return pg.gradient_study(0.3, episodes=2000, constant=-20.0, seed=0)


# The page's heaviest settings: its three slowest REINFORCE step sizes (2^-15 uses up its 40,000
# steps), the slowest baseline, an actor-critic with a one-value critic that wanders until it runs
# out of its 18,000 steps, and the largest gradient study at the longest episodes.
WORST = [
    [pg.Method("reinforce", 2.0**-15), pg.Method("reinforce", 2.0**-14),
     pg.Method("reinforce", 2.0**-13), pg.Method("reinforce_with_baseline", 2.0**-12, 2.0**-10)],
    [pg.Method("actor_critic", 2.0**-9, 2.0**-2, critic="one_value")],
]


@case("page worst case: 3 slow REINFORCE, slow baseline, wandering actor-critic, 5000-episode "
      "study at p = 0.05", group="policy_gradient", budget=2.0, repeat=3,
      note="bounded by the step budgets; shows a spinner")
def worst_case():  # the page's two trainings: the Monte-Carlo learners, then actor-critic
    trained = [pg.train(group, **BOOK) for group in WORST]
    return trained, pg.gradient_study(0.05, episodes=5000, constant=-100.0, seed=0)


@case("first view at defaults: policy_gradient (cold caches, through AppTest)", group="pages",
      budget=1.5, repeat=3)
def first_view():
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    st.cache_data.clear()
    st.cache_resource.clear()
    at = AppTest.from_file(str(PAGE), default_timeout=120).run()
    if at.exception:
        raise RuntimeError(at.exception[0].message)


page_rerun("policy_gradient")
