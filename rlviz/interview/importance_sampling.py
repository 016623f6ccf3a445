"""Interview questions on importance sampling and off-policy evaluation."""

from __future__ import annotations

from rlviz.interview import Link, Prediction, Question
from rlviz.interview.whiteboard.importance_sampling import off_policy_estimates

PAGE = "importance_sampling"
FAR = {"delta": "0.8", "horizon": "10"}
NEVER = {"pd": "pi=0.9,0.9,0,0.9;b=0.5,0.5,0.5,0.5;r=1,1,1,1"}
AT_THE_END = {"pd": "pi=0.9,0.9,0.2,0.9;b=0.5,0.5,0.5,0.5;r=0,0,0,1"}


def _chain(**kw):
    from rlviz import off_policy as op

    args = dict(delta=0.5, horizon=5, episodes=100, runs=200, critic="cross_fitted", seed=0)
    args.update(kw)
    return op.estimator_study(**args)


def _blackjack_numbers() -> dict[str, str]:
    from rlviz import off_policy as op

    s = op.blackjack_study(runs=100, episodes=10_000, seed=0)
    return {"o10": f"{s.mse['ordinary'][9]:.3f}", "w10": f"{s.mse['weighted'][9]:.3f}",
            "o_end": f"{s.mse['ordinary'][-1]:.1e}", "w_end": f"{s.mse['weighted'][-1]:.1e}",
            "share": f"{s.consistent_share:.0%}", "value": f"{s.true_value:.5f}"}


def _infinite_numbers() -> dict[str, str]:
    from rlviz import off_policy as op

    s = op.infinite_variance_study(runs=10, episodes=100_000, seed=0)
    return {"lo": f"{s.ordinary_final.min():.2f}", "hi": f"{s.ordinary_final.max():.2f}",
            "n": f"{s.episodes:,}", "largest": f"{s.largest_weight:,.0f}"}


def _far_numbers() -> dict[str, str]:
    far = _chain(delta=0.8, horizon=10)
    i = far.chosen
    oracle = _chain(delta=0.8, horizon=10, critic="true")
    return {
        "ordinary": f"{far.mse('ordinary')[0][i]:.3f}",
        "per_decision": f"{far.mse('per_decision')[0][i]:.3f}",
        "dr": f"{far.mse('doubly_robust')[0][i]:.3f}",
        "oracle": f"{oracle.mse('doubly_robust')[0][oracle.chosen]:.4f}",
        "ess": f"{far.mean_ess()[0][i]:.1f}",
        "pop": f"{far.episodes / far.second_moment[i]:.1f}",
        "second": f"{far.second_moment[i]:.1f}",
        "n": str(far.episodes),
    }


def _worked_numbers() -> dict[str, str]:
    from rlviz import off_policy as op

    default = op.worked_per_decision([0.9, 0.9, 0.2, 0.9], [0.5] * 4, [1, 0, 0, 1])
    never = op.worked_per_decision([0.9, 0.9, 0.0, 0.9], [0.5] * 4, [1, 1, 1, 1])
    return {"ord": f"{default.ordinary:.4g}", "pd": f"{default.per_decision:.4g}",
            "never_pd": f"{never.per_decision:.4g}"}


def _ratio_numbers() -> dict[str, str]:
    near, far = _chain(delta=0.2, horizon=1), _chain(delta=0.8, horizon=1)
    return {"near": f"{near.mean_ess()[0][near.chosen]:.0f}",
            "far": f"{far.mean_ess()[0][far.chosen]:.0f}", "n": str(near.episodes)}


def _coverage_numbers() -> dict[str, str]:
    s = _chain(delta=1.0, horizon=5)
    counted = 1.0 - float(s.weight_episodes[s.weight_values == 0].sum())
    return {"share": f"{counted:.1%}", "exact": f"{0.5 ** 5:.1%}",
            "bj": _blackjack_numbers()["share"]}


QUESTIONS = (
    Question(
        id="importance_sampling.ordinary-vs-weighted",
        topic="Bias and variance",
        difficulty=2,
        question="Ordinary or weighted importance sampling: which one is biased, which has more "
        "variance, and which would you use?",
        answer=(
            "Ordinary IS averages ρG over the n episodes. It is unbiased, because "
            "E_b[ρ G] = v_π, but its variance grows with E_b[ρ²] and can be infinite.",
            "Weighted IS divides Σ ρG by Σ ρ instead of n. After one episode it is that "
            "episode's G, so it is biased. The bias vanishes as n grows, and the estimate never "
            "leaves the range of the returns.",
            "On Figure 5.3 (blackjack, v_π = {value}) weighted IS has an MSE of {w10} after 10 "
            "episodes against {o10} for ordinary. After 10,000 episodes they are close: {w_end} "
            "and {o_end}.",
            "In practice prefer weighted IS (or its per-decision form). Ordinary IS is the one "
            "to reach for when unbiasedness matters, for example when many unbiased estimates "
            "are averaged.",
        ),
        links=(Link(PAGE, {}, shows="The blackjack chart: weighted IS starts an order of "
                    "magnitude lower; the two meet by 10,000 episodes."),),
        page=PAGE,
        prediction=Prediction("After 10 episodes, which estimator has the lower mean squared "
                              "error on Figure 5.3?", ("ordinary IS", "weighted IS",
                                                       "they are about equal"), 1),
        numbers=_blackjack_numbers,
    ),
    Question(
        id="importance_sampling.infinite-variance",
        topic="Bias and variance",
        difficulty=3,
        question="Can an importance-sampling estimate have infinite variance? Give an example, "
        "and say what it looks like when you run it.",
        answer=(
            "Example 5.5: one state, *left* returns to it with probability 0.9 or ends with +1, "
            "*right* ends with 0. The target always goes left, the behaviour goes either way "
            "with 1/2. Then E_b[ρG] = 1 but E_b[ρ²G²] = 0.2 Σ 1.8^k = ∞.",
            "Run it and the ordinary estimate seems to settle, then a rare long all-left "
            "episode with weight 2^k kicks it up. After {n} episodes the ten runs still range "
            "from {lo} to {hi}, and the largest weight was {largest}.",
            "Weighted IS is exactly 1 from the first episode that ends on *left*, because every "
            "episode with a non-zero weight has G = 1.",
            "Remedies: weighted IS, truncated or clipped ratios (biased), or keeping π close to "
            "b so that E_b[ρ²] stays small.",
        ),
        links=(Link(PAGE, {}, shows="Figure 5.4: ten orange runs "
                    "that never settle and a blue line on 1."),),
        page=PAGE,
        prediction=Prediction("After 100,000 episodes, are all ten ordinary-IS runs within 0.1 "
                              "of the true value 1?", ("yes", "no"), 1),
        numbers=_infinite_numbers,
    ),
    Question(
        id="importance_sampling.per-decision",
        topic="On- vs off-policy",
        difficulty=2,
        question="What is per-decision importance sampling, and when does it beat ordinary "
        "importance sampling?",
        answer=(
            "The reward R(t+1) depends only on the actions up to t, and the later ratios have "
            "conditional expectation 1. So each reward is weighted by ρ(0:t) instead of the "
            "whole-episode ρ(0:T−1).",
            "It is still unbiased, and its variance is lower when rewards arrive along the way. "
            "With a single reward at the end (blackjack) it is ordinary IS exactly.",
            "On the page's default episode the ordinary term is {ord} and the per-decision term "
            "is {pd}.",
            "On the chain at δ = 0.8 with T = 10 the MSE falls from {ordinary} (ordinary) to "
            "{per_decision} (per-decision).",
        ),
        links=(Link(PAGE, {}, shows="The worked episode: per-decision drops the ratios after "
                    "each reward."),
               Link(PAGE, AT_THE_END, shows="Reward only at the end: both terms are equal."),
               Link(PAGE, FAR, shows="The MSE chart: green below orange.")),
        page=PAGE,
        numbers=lambda: {**_worked_numbers(), **_far_numbers()},
        whiteboard=off_policy_estimates,
    ),
    Question(
        id="importance_sampling.doubly-robust",
        topic="Offline RL",
        difficulty=3,
        question="How does the doubly robust off-policy estimator work, and why is it called "
        "doubly robust?",
        answer=(
            "DR = (1/n) Σ_i Σ_t γ^t [ρ(0:t)(R(t+1) − Q̂(S_t, A_t)) + ρ(0:t−1) V̂(S_t)], with "
            "V̂(s) = Σ_a π(a|s) Q̂(s, a). The critic enters as a control variate whose mean is "
            "zero.",
            "With Q̂ = 0 it is per-decision IS. With Q̂ = q_π only the environment's own "
            "randomness is left. It stays unbiased whatever the critic, provided the critic did "
            "not see the episodes it corrects (cross-fitting).",
            "'Doubly robust': the estimate is consistent if either the ratios are right or the "
            "critic is right (with estimated behaviour probabilities).",
            "On the chain at δ = 0.8 with T = 10 the MSE is {dr} with a cross-fitted model as "
            "critic and {oracle} with the true q_π, against {per_decision} for per-decision IS.",
        ),
        links=(Link(PAGE, FAR, shows="The MSE chart: violet below green."),
               Link(PAGE, {**FAR, "critic": "true"}, shows="With the true critic the violet "
                    "curve drops far below the others."),
               Link(PAGE, {"critic": "zero"}, shows="With no critic violet lies on green.")),
        page=PAGE,
        prediction=Prediction("With no critic (Q̂ = 0), doubly robust equals which estimator?",
                              ("ordinary IS", "weighted IS", "per-decision IS"), 2),
        numbers=_far_numbers,
        whiteboard=off_policy_estimates,
    ),
    Question(
        id="importance_sampling.ess",
        topic="Bias and variance",
        difficulty=2,
        question="What is the effective sample size of a set of importance weights, and how "
        "does it depend on the horizon and on how far π is from b?",
        answer=(
            "Kish's ESS = (Σ w)² / Σ w². It is n for equal weights and 1 when one episode "
            "carries all the weight. It is roughly n / E_b[ρ²].",
            "E_b[ρ²] = Π_t Σ_a π(a|s)²/b(a|s) ≥ 1, so it grows exponentially with the horizon. "
            "On the chain it is (1 + δ²)^T.",
            "At δ = 0.8 and T = 10, E_b[ρ²] = {second}, so {n} episodes are worth about {ess} "
            "equally weighted ones (n / E_b[ρ²] = {pop}).",
            "Long horizons need per-decision or doubly robust estimators, or a target close to "
            "the behaviour.",
        ),
        links=(Link(PAGE, FAR, shows="The ESS chart, and the weight bars: a few episodes "
                    "carry most of the weight."),),
        page=PAGE,
        prediction=Prediction("At δ = 1 and T = 10, what share of the episodes has a non-zero "
                              "weight?", ("about half", "about 1 in 1000", "all of them"), 1),
        numbers=_far_numbers,
    ),
    Question(
        id="importance_sampling.ppo-ratio",
        topic="Policy gradients",
        difficulty=2,
        question="PPO's surrogate contains the ratio π_θ(a|s) / π_old(a|s). What is it, and "
        "why does PPO clip it?",
        answer=(
            "It is the one-step importance ratio that lets samples from π_old estimate an "
            "expectation under π_θ. PPO uses it per step with advantages estimated under "
            "π_old, not the product over the trajectory.",
            "Importance-sampling variance grows as the policies drift apart. For one step of "
            "the chain ESS ≈ n / (1 + δ²): with n = {n}, about {near} at δ = 0.2 and {far} at "
            "δ = 0.8.",
            "Clipping the ratio to [1 − ε, 1 + ε] takes away any gain from moving it further. "
            "The update stays where the reweighted samples can be trusted, a cheap trust "
            "region.",
        ),
        links=(Link(PAGE, {"delta": "0.2", "horizon": "1"}, shows="One step, policies close: "
                    "the ESS stays near n."),
               Link(PAGE, {"delta": "0.8", "horizon": "1"}, shows="One step, policies far "
                    "apart: the ESS falls.")),
        page=PAGE,
        numbers=_ratio_numbers,
    ),
    Question(
        id="importance_sampling.coverage",
        topic="On- vs off-policy",
        difficulty=1,
        question="What must the behaviour policy satisfy for importance sampling to evaluate a "
        "target policy?",
        answer=(
            "Coverage: wherever π(a|s) > 0, b(a|s) > 0. Otherwise the ratio is undefined and "
            "what π would do is never observed.",
            "The reverse is not needed. b may take actions that π never takes: those episodes "
            "get weight 0, count in ordinary IS's n, and add nothing to weighted IS.",
            "A deterministic target wastes most of the data. In blackjack {bj} of random-play "
            "episodes follow the target throughout, and on the chain at δ = 1 and T = 5 only "
            "{share} do (exactly {exact} expected).",
            "On the worked episode where π gives step 2's action probability 0, the whole "
            "ordinary term is 0, while per-decision IS keeps the two earlier rewards "
            "({never_pd}).",
        ),
        links=(Link(PAGE, NEVER, shows="The worked episode: the ordinary term is 0, the "
                    "per-decision term is not."),
               Link(PAGE, {"delta": "1"}, shows="δ = 1: the weight bars show most episodes at "
                    "ρ = 0.")),
        page=PAGE,
        numbers=lambda: {**_coverage_numbers(), **_worked_numbers()},
    ),
)
