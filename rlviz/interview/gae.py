"""Interview questions on advantage estimation: TD errors, n-step, GAE(γ, λ), truncation."""

from __future__ import annotations

from rlviz.interview import Link, Prediction, Question
from rlviz.interview.whiteboard import gae as wb

PAGE = "gae"
TOPIC = "Bias and variance"
GRID = tuple(round(0.05 * i, 2) for i in range(21))


def _study(bias: float, noise: float):
    from rlviz import returns

    left, right = returns.SUTTON_BARTO_WALKS[19]
    return returns.bias_variance_study(n_states=19, left_reward=left, right_reward=right,
                                       gamma=0.99, lams=GRID, critic_bias=bias,
                                       critic_noise=noise, n_episodes=5000, seed=0)


def _study_numbers() -> dict[str, str]:
    default, clean, biased = _study(0.1, 0.2), _study(0.0, 0.0), _study(0.3, 0.2)
    return {"best": f"{default.best_lam:g}", "clean": f"{clean.best_lam:g}",
            "biased": f"{biased.best_lam:g}", "bias0": f"{default.bias2[0]:.4f}",
            "bias1": f"{default.bias2[-1]:.4f}", "var0": f"{default.variance[0]:.4f}",
            "var1": f"{default.variance[-1]:.4f}"}


def _example_numbers() -> dict[str, str]:
    from rlviz import returns

    r, v = [1.0, 0.0, 2.0], [0.5, 1.0, 1.5]
    out = {}
    for name, lam in (("l0", 0.0), ("l1", 1.0), ("l5", 0.5)):
        a = returns.gae(r, v, gamma=0.9, lam=lam, last_value=0.0, dones=[False, False, True])
        out[name] = ", ".join(f"{x:.3f}" for x in a)
    return out


QUESTIONS = (
    Question(
        id="gae.definition",
        topic="Policy gradients",
        difficulty=1,
        question="Define GAE(γ, λ) and compute it by hand: rewards [1, 0, 2], values "
                 "[0.5, 1, 1.5], the episode ends after step 3, γ = 0.9.",
        answer=(
            "δ_t = r_t + γ V(s_(t+1)) − V(s_t) (no bootstrap past a termination); "
            "A_t = Σ_l (γλ)^l δ_(t+l), computed backwards: A_t = δ_t + γλ A_(t+1).",
            "λ = 0: A = δ = [{l0}] (one-step TD, low variance, biased by the critic).",
            "λ = 1: A = G_t − V(s_t) = [{l1}] (Monte Carlo, unbiased, high variance).",
            "λ = 0.5 sits between: [{l5}]. The value target is A + V, the λ-return.",
        ),
        links=(Link(PAGE, {"lam": "0"}, shows="λ = 0: the GAE bars copy the TD errors."),
               Link(PAGE, {"lam": "1"}, shows="λ = 1: the GAE bars copy the Monte-Carlo "
                                              "advantages.")),
        page=PAGE,
        numbers=_example_numbers,
        whiteboard=wb.gae,
    ),
    Question(
        id="gae.bias-variance",
        topic=TOPIC,
        difficulty=2,
        question="How does λ trade bias for variance, and which λ is best?",
        answer=(
            "Small λ leans on the critic: each term is a one-step TD error, so a wrong V biases "
            "A, but only one reward's noise enters. Large λ sums many rewards: little bias, "
            "much variance.",
            "On the 19-state walk (critic bias 0.1, noise 0.2, 5000 episodes): squared bias "
            "{bias0} at λ = 0 against {bias1} at λ = 1; variance {var0} against {var1}.",
            "The MSE is smallest at λ = {best} here; with a perfect critic it is λ = {clean} "
            "(nothing to correct), with bias 0.3 it moves up to λ = {biased}.",
            "Practice: λ ≈ 0.9–0.97 with γ = 0.99 is the usual default in PPO.",
        ),
        links=(Link(PAGE, {}, shows="The study: squared bias, variance and MSE against λ, "
                                    "the star at the best λ."),
               Link(PAGE, {"bias": "0.3"}, shows="A worse critic moves the star to larger λ.")),
        page=PAGE,
        prediction=Prediction(
            prompt="Raise the critic's bias from 0.1 to 0.3. The best λ moves",
            options=("towards 0", "towards 1", "stays put"),
            answer=1,
        ),
        numbers=_study_numbers,
    ),
    Question(
        id="gae.n-step-mix",
        topic="TD learning",
        difficulty=2,
        question="Show that GAE is an exponentially weighted average of n-step advantages.",
        answer=(
            "The n-step advantage Â^(n)_t = Σ_(l<n) γ^l r_(t+l) + γ^n V(s_(t+n)) − V(s_t) "
            "telescopes to Σ_(l<n) γ^l δ_(t+l).",
            "Weight them (1 − λ) λ^(n−1) and sum: each δ_(t+l) collects "
            "(1 − λ) Σ_(n>l) λ^(n−1) = λ^l, giving Σ_l (γλ)^l δ_(t+l) = GAE.",
            "The weights sum to one; in a finite episode the tail weight λ^(T−t−1) goes to the "
            "Monte-Carlo advantage.",
            "The same identity links TD(λ)'s forward view (λ-return) and its backward view "
            "(eligibility traces).",
        ),
        links=(Link(PAGE, {}, shows="'GAE is a λ-weighted mix of n-step advantages': the "
                                    "weights and the sum."),),
        page=PAGE,
    ),
    Question(
        id="gae.truncation",
        topic="TD learning",
        difficulty=2,
        question="An episode is cut by a time limit, not a real termination. How should GAE "
                 "treat the last step?",
        answer=(
            "A time limit is not the end of the world: bootstrap from the cut state, "
            "δ = r + γ V(s_cut) − V(s), and stop the sum there.",
            "Treating it as terminal (δ = r − V(s)) teaches the critic that states near the "
            "limit are worth less, a bias that leaks back through γλ into earlier steps.",
            "Gymnasium separates `terminated` from `truncated` for this reason; many bugs come "
            "from merging them into one `done`.",
            "Earlier steps change less: the error is discounted by (γλ)^k.",
        ),
        links=(Link(PAGE, {"as_terminal": "1"},
                    shows="The classic bug switched on: the cut steps' bars change, earlier "
                          "ones less."),),
        page=PAGE,
        prediction=Prediction(
            prompt="Treat the truncation as a termination. Which steps' advantages change "
                   "most?",
            options=("the ones just before the cut", "the first steps", "all equally"),
            answer=0,
        ),
    ),
    Question(
        id="gae.lambda-gamma",
        topic="Bias and variance",
        difficulty=3,
        question="GAE has both γ and λ. Are they the same knob?",
        answer=(
            "Both shrink the weight of far-off TD errors by their product γλ, but they "
            "estimate different things.",
            "γ is part of the objective: with γ < 1 you optimise a discounted return, a bias "
            "against the undiscounted goal even with a perfect critic.",
            "λ only chooses an estimator of the γ-discounted advantage: with a perfect critic "
            "every λ is unbiased for it.",
            "Schulman et al. (2016) found the best λ lower than the best γ (λ ≈ 0.96 against "
            "γ ≈ 0.99 on their tasks).",
        ),
        links=(Link(PAGE, {"gamma": "0.9"}, shows="γ = 0.9 shortens every weight, the "
                                                  "Monte-Carlo one included."),),
        page=PAGE,
    ),
    Question(
        id="gae.baseline-unbiased",
        topic="Policy gradients",
        difficulty=2,
        question="Why does subtracting a state-dependent baseline V(s) not bias the policy "
                 "gradient, yet GAE with λ < 1 is biased?",
        answer=(
            "E_a[∇ log π(a|s) b(s)] = b(s) ∇ Σ_a π(a|s) = 0: any baseline that depends on the "
            "state only leaves the expectation unchanged.",
            "With λ = 1, A = G_t − V(s_t): the critic enters only as that baseline, so the "
            "estimate is unbiased whatever V is.",
            "With λ < 1 the critic also replaces future rewards (bootstrapping through "
            "γV(s_(t+1))): its errors now enter the advantage itself.",
            "That is the study's bias curve: zero at λ = 1 up to sampling, largest at λ = 0.",
        ),
        links=(Link(PAGE, {"noise": "0"}, shows="A critic with bias only: the squared bias "
                                                "falls to zero as λ → 1."),),
        page=PAGE,
    ),
    Question(
        id="gae.value-target",
        topic="Policy gradients",
        difficulty=1,
        question="In PPO with GAE, what target does the value head regress on?",
        answer=(
            "The λ-return R_t^λ = A_t^GAE + V(s_t): the same estimator viewed as a return.",
            "λ = 1 gives the Monte-Carlo return, λ = 0 the one-step TD target "
            "r_t + γ V(s_(t+1)).",
            "The targets are computed once per batch with the old V and held fixed during the "
            "epochs (no gradient through them).",
        ),
        links=(Link(PAGE, {"lam": "0.9"}, shows="The trajectory's advantages; the returns "
                                                 "add V back."),),
        page=PAGE,
    ),
)
