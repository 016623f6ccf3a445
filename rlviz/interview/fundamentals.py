"""Interview questions on the fundamentals, each linked to the page that shows the answer.

MDPs and Bellman equations, on- versus off-policy learning, bias and variance, exploration,
function approximation and the basics of RLHF. These belong to no single page (``page`` is None),
so no page's panel lists them; the drill does.
"""

from __future__ import annotations

from rlviz.interview import Link, Prediction, Question

FAMILY = "fundamentals"


def _policy_value_numbers() -> dict[str, str]:
    from rlviz import dp
    from rlviz.mdp import policy_value

    mdp = dp.make_problem("sutton_barto_4x4", slip=0.0, step_reward=-1.0, goal_reward=-1.0)
    v = policy_value(mdp, dp.uniform_policy(mdp), 0.9)
    return {"v1": f"{v[1]:.3f}", "v3": f"{v[3]:.3f}"}


def _horizon_numbers() -> dict[str, str]:
    return {f"h{int(g * 100)}": f"{1 / (1 - g):.0f}" for g in (0.9, 0.99)}


def _ucb_bonus_numbers() -> dict[str, str]:
    import math

    return {"b1": f"{2 * math.sqrt(math.log(100) / 1):.2f}",
            "b50": f"{2 * math.sqrt(math.log(100) / 50):.2f}"}


QUESTIONS = (
    Question(
        id="fundamentals.mdp",
        topic="MDPs and Bellman equations",
        difficulty=1,
        question="What is a Markov decision process, and what does 'Markov' mean here?",
        answer=(
            "A tuple (S, A, p, r, γ): states, actions, transition probabilities "
            "p(s′ | s, a), rewards r(s, a) (or r(s, a, s′)) and a discount γ ∈ [0, 1].",
            "Markov: the next state and reward depend only on the current state and action, "
            "not on the history: p(s_(t+1) | s_t, a_t, s_(t−1), …) = p(s_(t+1) | s_t, a_t).",
            "The goal: a policy π(a | s) maximising the expected return "
            "E[Σ_t γ^t r_(t+1)].",
            "If the agent sees only an observation that hides part of the state, it is a "
            "POMDP: stack frames, keep a recurrent state, or maintain a belief.",
        ),
        links=(Link("value_iteration", {}, shows="A gridworld MDP written as a table "
                                                 "P[s, a, s′], R[s, a], solved by DP."),),
    ),
    Question(
        id="fundamentals.bellman-expectation",
        topic="MDPs and Bellman equations",
        difficulty=1,
        question="Write the Bellman expectation equation for v_π, and solve it for a small "
                 "MDP.",
        answer=(
            "v_π(s) = Σ_a π(a|s) Σ_s′ p(s′|s, a) [r(s, a, s′) + γ v_π(s′)]: a value is the "
            "expected reward plus the discounted value of where you land.",
            "In matrix form v = r_π + γ P_π v, so v = (I − γ P_π)^(−1) r_π: one linear solve "
            "for a known model (iterative evaluation avoids the inverse).",
            "For the random policy on the 4×4 grid with γ = 0.9: v(1) = {v1} next to a "
            "terminal corner, v(3) = {v3} further away.",
            "q_π(s, a) = Σ_s′ p(s′|s, a)[r + γ Σ_a′ π(a′|s′) q_π(s′, a′)] is the same "
            "equation for action values.",
        ),
        links=(Link("value_iteration", {"gamma": "0.9"},
                    shows="Evaluation of the random policy at γ = 0.9, sweep by sweep."),),
        numbers=_policy_value_numbers,
    ),
    Question(
        id="fundamentals.bellman-optimality",
        topic="MDPs and Bellman equations",
        difficulty=1,
        question="How does the Bellman optimality equation differ from the expectation "
                 "equation, and how do you get the optimal policy from it?",
        answer=(
            "v*(s) = max_a Σ_s′ p(s′|s, a)[r + γ v*(s′)]: the average over the policy's "
            "actions becomes a max.",
            "It is nonlinear (the max), so no single linear solve: value iteration, policy "
            "iteration or linear programming.",
            "Any policy greedy with respect to q* is optimal: π*(s) = argmax_a q*(s, a); "
            "with v* you need the model for a one-step lookahead, with q* you do not.",
            "That is why model-free control learns q (Q-learning) rather than v.",
        ),
        links=(Link("value_iteration", {"algorithm": "value_iteration"},
                    shows="Value iteration: the optimality backup and its greedy arrows."),),
    ),
    Question(
        id="fundamentals.discount",
        topic="MDPs and Bellman equations",
        difficulty=1,
        question="Why discount? What does γ = 0.99 mean in practice?",
        answer=(
            "It keeps infinite-horizon returns finite (|G| ≤ r_max / (1 − γ)) and makes the "
            "Bellman operator a contraction.",
            "It sets an effective horizon of about 1/(1 − γ) steps: {h90} at 0.9, {h99} at "
            "0.99. Rewards much further away barely count.",
            "It is also a modelling choice (preferring sooner rewards) and a variance knob: "
            "smaller γ, shorter effective returns, lower variance, more bias against the "
            "undiscounted goal.",
            "In episodic tasks with a step cost, γ = 1 is fine.",
        ),
        links=(Link("value_iteration", {"env": "corridor", "algorithm": "value_iteration",
                                        "step_reward": "0", "goal_reward": "1",
                                        "gamma": "0.5"},
                    shows="γ = 0.5: the goal's value reaches only a few cells back."),),
        numbers=_horizon_numbers,
    ),
    Question(
        id="fundamentals.model-free",
        topic="TD learning",
        difficulty=1,
        question="Monte Carlo, TD(0) and dynamic programming: what does each bootstrap, and "
                 "what does each sample?",
        answer=(
            "DP: bootstraps (uses V(s′)) and does not sample: it needs the model and takes "
            "full expectations.",
            "Monte Carlo: samples whole episodes and does not bootstrap: the target is the "
            "return G_t. Unbiased, high variance, needs episodes to end.",
            "TD(0): samples one step and bootstraps: target r + γ V(s′). Biased by V, low "
            "variance, learns online from incomplete episodes.",
            "n-step and λ-returns interpolate between TD and MC.",
        ),
        links=(Link("gae", {"lam": "0"}, shows="λ = 0: one-step TD errors."),
               Link("gae", {"lam": "1"}, shows="λ = 1: Monte-Carlo advantages.")),
    ),
    Question(
        id="fundamentals.on-off-policy",
        topic="On- vs off-policy",
        difficulty=1,
        question="What is the difference between on-policy and off-policy learning? Name an "
                 "algorithm of each kind.",
        answer=(
            "On-policy: learn about the policy that generates the data (SARSA, REINFORCE, "
            "PPO, A2C).",
            "Off-policy: learn about a target policy from data of a different behaviour "
            "policy (Q-learning, DQN, SAC, importance-sampled MC).",
            "Off-policy can reuse old data (replay buffers) and learn the greedy policy while "
            "exploring; it needs corrections (ratios) for multi-step targets and is less "
            "stable with function approximation.",
            "On the cliff the difference is visible: Q-learning learns the edge path it cannot "
            "walk safely while exploring; SARSA learns the path it can.",
        ),
        links=(Link("cliff_td", {}, shows="Q-learning against SARSA on the cliff."),),
        prediction=Prediction(
            prompt="With ε = 0.1 on the cliff, who earns more per episode while learning?",
            options=("Q-learning (off-policy)", "SARSA (on-policy)"),
            answer=1,
        ),
    ),
    Question(
        id="fundamentals.importance-sampling",
        topic="On- vs off-policy",
        difficulty=2,
        question="How does importance sampling correct off-policy returns, and what does it "
                 "cost?",
        answer=(
            "Weight a return from behaviour b by ρ = Π_t π(a_t|s_t) / b(a_t|s_t): "
            "E_b[ρ G] = E_π[G], so the ordinary estimator is unbiased.",
            "The product of ratios has variance that can grow exponentially with the horizon, "
            "even be infinite.",
            "Weighted IS divides by Σρ instead of n: biased (consistently), far lower "
            "variance. Per-decision IS and doubly robust estimators cut it further.",
            "π must be covered by b: b(a|s) > 0 wherever π(a|s) > 0.",
        ),
        links=(Link("importance_sampling", {}, shows="Ordinary against weighted importance "
                                                     "sampling, run after run."),),
    ),
    Question(
        id="fundamentals.bias-variance",
        topic="Bias and variance",
        difficulty=1,
        question="Where do bias and variance come from in RL estimators, and which knobs trade "
                 "them?",
        answer=(
            "Variance: randomness in rewards, transitions and actions summed over a long "
            "return; bias: bootstrapping from an imperfect value estimate, discounting, "
            "clipped or truncated corrections.",
            "Knobs: n in n-step returns and λ in TD(λ)/GAE (more steps: less bias, more "
            "variance); γ (a shorter horizon: less variance, more bias); baselines (less "
            "variance, no bias); weighted IS (less variance, some bias).",
            "The right trade-off minimises error for the data you have: typically an "
            "intermediate λ or n.",
        ),
        links=(Link("gae", {}, shows="The bias–variance study: MSE against λ with its "
                                     "minimum in between."),),
        prediction=Prediction(
            prompt="With an imperfect critic, where is the MSE of GAE smallest?",
            options=("λ = 0", "an intermediate λ", "λ = 1"),
            answer=1,
        ),
    ),
    Question(
        id="fundamentals.exploration",
        topic="Exploration",
        difficulty=1,
        question="Name the main families of exploration strategies and what each relies on.",
        answer=(
            "Dithering: ε-greedy, Boltzmann (softmax) exploration, entropy bonuses: random "
            "perturbations of the current best guess. Simple, but blind to what is unknown.",
            "Optimism: optimistic initial values, UCB bonuses, count-based bonuses: act as if "
            "the uncertain is good.",
            "Posterior sampling: Thompson sampling, bootstrapped DQN: act greedily on a "
            "sample of what might be true.",
            "Intrinsic motivation: curiosity, prediction error or novelty rewards for large "
            "state spaces.",
        ),
        links=(Link("bandits", {"racers": "eps_a,ucb,thompson"},
                    shows="ε-greedy, UCB and Thompson sampling racing on the same arms."),),
    ),
    Question(
        id="fundamentals.ucb-bonus",
        topic="Exploration",
        difficulty=2,
        question="At step 100 with c = 2, how big is UCB's bonus for an arm pulled once, and "
                 "for one pulled 50 times?",
        answer=(
            "Bonus = c √(ln t / N(a)): {b1} for N = 1 and {b50} for N = 50.",
            "So a rarely pulled arm is tried again unless its mean is far below the leader's; "
            "the bonus shrinks like 1/√N.",
            "Unlike ε-greedy, UCB's exploration is directed at the arms it knows least about, "
            "and it stops exploring arms it is sure are bad.",
        ),
        links=(Link("bandits", {"racers": "ucb,eps_a"},
                    shows="UCB against ε-greedy: UCB's early spike comes from the bonus."),),
        numbers=_ucb_bonus_numbers,
    ),
    Question(
        id="fundamentals.deadly-triad",
        topic="Function approximation",
        difficulty=2,
        question="What is the deadly triad?",
        answer=(
            "Function approximation, bootstrapping and off-policy training: any two are "
            "safe, all three together can make TD's weights diverge (Sutton & Barto, §11.3).",
            "Off-policy data weights states differently from the target policy's on-policy "
            "distribution, so the semi-gradient TD update is no longer a contraction in the "
            "norm that matters.",
            "Baird's counterexample diverges even with exact expected updates.",
            "Fixes: gradient-TD (TDC, GTD2), emphatic TD, or practical stabilisers (target "
            "networks, replay, n-step returns) in deep RL.",
        ),
        links=(Link("deadly_triad", {}, shows="The switchboard: only the cell with all three "
                                              "diverges."),),
    ),
    Question(
        id="fundamentals.target-network",
        topic="Function approximation",
        difficulty=2,
        question="Why does DQN use a target network and experience replay?",
        answer=(
            "Replay breaks the correlation between consecutive samples and reuses data; it "
            "makes DQN off-policy.",
            "The target network freezes the bootstrap target y = r + γ max_a′ Q_(θ⁻)(s′, a′) "
            "for a while, so the regression does not chase a target that moves with every "
            "step.",
            "Together they tame (not cure) the deadly triad; Double DQN also fixes the max's "
            "overestimation.",
        ),
        links=(Link("deadly_triad", {}, shows="What happens without such stabilisers: "
                                              "semi-gradient off-policy TD on Baird's "
                                              "problem."),
               Link("cliff_td", {"algos": "q_learning,double_q"},
                    shows="Double Q-learning beside Q-learning.")),
    ),
    Question(
        id="fundamentals.semi-gradient",
        topic="Function approximation",
        difficulty=3,
        question="Why is TD with function approximation called a semi-gradient method?",
        answer=(
            "The update w ← w + α [r + γ v̂(s′, w) − v̂(s, w)] ∇v̂(s, w) differentiates only "
            "the prediction, not the target, which also depends on w.",
            "So it is not the gradient of any objective (the Bellman error's true gradient "
            "would include −γ∇v̂(s′, w)); it converges on-policy with linear features (to the "
            "TD fixed point) but has no such guarantee off-policy.",
            "Residual gradient methods follow the full gradient but are slow and need double "
            "sampling; gradient-TD methods minimise the projected Bellman error correctly.",
        ),
        links=(Link("deadly_triad", {}, shows="Semi-gradient TD against TDC on Baird's "
                                              "counterexample."),),
    ),
    Question(
        id="fundamentals.policy-gradient",
        topic="Policy gradients",
        difficulty=1,
        question="State the policy gradient theorem and the REINFORCE estimator.",
        answer=(
            "∇J(θ) = E_π[Σ_t ∇ log π_θ(a_t|s_t) Q^π(s_t, a_t)]: no derivative of the "
            "dynamics is needed.",
            "REINFORCE replaces Q by the sampled return G_t; subtracting a baseline b(s_t) "
            "keeps it unbiased and reduces variance: use A = G_t − V(s_t).",
            "Actor-critic methods replace G_t by a bootstrapped estimate (TD error, GAE): "
            "lower variance, some bias.",
            "PPO and TRPO add a limit on how far each update moves the policy.",
        ),
        links=(Link("bandits", {"mu": "4", "racers": "gradient_a,gradient_b"},
                    shows="The gradient bandit with and without a baseline."),
               Link("gae", {}, shows="GAE: the advantage estimate actor-critics use.")),
    ),
    Question(
        id="fundamentals.trust-region",
        topic="Policy gradients",
        difficulty=2,
        question="Why limit the size of a policy update, and how do TRPO and PPO do it?",
        answer=(
            "The surrogate E[r A] is only accurate near π_old: a large step can collapse "
            "performance, and the data to recover is then collected by the bad policy.",
            "TRPO maximises the surrogate subject to KL(π_old ‖ π) ≤ δ (natural gradient, "
            "conjugate gradient and a line search).",
            "PPO clips the ratio (or penalises the KL) and uses plain first-order steps over "
            "several epochs.",
        ),
        links=(Link("ppo_clip", {}, shows="The clipped surface and the toy's ratio "
                                          "trajectories."),),
    ),
    Question(
        id="fundamentals.model-based",
        topic="Planning and search",
        difficulty=1,
        question="Model-based versus model-free RL: what are the trade-offs?",
        answer=(
            "Model-based: learn or know p(s′|s, a) and plan with it (DP, MCTS, Dyna): far "
            "more sample-efficient, but model errors compound over long plans.",
            "Model-free: learn values or policies directly from experience (Q-learning, PPO): "
            "simpler, asymptotically unbiased by model error, sample-hungry.",
            "Hybrids: Dyna (planning on a learned model), MuZero (search on a learned "
            "latent model), model-based value expansion.",
        ),
        links=(Link("mcts", {}, shows="Search with a perfect model of tic-tac-toe."),
               Link("value_iteration", {}, shows="DP with a known model.")),
    ),
    Question(
        id="fundamentals.offline",
        topic="Offline RL",
        difficulty=1,
        question="What makes offline RL harder than off-policy RL with a replay buffer?",
        answer=(
            "No new data: errors in Q at actions the dataset never covers are never "
            "corrected by acting, and the max seeks them out.",
            "Distribution shift between the data's policy and the learned one is the core "
            "problem.",
            "Approaches: stay close to the data (behaviour-regularised policies), or be "
            "pessimistic where the data is thin (CQL, IQL, uncertainty penalties).",
        ),
        links=(Link("cql", {"alpha": "0.0"}, shows="The naive learner's argmax off the "
                                                   "data."),),
    ),
    Question(
        id="fundamentals.rlhf-pipeline",
        topic="RLHF and LLMs",
        difficulty=1,
        question="Describe the RLHF pipeline for a language model.",
        answer=(
            "Supervised fine-tuning on demonstrations gives π_SFT (also the reference π_ref).",
            "A reward model is trained on human comparisons with the Bradley–Terry loss "
            "−log σ(r(x, y_w) − r(x, y_l)).",
            "The policy is optimised to maximise E[r(x, y)] − β KL(π ‖ π_ref) with PPO (or "
            "GRPO, RLOO…); the KL term keeps it from exploiting the reward model.",
            "DPO skips the reward model and the RL loop: it fits the same KL-regularised "
            "optimum directly on the preferences.",
        ),
        links=(Link("grpo", {}, shows="PPO, GRPO and their relatives on a toy language "
                                      "model, with the KL to π_ref."),),
    ),
    Question(
        id="fundamentals.kl-reference",
        topic="RLHF and LLMs",
        difficulty=2,
        question="Why keep the policy close to the reference model in RLHF?",
        answer=(
            "The learned reward is only accurate near the data it was trained on; far from "
            "it, maximising it finds outputs the reward model likes and humans do not "
            "(reward hacking, over-optimisation).",
            "The KL penalty β KL(π ‖ π_ref) trades reward for staying close; the optimum is "
            "π*(y|x) ∝ π_ref(y|x) exp(r(x, y)/β).",
            "It also preserves the fluency and knowledge of the pretrained model.",
            "β too small: hacking and drift; too large: little change from π_ref.",
        ),
        links=(Link("grpo", {"beta": "0.2"}, shows="β = 0.2: the KL curves held down."),
               Link("grpo", {"beta": "0.0"}, shows="β = 0: the policy drifts freely.")),
        prediction=Prediction(
            prompt="Raise β from 0 to 0.2. The KL to π_ref at the end of training",
            options=("rises", "falls", "stays the same"),
            answer=1,
        ),
    ),
    Question(
        id="fundamentals.credit-assignment",
        topic="TD learning",
        difficulty=2,
        question="What is the credit assignment problem, and which tools address it?",
        answer=(
            "A reward arrives after many actions: which of them deserve the credit? Temporal "
            "credit assignment is the core difficulty of sparse, delayed rewards.",
            "Bootstrapping propagates value back one step per update; multi-step returns and "
            "eligibility traces (λ) propagate it faster.",
            "A critic (advantages) assigns credit per action rather than per episode; reward "
            "shaping (potential-based, to keep the optimal policy) adds intermediate signal.",
            "In LLM training with one reward per response, GRPO gives every token the same "
            "advantage: no credit assignment inside a response; a token-level critic (PPO) "
            "tries to provide it.",
        ),
        links=(Link("value_iteration", {"env": "corridor", "algorithm": "value_iteration",
                                        "step_reward": "0", "goal_reward": "1",
                                        "gamma": "0.9"},
                    shows="Value spreads back from the goal one cell per sweep."),
               Link("grpo", {"trainers": "grpo,ppo", "loss_of": "ppo"},
                    shows="PPO's per-token advantages against GRPO's constant rows.")),
    ),
)
