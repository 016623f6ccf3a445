"""Interview questions on preference learning, each answered by a view of the ``rlhf`` page.

Reward models, the KL-regularised optimum, DPO, best-of-n, KL estimators and over-optimisation.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from rlviz.interview import Link, Prediction, Question
from rlviz.interview.whiteboard import rlhf as wb

__all__ = ["QUESTIONS"]

PAGE = "rlhf"
TOPIC = "RLHF and LLMs"


@functools.cache
def _views():
    """The page's default view and the few variants the answers quote (computed once)."""
    from rlviz import preferences as pref

    data = pref.preference_data()
    return pref, data, pref.alignment(data), pref.alignment(data, policy="table")


def _closed_form_numbers() -> dict[str, str]:
    pref, data, _, _ = _views()
    s = data.space
    p_small = math.exp(float(pref.kl_optimal_policy(s.log_ref, data.proxy, 0.01).max()))
    return {"mass": f"{p_small:.1%}", "longest": f"{s.x[int(data.proxy.argmax())]:.2f}"}


def _dpo_numbers() -> dict[str, str]:
    pref, _, _, _ = _views()
    return {"loss": f"{float(pref.dpo_loss(0.5, -0.5, 0.0, 0.0, beta=0.1)):.4f}",
            "log2": f"{math.log(2):.4f}"}


def _overoptimisation_numbers() -> dict[str, str]:
    _, data, _, _ = _views()
    f = data.frontier
    i, last = f.peak, 0  # the sweep runs from β = 0.01 (index 0) up to β = 10
    return {"beta_peak": f"{f.betas[i]:.2g}", "gold_peak": f"{f.sweep.gold[i]:+.2f}",
            "d_peak": f"{f.sweep.sqrt_kl[i]:.2f}", "gold_small": f"{f.sweep.gold[last]:+.2f}",
            "proxy_small": f"{f.sweep.proxy[last]:+.2f}",
            "d_small": f"{f.sweep.sqrt_kl[last]:.2f}"}


def _best_of_n_numbers() -> dict[str, str]:
    pref, data, _, _ = _views()
    bon = pref.best_of_n_stats(data.space, data.proxy, 1024)
    return {"kl": f"{bon.kl:.3f}", "bound": f"{bon.kl_bound:.3f}",
            "win": f"{bon.win_rate:.5f}", "win_bound": f"{bon.win_bound:.5f}"}


def _kl_numbers() -> dict[str, str]:
    pref, data, run, _ = _views()
    logp, ref = run.logp["closed_form"], data.space.log_ref
    p = np.exp(logp)
    out = {"kl": f"{float(pref.scores(logp, data.space, data.proxy).kl):.3f}"}
    for est in ("k1", "k3"):
        k = pref.sampled_kl(logp, ref, estimator=est)
        out[f"sd_{est}"] = f"{math.sqrt(p @ (k - p @ k) ** 2):.2f}"
    return out


def _dpo_vs_rlhf_numbers() -> dict[str, str]:
    pref, data, run, table = _views()
    star = np.exp(run.logp["closed_form"])

    def tv(logp: np.ndarray) -> str:
        return f"{0.5 * np.abs(np.exp(logp) - star).sum():.3f}"

    return {"tv_features": f"{float(pref.verify(data, run).tv_dpo):.1e}",
            "tv_table": tv(table.logp["dpo"]), "tv_pg_table": tv(table.logp["policy_gradient"]),
            "unseen": str(int((data.counts == 0).sum())), "k": str(data.space.n)}


def _coverage_numbers() -> dict[str, str]:
    pref, data, run, _ = _views()
    s = data.space
    star = np.exp(run.logp["closed_form"])
    return {"acc_ref": f"{pref.pair_accuracy(data.proxy, s.gold, s.p_ref):.0%}",
            "acc_star": f"{pref.pair_accuracy(data.proxy, s.gold, star):.0%}"}


QUESTIONS = (
    Question(
        id="rlhf.closed-form",
        topic=TOPIC,
        difficulty=2,
        question="Which policy maximises E_π[r] − β·KL(π‖π_ref)? What happens as β → 0 and as "
        "β → ∞?",
        answer=(
            "π*(y) = π_ref(y)·exp(r(y)/β) / Z with Z = Σ_y π_ref(y)·exp(r(y)/β): the reference, "
            "tilted towards high reward.",
            "Why: E_π[r] − β·KL(π‖π_ref) = β·log Z − β·KL(π‖π*), and a KL is zero only at "
            "π = π*. The optimum's value is β·log Z.",
            "β → ∞ gives back π_ref; β → 0 puts all the mass on the reward's argmax. On the "
            "page at β = 0.01, π* puts {mass} on the single response the reward model likes "
            "best (length {longest}).",
            "A constant added to r cancels in Z, so only reward differences matter.",
        ),
        links=(Link(PAGE, {"beta": "0.01"}, shows="The policies chart: π* has left π_ref "
                    "behind and sits on the longest answer."),
               Link(PAGE, {"beta": "5"}, shows="At β = 5, π* is nearly π_ref.")),
        page=PAGE,
        prediction=Prediction("As β → 0, π* tends to…", (
            "π_ref", "the uniform policy", "a point mass on the reward's argmax"), answer=2),
        numbers=_closed_form_numbers,
        whiteboard=wb.optimal_policy,
    ),
    Question(
        id="rlhf.dpo-derivation",
        topic=TOPIC,
        difficulty=3,
        question="Derive the DPO loss. Where did the reward model and the partition function "
        "go?",
        answer=(
            "Invert the closed-form optimum: r(y) = β·log π*(y)/π_ref(y) + β·log Z — every "
            "policy defines an implicit reward.",
            "Put it into Bradley–Terry, P(y_w ≻ y_l) = σ(r(y_w) − r(y_l)): Z is the same for "
            "both responses to one prompt and cancels.",
            "Maximum likelihood over the policy: L = −E log σ(β·log π(y_w)/π_ref(y_w) − "
            "β·log π(y_l)/π_ref(y_l)). No reward model, no sampling, no RL loop.",
            "Its gradient is −β·E[σ(−z)(∇log π(y_w) − ∇log π(y_l))]: each pair pushes the "
            "winner up and the loser down, weighted by how wrong the implicit reward still is.",
            "Check: dpo_loss(0.5, −0.5, 0, 0, β = 0.1) = −log σ(0.1) = {loss}, below "
            "log 2 = {log2}, the loss at π = π_ref.",
        ),
        links=(Link(PAGE, {}, shows="“One loss by hand”: the DPO loss of one pair, step by "
                    "step; and the known-answer row on the same numbers."),),
        page=PAGE,
        numbers=_dpo_numbers,
        whiteboard=wb.dpo_loss,
    ),
    Question(
        id="rlhf.overoptimisation",
        topic=TOPIC,
        difficulty=2,
        question="What is reward over-optimisation, and how would you see it coming in a run?",
        answer=(
            "The policy is optimised against a learned proxy; past some KL from π_ref the proxy "
            "keeps rising while the true reward falls (Goodhart's law).",
            "On the page: along the β sweep the gold reward peaks at β ≈ {beta_peak} "
            "(√KL = {d_peak}, gold {gold_peak}); at β = 0.01 (√KL = {d_small}) the proxy "
            "promises {proxy_small} while gold is {gold_small}.",
            "The cause: the reward model was fitted on pairs from π_ref and extrapolates "
            "outside them (here a linear model learns “longer is better”); the optimised policy "
            "goes exactly where the model is wrong.",
            "Gao, Schulman & Hilton (2022) fit gold against d = √KL: d(α − β·log d) for RL and "
            "d(α − β·d) for best-of-n. Watch KL and a held-out gold signal, not the proxy.",
            "Remedies: a larger KL penalty or early stopping, more and broader preference data, "
            "a better reward model, fresh labels on the policy's own samples.",
        ),
        links=(Link(PAGE, {"beta": "0.01"}, shows="The over-optimisation chart: dashed proxy "
                    "up, solid gold down; the marker sits far right."),
               Link(PAGE, {"degree": "2"}, shows="A quadratic reward model sees the peak: the "
                    "gold curve barely turns.")),
        page=PAGE,
        prediction=Prediction("As β falls from 5 to 0.01, the gold reward of π*…", (
            "rises all the way", "rises, peaks, then falls", "stays flat"), answer=1),
        numbers=_overoptimisation_numbers,
    ),
    Question(
        id="rlhf.best-of-n",
        topic=TOPIC,
        difficulty=2,
        question="Best-of-n sampling: what is its KL from the reference policy, and its win "
        "rate against a reference sample?",
        answer=(
            "Exact distribution: P_n(y) = π_ref(y)/T(y)·(F(y)ⁿ − F⁻(y)ⁿ), with F and F⁻ the "
            "reference mass at or below, and strictly below, r(y), and T = F − F⁻ (ties share "
            "in proportion to π_ref).",
            "The often-quoted KL = log n − (n−1)/n holds for continuous rewards; in general it "
            "is an upper bound (Beirami et al. 2024). Here at n = 1024: exact {kl} nats against "
            "{bound}.",
            "Win rate against a fresh π_ref sample is n/(n+1) for continuous rewards; with "
            "atoms (ties counting half) it is lower, by at most half the largest atom: here "
            "{win} against {win_bound}.",
            "At equal KL, the closed-form π* gets at least best-of-n's proxy reward: the β "
            "sweep traces the best proxy reward reachable at each KL.",
        ),
        links=(Link(PAGE, {"n": "1024"}, shows="The caption and known-answer rows: exact KL "
                    "beside log n − (n−1)/n; the orange marker on the chart."),),
        page=PAGE,
        prediction=Prediction("On this finite space at n = 1024, the exact KL of best-of-n "
                              "is…", ("equal to log n − (n−1)/n", "below it", "above it"),
                              answer=1),
        numbers=_best_of_n_numbers,
        whiteboard=wb.best_of_n,
    ),
    Question(
        id="rlhf.bt-constant",
        topic=TOPIC,
        difficulty=1,
        question="Why is a Bradley–Terry reward model defined only up to a constant? Does the "
        "constant matter for the policy?",
        answer=(
            "Bradley–Terry uses only reward differences, P(y_w ≻ y_l) = σ(r(y_w) − r(y_l)): add "
            "c to every reward and every probability and loss is unchanged.",
            "The KL-regularised optimum is unchanged too: exp(c/β) multiplies π_ref·exp(r/β) "
            "and its normaliser alike.",
            "So a reward model's absolute level means nothing: compare responses to one prompt, "
            "normalise rewards before a policy-gradient step, and plot a model's rewards "
            "shifted (the page shifts r̂ to the gold reward's mean under π_ref).",
        ),
        links=(Link(PAGE, {}, shows="The first known-answer row: adding a constant changes "
                    "the losses and π* by rounding only."),),
        page=PAGE,
    ),
    Question(
        id="rlhf.kl-estimators",
        topic=TOPIC,
        difficulty=2,
        question="How do you estimate KL(π‖π_ref) from samples in PPO-style RLHF? Compare the "
        "usual estimators.",
        answer=(
            "With y ~ π and ρ = π_ref(y)/π(y): k1 = −log ρ is unbiased but negative on some "
            "samples; it is the one folded into the per-sample reward r(y) − β·k1(y).",
            "k3 = (ρ − 1) − log ρ is unbiased and never negative; k2 = ½(log ρ)² is biased but "
            "low-variance near π_ref.",
            "On the page's π* at β = 0.2 (exact KL {kl} nats), the per-sample standard "
            "deviation is {sd_k1} for k1 and {sd_k3} for k3: far from π_ref, k3's ρ term "
            "explodes on the responses π has all but dropped.",
            "Unbiasedness is exact: E_π[k1] = E_π[k3] = KL, which the page checks by "
            "enumeration.",
        ),
        links=(Link(PAGE, {}, shows="The training chart's KL panel: PG's batch mean of k1 "
                    "(dotted) scatters around the exact KL."),),
        page=PAGE,
        numbers=_kl_numbers,
    ),
    Question(
        id="rlhf.dpo-vs-rlhf",
        topic=TOPIC,
        difficulty=3,
        question="When do DPO and a KL-penalised policy gradient on a reward model reach the "
        "same policy, and when do they part?",
        answer=(
            "Same data, same function class for the reward and the policy's implicit reward, "
            "both optimised to convergence: DPO minimises the reward model's own Bradley–Terry "
            "loss, so it lands on the reward model's closed-form π* (total variation "
            "{tv_features} on the page).",
            "With one free logit per response, DPO moves only responses that appear in pairs: "
            "here {unseen} of {k} responses keep π_ref's relative odds, and sparse pairs give "
            "spikes (total variation {tv_table} from π*).",
            "The policy gradient learns only from responses it samples: when π* puts mass where "
            "π rarely goes, it falls short (here {tv_pg_table} from π* with one logit per "
            "response).",
            "In practice: DPO is offline and cheap but cannot learn from new samples; "
            "PPO-style RLHF is on-policy and can, at the cost of sampling and a reward model.",
        ),
        links=(Link(PAGE, {}, shows="On the features, π*, DPO and PG coincide."),
               Link(PAGE, {"policy": "table"}, shows="One logit per response: DPO's spikes, "
                    "PG's runs spread over the responses they found.")),
        page=PAGE,
        prediction=Prediction(
            "With one logit per response, the probability of a response in no pair under DPO…",
            ("keeps π_ref's odds against the other unseen ones", "goes to zero",
             "follows the reward model"), answer=0),
        numbers=_dpo_vs_rlhf_numbers,
    ),
    Question(
        id="rlhf.reward-model-coverage",
        topic=TOPIC,
        difficulty=2,
        question="Why does a reward model trained on preference pairs mis-generalise, and what "
        "would you change?",
        answer=(
            "It is fitted where the pairs are, and the pairs come from π_ref: it orders pairs "
            "from π_ref as the gold reward does {acc_ref} of the time, pairs from π* at "
            "β = 0.2 only {acc_star}.",
            "A misspecified model extrapolates its trend: linear in length, it keeps saying "
            "“longer is better” beyond the longest answers it saw.",
            "Changes: features that can represent the truth (degree 2 here), broader coverage "
            "(a wider π_ref, or labels on the policy's samples), and a KL budget that keeps the "
            "policy where the model was trained.",
        ),
        links=(Link(PAGE, {"degree": "2"}, shows="The reward model now bends down past gold's "
                    "best length."),
               Link(PAGE, {"width": "0.3"}, shows="Wider π_ref: pairs cover the long answers "
                    "too.")),
        page=PAGE,
        numbers=_coverage_numbers,
    ),
)
