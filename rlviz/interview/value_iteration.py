"""Interview questions on dynamic programming: evaluation, value and policy iteration."""

from __future__ import annotations

from rlviz.interview import Link, Prediction, Question
from rlviz.interview.whiteboard import value_iteration as wb

PAGE = "value_iteration"
TOPIC = "Dynamic programming"
CORRIDOR = {"env": "corridor", "algorithm": "value_iteration", "step_reward": "0",
            "goal_reward": "1"}


def _run(env: str, algorithm: str, *, gamma: float, slip: float | None = None,
         theta: float = 1e-4, in_place: bool = False):
    from rlviz import dp

    problem = dp.PROBLEMS[env]
    mdp = dp.make_problem(env, slip=problem.slip if slip is None else slip,
                          step_reward=problem.step_reward, goal_reward=problem.goal_reward)
    kw = {"gamma": gamma, "theta": theta, "in_place": in_place}
    if algorithm == "policy_evaluation":
        return mdp, dp.policy_evaluation(mdp, dp.uniform_policy(mdp), **kw)
    return mdp, getattr(dp, algorithm)(mdp, **kw)


def _random_policy_numbers() -> dict[str, str]:
    mdp, trace = _run("sutton_barto_4x4", "policy_evaluation", gamma=1.0)
    v = trace.final_values
    return {"near": f"{v[1]:.0f}", "far": f"{v[3]:.0f}", "sweeps": str(trace.n_sweeps),
            "k": str(trace.policy_last_changed)}


def _corridor_numbers() -> dict[str, str]:
    out = {}
    for name, gamma in (("g9", 0.9), ("g99", 0.99)):
        mdp, trace = _run("corridor", "value_iteration", gamma=gamma)
        out[name] = f"{trace.final_values[mdp.start_state]:.4f}"
        out[f"{name}_sweeps"] = str(trace.n_sweeps)
    return out


def _in_place_numbers() -> dict[str, str]:
    _, sync = _run("sutton_barto_4x4", "policy_evaluation", gamma=1.0)
    _, inplace = _run("sutton_barto_4x4", "policy_evaluation", gamma=1.0, in_place=True)
    return {"sync": str(sync.n_sweeps), "inplace": str(inplace.n_sweeps)}


def _vi_vs_pi_numbers() -> dict[str, str]:
    _, vi = _run("sutton_barto_4x4", "value_iteration", gamma=1.0)
    _, pi = _run("sutton_barto_4x4", "policy_iteration", gamma=1.0)
    return {"vi": str(vi.n_sweeps), "pi": str(pi.n_sweeps)}


def _slip_numbers() -> dict[str, str]:
    out = {}
    for name, slip in (("s0", 0.0), ("s1", 0.1), ("s3", 0.3)):
        mdp, trace = _run("bridge", "value_iteration", gamma=0.99, slip=slip)
        out[name] = f"{trace.final_values[mdp.start_state]:.3f}"
    return out


def _lake_numbers() -> dict[str, str]:
    mdp, g99 = _run("frozen_lake_4x4", "value_iteration", gamma=0.99)
    _, g1 = _run("frozen_lake_4x4", "value_iteration", gamma=1.0, theta=1e-10)
    return {"g99": f"{g99.final_values[mdp.start_state]:.3f}",
            "g1": f"{g1.final_values[mdp.start_state]:.3f}", "sweeps": str(g1.n_sweeps)}


QUESTIONS = (
    Question(
        id="value_iteration.bellman-backup",
        topic=TOPIC,
        difficulty=1,
        question="Write value iteration. What does one sweep compute, and when do you stop?",
        answer=(
            "One sweep applies the Bellman optimality backup to every state: "
            "V_(k+1)(s) = max_a [r(s, a) + γ Σ_s' p(s' | s, a) V_k(s')].",
            "Start from V_0 = 0; stop when the largest change max_s |V_(k+1)(s) − V_k(s)| falls "
            "below a threshold θ.",
            "Read the policy off at the end: π(s) = argmax_a of the same one-step lookahead.",
            "Cost per sweep O(|S|² |A|) with a dense model; it needs the model p and r, which is "
            "what makes it planning rather than learning.",
        ),
        links=(Link(PAGE, {"algorithm": "value_iteration"},
                    shows="Scrub the sweep slider: the values spread out from the terminal "
                          "corners one step per sweep."),),
        page=PAGE,
        whiteboard=wb.value_iteration,
    ),
    Question(
        id="value_iteration.random-policy-4x4",
        topic=TOPIC,
        difficulty=1,
        question="On Sutton & Barto's 4×4 gridworld (−1 per move, γ = 1), what is the value "
                 "of the uniformly random policy next to a terminal corner, and when is the "
                 "greedy policy already optimal?",
        answer=(
            "Iterative policy evaluation: V(s) ← Σ_a π(a|s) Σ_s' p(s'|s, a) [r + γ V(s')], "
            "swept until it settles (here {sweeps} synchronous sweeps to θ = 1e-4).",
            "The cell next to a terminal corner has v_π = {near}; the far corners of the "
            "other diagonal {far}: the expected number of random steps, negated.",
            "The greedy policy with respect to V_k is optimal from sweep k = {k} on, long before "
            "the values converge: policy improvement needs the ranking, not the numbers.",
            "That is why policy iteration and truncated evaluation work well in practice.",
        ),
        links=(Link(PAGE, {}, shows="The default view: the random policy's values and the "
                                    "black line at the last sweep that changed the arrows."),),
        page=PAGE,
        numbers=_random_policy_numbers,
    ),
    Question(
        id="value_iteration.contraction",
        topic="MDPs and Bellman equations",
        difficulty=2,
        question="Why does value iteration converge for γ < 1, and how fast?",
        answer=(
            "The Bellman optimality operator T is a γ-contraction in the max norm: "
            "‖TV − TU‖_∞ ≤ γ ‖V − U‖_∞ (a max of expectations moves no more than the largest "
            "difference, scaled by γ).",
            "By Banach's fixed-point theorem it has one fixed point V* and V_k → V* "
            "geometrically: ‖V_k − V*‖ ≤ γ^k ‖V_0 − V*‖.",
            "Once a sweep changes less than θ, ‖V_(k+1) − V*‖ ≤ γθ / (1 − γ): the stopping "
            "rule gives an error bound.",
            "Sweeps needed grow like log(1/θ) / log(1/γ) ≈ log(1/θ) / (1 − γ): γ near 1 is "
            "expensive.",
        ),
        links=(Link(PAGE, {"algorithm": "value_iteration", "gamma": "0.9"},
                    shows="The log plot: each sweep's largest change stays under the dotted γ^k "
                          "line."),
               Link(PAGE, {"algorithm": "value_iteration", "env": "four_rooms",
                           "step_reward": "0", "goal_reward": "1", "gamma": "0.95"},
                    shows="'How γ sets the number of sweeps': the count grows as γ nears 1.")),
        page=PAGE,
    ),
    Question(
        id="value_iteration.discount-horizon",
        topic="MDPs and Bellman equations",
        difficulty=1,
        question="A goal pays +1 at the end of a corridor 19 moves from the start, nothing else "
                 "pays. What is V*(start) for γ = 0.9 and γ = 0.99, and what does γ mean here?",
        answer=(
            "Discounting makes a reward k steps away worth γ^k now, so V*(start) = γ^(k−1) with "
            "the reward counted on entering the goal.",
            "From rlviz: V*(start) = {g9} at γ = 0.9 and {g99} at γ = 0.99.",
            "γ sets an effective horizon of about 1/(1 − γ) steps: 10 at 0.9, 100 at 0.99. "
            "Far beyond it values are nearly zero and the greedy arrows become ties.",
            "It also sets the cost: {g9_sweeps} sweeps at γ = 0.9; with a sparse reward value "
            "iteration needs at least as many sweeps as the goal is steps away.",
        ),
        links=(Link(PAGE, {**CORRIDOR, "gamma": "0.9"},
                    shows="The corridor at γ = 0.9: V(start) in the metrics row."),
               Link(PAGE, {**CORRIDOR, "gamma": "0.5"},
                    shows="At γ = 0.5 only the cells near the goal stay visibly blue.")),
        page=PAGE,
        prediction=Prediction(
            prompt="Corridor, 19 moves, reward +1 at the goal, γ = 0.9: V*(start) is closest to",
            options=("0.9", "0.5", "0.15", "0.01"),
            answer=2,
        ),
        numbers=_corridor_numbers,
    ),
    Question(
        id="value_iteration.in-place",
        topic=TOPIC,
        difficulty=2,
        question="Synchronous or in-place (Gauss–Seidel) sweeps: what is the difference, and "
                 "which converges in fewer sweeps?",
        answer=(
            "Synchronous sweeps compute V_(k+1) from a frozen copy of V_k (two arrays); "
            "in place overwrites one array state by state, so later states already see new "
            "values.",
            "Both converge to the same fixed point; in place usually needs fewer sweeps, but "
            "how many depends on the order states are visited relative to where the reward is.",
            "On the 4×4 grid, evaluating the random policy to θ = 1e-4 takes {sync} "
            "synchronous and {inplace} in-place sweeps.",
            "Asynchronous DP (prioritised sweeping, real-time DP) pushes the idea further: "
            "update the states whose values will change most.",
        ),
        links=(Link(PAGE, {"in_place": "1"},
                    shows="The sweep count next to the synchronous default."),
               Link(PAGE, {**CORRIDOR, "gamma": "0.9", "in_place": "1"},
                    shows="The corridor's goal is at the right end, read last in each row: in "
                          "place gains little here.")),
        page=PAGE,
        prediction=Prediction(
            prompt="4×4 grid, random policy: which needs fewer sweeps to θ = 1e-4?",
            options=("synchronous", "in place", "the same"),
            answer=1,
        ),
        numbers=_in_place_numbers,
    ),
    Question(
        id="value_iteration.vi-vs-pi",
        topic=TOPIC,
        difficulty=2,
        question="Value iteration against policy iteration: how do they differ, and which is "
                 "faster?",
        answer=(
            "Policy iteration alternates full evaluation of π (a linear system, or many sweeps) "
            "with greedy improvement; it stops when improvement changes no action, after few "
            "cycles (finitely many policies, each strictly better).",
            "Value iteration is policy iteration with evaluation truncated to one sweep, the max "
            "folded into the backup.",
            "On the 4×4 grid (γ = 1, θ = 1e-4): value iteration stops after {vi} sweeps, policy "
            "iteration spends {pi} evaluation sweeps in its cycles: many cheap sweeps against "
            "few expensive cycles.",
            "Modified policy iteration (m evaluation sweeps per cycle) sits between the two.",
        ),
        links=(Link(PAGE, {"algorithm": "policy_iteration"},
                    shows="Policy iteration's cycles and the evaluation sweeps each took."),
               Link(PAGE, {"algorithm": "value_iteration"},
                    shows="Value iteration on the same grid.")),
        page=PAGE,
        numbers=_vi_vs_pi_numbers,
    ),
    Question(
        id="value_iteration.stochastic",
        topic="MDPs and Bellman equations",
        difficulty=2,
        question="How does stochastic dynamics (slipping) change the optimal policy on a grid "
                 "with a narrow bridge over holes?",
        answer=(
            "The Bellman backup takes an expectation over next states, so a move that risks a "
            "hole with probability p is worth (1 − p) of its deterministic value at best.",
            "V*(start) on the bridge at γ = 0.99: {s0} without slip, {s1} with slip 0.1, {s3} "
            "with slip 0.3.",
            "The optimal policy can switch to a longer, safer path: the shortest path is optimal "
            "only when every step goes where it is aimed.",
            "Same lesson as the cliff: risk is in the model, and DP sees it exactly.",
        ),
        links=(Link(PAGE, {"env": "bridge", "algorithm": "value_iteration", "slip": "0.1",
                           "step_reward": "0", "goal_reward": "1", "gamma": "0.99"},
                    shows="The bridge with slip 0.1: the arrows and V(start)."),
               Link(PAGE, {"env": "bridge", "algorithm": "value_iteration", "slip": "0.3",
                           "step_reward": "0", "goal_reward": "1", "gamma": "0.99"},
                    shows="With slip 0.3 the value of the start collapses.")),
        page=PAGE,
        numbers=_slip_numbers,
    ),
    Question(
        id="value_iteration.gamma-one",
        topic="MDPs and Bellman equations",
        difficulty=3,
        question="On slippery FrozenLake, why can γ = 1 give a higher V*(start) than γ = 0.99 "
                 "but an optimal policy that takes forever?",
        answer=(
            "With γ = 1 and reward only at the goal, waiting costs nothing: the optimal policy "
            "maximises the probability of ever reaching the goal, however long it takes.",
            "V*(start) = {g1} at γ = 1 (after {sweeps} sweeps to θ = 1e-10) against {g99} at "
            "γ = 0.99.",
            "Without discounting the operator is not a contraction; convergence relies on every "
            "policy considered ending with probability 1, and can be slow.",
            "Discounting, or a step cost, is how you ask for the goal soon; the gymnasium check "
            "on the page shows episodes cut off at 1000 steps.",
        ),
        links=(Link(PAGE, {"env": "frozen_lake_4x4", "algorithm": "value_iteration",
                           "slip": "0.6666666666666666", "step_reward": "0",
                           "goal_reward": "1", "gamma": "0.99"},
                    shows="FrozenLake 4×4 at γ = 0.99, checked by playing the greedy policy in "
                          "gymnasium."),),
        page=PAGE,
        numbers=_lake_numbers,
    ),
)
