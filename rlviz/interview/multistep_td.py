"""Interview questions on n-step TD, TD(λ), and Monte Carlo against TD."""

from __future__ import annotations

import functools

from rlviz.interview import Link, Prediction, Question
from rlviz.interview.whiteboard.multistep_td import n_step_td, td_lambda, true_online_td_lambda

PAGE = "multistep_td"
TD_LAMBDA = {"method": "td_lambda", "lam": "0.9"}
TRUE_ONLINE = {"method": "true_online", "lam": "0.9"}


@functools.cache
def _runs():
    from rlviz import prediction as pr

    return pr.sample_runs(19, runs=100, episodes=10, seed=0)


@functools.cache
def _sweep(method: str):
    from rlviz import prediction as pr

    params = pr.NS if method == "n_step" else pr.LAMBDAS
    return pr.run_sweep(method, _runs(), params=params, alphas=pr.ALPHAS).summary()


def _example_numbers() -> dict[str, str]:
    from rlviz import prediction as pr

    ex = pr.td_vs_mc(runs=100, seed=0)
    td = dict(zip(ex.td_alphas, ex.td_error[:, -1], strict=True))
    return {"td": f"{ex.td_error[:, -1].min():.3f}", "mc": f"{ex.mc_error[:, -1].min():.3f}",
            "td05": f"{td[0.05]:.3f}", "td15": f"{td[0.15]:.3f}",
            "td15_10": f"{ex.td_error[2, 10]:.3f}", "td05_10": f"{ex.td_error[0, 10]:.3f}"}


def _n_numbers() -> dict[str, str]:
    s = _sweep("n_step")
    p, a = s.best
    best = s.best_alpha
    low = {int(n): float(s.curve[i, best[i]]) for i, n in enumerate(s.params)}
    alphas = ", ".join(f"{int(n)} → {s.alphas[best[i]]:g}" for i, n in enumerate(s.params))
    return {"n": str(int(s.params[p])), "a": f"{s.alphas[a]:g}", "err": f"{s.best_error:.3f}",
            "n1": f"{low[1]:.3f}", "n512": f"{low[512]:.3f}", "alphas": alphas}


def _view_numbers() -> dict[str, str]:
    from rlviz import prediction as pr

    ident = pr.identities(_runs(), lam=0.8, alpha=0.4)
    return {"gap": f"{ident.forward_backward:.0e}", "mc_gap": f"{ident.monte_carlo:.0e}",
            "to_gap": f"{ident.true_online:.0e}", "steps": str(ident.true_online_steps)}


def _lambda_numbers() -> dict[str, str]:
    import numpy as np

    from rlviz import prediction as pr

    td, to = _sweep("td_lambda"), _sweep("true_online")
    olr = _sweep("offline_lambda_return")
    i = pr.LAMBDAS.index(0.9)
    gone = np.flatnonzero(~np.isfinite(td.curve[i]))
    return {"a_div": f"{td.alphas[gone[0]]:g}" if gone.size else "never",
            "to_err": f"{to.curve[i, -1]:.3f}", "olr_err": f"{olr.curve[i, -1]:.3f}",
            "to_best": f"{to.best_error:.3f}", "olr_best": f"{olr.best_error:.3f}",
            "td_best": f"{td.best_error:.3f}", "diverged": str(int((td.diverged > 0).sum())),
            "settings": str(td.curve.size)}


QUESTIONS = (
    Question(
        id="multistep_td.td-vs-mc",
        topic="Bias and variance",
        difficulty=2,
        question="On a small random walk, TD(0) learns faster than constant-α Monte Carlo. Why, "
        "when TD's target is biased?",
        answer=(
            "TD(0)'s target R + γV(S′) leans on the current estimate, so it is biased while V "
            "is wrong. But it holds one step of randomness. The Monte-Carlo return G is "
            "unbiased and adds up the randomness of the whole rest of the episode.",
            "Bootstrapping also reuses what the walk has already learnt about the next state, "
            "so each episode informs every state it passes, not only through the final reward.",
            "On Example 6.2 (100 runs, the same episodes for every α) the best TD(0) ends at an "
            "RMS error of {td} after 100 episodes, the best MC at {mc}.",
            "The step size trades speed for noise: TD(0) with α = 0.15 is at {td15_10} after 10 "
            "episodes (α = 0.05: {td05_10}) but levels off at {td15}, above α = 0.05's {td05}.",
        ),
        links=(Link(PAGE, {}, shows="Example 6.2 at the top: the TD(0) curves end below the "
                    "Monte-Carlo ones."),),
        page=PAGE,
        prediction=Prediction("After 100 episodes on the 5-state walk, which has the lower RMS "
                              "error at its best step size?", ("TD(0)", "constant-α MC",
                                                               "about the same"), 0),
        numbers=_example_numbers,
    ),
    Question(
        id="multistep_td.best-n",
        topic="TD learning",
        difficulty=2,
        question="What does n buy in n-step TD, and why is neither n = 1 nor a very large n "
        "best on the 19-state walk?",
        answer=(
            "The n-step return adds n rewards and then bootstraps: G = R₁ + γR₂ + … + γⁿ⁻¹Rₙ + "
            "γⁿV(Sₙ). n = 1 is TD(0); n past the episode's end is Monte Carlo.",
            "Small n: the target leans on estimates that start at 0, and the one reward at an "
            "end travels back only about one state per update. That is bias and slow spread.",
            "Large n: the target sums many random steps, so it is noisy (variance), and a "
            "noisy target needs a small α.",
            "On Figure 7.2's protocol the best is n = {n} at α = {a}, with an error of {err}. "
            "n = 1 at its best α reaches {n1}, n = 512 only {n512}.",
        ),
        links=(Link(PAGE, {}, shows="The sweep: the middle curves dip lowest; the star marks "
                    "the best n and α."),),
        page=PAGE,
        prediction=Prediction("Which n has the lowest error in Figure 7.2 (first 10 episodes, "
                              "best α for each)?", ("n = 1", "n = 4", "n = 512"), 1),
        numbers=_n_numbers,
    ),
    Question(
        id="multistep_td.alpha-vs-n",
        topic="Bias and variance",
        difficulty=2,
        question="Why does the best step size fall as n grows, and what does that mean for "
        "comparing methods?",
        answer=(
            "The variance of the n-step return grows with n. A large α follows each noisy "
            "target too closely, so the error rises; a smaller α averages over more of them.",
            "The best α for each n on the page's sweep: {alphas}.",
            "So methods are compared each at its own best α, over a whole α sweep, as the "
            "book's figures do. One fixed α favours whichever method it happens to suit.",
        ),
        links=(Link(PAGE, {}, shows="The heatmap: the white dot of each row (the best α) "
                    "moves left as n grows."),),
        page=PAGE,
        numbers=_n_numbers,
    ),
    Question(
        id="multistep_td.forward-backward",
        topic="TD learning",
        difficulty=3,
        question="What are the forward and backward views of TD(λ), and when do they make "
        "exactly the same updates?",
        answer=(
            "Forward view: each state moves toward its λ-return, G^λ = (1 − λ) Σ λⁿ⁻¹ G(t:t+n), "
            "a mix of all n-step returns. It needs the future, so it waits for the episode's "
            "end.",
            "Backward view: an eligibility trace z ← γλz + x(S(t)) remembers the recent states. "
            "Each TD error δ(t) is handed back to them at once: V ← V + αδ(t)z.",
            "With the values held fixed for the episode, the two sums agree exactly, because "
            "G^λ(t) − V(S(t)) = Σ_k (γλ)^(k−t) δ(k). On the page, offline TD(λ) and the summed "
            "λ-return updates differ by {gap} of the values in play, which is rounding.",
            "Online the values change in between, and accumulating TD(λ) only approximates "
            "the λ-return. True online TD(λ) restores an exact match, to the online "
            "λ-return.",
        ),
        links=(Link(PAGE, {}, shows="Forward view = backward view: the bars and the diamonds "
                    "coincide state by state."),),
        page=PAGE,
        prediction=Prediction("With every update held to the episode's end, how far apart "
                              "are TD(λ) and the λ-return updates?",
                              ("about 1%", "only rounding error", "they differ by a constant"),
                              1),
        numbers=_view_numbers,
        whiteboard=td_lambda,
    ),
    Question(
        id="multistep_td.td-lambda-unstable",
        topic="TD learning",
        difficulty=3,
        question="TD(λ) with accumulating traces can blow up at a large α and λ on the random "
        "walk. Why, and what fixes it?",
        answer=(
            "A state visited many times in one episode builds a trace well above 1. Each "
            "update αδz then moves it by α times that trace: past 2 it overshoots, and the "
            "overshoot grows.",
            "On the page, {diverged} of the {settings} (λ, α) settings of TD(λ) diverge in "
            "some run; at λ = 0.9 the curve is gone from α = {a_div}.",
            "The book's offline λ-return moves each visit from the value it has then, so with "
            "α ≤ 1 it cannot overshoot. At λ = 0.9 and α = 1 its error is {olr_err}.",
            "True online TD(λ)'s dutch trace and correction term keep it exactly on the online "
            "λ-return: at λ = 0.9 and α = 1 it is at {to_err}, and no setting diverges.",
        ),
        links=(Link(PAGE, TD_LAMBDA, shows="Crosses at the top mark where the curves of large λ "
                    "diverge."),
               Link(PAGE, TRUE_ONLINE, shows="The same sweep with true online TD(λ): every "
                    "curve stays on the chart.")),
        page=PAGE,
        prediction=Prediction("At λ = 0.9 and α = 1, which one diverges?",
                              ("TD(λ) with accumulating traces", "true online TD(λ)", "both"),
                              0),
        numbers=_lambda_numbers,
        whiteboard=true_online_td_lambda,
    ),
    Question(
        id="multistep_td.lambda-extremes",
        topic="TD learning",
        difficulty=1,
        question="What are TD(λ) at λ = 0 and at λ = 1?",
        answer=(
            "λ = 0: the trace is 1 on the current state only, so TD(λ) is TD(0). The page's "
            "λ = 0 curve is the n = 1 curve of the n-step sweep.",
            "λ = 1 (γ = 1): the λ-return is the full return G_t. With offline updates TD(1) is "
            "every-visit constant-α Monte Carlo; on the page the two differ by {mc_gap} of the "
            "values in play.",
            "Online, TD(1) is close to Monte Carlo but not equal: the values move during the "
            "episode.",
        ),
        links=(Link(PAGE, {"method": "td_lambda", "lam": "0.0"}, shows="λ = 0 up close: the "
                    "same errors as one-step TD."),
               Link(PAGE, {"method": "td_lambda", "lam": "1.0", "alpha": "0.025"},
                    shows="λ = 1 up close, at a small α.")),
        page=PAGE,
        numbers=_view_numbers,
    ),
    Question(
        id="multistep_td.n-step-return",
        topic="TD learning",
        difficulty=1,
        question="Write the n-step TD update. When can it be made, and what happens near the "
        "end of an episode?",
        answer=(
            "G(t:t+n) = R(t+1) + γR(t+2) + … + γⁿ⁻¹R(t+n) + γⁿV(S(t+n)), then "
            "V(S(t)) ← V(S(t)) + α[G(t:t+n) − V(S(t))].",
            "The update of S(t) waits n − 1 steps until R(t+n) and S(t+n) are seen. The first "
            "n − 1 steps of an episode make no update.",
            "If the episode ends first (t + n ≥ T), the return stops at R(T) and bootstraps from "
            "nothing: it is the Monte-Carlo return. The n − 1 updates still pending are made "
            "at the end.",
            "So n-step TD with n larger than every episode is constant-α Monte Carlo.",
        ),
        links=(Link(PAGE, {}, shows="The backup: n rewards (thick), then the bootstrap "
                    "square."),
               Link(PAGE, {"n": "512"}, shows="n = 512: the return reaches the terminal, no "
                    "bootstrap.")),
        page=PAGE,
        whiteboard=n_step_td,
    ),
    Question(
        id="multistep_td.true-online",
        topic="TD learning",
        difficulty=3,
        question="What is the online λ-return algorithm, and how does true online TD(λ) "
        "relate to it?",
        answer=(
            "At each step h of an episode, the online λ-return algorithm redoes every update "
            "since the episode's start, with λ-returns truncated at h. Those use only the "
            "data seen so far, so it is online, but it costs O(T²) per episode.",
            "True online TD(λ) makes the same values at each step at TD(λ)'s cost: dutch "
            "traces z ← γλz + (1 − αγλ zᵀx)x and a correction α(V − V_old)(z − x) (van Seijen "
            "et al. 2016).",
            "On the page the two agree after each of {steps} steps to {to_gap} of the values "
            "in play.",
            "On Figure 12.8's protocol true online TD(λ) reaches {to_best} at its best, against "
            "{olr_best} for the offline λ-return and {td_best} for accumulating TD(λ).",
        ),
        links=(Link(PAGE, TRUE_ONLINE, shows="True online TD(λ)'s sweep, and the three λ "
                    "methods compared at λ = 0.9."),),
        page=PAGE,
        numbers=lambda: {**_view_numbers(), **_lambda_numbers()},
        whiteboard=true_online_td_lambda,
    ),
)
