"""C51 at a whiteboard: project the shifted atoms r + gamma z back onto the fixed support."""

import numpy as np


def project(p, r, done, gamma, z):
    """Split each target atom's mass between its two neighbours on the support z."""
    n, dz = len(z), (z[-1] - z[0]) / (len(z) - 1)
    tz = np.clip(r + (1 - done) * gamma * z, z[0], z[-1])   # shifted atoms, clipped
    b = (tz - z[0]) / dz                                     # fractional positions in [0, n-1]
    lo = np.minimum(np.floor(b), n - 2).astype(int)          # u = lo + 1 always exists
    m = np.zeros(n)
    np.add.at(m, lo, p * (lo + 1 - b))                       # exact hit: all mass to lo
    np.add.at(m, lo + 1, p * (b - lo))
    return m


def cross_entropy(logits, m):
    """The C51 loss: -sum_i m_i log softmax(logits)_i against the projected target."""
    logits = logits - logits.max()
    return -(m * (logits - np.log(np.exp(logits).sum()))).sum()


def live_check(settings):
    """The projection of the page's current source onto its support, and the loss against it."""
    import torch

    from rlviz import distributional as dist
    from rlviz.interview.whiteboard import LiveCheck, setting

    shape = setting(settings, "shape", "gaussian")
    weights = tuple(setting(settings, "weights", {}).get("w", ())) if shape == "custom" else ()
    z = dist.make_support(setting(settings, "v_min", -10.0), setting(settings, "v_max", 10.0),
                          len(weights) if shape == "custom" else setting(settings, "atoms", 21))
    p = dist.source_distribution(shape, z, mean=setting(settings, "mu", 1.0),
                                 width=setting(settings, "sigma", 2.5),
                                 separation=setting(settings, "sep", 8.0),
                                 weights=weights if shape == "custom" else None)
    r, gamma = float(setting(settings, "r", 0.5)), float(setting(settings, "gamma", 0.9))
    done = bool(setting(settings, "done", False))
    lib = dist.categorical_projection(p[None], [r], [done], gamma=gamma, support=z)
    m = lib.probs.numpy()[0]
    logits = np.log(np.maximum(p, 1e-12))  # a network that outputs p itself
    ce = float(dist.cross_entropy(torch.tensor(logits[None]), torch.tensor(m[None])).sum())
    board = np.append(project(p, r, done, gamma, z), cross_entropy(logits, m))
    return LiveCheck(f"projected target m ({len(z)} atoms) and the C51 loss",
                     board, np.append(m, ce), tol=1e-9)
