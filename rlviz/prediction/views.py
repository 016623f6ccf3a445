"""One backup seen up close, the forward views, and the identities between the methods."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlviz import returns
from rlviz.errors import InputError
from rlviz.prediction.engines import Sweep, _start_values, td_lambda
from rlviz.prediction.steps import n_step_td_step, td_lambda_step, true_online_td_lambda_step
from rlviz.prediction.walks import ALPHAS, LAMBDAS, Runs, _unit, _whole

__all__ = [
    "Backup",
    "Identities",
    "episode_views",
    "identities",
    "lambda_return_increments",
    "n_step_backup",
    "monte_carlo_increments",
    "online_lambda_return",
    "true_online_steps",
    "whiteboard_gap",
]


# --------------------------------------------------------------------------- one backup
@dataclass(frozen=True)
class Backup:
    """One n-step TD update of one episode, with every number in it (run 1 of the runs)."""

    n: int
    alpha: float
    gamma: float
    episode: int  # 0-based
    tau: int  # τ, the step of the episode whose state is updated
    states: np.ndarray  # [T+1] S_0 … S_T (S_T terminal)
    rewards: np.ndarray  # [T] R_1 … R_T
    used: int  # m = min(n, T − τ): the rewards R_{τ+1} … R_{τ+m} in the return
    bootstraps: bool  # τ + n < T: the return ends on an estimate, not on the terminal
    values: np.ndarray  # [n+2] V when the update is made (terminals 0)
    reward_sum: float  # Σ γ^(i−τ−1) R_i over the rewards used
    discount: float  # γ^n
    boot_value: float  # V(S_{τ+m}), 0 at the terminal
    target: float  # G_{τ:τ+n}
    old_value: float  # V(S_τ) before the update
    new_value: float  # after it
    made_at: int  # the step of the episode after which the update is made: min(τ + n, T) − 1

    @property
    def length(self) -> int:
        """``T``, the episode's steps."""
        return int(self.rewards.size)

    @property
    def boot_state(self) -> int:
        """``S_{τ+m}``: the state bootstrapped from (a terminal when the episode ends first)."""
        return int(self.states[self.tau + self.used])


def n_step_backup(runs: Runs, *, n: int, alpha: float, episode: int, tau: int,
                  gamma: float = 1.0) -> Backup:
    """Replay run 1 with n-step TD up to the update of step ``τ`` of ``episode``, and open it up.

    The values are those of the moment the update is made (after every earlier update of the
    run), as in the book's algorithm; the update itself is ``n_step_td_step`` on one lane.

    Args:
        runs: The episodes (run 1 is replayed).
        n: Rewards before bootstrapping, at least 1.
        alpha: Step size in ``[0, 1]``.
        episode: Which episode (0-based).
        tau: The step of that episode whose state is updated, ``0 … T−1``.
        gamma: Discount ``γ``.

    Returns:
        The update, with the rewards and the bootstrap it uses.
    """
    n = _whole("n", n)
    alpha = _unit("α", alpha)
    gamma = _unit("γ", gamma)
    if not 0 <= episode < runs.n_episodes:
        raise InputError(f"episode {episode + 1} is not among the {runs.n_episodes} drawn")
    length = int(runs.lengths[0, episode])
    if not 0 <= tau < length:
        raise InputError(f"episode {episode + 1} has steps 0 to {length - 1}; got τ = {tau}")
    total = int(runs.run_lengths[0])
    r, d = runs.rewards[0, :total], runs.dones[0, :total]
    sums = returns.n_step_returns(r, np.zeros(total), gamma=gamma, n=n, dones=d)
    k = np.arange(total)
    boot = runs.next_states[0, np.minimum(k + n - 1, runs.episode_end[0, :total])]
    v = _start_values(runs.walk, (1,)).T.copy()  # [S, 1]: one lane
    discount = gamma**n
    at = int(runs.starts[0, episode]) + tau
    states = runs.states[0, :total]
    for step in range(at):
        n_step_td_step(v, states[step : step + 1], sums[step : step + 1],
                       boot[step : step + 1], discount, np.array([alpha]))
    before = v[:, 0].copy()
    s_tau, s_boot = int(states[at]), int(boot[at])
    g = n_step_td_step(v, states[at : at + 1], sums[at : at + 1], boot[at : at + 1], discount,
                       np.array([alpha]))
    ep = runs.episode(0, episode)
    used = min(n, length - tau)
    return Backup(
        n=n, alpha=alpha, gamma=gamma, episode=int(episode), tau=int(tau),
        states=np.append(runs.states[0, ep], runs.next_states[0, ep.stop - 1]),
        rewards=runs.rewards[0, ep].copy(), used=used, bootstraps=tau + n < length,
        values=before, reward_sum=float(sums[at]), discount=discount,
        boot_value=float(before[s_boot]), target=float(g[0]), old_value=float(before[s_tau]),
        new_value=float(v[s_tau, 0]), made_at=min(tau + n, length) - 1,
    )


# --------------------------------------------------------------------------- forward views
def _segments(dones: np.ndarray) -> list[slice]:
    """The episodes of one run's stream, as slices (the last may be cut short)."""
    ends = np.flatnonzero(dones) + 1
    if not ends.size or ends[-1] < dones.size:
        ends = np.r_[ends, dones.size]
    starts = np.r_[0, ends[:-1]]
    return [slice(int(a), int(b)) for a, b in zip(starts, ends, strict=True)]


def online_lambda_return(states, rewards, next_states, dones, v0, *, gamma, lam, alpha):
    r"""The online λ-return algorithm (Sutton & Barto 2018, §12.4): the forward view, redone.

    At every horizon ``h`` of an episode the updates are redone from the episode's start with
    the λ-returns truncated at ``h``:

    .. math::
        w^h_{t+1} = w^h_t + \alpha\,\big[G^\lambda_{t:h} - w^h_t(S_t)\big]\, x(S_t),
        \qquad t = 0, \dots, h-1,

    where each n-step return ``G_{t:t+n}`` inside ``G^λ_{t:h}`` bootstraps from ``V(S_{t+n})``
    with the weights ``w_{t+n−1} = w^{t+n−1}_{t+n−1}`` of that moment, and ``w_h = w^h_h``.
    ``O(T²)`` per episode: a reference to check true online TD(λ) against, not a learner.

    Args:
        states: ``[K]`` one run's ``S_k``, episodes back to back.
        rewards: ``[K]`` ``R_{k+1}``.
        next_states: ``[K]`` ``S_{k+1}``.
        dones: ``[K]`` bool, an episode's last step.
        v0: ``[S]`` the values to start from (terminals 0).
        gamma: Discount ``γ``.
        lam: ``λ``.
        alpha: Step size ``α``.

    Returns:
        ``[K+1, S]`` the values ``w_k`` after every step (the start first).
    """
    w = np.array(v0, dtype=np.float64)
    out = [w.copy()]
    for ep in _segments(np.asarray(dones)):
        start = w.copy()  # w^h_0 for every horizon of this episode
        s, r = np.asarray(states[ep]), np.asarray(rewards[ep], dtype=np.float64)
        nxt, done = np.asarray(next_states[ep]), np.asarray(dones[ep])
        boot = np.zeros(s.size + 1)  # boot[k] = V(S_k) with the weights of time k − 1
        for h in range(1, s.size + 1):
            boot[h] = w[nxt[h - 1]]
            g = returns.lambda_returns(r[:h], boot[:h], gamma=gamma, lam=lam,
                                       last_value=boot[h], dones=done[:h])
            w = start.copy()
            for t in range(h):
                w[s[t]] += alpha * (g[t] - w[s[t]])
            out.append(w.copy())
    return np.array(out)


def true_online_steps(states, rewards, next_states, dones, v0, *, gamma, lam, alpha):
    """``[K+1, S]`` true online TD(λ)'s values after every step of one run.

    One lane of ``true_online_td_lambda_step``; arguments as ``online_lambda_return``.
    """
    v = np.array(v0, dtype=np.float64)[:, None].copy()  # [S, 1]: one lane
    z = np.zeros_like(v)
    v_old = np.zeros(1)
    out = [v[:, 0].copy()]
    starts = np.r_[True, np.asarray(dones)[:-1]]
    lam_, alpha_ = np.array([lam], dtype=np.float64), np.array([alpha], dtype=np.float64)
    for k in range(len(states)):
        if starts[k]:
            z[:] = 0.0
            v_old[:] = 0.0
        true_online_td_lambda_step(v, z, v_old, states[k : k + 1], rewards[k : k + 1],
                                   next_states[k : k + 1], gamma=gamma, lam=lam_, alpha=alpha_)
        out.append(v[:, 0].copy())
    return np.array(out)


# --------------------------------------------------------------------------- the identities
@dataclass(frozen=True)
class Identities:
    """The identities between the methods, measured on the page's own episodes.

    A gap is the largest difference between the two methods' values, relative to the largest
    value in play in that lane (``_gap``). Offline updates are compared one episode at a time
    from the same values, so that a lane whose values grow (a large α) does not magnify one
    episode's rounding in the next.
    """

    forward_backward: float  # offline TD(λ) vs the summed λ-return increments, every λ and α
    forward_backward_count: int  # values compared
    monte_carlo: float  # offline TD(λ = 1) vs summed every-visit constant-α MC
    monte_carlo_count: int
    true_online: float  # true online TD(λ) vs the online λ-return, after every step
    true_online_steps: int
    lam: float  # the λ and α of the step-by-step check and of the episode below
    alpha: float
    runs: int  # runs compared (the first of the page's)
    episodes: int
    forward: np.ndarray  # [n] run 1's first episode: Σ α[G^λ_t − V(S_t)] per state (forward)
    backward: np.ndarray  # [n] the same episode's Σ α δ_t z_t per state (backward view)


def episode_views(runs: Runs, *, lam: float, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Run 1's first episode from the initial values, both ways: ``[n]`` increments per state.

    Forward: ``lambda_return_increments``. Backward: ``td_lambda_step`` on one lane, the
    increments ``αδz`` collected in a separate array (offline updates).
    """
    lam, alpha = _unit("λ", lam), _unit("α", alpha)
    ep = runs.episode(0, 0)
    s, r, s1 = runs.states[0, ep], runs.rewards[0, ep], runs.next_states[0, ep]
    v = _start_values(runs.walk, (1,)).T[None].copy()  # [1, S, 1]: one lane, one α
    z, dv = np.zeros_like(v[0]), np.zeros_like(v)
    lam_, alpha_ = np.array([lam]), np.array([alpha])
    for t in range(s.size):
        td_lambda_step(v, z, s[t : t + 1], r[t : t + 1], s1[t : t + 1], gamma=1.0, lam=lam_,
                       alpha=alpha_[:, None], out=dv)
    forward = lambda_return_increments(v[0].T, s[None], r[None], s1[None],
                                       np.ones((1, s.size), bool), gamma=1.0, lam=lam_,
                                       alpha=alpha_)
    return forward[0, 1:-1], dv[0, 1:-1, 0]


def _gap(a: np.ndarray, b: np.ndarray, *before: np.ndarray) -> tuple[float, int]:
    """Largest gap between ``a`` and ``b`` ``[..., S]``, relative to the values in play.

    Per lane (all axes but the last), ``max_s |a − b|`` over ``max(1, max_s |a|, |b|, |before|)``:
    rounding grows with the size of the numbers added, and a lane whose values have grown large
    (a large α) rounds in proportion. Lanes with a NaN (diverged) are skipped.
    Returns the gap and the number of values compared.
    """
    scale = np.maximum(np.abs(a).max(axis=-1), np.abs(b).max(axis=-1))
    for x in before:
        scale = np.maximum(scale, np.abs(x).max(axis=-1))
    ok = np.isfinite(scale)
    if not ok.any():
        return 0.0, 0
    gap = np.abs(a - b)[ok].max(axis=-1) / np.maximum(1.0, scale[ok])
    return float(gap.max()), int(ok.sum() * a.shape[-1])


def _episode_rows(runs: Runs, episode: int) -> tuple[np.ndarray, ...]:
    """``[R, T]`` every run's ``episode``-th episode, padded with a terminal past its end."""
    lengths = runs.lengths[:, episode]
    width = int(lengths.max())
    k = np.arange(width)
    src = np.minimum(runs.starts[:, episode][:, None] + k, runs.states.shape[1] - 1)
    valid = k < lengths[:, None]

    def cut(x: np.ndarray) -> np.ndarray:
        return np.where(valid, np.take_along_axis(x, src, axis=1), 0).astype(x.dtype)

    return cut(runs.states), cut(runs.rewards), cut(runs.next_states), valid


def lambda_return_increments(v, states, rewards, next_states, valid, *, gamma, lam, alpha):
    r"""The forward view of one episode, summed: all increments measured from the same values.

    .. math::
        \Delta V = \alpha \sum_{t=0}^{T-1} \big[G^\lambda_t - V(S_t)\big]\, x(S_t), \qquad
        G^\lambda_t - V(S_t) = \delta_t + \gamma\lambda\,\big[G^\lambda_{t+1} - V(S_{t+1})\big]

    (the λ-return's error is the λ-discounted sum of the TD errors), run backwards from the
    episode's end with ``rlviz.returns.td_error`` and ``rlviz.returns.discounted_step``. This is
    what TD(λ) with accumulating traces and offline updates adds up (Sutton 1988).

    Args:
        v: ``[B, S]`` values of each lane (not changed).
        states: ``[B, T]`` each lane's episode ``S_t``, padded past its end.
        rewards: ``[B, T]`` ``R_{t+1}``.
        next_states: ``[B, T]`` ``S_{t+1}``.
        valid: ``[B, T]`` bool, the steps that exist.
        gamma: Discount ``γ``.
        lam: ``[B]`` λ of each lane.
        alpha: ``[B]`` step size of each lane.

    Returns:
        ``[B, S]`` the summed increments.
    """
    rows = np.arange(len(v))[:, None]
    delta = returns.td_error(rewards, v[rows, states], v[rows, next_states], gamma=gamma)
    delta = np.where(valid, delta, 0.0)
    error = np.empty_like(delta)
    later = np.zeros(len(v))
    for t in reversed(range(delta.shape[1])):
        later = returns.discounted_step(delta[:, t], later, gamma * lam)
        error[:, t] = later
    cell = rows * v.shape[1] + states
    step = np.where(valid, alpha[:, None] * error, 0.0)
    return np.bincount(cell.ravel(), weights=step.ravel(), minlength=v.size).reshape(v.shape)


def _per_episode(runs: Runs, sweep: Sweep, lam: np.ndarray, alpha: np.ndarray,
                 increments) -> tuple[float, int]:
    """Each episode of an offline ``sweep`` against ``increments`` added to its values before it.

    ``increments(v, states, rewards, next_states, valid, lam, alpha)`` gets ``[B, S]`` values of
    the ``B`` lanes (``sweep.values`` flattened over its first three axes), the episode padded
    ``[B, T]``, and ``[B]`` λ and α.
    """
    lanes = int(np.prod(sweep.values.shape[:3]))
    copies = lanes // runs.n_runs
    worst, count = 0.0, 0
    for e in range(runs.n_episodes):
        rows = [np.tile(x, (copies, 1)) for x in _episode_rows(runs, e)]
        v = np.zeros((lanes, runs.walk.n_states + 2))
        v[:, 1:-1] = sweep.values[:, :, :, e].reshape(lanes, -1)
        after = v[:, 1:-1] + increments(v, *rows, lam, alpha)[:, 1:-1]
        gap, n = _gap(sweep.values[:, :, :, e + 1].reshape(lanes, -1), after, v)
        worst, count = max(worst, gap), count + n
    return worst, count


def monte_carlo_increments(v, states, rewards, next_states, valid, lam, alpha):
    r"""Every-visit constant-α Monte Carlo of one episode, its increments summed.

    .. math:: \Delta V = \alpha \sum_{t=0}^{T-1} \big[G_t - V(S_t)\big]\, x(S_t)

    with ``G_t`` the return to the episode's end (``rlviz.returns.discounted_returns``, γ = 1).
    Arguments as ``lambda_return_increments`` (``lam`` is not used: there is none).
    """
    last = valid & ~np.pad(valid[:, 1:], ((0, 0), (0, 1)))  # each row's last real step
    g = returns.discounted_returns(rewards, 1.0, dones=last)
    rows = np.arange(len(v))[:, None]
    step = np.where(valid, alpha[:, None] * (g - v[rows, states]), 0.0)
    cell = rows * v.shape[1] + states
    return np.bincount(cell.ravel(), weights=step.ravel(), minlength=v.size).reshape(v.shape)


def identities(runs: Runs, *, lam: float, alpha: float, check_runs: int = 5,
               check_episodes: int = 3, max_steps: int = 150) -> Identities:
    """Measure every identity of the page on the first runs of ``runs`` (the 19-state walk, γ = 1).

    Args:
        runs: The page's episodes.
        lam: λ of the step-by-step check of true online TD(λ).
        alpha: α of that check.
        check_runs: How many runs the grids are compared on.
        check_episodes: How many of their episodes.
        max_steps: Steps of run 1 the step-by-step check covers (it is O(T²) per episode).

    Returns:
        The gaps.
    """
    lam, alpha = _unit("λ", lam), _unit("α", alpha)
    head = runs.head(min(check_runs, runs.n_runs), check_episodes)
    lams, alphas = np.array(LAMBDAS), np.array(ALPHAS)
    r = head.n_runs
    # TD(λ) with offline updates, every λ and α; the forward view from the same values.
    backward = td_lambda(head, lams=lams, alphas=alphas, offline=True)
    lam_of = np.repeat(lams, alphas.size * r)
    alpha_of = np.tile(np.repeat(alphas, r), lams.size)
    fb = _per_episode(head, backward, lam_of, alpha_of, lambda v, s, rw, s1, ok, lm, al:
                      lambda_return_increments(v, s, rw, s1, ok, gamma=1.0, lam=lm, alpha=al))
    # Its λ = 1 lanes against every-visit Monte Carlo.
    one = Sweep(backward.method, lams[-1:], alphas, backward.values[-1:], backward.errors[-1:],
                backward.diverged_in[-1:], backward.true_values, backward.gamma)
    mc = _per_episode(head, one, lam_of[-alphas.size * r :], alpha_of[-alphas.size * r :],
                      monte_carlo_increments)
    # True online TD(λ) against the online λ-return, after every step of run 1.
    steps = min(max_steps, int(runs.run_lengths[0]))
    args = (runs.states[0, :steps], runs.rewards[0, :steps], runs.next_states[0, :steps],
            runs.dones[0, :steps], _start_values(runs.walk, ()))
    forward_view = online_lambda_return(*args, gamma=1.0, lam=lam, alpha=alpha)
    backward_view = true_online_steps(*args, gamma=1.0, lam=lam, alpha=alpha)
    to = _gap(forward_view, backward_view)
    forward, back = episode_views(runs, lam=lam, alpha=alpha)
    return Identities(
        forward_backward=fb[0], forward_backward_count=fb[1], monte_carlo=mc[0],
        monte_carlo_count=mc[1], true_online=to[0], true_online_steps=steps, lam=lam,
        alpha=alpha, runs=r, episodes=head.n_episodes, forward=forward, backward=back,
    )


# --------------------------------------------------------------------------- the whiteboard
def whiteboard_gap(runs: Runs, method: str, param: float, alpha: float,
                   values: np.ndarray) -> float | None:
    """How far the whiteboard version is from ``values`` (run 1 after every episode, ``[n]``).

    The whiteboard function of ``method`` (``rlviz.interview.whiteboard.multistep_td``) replays
    run 1's episodes one after the other from the walk's initial values. The gap is relative to
    the largest value; None when run 1 diverged at this setting (nothing to compare).
    """
    from rlviz.interview.whiteboard import multistep_td as wb

    if not np.isfinite(values).all():
        return None

    board = {"n_step": wb.n_step_td, "offline_lambda_return": wb.offline_lambda_return,
             "td_lambda": wb.td_lambda, "true_online": wb.true_online_td_lambda}[method]
    v = _start_values(runs.walk, ())
    for e in range(runs.n_episodes):
        ep = runs.episode(0, e)
        states = np.append(runs.states[0, ep], runs.next_states[0, ep.stop - 1])
        board(v, states, runs.rewards[0, ep], int(param) if method == "n_step" else param,
              alpha)
    return float(np.abs(v[1:-1] - values).max() / max(1.0, float(np.abs(values).max())))
