"""Interview questions on tabular TD control: Q-learning, SARSA, Expected SARSA, Double Q."""

from __future__ import annotations

from rlviz.interview import Link, Prediction, Question
from rlviz.interview.whiteboard import cliff_td as wb

PAGE = "cliff_td"
TOPIC = "TD learning"


def _worked_numbers() -> dict[str, str]:
    from rlviz import td

    w = td.worked_update(-2.0, -1.0, [-3.0, -1.0, -4.0, -2.0], 0, gamma=0.9, alpha=0.5,
                         epsilon=0.1)
    return {f"{k}_{part}": f"{v:g}" for part, table in
            (("y", w.targets), ("new", w.new_values)) for k, v in table.items()}


def _cliff_numbers(epsilon: float = 0.1) -> dict[str, str]:
    from rlviz import td
    from rlviz.envs import cliff_walking

    mdp = cliff_walking(rows=4, cols=12, slip=0.0)
    out = {"best": f"{td.optimal_values(mdp)[mdp.start_state]:g}"}
    for algo in ("q_learning", "sarsa"):
        run = td.run_control(mdp, algorithm=algo, episodes=500, runs=20, epsilon=epsilon,
                             alpha=0.5, gamma=1.0, seed=0)
        out[algo] = f"{run.returns[:, -100:].mean():.1f}"
    return out


QUESTIONS = (
    Question(
        id="cliff_td.three-targets",
        topic=TOPIC,
        difficulty=1,
        question="Write the Q-learning, SARSA and Expected SARSA updates for one transition "
                 "(s, a, r, s′). Q(s, a) = −2, r = −1, Q(s′, ·) = [−3, −1, −4, −2], a′ = 0, "
                 "γ = 0.9, α = 0.5, ε = 0.1: what are the targets?",
        answer=(
            "All three: Q(s, a) ← Q(s, a) + α [y − Q(s, a)]; only the target y differs.",
            "Q-learning: y = r + γ max_a′ Q(s′, a′) = {q_learning_y} (the greedy next action, "
            "whatever is taken next).",
            "SARSA: y = r + γ Q(s′, a′) with the a′ actually chosen = {sarsa_y}.",
            "Expected SARSA: y = r + γ Σ_a′ π(a′|s′) Q(s′, a′) under ε-greedy π = "
            "{expected_sarsa_y}; it removes the variance of sampling a′.",
            "New Q(s, a): {q_learning_new}, {sarsa_new} and {expected_sarsa_new}. If s′ is "
            "terminal, every target is just r.",
        ),
        links=(Link(PAGE, {}, shows="'One update by hand' works these numbers; change a′ and "
                                    "watch SARSA's target move."),
               Link(PAGE, {"wb_a": "1", "wb_eps": "0"},
                    shows="a′ greedy and ε = 0: all three targets agree.")),
        page=PAGE,
        numbers=_worked_numbers,
        whiteboard=wb.td_targets,
    ),
    Question(
        id="cliff_td.cliff-paths",
        topic="On- vs off-policy",
        difficulty=1,
        question="On the cliff-walking grid with ε = 0.1, which path does Q-learning learn, "
                 "which does SARSA learn, and which earns more per episode while training?",
        answer=(
            "Q-learning is off-policy: its target uses max_a′, so it learns the values of the "
            "greedy policy: the shortest path along the cliff edge (optimal return {best}).",
            "SARSA is on-policy: it learns the value of the ε-greedy policy it follows, and "
            "next to the cliff a random step costs −100, so it prefers the safer path further "
            "away.",
            "Online (while exploring) SARSA earns more: mean return of the last 100 of 500 "
            "episodes (20 runs, α = 0.5) is {sarsa} for SARSA against {q_learning} for "
            "Q-learning, which keeps falling off the edge.",
            "The greedy paths they end with: Q-learning's is optimal for the greedy policy, "
            "SARSA's is optimal for the ε-greedy one.",
        ),
        links=(Link(PAGE, {}, shows="The learning curves and the greedy paths after training."),),
        page=PAGE,
        prediction=Prediction(
            prompt="ε = 0.1: whose online return per episode ends higher?",
            options=("Q-learning", "SARSA", "they end level"),
            answer=1,
        ),
        numbers=_cliff_numbers,
    ),
    Question(
        id="cliff_td.epsilon-to-zero",
        topic="On- vs off-policy",
        difficulty=2,
        question="What happens to the Q-learning/SARSA gap as ε goes to 0, or if ε decays over "
                 "training?",
        answer=(
            "The gap comes from exploration: SARSA's values include the ε-greedy slips, "
            "Q-learning's do not.",
            "With ε → 0 the behaviour policy becomes greedy, the two targets coincide and both "
            "learn the edge path; the online curves meet near the optimum.",
            "Decaying ε (GLIE: greedy in the limit, infinite exploration) makes SARSA converge "
            "to Q* too, and its path moves to the edge late in training.",
            "Fixed ε is the case where on- and off-policy answers differ for good.",
        ),
        links=(Link(PAGE, {"epsilon": "0.01"},
                    shows="ε = 0.01: the curves almost meet."),
               Link(PAGE, {"decay": "1"},
                    shows="ε decayed linearly to 0: both end at the optimum.")),
        page=PAGE,
        prediction=Prediction(
            prompt="Set ε = 0.01. The gap between the online curves...",
            options=("grows", "shrinks to almost nothing", "stays the same"),
            answer=1,
        ),
    ),
    Question(
        id="cliff_td.off-policy-why",
        topic="On- vs off-policy",
        difficulty=2,
        question="Why is Q-learning off-policy, yet it needs no importance sampling?",
        answer=(
            "Off-policy: it learns about the greedy target policy from data of another "
            "(ε-greedy) behaviour policy.",
            "The one-step target r + γ max_a′ Q(s′, a′) does not depend on which action the "
            "behaviour takes in s′: the only sampled action, a, is the one being valued, so "
            "no ratio π/b is needed.",
            "Multi-step off-policy targets (n-step Q, Retrace, Tree Backup) do follow behaviour "
            "actions and need ratios or their truncations.",
            "Convergence needs every (s, a) visited infinitely often and Robbins–Monro step "
            "sizes (Σα = ∞, Σα² < ∞).",
        ),
        links=(Link(PAGE, {"algos": "q_learning,sarsa,expected_sarsa"},
                    shows="Expected SARSA with ε-greedy target is on-policy; with the greedy "
                          "target it would be Q-learning."),),
        page=PAGE,
    ),
    Question(
        id="cliff_td.expected-sarsa",
        topic=TOPIC,
        difficulty=2,
        question="What does Expected SARSA buy over SARSA, and how does it relate to "
                 "Q-learning?",
        answer=(
            "Its target averages over the next action under π instead of sampling it: same "
            "expectation as SARSA, lower variance.",
            "So it tolerates larger step sizes; with α = 1 on a deterministic grid it is still "
            "stable where SARSA is noisy.",
            "With a greedy target policy (ε = 0 in the target) Expected SARSA is exactly "
            "Q-learning; in general it can be on- or off-policy depending on which π it "
            "averages over.",
            "The cost is a sum over actions per update, cheap for small action sets.",
        ),
        links=(Link(PAGE, {"algos": "sarsa,expected_sarsa", "alpha": "1"},
                    shows="α = 1: Expected SARSA's curve is smooth, SARSA's is not."),),
        page=PAGE,
        prediction=Prediction(
            prompt="α = 1 on the cliff: whose online return ends higher?",
            options=("SARSA", "Expected SARSA", "the same"),
            answer=1,
        ),
    ),
    Question(
        id="cliff_td.double-q",
        topic=TOPIC,
        difficulty=2,
        question="What is maximisation bias, and how does Double Q-learning fix it?",
        answer=(
            "E[max_a Q̂(s, a)] ≥ max_a E[Q̂(s, a)]: the max of noisy estimates is biased upward, "
            "and Q-learning bootstraps from that max.",
            "Double Q-learning keeps two tables: one picks the action, the other values it, "
            "y = r + γ Q₂(s′, argmax_a Q₁(s′, a)); which table is updated is chosen at random.",
            "The evaluation is independent of the selection's noise, so the target is no "
            "longer biased upward (it can be slightly pessimistic).",
            "Deep version (Double DQN): the online net selects, the target net evaluates.",
        ),
        links=(Link(PAGE, {"algos": "q_learning,double_q", "slip": "0.1"},
                    shows="With a slippery cliff the rewards are noisy: Double Q beside "
                          "Q-learning."),),
        page=PAGE,
    ),
    Question(
        id="cliff_td.step-size",
        topic="Bias and variance",
        difficulty=2,
        question="How does the step size α trade off in tabular TD control?",
        answer=(
            "Large α: fast early progress, but the estimate keeps chasing the latest samples: "
            "variance that never dies with a constant α.",
            "Small α: smooth but slow; a constant α tracks a moving target (the policy keeps "
            "changing), a 1/n schedule converges but can be too slow in practice.",
            "On a deterministic grid a large α is fine for Expected SARSA; with slip (random "
            "next states) large α hurts every method.",
            "Convergence theory wants Σ α_t = ∞ and Σ α_t² < ∞ per state-action pair.",
        ),
        links=(Link(PAGE, {"alpha": "0.1"}, shows="α = 0.1: slow but smooth curves."),
               Link(PAGE, {"alpha": "1", "slip": "0.1"},
                    shows="α = 1 with slip: noisy curves.")),
        page=PAGE,
    ),
)
