"""Interview questions on the deadly triad: off-policy, bootstrapping, approximation."""

from __future__ import annotations

from rlviz.interview import Link, Prediction, Question
from rlviz.interview.whiteboard import deadly_triad as wb

PAGE = "deadly_triad"


def _baird_numbers() -> dict[str, str]:
    from rlviz import approximation as ap

    book = ap.baird()
    tabular = ap.baird(tabular=True)
    crit = ap.critical_gamma(book)
    return {
        "growth": f"{ap.growth_per_sweep(book, alpha=0.01):.6f}",
        "growth_half": f"{ap.growth_per_sweep(book, alpha=0.005):.6f}",
        "growth_tabular": f"{ap.growth_per_sweep(tabular, alpha=0.01):.6f}",
        "growth_mc": f"{ap.growth_per_sweep(book, alpha=0.01, n=None):.6f}",
        "gamma_star": f"{crit:.6f}",
        "n_star": str(ap.switchboard(steps=1, n=1).first_stable_n),
        "drift": f"{ap.drift(book):.4f}",
    }


def _two_state_numbers() -> dict[str, str]:
    from rlviz import approximation as ap

    return {
        "factor": f"{ap.two_state_growth(0.99, 0.01):.4f}",
        "factor_on": f"{ap.two_state_growth(0.99, 0.01, on_policy=True):.4f}",
        "after": f"{ap.two_state_growth(0.99, 0.01) ** 1000:.3g}",
        "factor_low": f"{ap.two_state_growth(0.4, 0.01):.4f}",
    }


def _gradient_numbers() -> dict[str, str]:
    import numpy as np

    from rlviz import approximation as ap

    exp = ap.gradient_experiment(runs=1)
    pb = exp.problem
    f = np.linalg.solve(np.eye(7) - pb.gamma * pb.target_matrix.T, pb.behaviour_distribution)
    etd = exp.etd_expected
    return {
        "tdc_pbe": f"{exp.tdc_expected.pbe[-1, 0]:.4f}",
        "tdc_ve": f"{exp.tdc_expected.value_error[-1, 0]:.2f}",
        "etd_ve": f"{etd.value_error[-1, 0]:.1e}",
        "etd_peak": f"{etd.value_error.max():.1f}",
        "f_lower": f"{f[-1]:.2f}",
        "f_upper": f"{f[0]:.4f}",
    }


def _on_policy_numbers() -> dict[str, str]:
    from rlviz import approximation as ap

    pb = ap.baird(target_solid=0.7)
    return {
        "off": f"{ap.growth_per_sweep(pb, alpha=0.01):.6f}",
        "on": f"{ap.growth_per_sweep(pb, alpha=0.01, on_policy=True):.6f}",
    }


QUESTIONS = (
    Question(
        id="deadly_triad.what",
        topic="Function approximation",
        difficulty=1,
        question="What is the deadly triad? Which of its parts do you have to remove to be safe?",
        answer=(
            "**Function approximation** (one weight vector generalises across states), "
            "**bootstrapping** (targets built from the current estimates: TD, DP) and "
            "**off-policy training** (updates distributed unlike the target policy's own "
            "experience).",
            "All three together can make the weights grow without bound. On Baird's "
            "counterexample the expected semi-gradient update (DP, no noise at all) multiplies the "
            "error by ×{growth} every sweep at γ = 0.99, α = 0.01.",
            "Remove any one and the expected update is stable: tabular off-policy TD (here "
            "×{growth_tabular} per sweep), Monte Carlo targets (×{growth_mc}), or the on-policy "
            "distribution (linear TD converges: Tsitsiklis & Van Roy, 1997).",
            "It is not the sampling noise and not the step size: the instability lives in the "
            "expected update's matrix.",
        ),
        links=(
            Link(PAGE, {}, shows="The switchboard: only the all-three cell is red."),
            Link(PAGE, {"approx": "0"}, shows="Tabular features: the same off-policy, "
                 "bootstrapped update converges."),
        ),
        page=PAGE,
        prediction=Prediction(
            prompt="In the switchboard, which switch turned off stops the divergence?",
            options=("Only off-policy sampling", "Only bootstrapping",
                     "Only function approximation", "Any one of the three"),
            answer=3,
        ),
        numbers=_baird_numbers,
        whiteboard=wb.expected_td_diverges,
    ),
    Question(
        id="deadly_triad.two_state",
        topic="Function approximation",
        difficulty=2,
        question="Give the smallest example of off-policy TD diverging with a linear value "
                 "function, and its growth rate.",
        answer=(
            "Two states share one weight: features 1 and 2, so values w and 2w; the transition "
            "between them has reward 0. Off-policy, only this transition is ever updated (the "
            "behaviour's actions elsewhere have ρ = 0).",
            "TD error δ = 0 + γ·2w − w, gradient 1: w ← w + α(2γ − 1)w = (1 + α(2γ − 1))w.",
            "So w grows geometrically whenever γ > 1/2, for every α > 0: ×{factor} per update "
            "at γ = 0.99, α = 0.01, ×{after} after 1000 updates; at γ = 0.4 it shrinks "
            "(×{factor_low}).",
            "Raising w to fix the first state raises the second state's value twice as much, "
            "and nothing ever pulls that one back. On-policy the second state's own update "
            "(target 0) does: ×{factor_on} per episode.",
        ),
        links=(
            Link(PAGE, {}, shows="w → 2w: on the log axis the off-policy line is straight "
                 "and rising, as the closed form's circles."),
            Link(PAGE, {"gamma": "0.4"}, shows="γ < 1/2: the same update now shrinks w."),
        ),
        page=PAGE,
        prediction=Prediction(
            prompt="At γ = 0.4 and α = 0.01, does the off-policy w grow?",
            options=("Yes, more slowly", "No, it shrinks toward 0"),
            answer=1,
        ),
        numbers=_two_state_numbers,
        whiteboard=wb.off_policy_td,
    ),
    Question(
        id="deadly_triad.step_size",
        topic="Function approximation",
        difficulty=2,
        question="Your off-policy TD learner with linear features diverges. Will a smaller step "
                 "size fix it?",
        answer=(
            "Not here. In expectation the values move by v̂ ← (I − αM)v̂ + c with "
            "M = XXᵀD(I − γP_π). If M has an eigenvalue λ with a negative real part (on Baird's "
            "problem λ = −{drift}), then |1 − αλ| > 1 for every α > 0.",
            "A smaller α only slows the blow-up: ×{growth} per sweep at α = 0.01, ×{growth_half} "
            "at α = 0.005 (the log-growth halves).",
            "A step size can also be too large for a stable direction (overshoot, |1 − αλ| > 1): "
            "that is a different failure, which a smaller α does fix.",
            "The fixes change the update, not its size: remove a leg of the triad, or use "
            "gradient-TD (TDC) or emphatic weighting.",
        ),
        links=(
            Link(PAGE, {"alpha": "0.005"}, shows="Half the step size: the growth factor under "
                 "the diagram is still above 1."),
        ),
        page=PAGE,
        prediction=Prediction(
            prompt="Halve α from 0.01 to 0.005. What happens to semi-gradient DP on Baird's "
                   "problem?",
            options=("It converges", "It still diverges, more slowly",
                     "It diverges faster"),
            answer=1,
        ),
        numbers=_baird_numbers,
        whiteboard=wb.expected_td_diverges,
    ),
    Question(
        id="deadly_triad.dqn",
        topic="Function approximation",
        difficulty=3,
        question="Why does DQN need a target network and a replay buffer, and can it still "
                 "diverge?",
        answer=(
            "DQN has the whole triad: a neural network, bootstrapped targets r + γ max Q, and "
            "off-policy data (Q-learning's greedy target, and a replay buffer of older "
            "policies' experience).",
            "The target network holds the bootstrap target fixed for many steps, so each phase "
            "is a regression toward fixed numbers (like fitted Q iteration) instead of chasing "
            "its own moving output; replay decorrelates updates and spreads them over many "
            "states.",
            "Neither removes a leg of the triad, so divergence stays possible: on Baird's "
            "problem even the noise-free expected update diverges.",
            "Less bootstrapping helps: on Baird's problem the n-step update is one-step with "
            "discount γⁿ, stable once γⁿ < γ* = {gamma_star}, from n = {n_star} at γ = 0.99.",
        ),
        links=(
            Link(PAGE, {"n": "13"}, shows="n = 13: the off-policy, approximated cell turns "
                 "blue."),
            Link(PAGE, {"n": "12"}, shows="n = 12: still red, barely."),
        ),
        page=PAGE,
        numbers=_baird_numbers,
    ),
    Question(
        id="deadly_triad.pbe",
        topic="Function approximation",
        difficulty=3,
        question="What do gradient-TD methods such as TDC minimise, and does a small value of "
                 "that objective mean accurate values?",
        answer=(
            "The projected Bellman error PBE(w) = ‖Π δ̄_w‖²_D: the expected TD error "
            "δ̄_w = r + γPXw − Xw projected onto the representable values, Π = X(XᵀDX)⁺XᵀD. "
            "It is zero exactly at the TD fixed point.",
            "TDC is true stochastic gradient descent on it: a second weight vector v tracks "
            "E[xxᵀ]⁻¹E[δx] (step β), and w follows δx − γx'(xᵀv), so it converges off-policy.",
            "Small PBE is not small error: after 1000 expected sweeps on Baird's problem "
            "√PBE = {tdc_pbe} while √VE = {tdc_ve}. With γ = 0.99 a tiny Bellman error allows "
            "a value error up to 1/(1 − γ) times larger.",
            "Baird's features span every value function, so here Π = I and PBE is the Bellman "
            "error itself.",
        ),
        links=(
            Link(PAGE, {}, shows="Expected TDC: the dotted √PBE falls toward 0 while the "
                 "solid √VE levels off."),
        ),
        page=PAGE,
        prediction=Prediction(
            prompt="After 1000 sweeps of expected TDC on Baird's problem, which is closer to 0?",
            options=("√VE, the value error", "√PBE, the projected Bellman error"),
            answer=1,
        ),
        numbers=_gradient_numbers,
        whiteboard=wb.tdc,
    ),
    Question(
        id="deadly_triad.emphatic",
        topic="Function approximation",
        difficulty=3,
        question="How does emphatic TD make off-policy TD stable, and what does it cost?",
        answer=(
            "It reweights each update by a followon trace M_t = γρ_{{t−1}}M_{{t−1}} + I_t, so "
            "states are emphasised as if visited by π: the expected update's matrix becomes "
            "positive (semi)definite and the expected update converges for small α.",
            "In expectation the weighting is f = (I − γP_πᵀ)⁻¹(d ∘ i): on Baird's problem the "
            "lower state gets {f_lower}, each upper state {f_upper}.",
            "Expected ETD on Baird's problem first swings (√VE up to {etd_peak}) while the "
            "emphasis builds up, then settles: √VE = {etd_ve} after 1000 sweeps.",
            "The cost is variance: M is a product of importance ratios (7 or 0 per step here), so "
            "the sampled algorithm is far too noisy to use on this problem.",
        ),
        links=(
            Link(PAGE, {}, shows="Expected emphatic TD: weights swing, then settle; √VE "
                 "falls to rounding error."),
            Link(PAGE, {"etd_alpha": "0.01"}, shows="A smaller α: a smaller swing, slower to "
                 "settle."),
        ),
        page=PAGE,
        numbers=_gradient_numbers,
    ),
    Question(
        id="deadly_triad.monte_carlo",
        topic="Function approximation",
        difficulty=2,
        question="Off-policy Monte Carlo prediction with linear features: can it diverge?",
        answer=(
            "Not in expectation: the Monte Carlo target does not depend on w, so the update is "
            "gradient descent on the value error, v̂ ← v̂ − αXXᵀD(v̂ − v_π), and XXᵀD has no "
            "eigenvalue with a negative real part.",
            "On Baird's problem off-policy Monte Carlo converges: ×{growth_mc} per sweep against "
            "TD's ×{growth}.",
            "The price is variance: the importance weight of a whole return is a product of "
            "per-step ratios (7 or 0 here), which is why n-step methods sit in between.",
        ),
        links=(
            Link(PAGE, {"n": "mc"}, shows="n = ∞: the off-policy, approximated cell is blue."),
        ),
        page=PAGE,
        numbers=_baird_numbers,
    ),
    Question(
        id="deadly_triad.on_policy",
        topic="On- vs off-policy",
        difficulty=2,
        question="Does on-policy TD(0) with linear features converge, and what makes off-policy "
                 "different?",
        answer=(
            "Yes: with the on-policy state distribution the expected update's matrix is "
            "positive (semi)definite, and TD converges to the TD fixed point, whose value error "
            "is at most 1/(1 − γ) times the best representable (Tsitsiklis & Van Roy, 1997; "
            "Sutton & Barto eq. 9.14).",
            "The proof uses that the distribution d is stationary under P_π: ‖P_π v‖_d ≤ ‖v‖_d. "
            "Under another distribution that inequality fails, and so can convergence.",
            "On Baird's problem with π(solid) = 0.7 the expected update grows ×{off} per sweep "
            "in b's distribution and shrinks ×{on} in π's own.",
        ),
        links=(
            Link(PAGE, {"pi": "0.7"}, shows="π(solid) = 0.7: off-policy still diverges."),
            Link(PAGE, {"pi": "0.7", "off_policy": "0"}, shows="The same π in its own "
                 "distribution: the cell is blue."),
        ),
        page=PAGE,
        numbers=_on_policy_numbers,
    ),
)
