"""The deadly triad at a whiteboard: off-policy TD, TDC, and the test that predicts divergence."""

import numpy as np


def off_policy_td(w, x, x_next, r, rho, gamma, alpha):
    """Semi-gradient off-policy TD(0): the target's dependence on w is ignored."""
    delta = r + gamma * w @ x_next - w @ x
    return w + alpha * rho * delta * x


def tdc(w, v, x, x_next, r, rho, gamma, alpha, beta):
    """TDC: TD plus a correction along x' that makes it a true gradient method on the PBE."""
    delta = r + gamma * w @ x_next - w @ x
    w_new = w + alpha * rho * (delta * x - gamma * x_next * (x @ v))
    v_new = v + beta * rho * (delta - x @ v) * x  # v tracks E[δ | x] by least squares
    return w_new, v_new


def expected_td_diverges(X, d, P, gamma):
    """Whether expected off-policy TD(0) grows for every small step size.

    It moves the values by -α X Xᵀ D (I - γP) v: an eigenvalue of that matrix (without the α)
    with a positive real part grows, however small α is.
    """
    A = X @ X.T @ np.diag(d) @ (np.eye(len(d)) - gamma * P)
    return np.linalg.eigvals(-A).real.max() > 1e-12
