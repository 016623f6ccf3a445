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


def live_check(settings):
    """The clipped surrogate and its slope on the page's (r, A) grid at the current ε."""
    import torch

    from rlviz import ppo
    from rlviz.interview.whiteboard import LiveCheck, setting

    eps = float(setting(settings, "eps", 0.2))
    r = np.append(ppo.ratio_grid(41), setting(settings, "r", 1.5))
    a = np.append(ppo.advantage_grid(41), setting(settings, "a", 1.0))
    ratio, adv = (g.ravel() for g in np.meshgrid(r, a))
    lib = np.concatenate([ppo.clipped_surrogate(ratio, adv, epsilon=eps).numpy(),
                          ppo.surrogate_grad(ratio, adv, epsilon=eps),
                          [float(ppo.ppo_clip_loss(torch.tensor(np.log(ratio)),
                                                   torch.zeros(len(ratio), dtype=torch.float64),
                                                   torch.tensor(adv), epsilon=eps))]])
    board = np.concatenate([clipped_surrogate(ratio, adv, eps), surrogate_grad(ratio, adv, eps),
                            [ppo_loss(np.log(ratio), np.zeros(len(ratio)), adv, eps)]])
    return LiveCheck(f"L_clip, dL/dr and the loss on a {len(r)}×{len(a)} grid at ε = {eps:g}",
                     board, lib, tol=1e-12)
