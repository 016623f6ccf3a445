"""The vectorised filter: discounted sums computed backward in blocks, exactly."""

from __future__ import annotations

import numpy as np

from rlviz.returns.steps import discounted_step

__all__: list[str] = []


# --------------------------------------------------------------------------- the filter
_BLOCK = 8  # K, steps per block of the blocked filter


def _discounts(coef: float, n: int) -> np.ndarray:
    """``[n, n]`` with entry ``[k, i] = coef^(k-i)`` for ``k >= i`` and 0 below."""
    lag = np.arange(n)[:, None] - np.arange(n)
    return np.where(lag >= 0, coef ** np.maximum(lag, 0), 0.0)


def _split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A 1-D stream as ``[B, K]`` whole blocks and the fewer than ``K`` steps after them."""
    whole = x.size - x.size % _BLOCK
    return x[:whole].reshape(-1, _BLOCK), x[whole:]


def _block_sums(x: np.ndarray, powers: np.ndarray) -> np.ndarray:
    """``[B (+1)]`` each block's own ``sum_k coef^k x_{bK+k}``, the short last block's last."""
    full, tail = _split(x)
    own = np.einsum("bk,k->b", full, powers)
    return np.append(own, tail @ powers[: tail.size]) if tail.size else own


def _later(own: np.ndarray, coef: float) -> np.ndarray:
    """``[B]`` everything after block ``b``, discounted to the step just after its end."""
    return np.append(_leaky_sum(own, coef**_BLOCK)[1:], 0.0)


def _fill(x: np.ndarray, coef: float, later: np.ndarray) -> np.ndarray:
    """``y_t = x_t + coef * y_{t+1}`` in place, given what flows into each block from later.

    The ``K`` places of a block are filled from the last to the first, each for many blocks
    at once; the short last block has nothing after it. Blocks do not wait for each other
    (``later`` holds what flows in), so the blocks are taken ``_FILL_BLOCKS`` at a time: the
    ``K`` passes over them then stay in the cache instead of each crossing the whole stream.
    """
    full, tail = _split(x)
    if tail.size:
        tail[:] = tail @ _discounts(coef, tail.size)
    for b in range(0, full.shape[0], _FILL_BLOCKS):
        part = full[b:b + _FILL_BLOCKS]
        after = later[b:b + part.shape[0]]
        for i in range(_BLOCK - 1, -1, -1):  # place i of these blocks at once
            after = discounted_step(part[:, i], after, coef, out=part[:, i])
    return x


_FILL_BLOCKS = 8192  # blocks filled together by ``_fill`` (64k steps: half a megabyte)


def _leaky_sum(x: np.ndarray, coef: float) -> np.ndarray:
    r"""``z_t = sum_{k>=t} coef^(k-t) x_k`` over a whole 1-D stream, as a new array.

    Blockwise: the block sums form a stream ``K`` times shorter with decay ``coef^K``, summed
    the same way, until a single block is left.
    """
    if x.size <= _BLOCK:
        return x @ _discounts(coef, x.size)
    powers = coef ** np.arange(_BLOCK, dtype=np.float64)
    return _fill(x.copy(), coef, _later(_block_sums(x, powers), coef))


def _leaky_sums_at(
    x: np.ndarray, coef: float, powers: np.ndarray, later: np.ndarray, at: np.ndarray
) -> np.ndarray:
    r"""``z_p = sum_{k>=p} coef^(k-p) x_k`` over the whole stream, at the positions ``at`` only.

    ``z_p`` is the rest of ``p``'s own block plus ``coef^(K-i)`` times everything after it,
    where ``i`` is ``p``'s place in its block.
    """
    k = _BLOCK
    n = x.size
    block, place = np.divmod(at, k)
    reach = np.minimum(k - place, n - at)  # steps from p to the end of its block
    ahead = np.arange(k)
    weights = np.where(ahead < np.arange(k + 1)[:, None], powers, 0.0)[reach]
    window = x[np.minimum(at[:, None] + ahead, n - 1)]
    return np.einsum("pk,pk->p", window, weights) + coef ** (k - place) * later[block]


def _discounted_sum(
    x_t: np.ndarray, coef: float, cuts: np.ndarray | None, *, overwrite: bool = False
) -> np.ndarray:
    r"""``y_t = x_t + coef * y_{t+1}`` inside each segment, restarting after every end.

    A reversed-time linear filter run blockwise over the trajectories laid end to end: the
    stream is cut into blocks of ``K`` steps, the same filter over the ``N / K`` block sums
    finds what flows into each block from the blocks after it, and then the ``K`` places of a
    block are filled from last to first, each for all blocks at once. Run as it is, the filter would
    leak each segment's sum into the one before; so the input at each end ``e`` is first
    lowered by the carry ``coef * y_{e+1}`` it would receive. The exact sum at the next
    segment's start ``s`` (ending at ``e'``) is ``y_s = z_s - coef^(e'+1-s) z_{e'+1}`` with
    ``z`` the leaky sum, which is needed at the segment starts only.

    Args:
        x_t: ``[..., T]`` the per-step terms, times ``[0, T-1]``.
        coef: The per-step decay in ``[0, 1]`` (``gamma``, or ``gamma * lam`` for GAE).
        cuts: ``[E]`` stream indices where sums restart (``_Steps.cuts``), or None.
        overwrite: Whether ``x_t`` (a fresh array of the caller's) may be used as scratch.

    Returns:
        ``[..., T]`` the sums ``y_t``.
    """
    flat = x_t.reshape(-1) if overwrite else x_t.flatten()
    if coef == 0.0:
        return flat.reshape(x_t.shape)
    k = _BLOCK
    powers = coef ** np.arange(k, dtype=np.float64)
    own = _block_sums(flat, powers)
    if cuts is not None:
        start = cuts + 1  # the first step of every segment but the first
        heads = _leaky_sums_at(flat, coef, powers, _later(own, coef), start)
        heads[:-1] -= coef ** (start[1:] - start[:-1]) * heads[1:]  # now exact: y at starts
        lowered = coef * heads
        flat[cuts] -= lowered
        own = own - np.bincount(cuts // k, weights=powers[cuts % k] * lowered,
                                minlength=own.size)
    return _fill(flat, coef, _later(own, coef)).reshape(x_t.shape)
