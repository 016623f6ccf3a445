"""Interview questions on GRPO, PPO and their relatives for language models (page ``grpo``)."""

from __future__ import annotations

from rlviz.interview import Link, Prediction, Question
from rlviz.interview.whiteboard import grpo as wb

TOPIC = "RLHF and LLMs"


def _group_numbers() -> dict[str, str]:
    from rlviz import llm

    w = llm.worked_group([1.0, 0.0, 0.0, 1.0])
    population = (1.0 - w.mean) / (w.rewards.std() + llm.GRPO_EPS)
    return {"mean": f"{w.mean:g}", "std": f"{w.std:.4f}", "a": f"{w.advantages['grpo'][0]:.4f}",
            "a_pop": f"{population:.4f}", "eps": f"{llm.GRPO_EPS:g}"}


def _std_numbers() -> dict[str, str]:
    from rlviz import llm

    rare = llm.worked_group([1.0] + [0.0] * 7).advantages
    even = llm.worked_group([1.0] * 4 + [0.0] * 4).advantages
    ratio = (rare["grpo"][0] / rare["dr_grpo"][0]) / (even["grpo"][0] / even["dr_grpo"][0])
    return {"rare_grpo": f"{rare['grpo'][0]:.3f}", "even_grpo": f"{even['grpo'][0]:.3f}",
            "rare_dr": f"{rare['dr_grpo'][0]:.3f}", "even_dr": f"{even['dr_grpo'][0]:.3f}",
            "ratio": f"{ratio:.2f}"}


def _rloo_numbers() -> dict[str, str]:
    from rlviz import llm

    w = llm.worked_group([1.0] * 3 + [0.0] * 5)
    return {"factor": f"{w.advantages['rloo'][0] / w.advantages['dr_grpo'][0]:.4f}",
            "rloo": f"{w.advantages['rloo'][0]:.4f}", "dr": f"{w.advantages['dr_grpo'][0]:.4f}"}


def _reference_numbers() -> dict[str, str]:
    from rlviz import llm

    task = llm.Task()
    exact = llm.exact_metrics(task.ref_logits[None], task)
    by = dict(zip(task.prompts, exact["reward_by_prompt"][0], strict=True))
    return {"easy": f"{by['ac']:.1%}", "hard": f"{by['ad']:.1%}",
            "n": f"{len(llm.enumerate_responses(task.max_len).tokens):,}"}


QUESTIONS = (
    Question(
        id="grpo.group-advantage",
        topic=TOPIC,
        difficulty=1,
        question="A group of four responses to one prompt gets rewards [1, 0, 0, 1]. What are "
                 "the GRPO advantages? And if all four rewards were 1?",
        answer=(
            "Standardise within the group: mean {mean}, sample standard deviation {std} (divide "
            "by G − 1, as `torch.std` does).",
            "A = (r − mean) / (std + ε) = ±{a} with ε = {eps}; with the population std "
            "(divide by G) it is ±{a_pop}. Say which convention you use.",
            "Every token of a response gets that response's A: one number per response, no "
            "critic.",
            "All four equal: std = 0, so A = 0 / (0 + ε) = 0 for every response: finite, but no "
            "learning signal either: that group's samples are wasted (DAPO filters such groups "
            "out and samples more).",
        ),
        links=(
            Link("grpo", {"rewards": "1, 0, 0, 1"},
                 shows="The whiteboard section works the arithmetic and tabulates all four "
                       "group advantages."),
            Link("grpo", {"rewards": "1, 1, 1, 1"},
                 shows="The all-equal group: every advantage is exactly 0."),
        ),
        page="grpo",
        prediction=Prediction(
            prompt="Rewards [1, 0, 0, 1]: what is the GRPO advantage of a response that scored 1?",
            options=("+0.5", "about +0.87 (+1 with the population std)", "+2", "0"),
            answer=1,
        ),
        numbers=_group_numbers,
        whiteboard=wb.grpo_advantages,
    ),
    Question(
        id="grpo.vs-ppo",
        topic=TOPIC,
        difficulty=2,
        question="How do GRPO's advantages differ from PPO's?",
        answer=(
            "PPO learns a value head and computes an advantage per token with GAE: "
            "A_t = Σ_l (γλ)^l δ_(t+l), rewarded at the last token (minus a per-token KL in "
            "InstructGPT-style training).",
            "GRPO drops the critic: it samples G responses per prompt and uses the group's mean "
            "(and std) as the baseline. One advantage per response, shared by all its tokens.",
            "Trade-off: no value network to train or store (memory, and no critic bias early "
            "on), against G samples per prompt and no credit assignment inside a response.",
            "On the page PPO's token grid shows values that change along a response; the "
            "group trainers' grids are constant along each row.",
        ),
        links=(Link("grpo", {"trainers": "grpo,ppo", "loss_of": "ppo"},
                    shows="The token grid under PPO: per-token advantages from GAE."),),
        page="grpo",
    ),
    Question(
        id="grpo.std-normalisation",
        topic=TOPIC,
        difficulty=2,
        question="Do we need GRPO's division by the group's standard deviation?",
        answer=(
            "It makes the update scale-free in the reward's units, but it also weights each "
            "prompt by 1/std: groups that are almost always or almost never right get the "
            "largest advantages (the difficulty bias of Liu et al., 2025).",
            "With binary rewards and G = 8: one success gets A = {rare_grpo} under GRPO but "
            "{rare_dr} under Dr. GRPO; four successes get {even_grpo} and {even_dr}. The rare "
            "success is weighted {ratio}× more, relative to Dr. GRPO.",
            "Dr. GRPO drops the std (and the 1/|o| length normalisation); a constant scale does "
            "not matter under Adam, a per-prompt one does.",
            "On the page GRPO climbs fastest and drifts furthest from π_ref: its rare successes "
            "on the hard prompts act like a larger step.",
        ),
        links=(Link("grpo", {"trainers": "grpo,dr_grpo"},
                    shows="GRPO against Dr. GRPO: reward, KL and length."),),
        page="grpo",
        prediction=Prediction(
            prompt="Same samples, same optimiser: which reaches the higher exact reward by step "
                   "200, GRPO or Dr. GRPO?",
            options=("GRPO", "Dr. GRPO", "They tie"),
            answer=0,
        ),
        numbers=_std_numbers,
    ),
    Question(
        id="grpo.kl-estimators",
        topic=TOPIC,
        difficulty=3,
        question="How is the KL to the reference model estimated in GRPO, and does it matter "
                 "whether it goes in the loss or in the reward?",
        answer=(
            "From tokens sampled by π, with ρ = π_ref/π: k1 = −log ρ (unbiased, can be "
            "negative), k2 = ½(log ρ)² (biased), k3 = ρ − 1 − log ρ (unbiased, never negative, "
            "low variance while π is near π_ref). GRPO uses k3 in the loss.",
            "Summed over a response's tokens k1 and k3 stay unbiased for the KL between whole "
            "responses (chain rule).",
            "As a loss term, k1's expected gradient is zero (E_π[∇ log π] = 0): k1 in the loss "
            "holds nothing back. k3's expected gradient is that of KL(π_ref ‖ π), the reverse "
            "direction.",
            "In the reward (InstructGPT's PPO) the penalty acts through the advantages, where "
            "k1 is the usual choice.",
        ),
        links=(
            Link("grpo", {"beta": "0.2", "estimator": "k1"},
                 shows="β = 0.2 with k1 in the loss: the KL curves rise as if there were none."),
            Link("grpo", {"beta": "0.2"},
                 shows="The same β with k3 in the loss holds the KL down."),
            Link("grpo", {"beta": "0.2", "kl_in": "reward", "estimator": "k1"},
                 shows="k1 in the reward, PPO-style."),
        ),
        page="grpo",
        prediction=Prediction(
            prompt="With β = 0.2 in the loss, which estimator keeps the exact KL lower: k1 or "
                   "k3?",
            options=("k1", "k3", "the same"),
            answer=1,
        ),
    ),
    Question(
        id="grpo.prompt-mask",
        topic=TOPIC,
        difficulty=1,
        question="Why are the prompt's tokens masked out of the policy-gradient loss?",
        answer=(
            "The prompt is given, not chosen by the policy: its tokens are not actions, so "
            "their log-probabilities have no place in the policy gradient (nor do the padding "
            "tokens after the end token).",
            "Counting them trains the model to predict prompts, and because every parameter is "
            "shared that changes how it answers (here: a→c from the prompt 'ac' competes with "
            "the a→b the reward wants).",
            "A group baseline mostly protects: the prompt is identical in every response of a "
            "group and the advantages sum to zero. REINFORCE without a baseline pushes the "
            "prompt up with every positive reward.",
        ),
        links=(Link("grpo", {"mask": "0"},
                    shows="Mask off: REINFORCE falls behind and its responses grow; grey cells "
                          "in the token grid turn into counted ones."),),
        page="grpo",
        prediction=Prediction(
            prompt="Turn the mask off. Which trainer is hurt most?",
            options=("REINFORCE (no baseline)", "GRPO", "PPO", "none of them"),
            answer=0,
        ),
    ),
    Question(
        id="grpo.length-drift",
        topic=TOPIC,
        difficulty=3,
        question="Why do response lengths drift under GRPO, and how do you fix it?",
        answer=(
            "GRPO averages each response's token terms (1/|o_i|), so each token of a long "
            "response carries less weight than each token of a short one.",
            "For a wrong response (A < 0) that means a long one is pushed down less per token "
            "than a short one: wrong answers drift longer. For right answers short ones are "
            "favoured.",
            "Dr. GRPO divides by a constant (the generation budget) instead; PPO's token mean "
            "also treats every token alike. A length penalty in the reward is the other knob.",
            "On the page GRPO's wrong responses stay the longest of the five trainers.",
        ),
        links=(Link("grpo", {"trainers": "grpo,dr_grpo,ppo"},
                    shows="The right-hand length chart: wrong responses under GRPO stay "
                          "longest."),
               Link("grpo", {"trainers": "grpo,dr_grpo,ppo", "beta": "0.2", "kl_in": "reward",
                             "estimator": "k1"},
                    shows="With the KL in the reward (summed over the tokens) GRPO's wrong "
                          "responses grow much longer; Dr. GRPO's and PPO's do not."),
               Link("grpo", {"penalty": "0.3"},
                    shows="A length penalty in the reward shortens every trainer's responses.")),
        page="grpo",
        prediction=Prediction(
            prompt="Whose wrong responses end up the longest?",
            options=("GRPO", "Dr. GRPO", "PPO", "REINFORCE"),
            answer=0,
        ),
    ),
    Question(
        id="grpo.baseline",
        topic="Policy gradients",
        difficulty=1,
        question="What does a baseline buy REINFORCE? What happens if every reward is shifted "
                 "by +1?",
        answer=(
            "Subtracting b (not depending on the sampled response) keeps the gradient unbiased "
            "since E[∇ log π] = 0, and cuts the variance.",
            "Without a baseline a constant shift c adds c ∑ ∇ log π(y_i): zero on average but "
            "pure noise, so learning slows as c grows.",
            "Group baselines (GRPO, Dr. GRPO, RLOO) subtract the group's mean and are exactly "
            "invariant to the shift. PPO's critic starts at zero and must first learn the "
            "shift: until it has, its advantages carry the offset and PPO slows too.",
        ),
        links=(Link("grpo", {"offset": "1"},
                    shows="Offset +1: REINFORCE slows down, PPO too until its critic has "
                          "learned the shift; the group trainers' curves do not move at all."),),
        page="grpo",
        prediction=Prediction(
            prompt="Add 1 to every reward. Which curves change?",
            options=("all of them", "REINFORCE's, and PPO's early on", "only PPO's", "none"),
            answer=1,
        ),
    ),
    Question(
        id="grpo.rloo",
        topic=TOPIC,
        difficulty=2,
        question="What is RLOO, and how does it relate to GRPO?",
        answer=(
            "REINFORCE leave-one-out: response i's baseline is the mean reward of the other "
            "G − 1 responses, which does not depend on y_i, so the estimator stays unbiased.",
            "Algebra: r_i − mean of the others = G/(G − 1) (r_i − r̄). With 3 successes in 8 a "
            "success gets {rloo} under RLOO and {dr} under Dr. GRPO: the factor {factor}.",
            "So RLOO is Dr. GRPO up to a constant; with Adam (scale-free) and no KL term they "
            "follow the same path. GRPO adds the std division and the per-response mean.",
        ),
        links=(Link("grpo", {"trainers": "rloo,dr_grpo", "beta": "0.0"},
                    shows="With β = 0 the RLOO and Dr. GRPO curves lie on top of each "
                          "other."),),
        page="grpo",
        numbers=_rloo_numbers,
    ),
    Question(
        id="grpo.exact",
        topic=TOPIC,
        difficulty=1,
        question="On a toy language model, how can you measure the expected reward and the KL "
                 "exactly rather than by sampling?",
        answer=(
            "When the vocabulary and the length are small, enumerate every response: here "
            "{n} per prompt, each with probability ∏_t π(y_t | y_(t−1)).",
            "Then E[r] = Σ_y π(y) r(y) and KL(π‖π_ref) = Σ_y π(y) log(π(y)/π_ref(y)) are finite "
            "sums. The reference model solves the prompt 'ac' {easy} of the time and 'ad' "
            "{hard}.",
            "Sampling is then only for training and for checking the estimators against the "
            "truth.",
        ),
        links=(Link("grpo", {}, shows="The curves are exact; the known-answer table checks that "
                                      "every prompt's probabilities sum to 1."),),
        page="grpo",
        numbers=_reference_numbers,
    ),
)
