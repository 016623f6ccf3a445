"""Interview questions on deep exploration: dithering, optimism, posterior sampling, regret."""

from __future__ import annotations

from rlviz.interview import Link, Prediction, Question
from rlviz.interview.whiteboard import exploration as wb

PAGE = "exploration"
DEFAULTS = dict(runs=20, episodes=100, seed=0, epsilon=0.1, alpha=0.5, beta=0.5)


def _deep_sea_numbers() -> dict[str, str]:
    from rlviz import exploration as ex

    return {
        "p10": f"{ex.first_reach_probability(ex.deep_sea(10)):.6f}",
        "e10": f"{1 / ex.first_reach_probability(ex.deep_sea(10)):,.0f}",
        "e20": f"{1 / ex.first_reach_probability(ex.deep_sea(20)):,.0f}",
        "v_star": f"{ex.finite_horizon_plan(ex.deep_sea(10).mdp, 10).start_values[0]:.2f}",
    }


def _riverswim_numbers() -> dict[str, str]:
    from rlviz import exploration as ex

    river = ex.riverswim()
    res = ex.run_study(river, ex.LEARNERS, **DEFAULTS)
    mean = res.regret_band()[0][:, -1]
    walk = ex.first_reach_probability(river)
    back, stay, forward = ex.RIVERSWIM_RIGHT["middle"]
    small, big = ex.RIVERSWIM_REWARDS
    return {
        "runs": f"{res.runs}", "episodes": f"{res.episodes}", "horizon": f"{river.horizon}",
        "forward": f"{forward:g}", "stay": f"{stay:g}", "back": f"{back:g}",
        "small": f"{small:g}", "big": f"{big:g}",
        "v_star": f"{res.optimal_value:.4f}",
        "lure": f"{res.optimal_value - res.lure_value:.3f}",
        "walker": f"{1 / walk:,.0f}",
        **{f"regret_{k}": f"{mean[i]:.0f}" for i, k in enumerate(res.kinds)},
    }


def _beta_numbers() -> dict[str, str]:
    from rlviz import exploration as ex

    river = ex.riverswim()
    out = {"runs": f"{DEFAULTS['runs']}", "episodes": f"{DEFAULTS['episodes']}"}
    for name, beta in (("b0", 0.0), ("b05", 0.5)):
        res = ex.run_study(river, ("bonus",), **{**DEFAULTS, "beta": beta})
        out[f"regret_{name}"] = f"{res.regret_band()[0][0, -1]:.0f}"
        out[f"stuck_{name}"] = f"{int((res.first_reach[0] == 0).sum())}"
    return out


def _sublinear_numbers() -> dict[str, str]:
    from rlviz import exploration as ex

    res = ex.run_study(ex.riverswim(), ("psrl",), **{**DEFAULTS, "episodes": 200})
    mean = res.regret_band()[0][0]
    return {"r100": f"{mean[99]:.1f}", "r200": f"{mean[-1]:.1f}",
            "ratio": f"{mean[-1] / mean[99]:.2f}"}


QUESTIONS = (
    Question(
        id="exploration.dithering-is-exponential",
        topic="Exploration",
        difficulty=2,
        question="Why does ε-greedy need exponentially many episodes on a deep-sea (or chain) "
        "problem of size N?",
        answer=(
            "The treasure is at the end of a path that needs N right moves in a row, and "
            "moving right costs a little, so the greedy choice after a few visits is left.",
            "Even the kindest dithering, a uniformly random walker (ε = 1), takes that path "
            "with probability 2^(−N) per episode: {p10} for N = 10.",
            "Episodes are independent for it, so the first success is geometric: 2^N episodes "
            "on average, {e10} at N = 10 and {e20} at N = 20. With ε < 1 it is worse: the "
            "greedy steps point away from the treasure.",
            "The cure is *deep* exploration: choose actions for their long-run information "
            "value, as optimism or posterior sampling do, and the episodes needed grow "
            "polynomially in N.",
        ),
        links=(
            Link(PAGE, {"problem": "deep_sea", "n": "10"},
                 shows="The sweep at the bottom: dithering against the dashed 2^N line."),
            Link(PAGE, {"epsilon": "1"},
                 shows="With ε = 1 the ε-greedy points land on the exact 2^N line."),
        ),
        page=PAGE,
        prediction=Prediction(
            prompt="A uniformly random walker on the deep sea of size 12: how many episodes "
            "until it first finds the treasure, on average?",
            options=("about 12", "about 144", "about 4,096"),
            answer=2,
        ),
        numbers=_deep_sea_numbers,
        whiteboard=wb.random_walker_episodes,
    ),
    Question(
        id="exploration.deep-vs-dithering",
        topic="Exploration",
        difficulty=1,
        question="What is the difference between dithering and deep exploration?",
        answer=(
            "Dithering perturbs each action independently (ε-greedy, Boltzmann): exploration "
            "only one step deep.",
            "Deep exploration commits to a multi-step plan toward states whose value is "
            "uncertain, because information there can pay off many steps later.",
            "Optimism (an upper bound on the value of the unknown) and posterior sampling (one "
            "plausible world followed for a whole episode) are the two standard ways.",
            "On the deep sea the optimal return is {v_star}; the visit maps show ε-greedy "
            "hugging column 0 while the planners walk the diagonal to the treasure.",
        ),
        links=(Link(PAGE, {"problem": "deep_sea", "n": "10"},
                    shows="Where each learner has been: the deep-sea grid, one row per step."),),
        page=PAGE,
        numbers=_deep_sea_numbers,
    ),
    Question(
        id="exploration.psrl",
        topic="Exploration",
        difficulty=2,
        question="How does posterior sampling for RL (PSRL) work, and why does it sample once "
        "per episode rather than once per step?",
        answer=(
            "Keep a posterior over MDPs: here a Dirichlet over each state-action's next state "
            "and a Gaussian over its mean reward, updated by counting.",
            "At the start of each episode draw one MDP from it, solve that MDP exactly "
            "(backward induction), and follow its optimal policy for the whole episode.",
            "Sampling once and committing is what makes it deep: a world in which the far end "
            "pays gets followed all the way there. Resampling every step would turn it back "
            "into dithering between worlds.",
            "Its Bayesian regret is Õ(HS√(AT)) (Osband, Russo & Van Roy, 2013). On RiverSwim, "
            "with the page's defaults, its cumulative regret after {episodes} episodes is "
            "{regret_psrl}, against {regret_epsilon_greedy} for ε-greedy.",
        ),
        links=(Link(PAGE, {}, shows="The green regret curve flattens after a few episodes."),),
        page=PAGE,
        numbers=_riverswim_numbers,
        whiteboard=wb.backward_induction,
    ),
    Question(
        id="exploration.optimism-model-free-vs-model-based",
        topic="Exploration",
        difficulty=2,
        question="Optimistic initial values and a count-based bonus are both 'optimism in the "
        "face of uncertainty'. Why does the bonus learner do so much better on RiverSwim?",
        answer=(
            "Optimistic Q-learning starts every Q_h(s, a) at an upper bound, (H − h) r_max, "
            "and only loses that optimism one visit at a time, table entry by table entry.",
            "So it explores everything thoroughly for a long time: its regret on RiverSwim is "
            "{regret_optimistic} after {episodes} episodes, nearly the straight line of never "
            "leaving the left bank ({lure} per episode).",
            "The count-based learner (MBIE-EB) keeps a model, pools every step's data into it, "
            "and plans: the bonus β/√N shrinks where it is sure, and planning carries the "
            "remaining optimism to where it matters. Its regret: {regret_bonus}.",
            "Both find the far end; the difference is how fast they stop paying for "
            "exploration once they know.",
        ),
        links=(Link(PAGE, {}, shows="Red (optimistic) climbs with ε-greedy; blue (bonus) is "
                    "flat."),),
        page=PAGE,
        numbers=_riverswim_numbers,
        whiteboard=wb.bonus_reward,
    ),
    Question(
        id="exploration.why-root-n",
        topic="Exploration",
        difficulty=3,
        question="Why is the exploration bonus β/√N(s, a), and what happens with β = 0?",
        answer=(
            "After N samples, a mean estimated from bounded rewards is within about "
            "c·√(log(1/δ)/N) of the truth with probability 1 − δ (Hoeffding): the bonus is "
            "the width of that confidence interval, so the planner acts on an upper bound.",
            "β sets the confidence: larger β explores longer before committing.",
            "With β = 0 the learner plans in its point estimate (certainty equivalence): after "
            "a few unlucky swims it believes the current always wins and stops trying. On "
            "RiverSwim {stuck_b0} of {runs} runs never reach the far end, and regret is "
            "{regret_b0} after {episodes} episodes against {regret_b05} with β = 0.5 "
            "({stuck_b05} stuck).",
        ),
        links=(Link(PAGE, {"beta": "0", "learners": "bonus"},
                    shows="Regret of the bonus learner without a bonus."),
               Link(PAGE, {"learners": "bonus"}, shows="The same learner with β = 0.5.")),
        page=PAGE,
        prediction=Prediction(
            prompt="Set β = 0. Does the bonus learner still find RiverSwim's far end in every "
            "run?",
            options=("yes, untried moves still look best", "no, some runs give up on "
                     "swimming right"),
            answer=1,
        ),
        numbers=_beta_numbers,
        whiteboard=wb.bonus_reward,
    ),
    Question(
        id="exploration.riverswim",
        topic="MDPs and Bellman equations",
        difficulty=1,
        question="What makes RiverSwim hard, and what is its optimal value here?",
        answer=(
            "Six positions in a river. Swimming left always works and pays {small} at the left "
            "bank; swimming right against the current moves on with probability {forward} "
            "(stays {stay}, swept back {back}) and pays {big} at the right bank (Strehl & "
            "Littman, 2008).",
            "The sure small reward is a lure: a learner that does not persist to the right "
            "bank locks onto it.",
            "Episodes of {horizon} steps from the left bank: value iteration gives V*(s₀) = "
            "{v_star}, "
            "always swimming right; a uniformly random swimmer collects the big reward once "
            "every {walker} episodes on average.",
            "Never leaving the lure costs {lure} per episode, the slope of ε-greedy's regret.",
        ),
        links=(Link(PAGE, {}, shows="The known-answer table and the dotted lure line."),),
        page=PAGE,
        numbers=_riverswim_numbers,
        whiteboard=wb.backward_induction,
    ),
    Question(
        id="exploration.sublinear-regret",
        topic="Exploration",
        difficulty=3,
        question="What does 'sublinear regret' mean, and how would you check it from a run?",
        answer=(
            "Cumulative regret R(T) = Σ (V* − V^(π_k)) over T episodes. Linear regret means a "
            "constant loss per episode: the learner never stops paying.",
            "Sublinear, R(T)/T → 0, means the average loss vanishes: the learner ends up "
            "near-optimal. PSRL's bound is Õ(√T) up to problem-size factors.",
            "A quick check: doubling T should less than double R. Posterior sampling on "
            "RiverSwim: R(100) = {r100}, R(200) = {r200}, ratio {ratio} (linear would be 2).",
            "Estimate regret with paired randomness (the optimal policy on the same dice) to "
            "cut its variance; use several runs and a confidence band.",
        ),
        links=(Link(PAGE, {"episodes": "200", "learners": "psrl"},
                    shows="The known-answer row R(200) / R(100)."),),
        page=PAGE,
        numbers=_sublinear_numbers,
    ),
)
