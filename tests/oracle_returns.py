"""Plain-loop references for ``rlviz.returns``: one step at a time, straight from the definitions.

The vectorised functions must equal these on random batches; the benchmarks time ``gae_loop``
against ``returns.gae``.
"""

from __future__ import annotations

import numpy as np


def _rows(rewards, values, last_value, dones, truncated, truncated_values):
    """Every input as [B, T] rows (any leading axes flattened into B)."""
    r = np.asarray(rewards, dtype=np.float64)
    shape = r.shape

    def rows(x, fill, dtype):
        x = np.full(shape, fill) if x is None else np.asarray(x)
        return x.astype(dtype).reshape(-1, shape[-1])

    last = np.broadcast_to(np.asarray(last_value, np.float64), shape[:-1]).reshape(-1)
    return (rows(r, 0.0, np.float64), rows(values, 0.0, np.float64), last,
            rows(dones, False, bool), rows(truncated, False, bool),
            rows(truncated_values, np.nan, np.float64))


def _bootstrap(t, T, v, last, d, tr, cut):
    """(V(s_{t+1}) used by step t, whether the episode goes on after step t)."""
    if d[t]:
        return 0.0, False
    if tr[t]:
        return cut[t], False
    if t == T - 1:
        return last, False
    return v[t + 1], True


def gae_loop(rewards, values, *, gamma, lam, last_value=0.0, dones=None, truncated=None,
             truncated_values=None):
    """GAE by the backward recursion A_t = delta_t + gamma lam (1 - end_t) A_{t+1}."""
    r, v, last, d, tr, cut = _rows(rewards, values, last_value, dones, truncated,
                                   truncated_values)
    batch, T = r.shape
    out = np.zeros((batch, T))
    for b in range(batch):
        adv = 0.0
        for t in reversed(range(T)):
            if d[b, t]:  # terminal: nothing to bootstrap, the recursion restarts
                delta = r[b, t] - v[b, t]
                adv = delta
            elif tr[b, t]:  # time limit: bootstrap from the cut state, then restart
                delta = r[b, t] + gamma * cut[b, t] - v[b, t]
                adv = delta
            elif t == T - 1:  # end of the rollout: bootstrap from V(s_T)
                delta = r[b, t] + gamma * last[b] - v[b, t]
                adv = delta
            else:
                delta = r[b, t] + gamma * v[b, t + 1] - v[b, t]
                adv = delta + gamma * lam * adv
            out[b, t] = adv
    return out.reshape(np.shape(rewards))


def returns_loop(rewards, gamma, *, last_value=0.0, dones=None, truncated=None,
                 truncated_values=None):
    """G_t by the backward recursion, bootstrapping at episode and trajectory ends."""
    r, v, last, d, tr, cut = _rows(rewards, None, last_value, dones, truncated, truncated_values)
    batch, T = r.shape
    out = np.zeros((batch, T))
    for b in range(batch):
        g = 0.0
        for t in reversed(range(T)):
            next_value, goes_on = _bootstrap(t, T, v[b], last[b], d[b], tr[b], cut[b])
            g = r[b, t] + gamma * (g if goes_on else next_value)
            out[b, t] = g
    return out.reshape(np.shape(rewards))


def n_step_loop(rewards, values, *, gamma, n, last_value=0.0, dones=None, truncated=None,
                truncated_values=None):
    """G_t^(n) by walking forward from each t: n rewards, or fewer if the episode ends first."""
    r, v, last, d, tr, cut = _rows(rewards, values, last_value, dones, truncated,
                                   truncated_values)
    batch, T = r.shape
    out = np.zeros((batch, T))
    for b in range(batch):
        for t in range(T):
            g, k = 0.0, t
            while True:
                g += gamma ** (k - t) * r[b, k]
                next_value, goes_on = _bootstrap(k, T, v[b], last[b], d[b], tr[b], cut[b])
                if not goes_on or k - t + 1 == n:
                    g += gamma ** (k - t + 1) * next_value
                    break
                k += 1
            out[b, t] = g
    return out.reshape(np.shape(rewards))


def lambda_return_loop(rewards, values, *, gamma, lam, last_value=0.0, dones=None,
                       truncated=None, truncated_values=None):
    """G_t^lambda from its definition: the lambda-weighted sum of the n-step returns."""
    kw = dict(last_value=last_value, dones=dones, truncated=truncated,
              truncated_values=truncated_values)
    r, _, _, d, tr, _ = _rows(rewards, values, last_value, dones, truncated, truncated_values)
    batch, T = r.shape
    ladder = [np.atleast_2d(n_step_loop(rewards, values, gamma=gamma, n=n, **kw))
              for n in range(1, T + 1)]
    out = np.zeros((batch, T))
    for b in range(batch):
        for t in range(T):
            horizon = 1  # steps to the end of t's episode, or of the trajectory
            while t + horizon < T and not (d[b, t + horizon - 1] or tr[b, t + horizon - 1]):
                horizon += 1
            total = 0.0
            for n in range(1, horizon):
                total += (1 - lam) * lam ** (n - 1) * ladder[n - 1][b, t]
            total += lam ** (horizon - 1) * ladder[horizon - 1][b, t]
            out[b, t] = total
    return out.reshape(np.shape(rewards))
