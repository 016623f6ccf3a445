"""Interview questions on distributional RL: the C51 support, projection and loss."""

from __future__ import annotations

from rlviz.interview import Link, Prediction, Question
from rlviz.interview.whiteboard import c51 as wb

PAGE = "c51"
TOPIC = "Distributional RL"


def _walk(reward: float, gamma: float, *, shape: str = "gaussian", atoms: int = 21):
    from rlviz import distributional as dist

    z = dist.make_support(-10.0, 10.0, atoms)
    p = dist.source_distribution(shape, z, mean=1.0, width=2.5)
    return dist.walkthrough(p, reward=reward, gamma=gamma, done=False, support=z), z


def _mean_numbers() -> dict[str, str]:
    from rlviz import distributional as dist

    w, z = _walk(0.5, 0.9)
    m0, v0 = dist.moments(w.source, z)
    m1, v1 = dist.moments(w.projected, z)
    clip, _ = _walk(3.0, 0.9)
    mc, _ = dist.moments(clip.projected, z)
    return {"m0": f"{m0:.4f}", "mt": f"{0.5 + 0.9 * m0:.4f}", "m1": f"{m1:.4f}",
            "vt": f"{0.81 * v0:.4f}", "v1": f"{v1:.4f}", "mt3": f"{3 + 0.9 * m0:.4f}",
            "mc": f"{mc:.4f}"}


def _naive_numbers() -> dict[str, str]:
    w21, _ = _walk(0.0, 1.0)
    w51, _ = _walk(0.0, 1.0, atoms=51)
    return {"kept21": f"{w21.naive_mass:.4g}", "kept51": f"{w51.naive_mass:.4f}"}


def _point_numbers() -> dict[str, str]:
    from rlviz import distributional as dist

    w, z = _walk(0.5, 0.9, shape="point")
    j = int(w.source.argmax())
    return {"target": f"{w.target_atoms[j]:g}", "lo": f"{z[w.lower[j]]:g}",
            "hi": f"{z[w.upper[j]]:g}", "wl": f"{w.weight_lower[j]:.2f}",
            "wu": f"{w.weight_upper[j]:.2f}", "var": f"{dist.moments(w.projected, z)[1]:.2f}"}


QUESTIONS = (
    Question(
        id="c51.projection",
        topic=TOPIC,
        difficulty=2,
        question="Write the C51 projection of the target r + γZ onto the fixed support.",
        answer=(
            "Support z_j = V_min + j Δz, N atoms. Shift each atom: T z_j = clip(r + γ(1 − d) "
            "z_j, V_min, V_max).",
            "Its position b_j = (T z_j − V_min)/Δz lies between l = ⌊b_j⌋ and u = l + 1.",
            "Split its probability linearly: m_l += p_j (u − b_j), m_u += p_j (b_j − l): the "
            "nearer neighbour gets more.",
            "Vectorised: two scatter-adds over the batch. Then train with the cross-entropy "
            "−Σ_i m_i log p_θ(s, a)_i against the projected m (no gradient through m).",
        ),
        links=(Link(PAGE, {}, shows="The projection panels: one atom's split, and the "
                                    "projected distribution."),),
        page=PAGE,
        whiteboard=wb.project,
    ),
    Question(
        id="c51.mean",
        topic=TOPIC,
        difficulty=2,
        question="Does the projection preserve the mean and the variance of the target?",
        answer=(
            "The mean, yes, when nothing is clipped: linear interpolation between neighbours "
            "keeps each atom's expectation. Here E[p] = {m0}, target mean r + γE[p] = {mt}, "
            "projected mean {m1}.",
            "The variance, no: splitting a point between two atoms adds "
            "Δz² (u − b)(b − l) per atom. Target variance γ² Var = {vt}, projected {v1}.",
            "With clipping at V_max the mean drops: r = 3 gives a target mean {mt3} but a "
            "projected mean {mc}.",
            "So V_min, V_max must cover the returns, and Δz sets how much spread is added.",
        ),
        links=(Link(PAGE, {}, shows="The mean and variance metrics of the default view."),
               Link(PAGE, {"r": "3"}, shows="r = 3: atoms pass V_max and the mean check "
                                              "switches to the clipped mean.")),
        page=PAGE,
        prediction=Prediction(
            prompt="Push r up until atoms pass V_max. The projected mean is",
            options=("exactly r + γE[p]", "below r + γE[p]", "above r + γE[p]"),
            answer=1,
        ),
        numbers=_mean_numbers,
    ),
    Question(
        id="c51.exact-hit",
        topic=TOPIC,
        difficulty=3,
        question="A C51 implementation uses l = floor(b), u = ceil(b). What goes wrong?",
        answer=(
            "When an atom lands exactly on a support point b is an integer, l = u, and both "
            "weights (u − b) and (b − l) are 0: that atom's probability disappears.",
            "With r = 0, γ = 1 every atom lands on a support point: the naive version keeps "
            "{kept21} of the mass with 21 atoms. With 51 atoms (Δz = 0.4) the atoms still land "
            "on points, yet floating-point error moves some b off the integer, so it keeps "
            "{kept51}.",
            "Fixes: u = l + 1 with l capped at N − 2 (as here), or special-case l = u by "
            "giving it the whole p_j (Dopamine's approach adds both terms in a way that "
            "sums to one).",
            "A test on a point mass with r = 0, γ = 1 catches it at once: the output must sum "
            "to 1.",
        ),
        links=(Link(PAGE, {"r": "0", "gamma": "1", "naive": "1"},
                    shows="The exact-hit case with the naive projection shown."),
               Link(PAGE, {"r": "0", "gamma": "1", "naive": "1", "atoms": "51"},
                    shows="51 atoms: floating-point error rescues part of the mass.")),
        page=PAGE,
        numbers=_naive_numbers,
    ),
    Question(
        id="c51.point-mass",
        topic=TOPIC,
        difficulty=1,
        question="A point mass at z = 1 on a support with Δz = 1; r = 0.5, γ = 0.9. Where does "
                 "the mass go?",
        answer=(
            "Target atom r + γz = {target}, between support points {lo} and {hi}.",
            "Linear split: {wl} to {lo} and {wu} to {hi} (the nearer one gets more).",
            "Mean preserved ({target}), variance created from nothing: "
            "Δz² (u − b)(b − l) = {var}.",
        ),
        links=(Link(PAGE, {"shape": "point"}, shows="The point mass and its two-atom "
                                                    "projection."),),
        page=PAGE,
        numbers=_point_numbers,
    ),
    Question(
        id="c51.why-distributional",
        topic=TOPIC,
        difficulty=1,
        question="Why learn a distribution of returns instead of only its mean?",
        answer=(
            "The distributional Bellman equation Z(s, a) =_D R + γ Z(S′, A′) carries the whole "
            "law of the return; its mean is the usual Q.",
            "Empirically (C51, QR-DQN, IQN) it improves deep RL even when acting on the mean: "
            "richer targets shape the representation and stabilise learning.",
            "It lets you act on risk (quantiles, CVaR) and see multimodal outcomes (a "
            "bimodal return whose mean no episode ever gets).",
            "The distributional operator is a contraction in the Wasserstein metric, not in "
            "KL; C51's projection plus cross-entropy is a practical approximation.",
        ),
        links=(Link(PAGE, {"shape": "bimodal"}, shows="A bimodal source: the mean sits where "
                                                      "there is almost no mass."),),
        page=PAGE,
    ),
    Question(
        id="c51.terminal",
        topic=TOPIC,
        difficulty=1,
        question="How does C51 handle a terminal transition?",
        answer=(
            "With d = 1 the target is r alone: every atom maps to T z_j = r, a point mass.",
            "Projection splits it between the two support points around r, or puts it all "
            "on one if r is on the grid.",
            "Forgetting (1 − d) bootstraps from the next episode's first state: the same bug "
            "as in scalar DQN, now in distribution.",
        ),
        links=(Link(PAGE, {"done": "1"}, shows="done: the target collapses to a point at r."),),
        page=PAGE,
    ),
    Question(
        id="c51.support-range",
        topic=TOPIC,
        difficulty=2,
        question="How do you choose V_min, V_max and the number of atoms?",
        answer=(
            "The support must cover the returns: |G| ≤ r_max / (1 − γ); clipped atoms pile up "
            "at the ends and bias the mean.",
            "Δz = (V_max − V_min)/(N − 1) sets the resolution: each projection adds variance "
            "up to Δz²/4 per atom, so a coarse grid blurs the distribution.",
            "C51 used [−10, 10] with 51 atoms on clipped Atari rewards; quantile methods "
            "(QR-DQN) avoid a fixed support altogether.",
        ),
        links=(Link(PAGE, {"atoms": "5"}, shows="5 atoms: a coarse support blurs the target."),
               Link(PAGE, {"atoms": "101"}, shows="101 atoms: the projection is almost exact.")),
        page=PAGE,
    ),
)
