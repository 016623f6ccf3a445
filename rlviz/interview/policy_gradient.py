"""Interview questions on policy gradients: the softmax score, baselines, critics.

Every number in an answer is computed by ``rlviz.policy_gradient`` when the answer is shown, at
the view its link opens (the page's defaults unless the link says otherwise).
"""

from __future__ import annotations

import functools

from rlviz.interview import Link, Prediction, Question
from rlviz.interview.whiteboard import policy_gradient as whiteboard

__all__ = ["QUESTIONS"]

PAGE = "policy_gradient"
STUDY = {"p": 0.3, "episodes": 2000, "constant": -20.0, "seed": 0}  # the page's defaults


@functools.cache
def _study(p: float = STUDY["p"]):
    from rlviz import policy_gradient as pg

    return pg.gradient_study(p, episodes=STUDY["episodes"], constant=STUDY["constant"],
                             seed=STUDY["seed"])


def _var(s, name: str) -> str:
    return f"{s.variances[s.index(name)]:,.0f}" if s.variances[s.index(name)] >= 100 else \
        f"{s.variances[s.index(name)]:.2f}"


def _score_numbers() -> dict[str, str]:
    from rlviz import policy_gradient as pg

    w = pg.worked_score(0.5, -0.5, pg.RIGHT, ret=-5.0, baseline=-10.0, alpha=0.01)
    return {"pr": f"{w.pi[0]:.4f}", "pl": f"{w.pi[1]:.4f}", "s0": f"{w.score[0]:.4f}",
            "s1": f"{w.score[1]:.4f}", "new": f"{w.new_pi[0]:.4f}"}


def _baseline_numbers() -> dict[str, str]:
    s = _study()
    mc = ("none", "constant", "learned", "true_v", "optimal")
    return {"p": f"{s.p:g}", "exact": f"{s.exact:.3f}",
            "means": ", ".join(f"{s.means[s.index(k)]:.2f}" for k in mc),
            "widest": f"{max(s.half_widths[s.index(k)] for k in mc):.2f}"}


def _optimal_numbers() -> dict[str, str]:
    s = _study()
    return {"p": f"{s.p:g}", "none": _var(s, "none"), "v": _var(s, "true_v"),
            "opt": _var(s, "optimal"), "best_c": f"{s.best_constant:.1f}",
            "learned": f"{s.learned:.1f}",
            "b_opt": ", ".join(f"{b:.1f}" for b in s.optimal),
            "v_pi": ", ".join(f"{b:.1f}" for b in s.true_values)}


def _critic_numbers() -> dict[str, str]:
    s = _study()
    high = _study(0.9)
    one = high.index("td_one")
    return {"p": f"{s.p:g}", "v": _var(s, "true_v"), "td": _var(s, "td_true"),
            "ratio": f"{s.variances[s.index('true_v')] / s.variances[s.index('td_true')]:.0f}",
            "exact9": f"{high.exact:.2f}", "one9": f"{high.means[one]:.2f}",
            "w9": f"{high.one_value:.2f}"}


def _corridor_numbers() -> dict[str, str]:
    from rlviz import policy_gradient as pg

    star = pg.optimal_probability()
    eps = pg.epsilon_greedy_values(0.1)
    return {"p_star": f"{star:.4f}", "j_star": f"{pg.start_value(star):.2f}",
            "right": f"{eps['right']:.1f}", "left": f"{eps['left']:.1f}"}


def _step_numbers() -> dict[str, str]:
    s = _study()
    none, base = s.variances[s.index("none")], s.variances[s.index("learned")]
    return {"p": f"{s.p:g}", "none": _var(s, "none"), "learned": _var(s, "learned"),
            "ratio": f"{none / base:.1f}"}


QUESTIONS = (
    Question(
        id="policy_gradient.softmax-score",
        topic="Policy gradients",
        difficulty=1,
        question="Derive ∇θ log π(a | s) for a softmax policy over linear action preferences.",
        answer=(
            "Write log π(a) = h(a) − log Σ_b exp h(b), with preferences h(b) = θᵀx(s, b).",
            "Differentiating gives ∇θ log π(a) = x(s, a) − Σ_b π(b) x(s, b): the features of "
            "the action taken minus their average under the policy.",
            "With one-hot features that is onehot(a) − π. At θ = (0.5, −0.5) the policy is "
            "({pr}, {pl}), so after *right* the score is ({s0}, {s1}); with G − b = 5 and "
            "α = 0.01 one step moves π(right) to {new}.",
            "Its expectation under π is zero, Σ_a π(a) ∇log π(a) = ∇ Σ_a π(a) = ∇1 = 0; that "
            "is why a baseline adds no bias.",
        ),
        links=(Link(PAGE, {"wb_a": "0", "wb_g": "-5"},
                    shows="The worked derivation after *right*, and the tangent of ln π(right) "
                          "whose slope is the score."),),
        page=PAGE,
        numbers=_score_numbers,
        whiteboard=whiteboard.softmax_score,
    ),
    Question(
        id="policy_gradient.reinforce-estimate",
        topic="Policy gradients",
        difficulty=1,
        question="Write one episode's REINFORCE estimate of the policy gradient.",
        answer=(
            "ĝ = Σ_t G_t ∇θ log π(A_t | S_t), with G_t the return from step t on, not the whole "
            "episode's return: rewards before t cannot depend on A_t, so dropping them only "
            "removes noise.",
            "Compute the returns-to-go with one reversed cumulative sum, the scores from the "
            "softmax, and sum their products.",
            "REINFORCE steps θ ← θ + α ĝ after each episode; with a baseline, G_t − b(S_t) "
            "replaces G_t.",
            "Each dot of the page's cloud is one such ĝ; their mean is the exact gradient.",
        ),
        links=(Link(PAGE, {}, shows="The 'no baseline' cloud: single-episode estimates "
                                    "around the exact gradient."),),
        page=PAGE,
        whiteboard=whiteboard.reinforce_gradient,
    ),
    Question(
        id="policy_gradient.baseline-unbiased",
        topic="Bias and variance",
        difficulty=2,
        question="Why does subtracting a baseline from the return not bias the policy "
                 "gradient?",
        answer=(
            "E[b(S_t) ∇log π(A_t | S_t)] = Σ_s μ(s) b(s) Σ_a π(a | s) ∇log π(a | s) = "
            "Σ_s μ(s) b(s) ∇ Σ_a π(a | s) = 0, for any b that does not depend on the action.",
            "So the mean of the estimate is unchanged and only its spread moves.",
            "At p = {p} the exact gradient is {exact}; the five Monte-Carlo estimators' means "
            "are {means}, each within its 95% interval (at most ±{widest}).",
            "The baseline may depend on the state, like v_π(s), but not on A_t or later: that "
            "would bring the bias back.",
        ),
        links=(Link(PAGE, {"b": "-100"},
                    shows="A constant baseline of −100: a wider cloud whose mean still sits on "
                          "the exact gradient."),),
        page=PAGE,
        prediction=Prediction(
            prompt="Move the constant baseline from −20 to −100. What happens to the mean of "
                   "its cloud?",
            options=("It moves up", "It moves down", "It stays on the exact gradient"),
            answer=2,
        ),
        numbers=_baseline_numbers,
        whiteboard=whiteboard.reinforce_gradient,
    ),
    Question(
        id="policy_gradient.optimal-baseline",
        topic="Bias and variance",
        difficulty=3,
        question="Which baseline minimises the variance of the REINFORCE estimate? Is it V(s)?",
        answer=(
            "The estimate is linear in the baseline, ĝ = X − Σ_s b(s) Y_s (X: no baseline; "
            "Y_s: the scores summed over visits to s), so its variance is a quadratic in b with "
            "one minimum.",
            "For a constant, b* = Cov(X, Y) / Var(Y); per state, b*(s) = E[X Y_s] / E[Y_s²]: "
            "returns weighted by the squared score, not the plain average return.",
            "At p = {p}: the best constant is {best_c} (the learned average is {learned}), and "
            "b*(s) = ({b_opt}) against v_π = ({v_pi}).",
            "Variances: {none} without a baseline, {v} with v_π, {opt} with b*(s). V is close "
            "to optimal and learnable, which is why it is used.",
        ),
        links=(Link(PAGE, {}, shows="The parabola of the constant baseline's variance and "
                                    "the per-state baselines below it."),),
        page=PAGE,
        prediction=Prediction(
            prompt="Which has the smaller variance here: the baseline v_π(s) or the best "
                   "per-state baseline b*(s)?",
            options=("v_π(s)", "b*(s)", "They are equal"),
            answer=1,
        ),
        numbers=_optimal_numbers,
    ),
    Question(
        id="policy_gradient.critic-trade",
        topic="Bias and variance",
        difficulty=2,
        question="What does an actor-critic trade against REINFORCE with a baseline?",
        answer=(
            "It replaces G_t − b(S_t) by the TD error δ_t = R + v̂(S′) − v̂(S_t), S′ the next "
            "state: one "
            "reward and a bootstrap instead of the whole return.",
            "Variance falls by orders of magnitude: at p = {p}, {v} for the Monte-Carlo "
            "estimate with the true v_π against {td} for δ with the true v_π ({ratio}× less).",
            "It is unbiased only if the critic is right. A critic with one value w for all "
            "states gives every δ = −1 but the last, so its mean is −w(1 − p): at p = 0.9 it is "
            "{one9} (w = {w9}) where the exact gradient is {exact9}.",
            "That critic always says 'more right', so actor-critic with it runs away to p → 1, "
            "where episodes never end.",
        ),
        links=(
            Link(PAGE, {"critic": "one_value"},
                 shows="Actor-critic with a one-value critic: its π(right) climbs past p* "
                       "and its runs run away."),
            Link(PAGE, {"study_p": "0.9"},
                 shows="At p = 0.9 the one-value critic's tight cloud sits on the wrong side "
                       "of zero."),
        ),
        page=PAGE,
        prediction=Prediction(
            prompt="With a critic that has one value for all states, where does actor-critic's "
                   "π(right) go?",
            options=("To p* ≈ 0.59", "Towards 1", "Towards 0"),
            answer=1,
        ),
        numbers=_critic_numbers,
    ),
    Question(
        id="policy_gradient.stochastic-optimal",
        topic="Policy gradients",
        difficulty=1,
        question="Why is the best policy on the short corridor stochastic, and why can't "
                 "ε-greedy action values find it?",
        answer=(
            "The features make all three states look alike, so the policy must act the same "
            "everywhere: always right bounces between S and the reversed state, always left "
            "never leaves S.",
            "J(p) = (2p − 4) / (p(1 − p)) is best at p* = 2 − √2 ≈ {p_star}, where J = {j_star}.",
            "ε-greedy with ε = 0.1 can only be p = 0.95 or p = 0.05: J = {right} and {left}.",
            "A parameterised policy can represent any p and its gradient climbs to p*; "
            "action values over aliased states cannot ask for randomness.",
        ),
        links=(Link(PAGE, {}, shows="J(p) with the optimum and the two ε-greedy policies."),),
        page=PAGE,
        numbers=_corridor_numbers,
    ),
    Question(
        id="policy_gradient.step-size",
        topic="Policy gradients",
        difficulty=2,
        question="Why does REINFORCE need such a small step size here, and what does a "
                 "baseline change?",
        answer=(
            "Each update is α times one episode's estimate, and those are very noisy: variance "
            "{none} at p = {p}, because returns are long sums of −1.",
            "So α must be tiny (2⁻¹³ in the book's figures): 2⁻¹² learns fastest but is "
            "noisiest, 2⁻¹⁴ is still far from v* after 1000 episodes.",
            "A learned baseline cuts the variance to {learned} ({ratio}× less), and a step "
            "16 times larger, 2⁻⁹, is stable: it reaches v* in a few dozen episodes.",
        ),
        links=(Link(PAGE, {"alphas": "-12,-13,-14"},
                    shows="Figure 13.1: REINFORCE at three step sizes, beside the baseline and "
                          "the actor-critic."),),
        page=PAGE,
        prediction=Prediction(
            prompt="After 1000 episodes, which REINFORCE step size is closest to v*?",
            options=("2⁻¹²", "2⁻¹³", "2⁻¹⁴"),
            answer=0,
        ),
        numbers=_step_numbers,
    ),
)
