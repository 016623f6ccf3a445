"""The short-corridor learners written one run at a time, step by step, as plain loops.

The reference the vectorised ``rlviz.policy_gradient.train`` must equal: same random numbers
(run r's n-th step reads number n of ``SeedSequence(seed).spawn(runs)[r]``), same updates,
written as the book's pseudocode with Python floats.
"""

from __future__ import annotations

import math

import numpy as np

from rlviz import policy_gradient as pg

NEXT = [[1, 0], [0, 2], [3, 1]]  # right, left; 3 is the goal


def _p_right(theta_r: float, theta_l: float) -> float:
    return 1.0 / (1.0 + math.exp(theta_l - theta_r))


class _Dice:
    def __init__(self, seed_seq):
        self._rng = np.random.default_rng(seed_seq)
        self._buf = self._rng.random(0)
        self._i = 0

    def next(self) -> float:
        if self._i >= self._buf.size:
            self._buf = self._rng.random(4096)
            self._i = 0
        u = float(self._buf[self._i])
        self._i += 1
        return u


def run_loop(method: pg.Method, *, runs: int, episodes: int, p0: float, seed: int,
             max_steps: int = pg.MAX_STEPS, budget: int | None = None
             ) -> dict[str, np.ndarray]:
    """Returns per episode, π(right) after each episode, the episode at which each run ran
    away or was cut (−1 if not) and the steps each run took, for one learner."""
    if budget is None:
        budget = pg.AC_STEP_BUDGET if method.kind == "actor_critic" else pg.STEP_BUDGET
    returns = np.full((runs, episodes), np.nan)
    p_after = np.full((runs, episodes), np.nan)
    stopped = np.full(runs, -1)
    cut = np.full(runs, -1)
    steps = np.zeros(runs, dtype=np.int64)
    cells = list(pg.CRITICS[method.critic])
    children = np.random.SeedSequence(seed).spawn(runs)
    half = 0.5 * math.log(p0 / (1.0 - p0))
    for r in range(runs):
        dice = _Dice(children[r])
        th_r, th_l = half, -half
        w = 0.0
        v = [0.0] * (max(cells) + 1)
        for k in range(episodes):
            if steps[r] >= budget:  # out of steps: no new episode
                cut[r] = k
                break
            s, t = 0, 0
            acts = []
            ran_away = False
            while s != 3:
                if t == max_steps:
                    ran_away = True
                    break
                p = _p_right(th_r, th_l)
                a = 0 if dice.next() < p else 1
                s2 = NEXT[s][a]
                t += 1
                if method.kind == "actor_critic":
                    delta = -1.0 + v[cells[s2]] - v[cells[s]]
                    v[cells[s]] += method.alpha_w * delta
                    z = (1.0 - p) if a == 0 else -p  # ∂ ln π(a) / ∂θ_right; θ_left gets −z
                    th_r += method.alpha_theta * delta * z
                    th_l -= method.alpha_theta * delta * z
                acts.append(a)
                s = s2
            steps[r] += t
            if ran_away:
                stopped[r] = k
                returns[r, k:] = -float(max_steps)
                break
            if method.kind != "actor_critic":
                p = _p_right(th_r, th_l)  # the policy the episode was played with
                T = len(acts)
                g = 0.0
                for i, a in enumerate(acts):
                    G = -(T - i)
                    if method.kind == "reinforce":
                        psi = G
                    else:
                        psi = G - w
                        w += method.alpha_w * psi
                    g += psi * ((1.0 - p) if a == 0 else -p)
                th_r += method.alpha_theta * g
                th_l -= method.alpha_theta * g
            returns[r, k] = -t
            p_after[r, k] = _p_right(th_r, th_l)
    return dict(returns=returns, p_right=p_after, ran_away=stopped, cut=cut,
                steps=steps)
