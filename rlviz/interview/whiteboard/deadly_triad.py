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


def live_check(settings):
    """Baird's problem at the page's γ and π: a fixed-seed stretch of TD and TDC, and the test."""
    from rlviz import approximation as ap
    from rlviz.interview.whiteboard import LiveCheck, setting

    gamma, pi = float(setting(settings, "gamma", 0.99)), float(setting(settings, "pi", 1.0))
    alpha, tdc_alpha = float(setting(settings, "alpha", 0.01)), float(
        setting(settings, "tdc_alpha", 0.005))
    beta = float(setting(settings, "beta", 0.05))
    pb = ap.baird(gamma=gamma, target_solid=pi)
    rng = np.random.default_rng(0)
    w_board = w_lib = t_board = t_lib = pb.start_weights.astype(float)
    v_board = v_lib = np.zeros_like(w_board)
    for _ in range(50):  # the behaviour policy's transitions, the same for both
        s = int(rng.integers(len(pb.features)))
        a = int(rng.choice(pb.behaviour.shape[1], p=pb.behaviour[s]))
        s2 = int(rng.choice(len(pb.features), p=pb.transitions[s, a]))
        x, x2, r, rho = pb.features[s], pb.features[s2], pb.rewards[s, a], pb.rho[s, a]
        w_board = off_policy_td(w_board, x, x2, r, rho, gamma, alpha)
        w_lib = ap.semi_gradient_td_step(w_lib, x, x2, r, rho, gamma=gamma, alpha=alpha)
        t_board, v_board = tdc(t_board, v_board, x, x2, r, rho, gamma, tdc_alpha, beta)
        t_lib, v_lib = ap.tdc_step(t_lib, v_lib, x, x2, r, rho, gamma=gamma, alpha=tdc_alpha,
                                   beta=beta)
    diverges = float(expected_td_diverges(pb.features, pb.behaviour_distribution,
                                          pb.target_matrix, gamma))
    return LiveCheck(f"50 off-policy TD and TDC steps on Baird's problem (γ = {gamma:g}, "
                     f"π(solid) = {pi:.2g}) and whether expected TD diverges",
                     np.concatenate([w_board, t_board, v_board, [diverges]]),
                     np.concatenate([w_lib, t_lib, v_lib, [float(ap.drift(pb) > 1e-12)]]),
                     tol=1e-9)
