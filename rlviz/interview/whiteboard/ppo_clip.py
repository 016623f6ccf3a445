"""PPO at a whiteboard: the clipped surrogate and its loss, in numpy."""

import numpy as np


def clipped_surrogate(ratio, adv, eps):
    """L(r, A) = min(r A, clip(r, 1 - eps, 1 + eps) A), per sample (to be maximised)."""
    return np.minimum(ratio * adv, np.clip(ratio, 1 - eps, 1 + eps) * adv)


def ppo_loss(logp, logp_old, adv, eps):
    """The loss to minimise: minus the mean clipped surrogate, ratio from log-probabilities."""
    ratio = np.exp(logp - logp_old)          # pi / pi_old of the sampled actions
    return -clipped_surrogate(ratio, adv, eps).mean()


def surrogate_grad(ratio, adv, eps):
    """dL/dr: A inside the trust region, 0 where the clip is active and binding."""
    flat = ((adv > 0) & (ratio > 1 + eps)) | ((adv < 0) & (ratio < 1 - eps))
    return np.where(flat, 0.0, adv)
