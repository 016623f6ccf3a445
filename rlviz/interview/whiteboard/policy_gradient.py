"""REINFORCE at a whiteboard: the softmax score and one episode's gradient estimate."""

import numpy as np


def softmax_score(theta, a):
    """∇θ log π(a) for π = softmax(θ) over one-hot action features: onehot(a) − π."""
    pi = np.exp(theta - theta.max())
    pi /= pi.sum()
    return np.eye(len(theta))[a] - pi


def reinforce_gradient(theta, actions, rewards, baseline=0.0):
    """One episode's estimate Σ_t (G_t − b) ∇θ log π(A_t), returns undiscounted."""
    returns = np.cumsum(rewards[::-1])[::-1]  # G_t = R_{t+1} + … + R_T
    terms = zip(returns, actions, strict=True)
    return sum((g - baseline) * softmax_score(theta, a) for g, a in terms)


def live_check(settings):
    """The page's worked score and a fixed-seed episode's REINFORCE estimate at its θ and b."""
    from rlviz import policy_gradient as pg
    from rlviz.interview.whiteboard import LiveCheck, setting

    theta = np.zeros(2)
    theta[pg.RIGHT] = float(setting(settings, "wb_tr", 0.5))
    theta[pg.LEFT] = float(setting(settings, "wb_tl", -0.5))
    a, b = int(setting(settings, "wb_a", pg.LEFT)), float(setting(settings, "wb_b", -10.0))
    rng = np.random.default_rng(0)
    actions = rng.integers(0, 2, size=12)
    rewards = -np.ones(12)  # the corridor pays −1 a step
    pi = pg.policy(theta)
    board = np.concatenate([softmax_score(theta, a),
                            reinforce_gradient(theta, actions, rewards, b)])
    lib = np.concatenate([pg.score(pi, np.intp(a)),
                          pg.episode_gradient(pi, actions, pg.returns_to_go(rewards) - b)])
    return LiveCheck(f"∇θ log π(a) at θ(right) = {theta[pg.RIGHT]:g}, θ(left) = "
                     f"{theta[pg.LEFT]:g} and a 12-step episode's estimate with b = {b:g}",
                     board, lib, tol=1e-12)
