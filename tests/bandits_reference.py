"""A per-run, plain-Python reference for ``rlviz.bandits.race``.

Each run is played step by step with Python lists and scalars, reading the same counter-based
random numbers as the vectorised race (recomputed here with Python integers), so the two must
agree draw for draw: the same action in every step of every run. Transcendental functions are
numpy's scalar ones, which round exactly like numpy's array loops.
"""

from __future__ import annotations

import math

import numpy as np

from rlviz import bandits as B
from rlviz.bandits import beta as beta_module

M64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
LOW32 = 0xFFFFFFFF


def mix(z: int) -> int:
    """SplitMix64's finaliser on a Python integer."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


class Draws:
    """The race's random numbers, one at a time."""

    def __init__(self, seed: int):
        self.key = B.Noise(seed).key

    def bits(self, stream: int, step: int, run: int, arm: int = 0, draw: int = 0) -> int:
        index = (stream << 58) | (step << 36) | (run << 16) | (arm << 8) | draw
        return mix((self.key + index * GOLDEN) & M64)

    def unit(self, *index: int) -> float:
        return ((self.bits(*index) >> 11) + 0.5) * 2.0**-53

    def pair(self, *index: int) -> tuple[float, float]:
        b = self.bits(*index)
        r = float(np.sqrt(np.log(((b >> 32) + 0.5) * 2.0**-32) * -2.0))
        angle = np.float32((b & LOW32) * (2.0 * math.pi * 2.0**-32))
        return r * float(np.cos(angle)), r * float(np.sin(angle))

    def normal(self, *index: int) -> float:
        return self.pair(*index)[0]

    def paired_normal(self, stream: int, step: int, run: int, arm: int) -> np.float32:
        """``gaussian_rows``: arms 2k and 2k + 1 share the draw at arm 2k (cosine, then sine),
        in single precision."""
        b = self.bits(stream, step, run, arm - arm % 2)
        u1 = np.float32(((b >> 32) + 0.5) * 2.0**-32)
        r = np.sqrt(np.log(u1) * np.float32(-2.0))
        angle = np.float32((b & LOW32) * (2.0 * math.pi * 2.0**-32))
        return r * (np.sin(angle) if arm % 2 else np.cos(angle))


S = B.Stream


# ------------------------------------------------------------------------------ testbeds
def initial_means(testbed: B.Testbed, draws: Draws, run: int) -> list[float]:
    arms = range(testbed.arms)
    if isinstance(testbed, B.GaussianTestbed):
        return [testbed.mean + testbed.spread * draws.normal(S.MEANS, 0, run, a) for a in arms]
    if isinstance(testbed, B.BernoulliTestbed):
        if testbed.probs is not None:
            return list(testbed.probs)
        return [draws.unit(S.MEANS, 0, run, a) for a in arms]
    return [float(testbed.start)] * testbed.arms


def drift(testbed: B.Testbed, draws: Draws, run: int, step: int, q: list[float]) -> list[float]:
    if testbed.stationary:
        return q
    return [q[a] + float(draws.paired_normal(S.WALK, step, run, a)) * testbed.walk_sd
            for a in range(len(q))]


def pay(testbed: B.Testbed, draws: Draws, run: int, step: int, arm: int, mean: float) -> float:
    if isinstance(testbed, B.BernoulliTestbed):
        return 1.0 if draws.unit(S.REWARD, step, run, arm) < mean else 0.0
    return mean + testbed.noise_sd * draws.normal(S.REWARD, step, run, arm)


# ------------------------------------------------------------------------------ agents
def argmax_ties(values: list[float], draws: Draws, run: int, step: int) -> int:
    top = max(values)
    tied = [a for a, v in enumerate(values) if v == top]
    if len(tied) == 1:
        return tied[0]
    keys = [draws.unit(S.TIE, step, run, a) for a in tied]
    return tied[keys.index(max(keys))]


def first_argmax(values: list[float]) -> int:
    return values.index(max(values))


class LoopAgent:
    """One agent in one run: plain Python state."""

    def __init__(self, agent: B.Agent, arms: int, draws: Draws, run: int):
        self.agent, self.arms, self.draws, self.run = agent, arms, draws, run
        k = arms
        if isinstance(agent, B.EpsilonGreedy | B.Optimistic | B.UCB):
            self.q = [float(getattr(agent, "initial", 0.0))] * k
            self.n = [0.0] * k
        elif isinstance(agent, B.GaussianThompson):
            self.n, self.s = [0.0] * k, [0.0] * k
            self.mean = [np.float32(agent.prior_mean)] * k  # the samples are single precision
            self.sd = [np.float32(agent.prior_sd)] * k
        elif isinstance(agent, B.BetaThompson):
            self.p, self.q = [float(agent.alpha)] * k, [float(agent.beta)] * k
        elif isinstance(agent, B.Gradient):
            self.h, self.baseline = [0.0] * k, 0.0

    def act(self, t: int) -> int:
        a, d, r = self.agent, self.draws, self.run
        if isinstance(a, B.EpsilonGreedy):
            greedy = argmax_ties(self.q, d, r, t)
            eps = a.epsilon / (1.0 + a.decay * t)
            if eps <= 0.0:
                return greedy
            b = d.bits(S.EXPLORE, t, r, 0)
            if (b >> 32) * 2.0**-32 < eps:
                return ((b & LOW32) * self.arms) >> 32
            return greedy
        if isinstance(a, B.Optimistic):
            return argmax_ties(self.q, d, r, t)
        if isinstance(a, B.UCB):
            log_t = math.log(t + 1.0)
            values = [
                self.q[k] + a.c * float(np.sqrt(log_t / max(self.n[k], 1.0)))
                if self.n[k] > 0 else math.inf
                for k in range(self.arms)
            ]
            return argmax_ties(values, d, r, t)
        if isinstance(a, B.GaussianThompson):
            theta = [d.paired_normal(S.SAMPLE, t, r, k) * self.sd[k] + self.mean[k]
                     for k in range(self.arms)]
            return first_argmax(theta)
        if isinstance(a, B.BetaThompson):
            single = beta_module.single_precision(a.alpha, a.beta)
            theta = [beta(d, t, r, k, self.p[k], self.q[k], single) for k in range(self.arms)]
            return first_argmax(theta)
        if isinstance(a, B.Gradient):  # e = exp(H - max H) and its sums in single precision
            top = max(self.h)
            self.e = [np.exp(np.float32(h - top)) for h in self.h]
            self.total = np.float32(0.0)
            for x in self.e:
                self.total += x
            target = np.float32(d.unit(S.SAMPLE, t, r, 0)) * self.total
            cum, below = np.float32(0.0), 0
            for x in self.e:
                cum += x
                below += bool(cum <= target)
            return min(below, self.arms - 1)
        raise TypeError(a)

    def learn(self, t: int, arm: int, reward: float) -> None:
        a = self.agent
        if isinstance(a, B.EpsilonGreedy | B.Optimistic | B.UCB):
            self.n[arm] += 1.0
            step_size = getattr(a, "step_size", None)
            rate = 1.0 / self.n[arm] if step_size is None else step_size
            self.q[arm] += rate * (reward - self.q[arm])
        elif isinstance(a, B.GaussianThompson):
            self.n[arm] += 1.0
            self.s[arm] += reward
            precision = 1.0 / a.prior_sd**2 + self.n[arm] / a.noise_sd**2
            prior = a.prior_mean / a.prior_sd**2
            self.mean[arm] = np.float32((prior + self.s[arm] / a.noise_sd**2) / precision)
            self.sd[arm] = np.float32(1.0 / float(np.sqrt(precision)))
        elif isinstance(a, B.BetaThompson):
            self.p[arm] += reward
            self.q[arm] += 1.0 - reward
        elif isinstance(a, B.Gradient):
            if a.baseline:
                self.baseline += (reward - self.baseline) / (t + 1.0)
            step = a.alpha * (reward - self.baseline)
            scale = step / float(self.total)
            self.h = [h - scale * float(x) for h, x in zip(self.h, self.e, strict=True)]
            self.h[arm] += step


def beta(draws: Draws, t: int, run: int, arm: int, p: float, q: float, single: bool) -> float:
    """Cheng's BB/BC with the race's draw scheme (see ``rlviz.bandits.beta.draws``).

    Attempts are decided in double precision; the accepted candidate's ``W`` is computed in
    single precision as the race does (``single``: the prior allows it), else in double.
    """
    f32 = np.float32
    a = p + q
    lam = float(np.sqrt((2.0 * p * q - a) / (a - 2.0))) if min(p, q) > 1.0 else min(p, q)
    inv = 1.0 / lam
    cinv = (p + lam) * inv
    for j in range(beta_module.ATTEMPTS):
        b = draws.bits(S.SAMPLE, t, run, arm, j)
        high, low = (b >> 32) + 0.5, (b & LOW32) + 0.5  # u1 = high / 2**32, u2 = low / 2**32
        logit = float(np.log(high / (2.0**32 - high)))
        log_z = float(np.log(high * high * low)) + (math.log(4.0) - 96.0 * math.log(2.0))
        w = float(np.exp(logit * inv)) * p
        if float(np.log(a / (q + w))) * a + logit * cinv >= log_z:
            if not single:
                return w / (q + w)
            logit32 = np.log((f32(b >> 32) + f32(0.5)) / (f32((b >> 32) ^ LOW32) + f32(0.5)))
            w = float(np.exp(logit32 * f32(inv)) * f32(p))
            return w / (q + w)
    return p / a


# ------------------------------------------------------------------------------ the race
def race_loop(agents, testbed: B.Testbed, *, runs: int, steps: int, seed: int,
              first_run: int = 0) -> dict:
    """Play runs ``first_run .. first_run + runs - 1`` one by one; sums as ``Race`` fields."""
    draws = Draws(seed)
    k_agents, arms = len(agents), testbed.arms
    out = {
        "reward": np.zeros((k_agents, steps)),
        "optimal": np.zeros((k_agents, steps)),
        "regret": np.zeros((k_agents, steps)),
        "final_regret": np.zeros((k_agents, runs)),
        "counts": np.zeros((k_agents, runs, arms), dtype=np.int64),
        "choice_by_rank": np.zeros((k_agents, steps, arms)),
        "actions": np.zeros((k_agents, runs, steps), dtype=np.int64),
    }
    for i, run in enumerate(range(first_run, first_run + runs)):
        for k, agent in enumerate(agents):
            q = initial_means(testbed, draws, run)
            player = LoopAgent(agent, arms, draws, run)
            cumulative = 0.0
            for t in range(steps):
                q = drift(testbed, draws, run, t, q) if t else q
                arm = player.act(t)
                reward = pay(testbed, draws, run, t, arm, q[arm])
                player.learn(t, arm, reward)
                best = max(q)
                cumulative += best - q[arm]
                out["actions"][k, i, t] = arm
                out["reward"][k, t] += reward / runs
                out["optimal"][k, t] += (q[arm] >= best) / runs
                out["regret"][k, t] += cumulative / runs
                out["choice_by_rank"][k, t, sum(x > q[arm] for x in q)] += 1.0 / runs
                out["counts"][k, i, arm] += 1
            out["final_regret"][k, i] = cumulative
    return out
