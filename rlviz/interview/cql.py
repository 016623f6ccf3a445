"""Interview questions on offline RL: extrapolation error, CQL's regulariser, its cost."""

from __future__ import annotations

import functools

from rlviz.interview import Link, Prediction, Question
from rlviz.interview.whiteboard import cql as wb

PAGE = "cql"
TOPIC = "Offline RL"


@functools.cache  # deterministic (seed 0), and several answers quote the same run
def _one_state(curve: str = "hill", coverage: float = 0.4) -> dict[str, float]:
    from rlviz import offline

    res = offline.one_state_experiment(curve, coverage=coverage, model="table")
    returns = dict(zip(offline.ALPHAS, res.true_return.tolist(), strict=True))
    return {"naive": returns[0.0], "cql": returns[1.0], "big": returns[10.0],
            "behaviour": res.behaviour_return, "best": res.optimal_return}


def _fmt(values: dict[str, float]) -> dict[str, str]:
    return {k: f"{v:.3f}" for k, v in values.items()}


def _hill_numbers() -> dict[str, str]:
    return _fmt(_one_state())


def _peaks_numbers() -> dict[str, str]:
    return _fmt(_one_state("two_peaks"))


def _coverage_numbers() -> dict[str, str]:
    return _fmt(_one_state(coverage=1.0))


def _fixed_point_numbers() -> dict[str, str]:
    import numpy as np

    from rlviz import offline

    counts = np.array([[30.0, 10.0, 0.0]])
    targets = np.array([[1.0, 1.0, 0.0]])
    q = offline.cql_fixed_point(counts, targets, 1.0)[0]
    return {"q0": f"{q[0]:.3f}", "q1": f"{q[1]:.3f}"}


QUESTIONS = (
    Question(
        id="cql.extrapolation",
        topic=TOPIC,
        difficulty=1,
        question="Why does plain Q-learning fail on a fixed offline dataset?",
        answer=(
            "The max in the target, and the greedy policy, query Q at actions the data never "
            "tried; there Q is whatever the initialisation or the network's extrapolation "
            "says, and errors upward are what the max selects.",
            "Online, acting on an overestimate produces data that corrects it; offline nothing "
            "ever does, and bootstrapping spreads the error.",
            "On the one-state problem (table, seed 0) the naive learner's greedy action really "
            "earns {naive}, the behaviour policy {behaviour}, the best action {best}.",
            "Remedies: constrain the policy to the data (BCQ, BEAR, TD3+BC), or make the "
            "values pessimistic off the data (CQL, IQL).",
        ),
        links=(Link(PAGE, {"alpha": "0.0"}, shows="α = 0: the naive and CQL curves coincide; "
                                                  "the argmax sits off the data."),),
        page=PAGE,
        numbers=_hill_numbers,
    ),
    Question(
        id="cql.regulariser",
        topic=TOPIC,
        difficulty=2,
        question="Write the CQL(H) loss. What does each term do?",
        answer=(
            "L = E_D[½ (Q(s, a) − y)²] + α E_D[log Σ_a′ exp Q(s, a′) − Q(s, a)], with the usual "
            "fixed target y = r + γ max_a′ Q_target(s′, a′).",
            "log Σ exp Q is a soft maximum over all actions: minimising it pushes every "
            "action's value down, most of all the largest ones.",
            "− Q(s, a) on the logged pairs pushes the data's actions back up: net, unseen "
            "actions go down relative to seen ones.",
            "The gap term is ≥ 0 and zero only when Q puts all its soft-max mass on the logged "
            "action; α sets the pessimism.",
        ),
        links=(Link(PAGE, {}, shows="The default view: naive against CQL α = 1, Q against "
                                    "the action."),),
        page=PAGE,
        whiteboard=wb.cql_loss,
    ),
    Question(
        id="cql.fixed-point",
        topic=TOPIC,
        difficulty=3,
        question="What values does tabular CQL converge to, in a state where action 0 was "
                 "logged 30 times and action 1 10 times, both with reward 1, and action 2 "
                 "never (α = 1)?",
        answer=(
            "Setting the gradient to zero: p̂_a (Q_a − ȳ_a) + α (π_a − p̂_a) = 0 with "
            "π = softmax(Q), p̂ the data's action frequencies (Kumar et al., 2020, Thm 3.1: "
            "Q = ȳ − α (π/p̂ − 1)).",
            "Unseen actions: π_a = 0 is never reached, so their values fall to −∞ (a table "
            "has nothing to stop them; a network would settle lower but finite).",
            "The seen ones: Q_0 = {q0}, above its true value 1 (logged more often than π picks "
            "it), and Q_1 = {q1}, below it: the rarer action is pushed down.",
            "So CQL is pessimistic in proportion to how poorly the data covers an action: a "
            "lower bound on the policy's value, for large enough α.",
        ),
        links=(Link(PAGE, {"model": "table"}, shows="The table learner with its exact fixed "
                                                    "point drawn beside it."),),
        page=PAGE,
        numbers=_fixed_point_numbers,
    ),
    Question(
        id="cql.alpha",
        topic=TOPIC,
        difficulty=2,
        question="Is more pessimism always better? What does α = 10 do?",
        answer=(
            "Small α already moves the argmax back into the data: with α = 1 the greedy "
            "action earns {cql} against the naive learner's {naive}.",
            "Very large α makes the regulariser dominate the TD term: Q becomes mostly the "
            "data's action frequencies, the policy imitates the behaviour's most frequent "
            "action, and the return falls ({big} at α = 10).",
            "α trades optimism for pessimism; in practice it is tuned, or set by a Lagrangian "
            "so the gap meets a target.",
        ),
        links=(Link(PAGE, {"alpha": "0.01"}, shows="α = 0.01: already back in the data."),
               Link(PAGE, {"alpha": "10.0"}, shows="α = 10: too pessimistic.")),
        page=PAGE,
        prediction=Prediction(
            prompt="Compared with α = 1, does α = 10 earn more or less on the one-state "
                   "problem?",
            options=("more", "less", "the same"),
            answer=1,
        ),
        numbers=_hill_numbers,
    ),
    Question(
        id="cql.coverage",
        topic=TOPIC,
        difficulty=2,
        question="If the dataset covers every action, do you still need CQL?",
        answer=(
            "With full coverage the naive learner sees every action and its values are "
            "estimates, not extrapolations: it earns {naive}, the best being {best}.",
            "CQL still pushes the rarer actions down, so it can now cost a little: {cql} at "
            "α = 1.",
            "Offline RL's difficulty is distribution shift; the less the data covers what the "
            "learned policy does, the more pessimism pays.",
        ),
        links=(Link(PAGE, {"coverage": "1"}, shows="Coverage 1: the naive learner is fine."),),
        page=PAGE,
        prediction=Prediction(
            prompt="Coverage 1. Who earns more, the naive learner or CQL (α = 1)?",
            options=("naive", "CQL", "the same"),
            answer=0,
        ),
        numbers=_coverage_numbers,
    ),
    Question(
        id="cql.outside-data",
        topic=TOPIC,
        difficulty=2,
        question="The best action lies outside the data. Can CQL find it?",
        answer=(
            "No: CQL is built to distrust values where there is no data, so its greedy action "
            "stays inside the data (with α = 1 it earns {cql}; the best possible is {best}).",
            "The naive learner may stumble on the right region by extrapolation, but more "
            "often picks a wrong unseen action ({naive}).",
            "Offline RL can only be as good as the data's support allows: improving beyond it "
            "needs new data (online fine-tuning).",
        ),
        links=(Link(PAGE, {"curve": "two_peaks"}, shows="Two peaks: the taller one outside "
                                                        "the data."),),
        page=PAGE,
        numbers=_peaks_numbers,
    ),
    Question(
        id="cql.grid",
        topic=TOPIC,
        difficulty=2,
        question="On a gridworld logged by a near-greedy behaviour policy, where do the naive "
                 "learner's errors sit?",
        answer=(
            "Where the behaviour rarely acts: actions off its path have few or no samples, so "
            "their values are never corrected, and Q̂ − Q* is large and positive exactly "
            "there.",
            "The greedy policy follows those overestimates off the data and can walk into "
            "the cliff.",
            "CQL's values are below Q* off the data (pessimistic) and close on it; its greedy "
            "policy stays on the logged path.",
            "More exploration in the logging policy (larger ε) shrinks the problem.",
        ),
        links=(Link(PAGE, {"view": "grid"}, shows="The cliff grid: Q̂ − Q* where each learner "
                                                  "acts."),
               Link(PAGE, {"view": "grid", "epsilon": "1"},
                    shows="A uniformly random logging policy covers everything.")),
        page=PAGE,
    ),
)
