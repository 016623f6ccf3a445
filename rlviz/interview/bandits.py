"""Interview questions on multi-armed bandits: ε-greedy, optimism, UCB, Thompson, gradient."""

from __future__ import annotations

import math

from rlviz.interview import Link, Prediction, Question
from rlviz.interview.whiteboard import bandits as wb

PAGE = "bandits"
TOPIC = "Bandits"
FIG_2_2 = {"racers": "greedy,eps_a,eps_b", "eps_b_eps": "0.01"}
BOUNDS = {"testbed": "bernoulli", "runs": "20", "steps": "10000",
          "racers": "eps_a,ucb,thompson", "ucb_c": str(math.sqrt(2))}
PROBS = (0.9, 0.5, 0.4, 0.2)


def _gaussian(mean: float = 0.0):
    from rlviz import bandits

    return bandits.GaussianTestbed(arms=10, mean=mean, noise_sd=1.0)


def _epsilon_numbers() -> dict[str, str]:
    from rlviz import bandits

    r = bandits.race(tuple(bandits.EpsilonGreedy(epsilon=e) for e in (0.0, 0.1, 0.01)),
                     _gaussian(), runs=500, steps=1000, seed=0)
    out = {}
    for i, name in enumerate(("greedy", "e1", "e01")):
        out[f"{name}_100"] = f"{r.optimal[i, 99]:.0%}"
        out[f"{name}_1000"] = f"{r.optimal[i, -1]:.0%}"
    return out


def _bounds_numbers() -> dict[str, str]:
    from rlviz import bandits

    r = bandits.race((bandits.EpsilonGreedy(epsilon=0.1), bandits.UCB(c=math.sqrt(2)),
                      bandits.BetaThompson()), bandits.BernoulliTestbed(probs=PROBS),
                     runs=20, steps=10000, seed=0)
    return {"eps": f"{r.regret[0, -1]:.0f}", "ucb": f"{r.regret[1, -1]:.0f}",
            "ts": f"{r.regret[2, -1]:.0f}",
            "lr": f"{bandits.lai_robbins(PROBS, 10000)[-1]:.0f}",
            "ucb1": f"{bandits.ucb1_bound(PROBS, 10000)[-1]:.0f}"}


def _optimistic_numbers() -> dict[str, str]:
    from rlviz import bandits

    r = bandits.race((bandits.Optimistic(initial=5.0, step_size=0.1),
                      bandits.EpsilonGreedy(epsilon=0.1, step_size=0.1)), _gaussian(),
                     runs=500, steps=1000, seed=0)
    return {"opt": f"{r.optimal[0, -1]:.0%}", "eps": f"{r.optimal[1, -1]:.0%}"}


def _baseline_numbers() -> dict[str, str]:
    from rlviz import bandits

    r = bandits.race((bandits.Gradient(alpha=0.1, baseline=True),
                      bandits.Gradient(alpha=0.1, baseline=False)), _gaussian(4.0),
                     runs=500, steps=1000, seed=0)
    return {"with": f"{r.optimal[0, -1]:.0%}", "without": f"{r.optimal[1, -1]:.0%}"}


QUESTIONS = (
    Question(
        id="bandits.explore-exploit",
        topic="Exploration",
        difficulty=1,
        question="On the 10-armed Gaussian testbed, how do greedy, ε = 0.1 and ε = 0.01 "
                 "compare at step 100 and at step 1000?",
        answer=(
            "Greedy locks onto whichever arm looked best after a few pulls and often never "
            "finds the best one: it picks the optimal arm {greedy_1000} of the time at step "
            "1000 (500 runs).",
            "ε = 0.1 explores fastest: optimal {e1_100} at step 100 and {e1_1000} at 1000, but "
            "it can never exceed 1 − ε + ε/10 = 91%.",
            "ε = 0.01 starts slower ({e01_100} at step 100, {e01_1000} at 1000) and overtakes "
            "ε = 0.1 in the long run, up to 99.1%.",
            "Exploration is an investment: it costs reward now to learn which arm pays later.",
        ),
        links=(Link(PAGE, FIG_2_2, shows="Sutton & Barto's Fig. 2.2: % optimal action against "
                                         "time."),),
        page=PAGE,
        prediction=Prediction(
            prompt="Which of greedy, ε = 0.1 and ε = 0.01 picks the best arm most often at "
                   "step 1000?",
            options=("greedy", "ε = 0.1", "ε = 0.01"),
            answer=1,
        ),
        numbers=_epsilon_numbers,
    ),
    Question(
        id="bandits.ucb",
        topic=TOPIC,
        difficulty=1,
        question="Write UCB's action choice. Why is the bonus √(ln t / N(a))?",
        answer=(
            "A_t = argmax_a [Q_t(a) + c √(ln t / N_t(a))]; an untried arm is chosen first.",
            "Optimism in the face of uncertainty: the bonus is (up to c) a confidence radius "
            "from Hoeffding's inequality, so Q + bonus is an upper bound that holds with high "
            "probability.",
            "N(a) in the denominator shrinks the bonus as an arm is sampled; ln t in the "
            "numerator grows slowly, so a neglected arm is eventually retried.",
            "With c = √2 and rewards in [0, 1] this is UCB1, whose regret is O(Σ_a ln T / Δ_a).",
        ),
        links=(Link(PAGE, {"racers": "ucb,eps_a"},
                    shows="Fig. 2.4: UCB (c = 2) against ε-greedy on the Gaussian testbed."),),
        page=PAGE,
        whiteboard=wb.ucb_action,
    ),
    Question(
        id="bandits.regret",
        topic=TOPIC,
        difficulty=2,
        question="What is regret, and how does it grow for ε-greedy, UCB and Thompson sampling?",
        answer=(
            "Regret after T steps: T μ* − E[Σ_t R_t] = Σ_a Δ_a E[N_T(a)], the expected shortfall "
            "against always pulling the best arm (Δ_a = μ* − μ_a).",
            "Fixed ε-greedy keeps pulling bad arms a fraction ε of the time: linear regret.",
            "Lai & Robbins: any consistent algorithm has regret at least "
            "Σ_a Δ_a ln T / KL(μ_a, μ*); UCB and Thompson sampling reach that order, ln T.",
            "On Bernoulli arms (0.9, 0.5, 0.4, 0.2), after 10,000 steps (20 runs): ε-greedy "
            "{eps}, UCB1 {ucb}, Thompson {ts}; the Lai–Robbins curve is at {lr} and UCB1's "
            "upper bound at {ucb1}.",
        ),
        links=(Link(PAGE, BOUNDS, shows="The log–log regret chart: ε-greedy climbs at slope 1, "
                                        "UCB and Thompson run parallel to the bound."),),
        page=PAGE,
        prediction=Prediction(
            prompt="After 10,000 steps on these Bernoulli arms, whose regret is lowest?",
            options=("ε-greedy", "UCB1", "Thompson sampling"),
            answer=2,
        ),
        numbers=_bounds_numbers,
    ),
    Question(
        id="bandits.thompson",
        topic="Exploration",
        difficulty=2,
        question="How does Thompson sampling choose an arm on Bernoulli bandits?",
        answer=(
            "Keep a Beta(1 + successes, 1 + failures) posterior per arm; each step draw one "
            "sample θ_a from every posterior and pull argmax_a θ_a.",
            "Each arm is pulled with the posterior probability that it is the best: "
            "probability matching.",
            "Uncertain arms have wide posteriors and win some draws; as evidence accumulates "
            "the posteriors narrow and play concentrates on the best arm.",
            "It matches the Lai–Robbins lower bound asymptotically and is often best in "
            "practice; for Gaussian rewards use a Normal posterior.",
        ),
        links=(Link(PAGE, BOUNDS, shows="Thompson sampling's regret curve against the bound."),),
        page=PAGE,
    ),
    Question(
        id="bandits.optimistic",
        topic="Exploration",
        difficulty=1,
        question="What are optimistic initial values, and where do they fail?",
        answer=(
            "Start every estimate high (Q₁ = 5 when true means are near 0); each pull "
            "disappoints, so a greedy agent tries every arm before settling: exploration "
            "without randomness.",
            "On the stationary testbed with α = 0.1: optimal action {opt} of the time at step "
            "1000, against {eps} for ε-greedy (ε = 0.1, α = 0.1).",
            "It explores only at the start: in a nonstationary problem the drive is gone once "
            "the optimism has worn off.",
            "Its early curve has a spike: every arm is tried, then the best one is picked "
            "for a while, then it explores again.",
        ),
        links=(Link(PAGE, {"racers": "optimistic,eps_a", "eps_a_alpha": "0.1"},
                    shows="Fig. 2.3: optimistic greedy against realistic ε-greedy."),),
        page=PAGE,
        prediction=Prediction(
            prompt="Optimistic greedy (Q₁ = 5) against ε-greedy (ε = 0.1): who picks the best "
                   "arm more often at step 1000?",
            options=("optimistic greedy", "ε-greedy", "the same"),
            answer=0,
        ),
        numbers=_optimistic_numbers,
    ),
    Question(
        id="bandits.nonstationary",
        topic=TOPIC,
        difficulty=2,
        question="When the arms' means drift, why is a constant step size better than the "
                 "sample average?",
        answer=(
            "The sample average Q_n = Q_(n−1) + (R − Q_(n−1))/n weighs every past reward "
            "equally, so it reacts ever more slowly to change.",
            "A constant α gives the exponential recency-weighted average: reward i steps old "
            "has weight α(1 − α)^i, so the estimate tracks the current mean.",
            "It never converges (its variance stays of order α), which is exactly what "
            "tracking needs.",
            "The Robbins–Monro conditions Σ α = ∞, Σ α² < ∞ hold for 1/n and fail for constant "
            "α: convergence versus tracking.",
        ),
        links=(Link(PAGE, {"testbed": "random_walk", "runs": "200", "steps": "10000",
                           "racers": "eps_a,eps_b", "eps_b_eps": "0.1", "eps_b_alpha": "0.1"},
                    shows="Exercise 2.5: sample average against α = 0.1 on drifting arms."),),
        page=PAGE,
        prediction=Prediction(
            prompt="On drifting arms, which ε-greedy ends higher: sample average or α = 0.1?",
            options=("sample average", "α = 0.1", "the same"),
            answer=1,
        ),
        whiteboard=wb.update,
    ),
    Question(
        id="bandits.gradient-baseline",
        topic="Policy gradients",
        difficulty=2,
        question="In the gradient bandit, what does the reward baseline do, and what happens "
                 "without it when every arm pays about +4?",
        answer=(
            "Softmax preferences H(a), updated by H(a) ← H(a) + α (R − R̄)(1[a = A] − π(a)): "
            "stochastic gradient ascent on E[R].",
            "The baseline R̄ does not change the expected gradient (Σ_a ∇π(a) = 0) but centres "
            "the reward: better than average pushes up, worse pushes down.",
            "Without it, with all rewards near +4, every pulled arm is pushed up: the signal "
            "is swamped by the offset. Optimal action at step 1000: {with} with the baseline, "
            "{without} without.",
            "With μ = 0 the rewards are already centred and the baseline matters much less.",
        ),
        links=(Link(PAGE, {"mu": "4", "racers": "gradient_a,gradient_b"},
                    shows="Fig. 2.5: gradient bandits with and without the baseline."),),
        page=PAGE,
        prediction=Prediction(
            prompt="Every arm pays about +4. Remove the baseline: the share of optimal actions",
            options=("falls", "rises", "stays the same"),
            answer=0,
        ),
        numbers=_baseline_numbers,
    ),
)
