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
