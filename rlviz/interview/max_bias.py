"""Interview questions on the maximization bias: why Q-learning overestimates, and the fixes."""

from __future__ import annotations

import functools

from rlviz.interview import Link, Prediction, Question
from rlviz.interview.whiteboard import max_bias as wb

PAGE = "max_bias"
RUNS = 2000  # the page's default


@functools.lru_cache(maxsize=4)
def _book_run(n_actions: int = 10, runs: int = RUNS):
    from rlviz import max_bias as mb

    return mb.run(mb.MaxBiasMDP(n_actions=n_actions), episodes=300, runs=runs, seed=0, keep=0)


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def _curve_numbers() -> dict[str, str]:
    from rlviz import max_bias as mb

    res = _book_run().methods
    out = {"opt": _pct(mb.MaxBiasMDP.optimal_left_fraction(0.1))}
    for key, name in (("q", "q_learning"), ("dq", "double_q"), ("es", "expected_sarsa")):
        left = res[name].left.mean
        out[f"{key}_peak"] = _pct(left.max())
        out[f"{key}_peak_ep"] = str(int(left.argmax()) + 1)
        out[f"{key}_tail"] = _pct(res[name].left_fraction(251, 300))
    out["q_qleft"] = f"{res['q_learning'].q_left.mean.max():.3f}"
    return out


def _why_numbers() -> dict[str, str]:
    from rlviz import max_bias as mb

    return {**_curve_numbers(), "bias10": f"{mb.single_estimator_bias(10, 1.0, 10):.4f}",
            "e10": f"{mb.expected_max_of_normals(10):.4f}"}


def _size_numbers() -> dict[str, str]:
    import math

    from rlviz import max_bias as mb

    e = {m: mb.expected_max_of_normals(m) for m in (2, 10, 100)}
    return {
        "e2": f"{e[2]:.4f}", "e10": f"{e[10]:.4f}", "e100": f"{e[100]:.4f}",
        "root100": f"{math.sqrt(2 * math.log(100)):.4f}",
        "b10": f"{mb.single_estimator_bias(10, 1.0, 10):.4f}",
        "b20": f"{mb.single_estimator_bias(10, 1.0, 20):.4f}",
        "ratio": f"{mb.single_estimator_bias(10, 1.0, 10) / mb.single_estimator_bias(10, 1.0, 20):.4f}",  # noqa: E501
        "ewma": f"{0.1 / (2 - 0.1):.4f}",
    }


def _gap_numbers() -> dict[str, str]:
    from rlviz import max_bias as mb

    return {"s_gap": f"{mb.single_estimator_bias(10, 1.0, 10, gap=0.5):+.4f}",
            "d_gap": f"{mb.double_estimator_bias(10, 1.0, 10, gap=0.5):+.4f}".replace("-", "−"),
            "s0": f"{mb.single_estimator_bias(10, 1.0, 10):.4f}"}


def _many_numbers() -> dict[str, str]:
    res = _book_run(100, 1000).methods
    return {**_curve_numbers(), "q100_tail": _pct(res["q_learning"].left_fraction(251, 300)),
            "dq100_tail": _pct(res["double_q"].left_fraction(251, 300))}


QUESTIONS = (
    Question(
        id="max_bias.why",
        topic="Bias and variance",
        difficulty=1,
        question="Why does Q-learning overestimate action values?",
        answer=(
            "Its target uses max_a Q(s′, a) over *estimates*. Each estimate may be unbiased, "
            "but the max of noisy estimates is not: E[max_i X_i] ≥ max_i E[X_i] (the max is "
            "convex, Jensen), so the target is too high on average.",
            "Example 6.7: all of B's actions pay −0.1 on average with noise σ = 1. With 10 "
            "actions and 10 samples each the largest sample mean is {bias10} too high on "
            "average ({e10} × σ/√n).",
            "So Q(A, left) rises above Q(A, right) = 0 (mean {q_qleft} at its highest) and "
            "Q-learning goes left in {q_peak}% of the runs at episode {q_peak_ep}, where ε-greedy "
            "on the true values would go left {opt}% of the time.",
            "It is the noise that does it: with σ = 0, once each of B's actions has been tried "
            "(an untried one keeps its initial 0), every learner goes right.",
        ),
        links=(
            Link(PAGE, {}, shows="Q-learning's % left climbs far above the dashed optimum."),
            Link(PAGE, {"sigma": "0"}, shows="No noise at B: no bias, every learner goes right."),
        ),
        page=PAGE,
        prediction=Prediction(
            prompt="At the book's settings, which learner goes left most often early on?",
            options=("Q-learning", "Double Q-learning", "They go left equally often"),
            answer=0,
        ),
        numbers=_why_numbers,
    ),
    Question(
        id="max_bias.double_q",
        topic="TD learning",
        difficulty=2,
        question="How does Double Q-learning remove the maximization bias? Write its update.",
        answer=(
            "Two tables. A fair coin picks the one to update; that table picks the next action "
            "and the other one values it: Q₁(s, a) ← Q₁(s, a) + α[r + γ Q₂(s′, argmax_a′ "
            "Q₁(s′, a′)) − Q₁(s, a)], and the same with 1 and 2 swapped.",
            "Q₂'s estimate is independent of the choice made with Q₁, so E[Q₂(s′, a*)] = "
            "Σ_a P(a* = a) q(s′, a): never above max_a q(s′, a). No upward bias (it can be low).",
            "It acts ε-greedily on Q₁ + Q₂. Each table gets about half of the updates, and the "
            "memory doubles; the cost per step does not.",
            "On Example 6.7 Double Q-learning goes left {dq_tail}% of the time over episodes "
            "251–300, near the {opt}% optimum; Q-learning {q_tail}%.",
        ),
        links=(Link(PAGE, {}, shows="The violet curve falls to the dashed line within "
                                    "about a hundred episodes."),),
        page=PAGE,
        numbers=_curve_numbers,
        whiteboard=wb.double_q_episode,
    ),
    Question(
        id="max_bias.size",
        topic="Bias and variance",
        difficulty=2,
        question="How large is the maximization bias for m actions of equal value with n samples "
                 "each, and how does it scale?",
        answer=(
            "Each sample mean is N(μ, σ²/n), so the largest is μ + (σ/√n)·E[max of m N(0, 1)], "
            "with E[max of m] = ∫ m x φ(x) Φ(x)^(m−1) dx.",
            "E[max of 2] = 1/√π = {e2}, of 10 = {e10}, of 100 = {e100}: it grows like "
            "√(2 ln m) ({root100} at m = 100), slowly but without bound.",
            "Linear in σ, and 1/√n in the samples: at m = 10, σ = 1 the bias is {b10} with "
            "n = 10 and {b20} with n = 20 (a ratio of {ratio} = √2).",
            "In TD learning with a constant step size α an estimate never averages the noise "
            "away: its variance settles near σ²·α/(2 − α) ({ewma} σ² at α = 0.1).",
        ),
        links=(
            Link(PAGE, {}, shows="The estimator chart: orange points on the closed-form line."),
            Link(PAGE, {"samples": "20"}, shows="Twice the samples: the bias is √2 smaller."),
        ),
        page=PAGE,
        prediction=Prediction(
            prompt="Doubling the samples per action divides the single estimator's bias by…",
            options=("2", "√2", "4", "nothing: the bias stays"),
            answer=1,
        ),
        numbers=_size_numbers,
        whiteboard=wb.max_estimators,
    ),
    Question(
        id="max_bias.expected_sarsa",
        topic="On- vs off-policy",
        difficulty=2,
        question="Does Expected SARSA (or SARSA) suffer from the maximization bias too?",
        answer=(
            "Yes. With an ε-greedy target policy its target is (1 − ε) max_a Q(s′, a) + "
            "ε · mean_a Q(s′, a): mostly the same max of noisy estimates.",
            "On Example 6.7 Expected SARSA peaks at {es_peak}% left (episode {es_peak_ep}), "
            "Q-learning at {q_peak}%, Double Q-learning at {dq_peak}%.",
            "SARSA's target Q(s′, a′) uses the action it will take, ε-greedy on the same "
            "estimates: on average Expected SARSA's target, so the same bias (Sutton & Barto, "
            "Section 6.7).",
            "The fix carries over: double versions of SARSA and Expected SARSA split the "
            "choice and the valuation between two tables.",
        ),
        links=(Link(PAGE, {}, shows="The green curve rises above 50% before it falls."),),
        page=PAGE,
        prediction=Prediction(
            prompt="Whose curve does Expected SARSA's resemble on this MDP?",
            options=("Q-learning's", "Double Q-learning's", "Neither: it goes right at once"),
            answer=0,
        ),
        numbers=_curve_numbers,
    ),
    Question(
        id="max_bias.double_dqn",
        topic="Function approximation",
        difficulty=2,
        question="What does Double DQN change in DQN's target, and why?",
        answer=(
            "DQN: y = r + γ max_a Q(s′, a; θ⁻). The target network both picks and values the "
            "action, so its estimation errors are maximised: an overestimate, as in tabular "
            "Q-learning (van Hasselt, Guez & Silver, 2016).",
            "Double DQN: pick with the online network, value with the target network: "
            "y = r + γ Q(s′, argmax_a Q(s′, a; θ); θ⁻).",
            "It reuses the two networks DQN already has: no extra weights, one extra forward "
            "pass. The two are not independent (θ⁻ is a lagged copy of θ), so the bias is "
            "reduced rather than removed.",
            "The tabular version is Double Q-learning: here its curve sits near the {opt}% "
            "optimum ({dq_tail}% over episodes 251–300) while Q-learning's does not "
            "({q_tail}%).",
        ),
        links=(Link(PAGE, {}, shows="Double Q-learning (violet) against Q-learning (orange)."),),
        page=PAGE,
        numbers=_curve_numbers,
    ),
    Question(
        id="max_bias.underestimate",
        topic="Bias and variance",
        difficulty=3,
        question="Is the double estimator unbiased? When does it underestimate?",
        answer=(
            "E[μ̂ᴮ(a*)] = Σ_i P(a* = i) μ_i, a* picked with the other half of the samples: "
            "a weighted average of the true values, never above the largest.",
            "Unbiased when all the true values are equal (as at B): there it is 0 where the "
            "single estimator is {s0} too high (m = 10, n = 10, σ = 1).",
            "When one action is better it sometimes picks a worse one: the bias is "
            "−Δ(1 − P(best picked)). With the best 0.5 above the other nine, single {s_gap}, "
            "double {d_gap}.",
            "Neither is better everywhere: at that gap the double estimator's error is the "
            "larger one. Both shrink as the samples per action grow.",
        ),
        links=(
            Link(PAGE, {"gap": "0.5"}, shows="The violet points and line drop below zero."),
            Link(PAGE, {}, shows="Equal true values: the violet points sit on zero."),
        ),
        page=PAGE,
        prediction=Prediction(
            prompt="With one action 0.5 better than the other nine, the double estimator is…",
            options=("too high", "unbiased", "too low"),
            answer=2,
        ),
        numbers=_gap_numbers,
    ),
    Question(
        id="max_bias.optimum",
        topic="Exploration",
        difficulty=1,
        question="On the maximization-bias MDP, how often would ε-greedy go left if it knew the "
                 "true values, and why is Q-learning still far from it after 300 episodes?",
        answer=(
            "Right is better (0 against −0.1), so left only when exploring, and then half the "
            "time: ε/2, {opt}% at ε = 0.1.",
            "Q-learning is still at {q_tail}% over episodes 251–300: every visit to B feeds the "
            "largest of B's noisy estimates back into Q(A, left). When B's greedy action is "
            "found out, another overestimated one takes its place, and with a constant α the "
            "estimates never stop being noisy.",
            "More actions at B make it worse: with 100 actions Q-learning still goes left "
            "{q100_tail}% of the time at the end, Double Q-learning {dq100_tail}%.",
        ),
        links=(
            Link(PAGE, {}, shows="The dashed line is ε/2."),
            Link(PAGE, {"actions": "100"}, shows="100 actions at B: Q-learning stays near the "
                                                 "top for the whole run."),
        ),
        page=PAGE,
        prediction=Prediction(
            prompt="With 100 actions at B instead of 10, Q-learning's % left at episode 300 is…",
            options=("lower", "about the same", "higher"),
            answer=2,
        ),
        numbers=_many_numbers,
    ),
)
