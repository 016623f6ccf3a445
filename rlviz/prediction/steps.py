"""The readable steps: n-step TD, TD(λ), true online TD(λ) and the offline λ-return update.

Each is written once, on arrays with one column per lane (``v[s, lane]``), so one call serves one
lane or ten thousand.
"""

from __future__ import annotations

import functools

import numpy as np

from rlviz import returns

__all__ = [
    "n_step_td_step",
    "offline_lambda_return_update",
    "td_lambda_step",
    "true_online_td_lambda_step",
]


# --------------------------------------------------------------------------- the steps
def _cells(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A block of lanes ``[..., S, L]`` as one flat array, and where each lane's state 0 is.

    ``flat[at + s * L]`` is ``v[..., s, lane]`` for every lane at once (``at`` is ``[..., L]``):
    one index array instead of two or three, several times faster for the tens of thousands of
    lanes of a sweep.
    """
    if not v.flags.c_contiguous:  # a reshaped copy would take the updates and drop them
        raise ValueError("the lanes must be one contiguous block")
    return v.reshape(-1), _state_zero(v.shape)


@functools.lru_cache(maxsize=256)
def _state_zero(shape: tuple[int, ...]) -> np.ndarray:
    *lead, n_states, lanes = shape
    blocks = np.arange(int(np.prod(lead, dtype=np.int64))) * (n_states * lanes)
    at = (blocks[:, None] + np.arange(lanes)).reshape(*lead, lanes)
    at.setflags(write=False)
    return at


def n_step_td_step(v, s_tau, reward_sum, s_boot, discount, alpha):
    r"""One n-step TD update in every lane (Sutton & Barto 2018, eqs. 7.1 and 7.2).

    .. math::
        G_{\tau:\tau+n} = R_{\tau+1} + \gamma R_{\tau+2} + \dots + \gamma^{n-1} R_{\tau+n}
            + \gamma^n V(S_{\tau+n}), \qquad
        V(S_\tau) \leftarrow V(S_\tau) + \alpha\,[G_{\tau:\tau+n} - V(S_\tau)]

    When the episode ends within the n steps the return stops at its end: the rewards run to
    ``R_T`` and the bootstrap is the terminal state, worth 0.

    Args:
        v: ``[S, L]`` values, one column per lane, terminal rows 0 (updated in place).
        s_tau: ``[L]`` the state ``S_τ`` being updated.
        reward_sum: ``[L]`` the discounted rewards ``R_{τ+1} … R_{min(τ+n, T)}``.
        s_boot: ``[L]`` ``S_{τ+n}``, or the terminal state when the episode ends first.
        discount: ``γ^n``, a number or ``[L]``.
        alpha: ``[L]`` step sizes.

    Returns:
        ``[L]`` the targets ``G_{τ:τ+n}``.
    """
    flat, at = _cells(v)  # flat[at + s * L] is v[s, lane]
    n = v.shape[-1]
    g = reward_sum + discount * flat[at + s_boot * n]
    cell = at + s_tau * n
    old = flat[cell]
    flat[cell] = old + alpha * (g - old)
    return g


def td_lambda_step(v, z, s, r, s_next, *, gamma, lam, alpha, out=None):
    r"""One step of TD(λ) with accumulating traces in every lane (Sutton & Barto 2018, §12.2).

    .. math::
        z \leftarrow \gamma\lambda z + \nabla V(S_t), \qquad
        \delta = R_{t+1} + \gamma V(S_{t+1}) - V(S_t), \qquad
        V \leftarrow V + \alpha\,\delta\, z

    Tabular, so ``∇V(S_t)`` is 1 at ``S_t`` and 0 elsewhere. The trace does not depend on the
    values, so a lane's step sizes share it: ``v`` has a row of lanes per step size. Online, the
    increment goes into ``v`` itself; with offline updates it goes into ``out``, added to ``v``
    at the episode's end (so every TD error of the episode is measured with the values of its
    start).

    Args:
        v: ``[A, S, L]`` values of ``L`` lanes (a run and a λ), each at ``A`` step sizes,
            terminal rows 0 (updated in place unless ``out`` is given).
        z: ``[S, L]`` eligibility traces, 0 at an episode's start (updated in place).
        s: ``[L]`` ``S_t``.
        r: ``[L]`` ``R_{t+1}``.
        s_next: ``[L]`` ``S_{t+1}`` (a terminal state at the episode's end).
        gamma: Discount ``γ``.
        lam: ``[L]`` trace decay ``λ`` of each lane.
        alpha: ``[A, L]`` step sizes.
        out: ``[A, S, L]`` where the increment ``αδz`` is added, or None for ``v``.

    Returns:
        ``[A, L]`` the TD errors ``δ``.
    """
    flat, at = _cells(v)  # flat[at + s * L] is v[:, s, lane]
    z_flat, z_at = _cells(z)
    n = v.shape[-1]
    z *= gamma * lam
    z_flat[z_at + s * n] += 1.0
    delta = r + gamma * flat[at + s_next * n] - flat[at + s * n]
    target = v if out is None else out
    target += (alpha * delta)[:, None, :] * z
    return delta


def true_online_td_lambda_step(v, z, v_old, s, r, s_next, *, gamma, lam, alpha):
    r"""One step of true online TD(λ) with dutch traces in every lane (Sutton & Barto 2018, §12.5).

    .. math::
        \delta = R_{t+1} + \gamma V' - V, \qquad
        z \leftarrow \gamma\lambda z + (1 - \alpha\gamma\lambda\, z^\top x)\, x, \\
        w \leftarrow w + \alpha(\delta + V - V_{old})\, z - \alpha(V - V_{old})\, x, \qquad
        V_{old} \leftarrow V'

    with ``x`` the one-hot features of ``S_t``, ``V = w^\top x`` and ``V' = w^\top x'`` read
    before the update (van Seijen, Mahmood, Pilarski, Machado & Sutton 2016, JMLR 17:145).

    Args:
        v: ``[S, L]`` values ``w``, one column per lane (updated in place).
        z: ``[S, L]`` dutch traces, 0 at an episode's start (updated in place).
        v_old: ``[L]`` ``V_old``, 0 at an episode's start (updated in place to ``V'``).
        s: ``[L]`` ``S_t``.
        r: ``[L]`` ``R_{t+1}``.
        s_next: ``[L]`` ``S_{t+1}``.
        gamma: Discount ``γ``.
        lam: ``[L]`` trace decay ``λ`` of each lane.
        alpha: ``[L]`` step size of each lane.

    Returns:
        ``[L]`` the TD errors ``δ``.
    """
    flat, at = _cells(v)  # flat[at + s * L] is v[s, lane]
    z_flat = _cells(z)[0]
    n = v.shape[-1]
    cell = at + s * n
    v_s, v_next = flat[cell], flat[at + s_next * n]
    delta = r + gamma * v_next - v_s
    decay = gamma * lam
    z_s = z_flat[cell]  # zᵀx before the update
    z *= decay
    z_flat[cell] += 1.0 - alpha * decay * z_s
    v += (alpha * (delta + v_s - v_old)) * z
    flat[cell] -= alpha * (v_s - v_old)
    v_old[:] = v_next
    return delta


def offline_lambda_return_update(v, run, states, rewards, dones, *, gamma, lam, alpha):
    r"""The offline λ-return algorithm's updates for one episode of every lane (§12.1, Figure 12.3).

    .. math::
        G^\lambda_t = R_{t+1} + \gamma\big[(1-\lambda) V(S_{t+1}) + \lambda G^\lambda_{t+1}\big],
        \qquad V(S_t) \leftarrow V(S_t) + \alpha\,\big[G^\lambda_t - V(S_t)\big],
        \ t = 0, 1, \dots, T-1

    The values do not change during the episode, so every λ-return bootstraps from the values of
    its start; at its end the ``T`` updates are made one after the other. A state visited ``m``
    times then keeps ``(1−α)^m`` of its old value and its ``j``-th visit's target gets
    ``α(1−α)^(m−j)``: one summed update with that step for visit ``j`` makes those moves exactly.
    (Adding up the plain increments ``α[G^λ_t − V(S_t)]`` instead, ``lambda_return_increments``,
    is the form that TD(λ) with offline updates equals; it overshoots once a state's visits
    times α pass 2.)

    Args:
        v: ``[R, A, S]`` values of ``R`` runs at ``A`` step sizes (updated in place).
        run: ``[N]`` the run of each step; one episode per run, back to back, in time order.
        states: ``[N]`` ``S_t``.
        rewards: ``[N]`` ``R_{t+1}``.
        dones: ``[N]`` bool, the last step of each run's episode.
        gamma: Discount ``γ``.
        lam: ``λ``.
        alpha: ``[R, A]`` step size of each lane.

    Returns:
        ``[A, N]`` the λ-returns.
    """
    n_runs, n_alphas, n_states = v.shape
    values = v[run, :, states].T  # [A, N] V(S_t), the same V all episode
    shape = values.shape
    g = returns.lambda_returns(np.broadcast_to(rewards, shape), values, gamma=gamma, lam=lam,
                               dones=np.broadcast_to(dones, shape))
    later = _later_visits(run * n_states + states)  # [N] visits to the same state after this
    kept = _powers(1.0 - alpha, int(later.max()))  # [R, A, J+1] (1 − α)^j
    step = alpha[run].T * kept[run, :, later].T  # [A, N] α(1 − α)^later: the moves in turn
    cell = (run * n_alphas + np.arange(n_alphas)[:, None]) * n_states + states  # [A, N]
    v += np.bincount(cell.ravel(), weights=(step * (g - values)).ravel(),
                     minlength=v.size).reshape(v.shape)
    return g


def _powers(base: np.ndarray, top: int) -> np.ndarray:
    """``[..., top + 1]`` ``base^0 … base^top``, by repeated multiplication."""
    out = np.empty((*base.shape, top + 1))
    out[..., 0] = 1.0
    out[..., 1:] = base[..., None]
    return np.multiply.accumulate(out, axis=-1, out=out)


def _later_visits(key: np.ndarray) -> np.ndarray:
    """``[N]`` how many later entries of ``key`` (in order) equal each entry's own."""
    order = np.argsort(key, kind="stable")  # time order kept within each key
    ranked = key[order]
    index = np.arange(key.size)
    first = np.ones(key.size, dtype=bool)
    first[1:] = ranked[1:] != ranked[:-1]
    start = np.maximum.accumulate(np.where(first, index, 0))
    size = np.bincount(key)[ranked]
    later = np.empty(key.size, dtype=np.int64)
    later[order] = size - 1 - (index - start)
    return later
