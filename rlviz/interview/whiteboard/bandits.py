"""Bandits at a whiteboard: UCB's choice and the incremental sample average."""

import numpy as np


def ucb_action(Q, N, t, c):
    """argmax_a Q(a) + c sqrt(ln t / N(a)); an arm never pulled goes first."""
    bonus = c * np.sqrt(np.log(t) / np.maximum(N, 1))
    return int(np.argmax(np.where(N > 0, Q + bonus, np.inf)))


def update(Q, N, a, reward, alpha=None):
    """Q(a) <- Q(a) + (R - Q(a)) / N(a): the running mean (or a constant step alpha)."""
    Q, N = Q.copy(), N.copy()
    N[a] += 1
    Q[a] += (1.0 / N[a] if alpha is None else alpha) * (reward - Q[a])
    return Q, N


def live_check(settings):
    """UCB's choice and the sample-average update on a fixed-seed table of the page's k arms."""
    from rlviz.bandits import agents
    from rlviz.interview.whiteboard import LiveCheck, setting

    arms, runs = int(setting(settings, "arms", 10)), 8
    c, t = float(setting(settings, "ucb_c", 2.0)), int(setting(settings, "t", 100))
    rng = np.random.default_rng(0)
    q = rng.normal(size=(arms, runs))
    n = rng.integers(1, max(2, t // arms + 1), size=(arms, runs)).astype(float)  # all tried
    ctx = agents.Context(arms=arms, runs=runs, cells=np.zeros((arms, runs), np.uint64),
                         local=np.arange(runs))
    state = {"Q": q.copy(), "N": n.copy()}
    chosen = agents.UCB(c=c).act(state, ctx, t - 1)
    rewards = rng.normal(size=runs)
    agents.UCB(c=c).learn(state, ctx, t - 1, ctx.flat(chosen), rewards)
    board_a = np.array([ucb_action(q[:, i], n[:, i], t, c) for i in range(runs)])
    board_q = np.stack([update(q[:, i], n[:, i], board_a[i], rewards[i])[0]
                        for i in range(runs)], axis=1)
    return LiveCheck(f"UCB's arm at step {t} (c = {c:g}) and Q after the update, {runs} tables",
                     np.concatenate([board_a, board_q.ravel()]),
                     np.concatenate([chosen, state["Q"].ravel()]), tol=1e-12)
