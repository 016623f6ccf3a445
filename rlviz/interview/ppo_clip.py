"""Interview questions on PPO: the clipped surrogate, its gradient, epochs, the KL penalty."""

from __future__ import annotations

from rlviz.interview import Link, Prediction, Question
from rlviz.interview.whiteboard import ppo_clip as wb

PAGE = "ppo_clip"
TOPIC = "Policy gradients"
MU = (1.0, 0.5, 0.0, -0.5, -1.0)


def _point_numbers() -> dict[str, str]:
    from rlviz import ppo

    up = ppo.explain_point(1.5, 1.0, epsilon=0.2)
    down = ppo.explain_point(1.5, -1.0, epsilon=0.2)
    return {"up_l": f"{up.objective:g}", "up_g": f"{up.grad:g}", "down_l": f"{down.objective:g}",
            "down_g": f"{down.grad:g}"}


def _epochs_numbers() -> dict[str, str]:
    from rlviz import ppo

    out = {}
    for epochs in (10, 20):
        res = ppo.run_toy(MU, epochs=epochs)
        for method in ("clipped", "unclipped"):
            out[f"{method}_{epochs}"] = f"{res.run(method).kl_exact[-1]:.3f}"
        out[f"clipfrac_{epochs}"] = f"{res.run('clipped').clip_fraction[-1]:.0%}"
    return out


def _kl_numbers() -> dict[str, str]:
    from rlviz import ppo

    res = ppo.run_toy(MU)
    return {m: f"{res.run(m).kl_exact[-1]:.3f}" for m in ("clipped", "unclipped", "kl_penalty")}


QUESTIONS = (
    Question(
        id="ppo_clip.objective",
        topic=TOPIC,
        difficulty=1,
        question="Write PPO's clipped objective. Why the min?",
        answer=(
            "r_t(θ) = π_θ(a_t|s_t) / π_old(a_t|s_t); L = E[min(r_t A_t, clip(r_t, 1 − ε, "
            "1 + ε) A_t)], maximised (the loss is −L).",
            "The min makes it a pessimistic bound on the unclipped surrogate r A: the clip "
            "removes the incentive to move r beyond 1 ± ε in the direction the advantage "
            "favours, never the penalty for moving the wrong way.",
            "So for A > 0 the objective is flat for r > 1 + ε, for A < 0 flat for r < 1 − ε; "
            "elsewhere it is the ordinary importance-weighted surrogate.",
            "It approximates TRPO's trust region with first-order optimisation, over several "
            "epochs of minibatch SGD on one batch.",
        ),
        links=(Link(PAGE, {}, shows="The heatmap of L(r, A): the flat regions beyond the "
                                    "clip."),),
        page=PAGE,
        whiteboard=wb.clipped_surrogate,
    ),
    Question(
        id="ppo_clip.gradient",
        topic=TOPIC,
        difficulty=2,
        question="ε = 0.2, a sample with ratio r = 1.5. What are L and ∂L/∂r when A = +1, and "
                 "when A = −1?",
        answer=(
            "A = +1: min(1.5 · 1, 1.2 · 1) = {up_l}; the clipped term wins and does not depend "
            "on r, so ∂L/∂r = {up_g}: no push further.",
            "A = −1: min(−1.5, −1.2) = {down_l}; the unclipped term wins, ∂L/∂r = {down_g}: the "
            "gradient still pulls r back towards 1.",
            "The clip only stops improvement beyond the trust region; it always lets a "
            "mistake be undone.",
            "In code the zero gradient comes from torch.clamp's derivative being 0 outside its "
            "range, selected by the min.",
        ),
        links=(Link(PAGE, {"r": "1.5", "a": "1"}, shows="The explained point: clipped branch, "
                                                        "gradient 0."),
               Link(PAGE, {"r": "1.5", "a": "-1"}, shows="Same ratio, negative advantage: the "
                                                         "gradient is A.")),
        page=PAGE,
        prediction=Prediction(
            prompt="ε = 0.2, r = 1.5, A = −1: is the gradient with respect to r zero?",
            options=("yes, the sample is clipped", "no, it is A = −1"),
            answer=1,
        ),
        numbers=_point_numbers,
        whiteboard=wb.surrogate_grad,
    ),
    Question(
        id="ppo_clip.epochs",
        topic=TOPIC,
        difficulty=2,
        question="What happens if you run more PPO epochs on the same batch? Compare with the "
                 "unclipped surrogate.",
        answer=(
            "The unclipped surrogate r A keeps rewarding a larger ratio on every positive "
            "sample: more epochs push the policy further and further from π_old (exact KL "
            "{unclipped_10} after 10 epochs, {unclipped_20} after 20 on the toy).",
            "Under the clip, once a sample's ratio leaves [1 − ε, 1 + ε] on the favoured side "
            "its gradient is zero: the KL stays near {clipped_10} after 10 epochs and "
            "{clipped_20} after 20.",
            "Clip fraction (samples with |r − 1| > ε): {clipfrac_10} after 10 epochs, "
            "{clipfrac_20} after 20. Practitioners watch it and the approximate KL to pick "
            "epochs and learning rates.",
            "It is not a hard constraint: shared parameters and momentum can still move "
            "clipped samples (see the SGD-vs-Adam experiment).",
        ),
        links=(Link(PAGE, {}, shows="The live toy: ratio trajectories of the three "
                                    "objectives over 10 epochs."),
               Link(PAGE, {"epochs": "20"}, shows="Twice the epochs: the clipped policy barely "
                                                  "moves further, the unclipped one does.")),
        page=PAGE,
        prediction=Prediction(
            prompt="Double the epochs from 10 to 20. Whose KL to π_old grows most?",
            options=("clipped", "unclipped", "the KL penalty"),
            answer=1,
        ),
        numbers=_epochs_numbers,
    ),
    Question(
        id="ppo_clip.kl-penalty",
        topic=TOPIC,
        difficulty=2,
        question="PPO has a KL-penalty variant. How does it work, and why did clipping win?",
        answer=(
            "Maximise E[r A − β KL(π_old ‖ π_θ)]; adapt β after each update: halve it if the "
            "KL fell below d_targ / 1.5, double it above 1.5 d_targ.",
            "It controls the step through a soft constraint; the right β changes during "
            "training, hence the adaptation.",
            "In the paper's benchmarks clipping did as well or better with one fewer knob; "
            "both are cheaper than TRPO's conjugate-gradient constrained step.",
            "On the toy after 10 epochs the exact KL is {clipped} clipped, {kl_penalty} with "
            "the adaptive penalty and {unclipped} unclipped.",
        ),
        links=(Link(PAGE, {"adaptive": "0", "beta": "10.0"},
                    shows="A fixed large β holds the policy near π_old."),
               Link(PAGE, {}, shows="The adaptive rule's β after each epoch.")),
        page=PAGE,
        numbers=_kl_numbers,
    ),
    Question(
        id="ppo_clip.ratio-one",
        topic=TOPIC,
        difficulty=1,
        question="At the start of each PPO update the ratio is 1 for every sample. What is the "
                 "first gradient, and why store log π_old?",
        answer=(
            "At r = 1 the clip is inactive: ∇L = E[A ∇ log π_θ(a|s)], the vanilla policy "
            "gradient (∇r = r ∇ log π).",
            "The ratio is computed as exp(log π_θ − log π_old) with log π_old saved at "
            "collection time; exp of a difference is numerically safer than a quotient of "
            "small probabilities.",
            "Later epochs reuse the same samples: importance weighting by r corrects for the "
            "policy having moved since they were collected.",
        ),
        links=(Link(PAGE, {"epochs": "1"}, shows="One epoch: every ratio starts at 1."),),
        page=PAGE,
        whiteboard=wb.ppo_loss,
    ),
    Question(
        id="ppo_clip.adv-norm",
        topic="Bias and variance",
        difficulty=2,
        question="Why do PPO implementations normalise advantages per batch, and what does it "
                 "change?",
        answer=(
            "A ← (A − mean) / (std + ε) over the batch: the update's scale no longer depends "
            "on the reward's units, so one learning rate works across tasks.",
            "Subtracting the batch mean acts as a further baseline: it is a small bias (the "
            "mean depends on the batch) for a variance cut.",
            "It decides which samples push up and which push down: about half of every batch "
            "gets a negative advantage, even when all rewards are positive.",
            "On the page with plain SGD, no normalisation and noise-free rewards, the clipped "
            "run freezes after one epoch; with Adam its momentum keeps drifting.",
        ),
        links=(Link(PAGE, {"noise": "0", "norm": "0", "opt": "sgd", "lr": "1.0"},
                    shows="SGD, no normalisation: the clipped run stops after one epoch."),
               Link(PAGE, {"noise": "0", "norm": "0", "lr": "1.0"},
                    shows="The same with Adam: momentum carries it past the edge.")),
        page=PAGE,
    ),
    Question(
        id="ppo_clip.value-clip",
        topic=TOPIC,
        difficulty=3,
        question="Some PPO implementations also clip the value loss. What does that do?",
        answer=(
            "V_clip = V_old + clip(V − V_old, −ε, ε); loss = max((V − R)², (V_clip − R)²): the "
            "pessimistic one of the two.",
            "It limits how far one update moves the value prediction from the one used to "
            "compute the advantages, mirroring the policy clip.",
            "Studies of PPO's implementation details (Engstrom et al., 2020; Andrychowicz et "
            "al., 2021) found it does not help, and can hurt: the loss scale depends on the "
            "reward's units while ε does not.",
            "On the page the slice of the value loss shows where its gradient is zero.",
        ),
        links=(Link(PAGE, {}, shows="'The same clip on the critic': the clipped value loss "
                                    "and its flat parts."),),
        page=PAGE,
    ),
)
