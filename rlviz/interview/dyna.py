"""Interview questions on Dyna: planning with a learned model, model-based vs model-free."""

from __future__ import annotations

import functools

from rlviz.interview import Link, Prediction, Question
from rlviz.interview.whiteboard import dyna as wb

PAGE = "dyna"


@functools.lru_cache(maxsize=1)
def _book():
    from rlviz import planning as pl

    return pl.planning_study(pl.DYNA_MAZE)


@functools.lru_cache(maxsize=4)
def _changing(which: str, kappa: float = 1e-3):
    from rlviz import planning as pl

    (before, after), change_at, steps = pl.CHANGES[which]
    return pl.changing_study(before, after, change_at=change_at, steps=steps, kappa=kappa)


def _figure_8_2_numbers() -> dict[str, str]:
    from rlviz import planning as pl

    study = _book()
    settle = {n: pl.settled_at(study.mean_lengths(n)) for n in study.ns}
    second = {n: study.mean_lengths(n)[1] for n in study.ns}
    return {
        "settle_0": str(settle[0]), "settle_5": str(settle[5]), "settle_50": str(settle[50]),
        "second_0": f"{second[0]:.0f}", "second_50": f"{second[50]:.0f}",
        "shortest": str(study.maze.shortest[0]), "runs": str(study.results[0].runs),
    }


def _first_episode_numbers() -> dict[str, str]:
    study = _book()
    first = study.results[0].lengths[0, :, 0]
    gap = max(float(abs(study.results[n].lengths[0, :, 0] - first).max()) for n in study.ns)
    return {"walk": f"{study.walk:.0f}", "mean_first": f"{first.mean():.0f}",
            "runs": str(len(first)), "gap": f"{gap:.0f}"}


def _halfway_numbers() -> dict[str, str]:
    from rlviz import planning as pl
    from rlviz.figures import planning as figs

    study = _book()
    cells = figs.figs_cells(study.maze)
    out = {"cells": str(len(cells))}
    for n, (q, into, length) in study.halfway.items():
        out[f"arrows_{n}"] = str(int(pl.greedy_mask(q[cells]).any(axis=1).sum()))
        out[f"into_{n}"], out[f"length_{n}"] = str(into), str(length)
    return out


def _shortcut_numbers() -> dict[str, str]:
    study, flat = _changing("shortcut"), _changing("shortcut", 0.0)
    best = study.maze.shortest[1]
    share = {p: float((v == best).mean()) for p, v in study.path_lengths().items()}
    share_flat = {p: float((v == best).mean()) for p, v in flat.path_lengths().items()}
    gain = study.gain_after()
    return {
        "before": str(study.maze.shortest[0]), "after": str(best),
        "share_plus": f"{share['dyna_q_plus']:.0%}", "share_q": f"{share['dyna_q']:.0%}",
        "share_flat": f"{share_flat['dyna_q_plus']:.0%}",
        "gain_plus": f"{gain['dyna_q_plus']:.0f}", "gain_q": f"{gain['dyna_q']:.0f}",
        "runs": str(study.result.runs),
    }


def _blocking_numbers() -> dict[str, str]:
    study = _changing("blocking")
    gain = study.gain_after()
    return {"before": str(study.maze.shortest[0]), "after": str(study.maze.shortest[1]),
            "gain_plus": f"{gain['dyna_q_plus']:.0f}", "gain_q": f"{gain['dyna_q']:.0f}",
            "change_at": str(study.change_at)}


@functools.lru_cache(maxsize=4)
def _sweeping(theta: float | None = None, gamma: float = 0.95, levels: tuple[int, ...] = ()):
    """The sweeping view's study, cached: 4 runs, n = 5, α = 1.

    Every maze size unless ``levels`` are given, and the page's θ = 10⁻⁴ unless another is.
    """
    from rlviz import planning as pl

    return pl.sweeping_study(levels or pl.LEVELS, runs=4, n=5, alpha=1.0, gamma=gamma,
                             theta=pl.BOOK_THETA if theta is None else theta)


def _sweeping_numbers() -> dict[str, str]:
    study = _sweeping()
    dq, ps = study.summary("dyna_q")[0], study.summary("prioritized")[0]
    out = {"runs": str(study.results[study.levels[0]].runs)}
    for i, states in enumerate(study.states):
        out[f"states_{i}"] = str(states)
        out[f"dq_{i}"], out[f"ps_{i}"] = f"{dq[i]:,.0f}", f"{ps[i]:,.0f}"
        out[f"ratio_{i}"] = f"{dq[i] / ps[i]:,.0f}"
    return out


def _theta_numbers() -> dict[str, str]:
    def counts(study) -> str:
        return " / ".join(f"{x:,.0f}" for x in study.summary("prioritized")[0])

    def reached(theta: float, gamma: float = 0.5, level: int = 0) -> str:
        return f"{_sweeping(theta, gamma, (level,)).reached('prioritized').mean():.0%}"

    base, wide = _sweeping(), _sweeping(1e-2)
    far = base.shortest[-1]
    same = counts(base) == counts(wide)
    return {"far": str(far), "start_095": f"{0.95 ** far:.3f}",
            "ps_095": counts(base) if same else f"{counts(base)} and {counts(wide)}",
            "reached_05": reached(1e-2), "reached_0": reached(0.0),
            "reached_03": reached(0.3, 0.95, max(base.levels))}


QUESTIONS = (
    Question(
        id="dyna.what",
        topic="Planning and search",
        difficulty=1,
        question="What is Dyna-Q? Write its update loop and say what n = 0 gives you.",
        answer=(
            "After each real step (S, A, R, S'): (d) a Q-learning update "
            "Q(S, A) += α[R + γ max_a Q(S', a) − Q(S, A)]; (e) store Model(S, A) = (R, S'); "
            "(f) n times: pick a previously seen state and an action taken there, read (R, S') "
            "from the model, and make the same update.",
            "Learning and planning are one update applied to two sources of transitions: real "
            "experience and simulated experience from the learned model.",
            "n = 0 is exactly one-step Q-learning (on this page it reproduces rlviz.td's "
            "Q-learning draw for draw). Each real step costs 1 + n updates.",
            "On the Dyna maze ({runs} runs) the curve settles after about {settle_0} episodes "
            "for n = 0, {settle_5} for n = 5 and {settle_50} for n = 50 (the book: about 25, 5 "
            "and 3).",
        ),
        links=(
            Link(PAGE, {}, shows="Figure 8.2: the n = 50 curve is at the shortest path within "
                 "a few episodes; n = 0 takes dozens."),
            Link(PAGE, {"ns": "0,1"}, shows="One replay per step already cuts the episodes "
                 "needed by a large factor."),
        ),
        page=PAGE,
        prediction=Prediction(
            prompt="On the Dyna maze, roughly how many episodes does n = 50 need before its "
                   "episodes are near the shortest path?",
            options=("About 3", "About 10", "About 25", "About 50"),
            answer=0,
        ),
        numbers=_figure_8_2_numbers,
        whiteboard=wb.dyna_q_step,
    ),
    Question(
        id="dyna.model_based",
        topic="Planning and search",
        difficulty=2,
        question="Model-based vs model-free RL: what does a learned model buy you, and what "
                 "does it cost?",
        answer=(
            "It buys sample efficiency: every real transition is reused many times. In episode "
            "2 of the Dyna maze, n = 0 needs {second_0} steps on average and n = 50 needs "
            "{second_50} (shortest path {shortest}).",
            "It costs computation (1 + n updates per real step) and memory for the model; "
            "planning is worth it when real experience is expensive and compute is cheap.",
            "It adds model error: the agent plans with what it believes, so a wrong or stale "
            "model gives confidently wrong values (the changing mazes on this page).",
            "A table model is exact in a deterministic world after one visit; in a stochastic "
            "or large world the model must be learned and generalise, and its errors compound "
            "in long rollouts.",
        ),
        links=(
            Link(PAGE, {"ns": "0,50"}, shows="Same dice, same experience so far: the gap "
                 "between the two curves is what the model buys."),
            Link(PAGE, {"exp": "shortcut"}, shows="The cost of a stale model: Dyna-Q never "
                 "learns of the shortcut."),
        ),
        page=PAGE,
        numbers=_figure_8_2_numbers,
    ),
    Question(
        id="dyna.first_episode",
        topic="Planning and search",
        difficulty=2,
        question="On the Dyna maze, why is the first episode equally long for every number of "
                 "planning steps n?",
        answer=(
            "Q starts at 0 and every reward is 0 until the goal is reached, so every update, "
            "real or planned, computes 0 + γ·0 − 0 and changes nothing.",
            "With all values tied, ε-greedy with random tie-breaking is the uniform random "
            "walk, and paired dice make it the very same walk for every n (largest "
            "difference over {runs} runs: {gap} steps).",
            "Its expected length solves (I − P)m = 1 over the non-goal states: {walk} steps; "
            "the runs here average {mean_first}.",
            "Planning only spreads information the agent already has; it cannot create the "
            "first reward. Optimistic initial values or an exploration bonus would change the "
            "first walk.",
        ),
        links=(Link(PAGE, {}, shows="The caption under Figure 8.2 and the known-answer rows: "
                    "the first episode is identical for every n."),),
        page=PAGE,
        prediction=Prediction(
            prompt="Which planning budget has the shortest first episode?",
            options=("n = 0", "n = 5", "n = 50", "All the same"),
            answer=3,
        ),
        numbers=_first_episode_numbers,
    ),
    Question(
        id="dyna.halfway",
        topic="Planning and search",
        difficulty=2,
        question="Halfway through the second episode, how far has value spread for one-step "
                 "Q-learning and for Dyna-Q with n = 50? Why?",
        answer=(
            "After the first episode, Q-learning has changed one value: the step into G, the "
            "only update whose target held a reward. Halfway through episode 2 ({into_0} of "
            "{length_0} steps) its greedy policy has arrows in {arrows_0} of {cells} cells.",
            "Dyna-Q with n = 50 replays remembered steps 50 times per real step, so the value "
            "of G propagates backwards along every remembered route: arrows in {arrows_50} of "
            "{cells} cells after {into_50} steps.",
            "One-step backups move value one state per update that reaches it; planning does "
            "the backing up in the agent's head instead of in the world (Sutton & Barto, "
            "Figure 8.3).",
        ),
        links=(Link(PAGE, {}, shows="Figure 8.3: one arrow beside G for n = 0, a whole "
                    "route of arrows for n = 50."),),
        page=PAGE,
        numbers=_halfway_numbers,
    ),
    Question(
        id="dyna.shortcut",
        topic="Exploration",
        difficulty=3,
        question="The world changes and a shortcut opens. Why does Dyna-Q never use it, and "
                 "how does Dyna-Q+ find it?",
        answer=(
            "Dyna-Q's model says the wall is still there, its values agree with its model, and "
            "its greedy policy never sends it to look: planning makes it more sure of the old "
            "route ({before} steps). Final greedy path through the shortcut ({after} steps): "
            "{share_q} of {runs} runs.",
            "Dyna-Q+ plans with the reward R + κ√τ, τ the real steps since the pair was last "
            "tried; long-untried moves (untried ones replayed as 'stay, reward 0') come to look "
            "valuable, the agent goes and tries them, and the model is corrected.",
            "Result: {share_plus} of runs take the shortcut, and after the change Dyna-Q+ "
            "collects {gain_plus} rewards against {gain_q}.",
            "With κ = 0 the bonus is gone and Dyna-Q+ finds the shortcut in {share_flat} of "
            "runs: it is the bonus, not replaying untried moves, that explores.",
        ),
        links=(
            Link(PAGE, {"exp": "shortcut"}, shows="Figure 8.5: Dyna-Q+'s curve steepens after "
                 "the change; its model figure shows the moves through the new gap."),
            Link(PAGE, {"exp": "shortcut", "kappa": "0.0"}, shows="κ = 0: the two curves stay "
                 "together; neither finds the shortcut."),
        ),
        page=PAGE,
        prediction=Prediction(
            prompt="In the shortcut maze, which agent's final greedy path takes the shortcut?",
            options=("Dyna-Q", "Dyna-Q+", "Both", "Neither"),
            answer=1,
        ),
        numbers=_shortcut_numbers,
        whiteboard=wb.dyna_q_plus_reward,
    ),
    Question(
        id="dyna.blocking",
        topic="Planning and search",
        difficulty=2,
        question="In the blocking maze the short path is walled off. Does plain Dyna-Q recover, "
                 "and why is that case easier than a shortcut?",
        answer=(
            "Yes, slowly: the agent keeps walking into the new wall, each real step corrects "
            "its model there, and planning then spreads the lower values until another route "
            "looks better. Shortest path {before} → {after} steps at step {change_at}.",
            "A world that gets worse is discovered by following the policy; a world that gets "
            "better is not, since the greedy policy never visits what it believes is bad. "
            "That is why only the shortcut needs an exploration bonus to be found at all.",
            "Dyna-Q+ still recovers faster: after the change it collects {gain_plus} rewards "
            "against Dyna-Q's {gain_q} (mean over runs).",
        ),
        links=(Link(PAGE, {"exp": "blocking"}, shows="Figure 8.4: both curves go flat at the "
                    "change, then both climb again; Dyna-Q+ first."),),
        page=PAGE,
        numbers=_blocking_numbers,
    ),
    Question(
        id="dyna.step_size",
        topic="TD learning",
        difficulty=1,
        question="Why can the changing-maze experiments use α = 1 with a table model, and "
                 "what would break in a stochastic world?",
        answer=(
            "The mazes are deterministic: one sample of (S, A) gives the true (R, S'), so the "
            "model is exact after one visit and the update may jump straight to its target.",
            "With α = 1 each planning update is a value-iteration backup of one pair, "
            "Q(S, A) ← R + γ max_a Q(S', a), on the known part of the model, in random order.",
            "In a stochastic world a last-outcome table is a biased sample; the model should "
            "store counts (an expected model) or be sampled, and α < 1 averages the noise.",
        ),
        links=(
            Link(PAGE, {"exp": "blocking"}, shows="α = 1 (the default here): each planning "
                 "update copies its target."),
            Link(PAGE, {"exp": "blocking", "c_alpha": "0.1"}, shows="α = 0.1: the same "
                 "experience, far slower propagation."),
        ),
        page=PAGE,
    ),
    Question(
        id="dyna.prioritized_sweeping",
        topic="Planning and search",
        difficulty=2,
        question="What is prioritized sweeping, and why does it need so many fewer updates "
                 "than Dyna-Q to find the shortest path?",
        answer=(
            "Dyna-Q replays remembered moves uniformly at random, so most of its planning "
            "updates land where nothing has changed and move no value at all.",
            "Prioritized sweeping keeps a queue of pairs ordered by how much their value would "
            "change, P = |R + γ max_a Q(S', a) − Q(S, A)|; it updates the top pair, then "
            "recomputes the priority of every pair that leads into it (the model's "
            "predecessors) and queues those above the threshold θ.",
            "So value is pushed backwards from where it changed, one useful update after "
            "another, like a backward search from the goal.",
            "On the Dyna maze at {states_0}, {states_1} and {states_2} states ({runs} runs, "
            "n = 5) Dyna-Q needs {dq_0}, {dq_1} and {dq_2} updates before its greedy path is "
            "shortest, prioritized sweeping {ps_0}, {ps_1} and {ps_2}: ×{ratio_0}, ×{ratio_1}, "
            "×{ratio_2} (Sutton & Barto, Example 8.4).",
        ),
        links=(
            Link(PAGE, {"exp": "sweeping"}, shows="Example 8.4: the updates each planner "
                 "needs at each maze size, on a log axis."),
            Link(PAGE, {"exp": "sweeping", "w_n": "1"}, shows="n = 1: Dyna-Q's count grows, "
                 "prioritized sweeping's hardly moves."),
        ),
        page=PAGE,
        prediction=Prediction(
            prompt="On the 188-state maze, about how many times fewer updates than Dyna-Q "
                   "does prioritized sweeping need?",
            options=("About 2", "About 5", "About 40", "About 1,000"),
            answer=2,
        ),
        numbers=_sweeping_numbers,
    ),
    Question(
        id="dyna.sweeping_theta",
        topic="Planning and search",
        difficulty=3,
        question="Prioritized sweeping queues a pair only if its priority is above θ. What "
                 "does θ cost on the Dyna maze, and when does it break the search?",
        answer=(
            "With α = 1 on a deterministic maze, the first change of a value d steps from the "
            "goal is the whole target, about γ^d. The start is {far} steps from the goal on the "
            "largest maze, so at γ = 0.95 its priority is γ^{far} ≈ {start_095}: above every θ "
            "up to 10⁻², and θ changes nothing there ({ps_095} updates at the page's "
            "θ = 10⁻⁴ and at θ = 10⁻²). A θ above γ^{far}, such as 0.3, does cut the search "
            "short: the greedy path on that maze is then shortest in {reached_03} of the runs.",
            "At γ = 0.5 the value dies out fast: γ^d < 10⁻² once d ≥ 7. Those pairs are never "
            "queued, value never reaches the start, and on the 47-state maze the greedy path is "
            "shortest in {reached_05} of the runs at θ = 10⁻² against {reached_0} at θ = 0.",
            "So θ trades work for reach: a larger θ ends planning sooner but cannot back up a "
            "change smaller than θ, and γ^d sets how small the changes far from the reward are.",
            "In a stochastic world the priority must use the expected update, "
            "Σ p(s′, r | s, a)[r + γ max Q(s′, ·)] − Q(s, a), which costs a sum over outcomes "
            "per update (Sutton & Barto, §8.4–8.5).",
        ),
        links=(
            Link(PAGE, {"exp": "sweeping", "theta": "0.01"}, shows="θ = 10⁻² at γ = 0.95: the "
                 "same counts as θ = 10⁻⁴."),
            Link(PAGE, {"exp": "sweeping", "theta": "0.3"}, shows="θ = 0.3 at γ = 0.95: "
                 "above the start's priority on the largest maze, which is then never solved."),
            Link(PAGE, {"exp": "sweeping", "theta": "0.01", "gamma": "0.5"}, shows="θ = 10⁻² "
                 "at γ = 0.5: prioritized sweeping never gets the start's value right."),
        ),
        page=PAGE,
        prediction=Prediction(
            prompt="At γ = 0.95, what does raising θ from 10⁻⁴ to 10⁻² do to prioritized "
                   "sweeping's count of updates?",
            options=("Halves it", "Nothing", "Doubles it", "It never finishes"),
            answer=1,
        ),
        numbers=_theta_numbers,
    ),
)
