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
