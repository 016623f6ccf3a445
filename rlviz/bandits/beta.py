r"""Beta draws for Thompson sampling: Cheng's (1978) rejection algorithms BB and BC.

A draw ``θ ~ Beta(p, q)`` is the candidate

.. math:: V = \frac{1}{\lambda}\ln\frac{u_1}{1 - u_1},\quad W = p\,e^V,\quad
    Y = \frac{W}{q + W},\qquad \text{accepted if }
    (p + \lambda) V + A \ln\frac{A}{q + W} \ge \ln(4 u_1^2 u_2),

with ``A = p + q``: ``Y`` has a log-logistic density that, scaled, lies above the Beta density,
and accepting it with probability (Beta density)/(scaled envelope) makes it an exact Beta draw.
With ``λ`` from ``constants`` (algorithm BB for ``min(p, q) > 1``, BC otherwise) the scaled
envelope touches the density at its mode, ``V = 0``, and an attempt is accepted with
probability 0.68–1 for shapes of at least 1 (about 0.87 typically) and at least 0.29 for
shapes of at least ``MIN_PRIOR``.

A race draws one ``θ`` for every arm of every run at every step, so the first attempt of every
cell is computed in single precision (three times faster here). The *decisions* stay those of
double precision: ``margin`` bounds how far the single-precision test can be from the
double-precision one, so an attempt that clears it is accepted for sure, and the other cells
(about one in eight) make their attempts again in double precision. The draws are therefore
Cheng's exact draws with ``W`` computed in single precision:
``Y = W/(q + W)`` and ``1 − Y = q/(q + W)`` are each right to a relative ``1e-6`` (``2e-5``
in the far tails, where ``|V|`` is large), far below any sampling error.
Single precision needs ``W = p e^V`` to stay well inside its range, which ``single_precision``
checks on the prior (counts only add to it); other priors draw with ``exact_draws``, all in double
precision.

Source: R. C. H. Cheng (1978), *Generating beta variates with nonintegral shape parameters*,
Communications of the ACM 21(4), algorithms BB and BC.
"""

from __future__ import annotations

import math

import numpy as np

from rlviz.bandits.noise import (
    _DRAW_OFFSETS,
    _GOLDEN,
    _LOW32,
    _U32,
    Noise,
    Steps,
    Stream,
    _mix,
    _step_offset,
    mix64,
)
from rlviz.compiled import kernel, on_warm_up

ATTEMPTS = 255
"""Attempts per draw (an attempt is accepted with probability at least 0.29 for shapes of at
least ``MIN_PRIOR``, so all are rejected with probability below 1e-38)."""
MIN_PRIOR = 0.05
"""The smallest Beta prior parameter: smaller ones put almost all the prior mass within
``1e-20`` of 0 or 1, beyond what a double can tell apart."""
AHEAD = 4
"""Attempts made ahead for every cell when there are few cells (see ``Posteriors``)."""
FEW_CELLS = 1024
"""Up to this many cells, ``AHEAD`` attempts of every cell are made ahead and decided in double
precision; with more, ``draws`` (single precision, attempts made where needed) is faster. Half
of ``rlviz.bandits.noise.FEW_CELLS``: four attempts ahead cost more than one key ahead."""

_LOGIT_MAX = 22.9  # |ln(u1 / (1 - u1))| for u1 = (h + 1/2) / 2**32

_LOG_Z_SHIFT = math.log(4.0) - 96.0 * math.log(2.0)
_U = 2.0**-24  # unit roundoff of single precision
_F32 = np.float32


def constants(p: np.ndarray, q: np.ndarray):
    r"""Cheng's constants for ``Beta(p, q)``: ``1/λ``, ``(p + λ)/λ`` and ``A = p + q``.

    .. math:: \lambda = \sqrt{\frac{2pq - A}{A - 2}} \text{ if } \min(p, q) > 1
        \text{ (algorithm BB), else } \min(p, q) \text{ (algorithm BC)}.
    """
    a = p + q
    low = np.minimum(p, q)
    # BB's λ, kept finite where BC's is used (A − 2 ≤ 0 there): unchanged where it is used.
    bb = np.sqrt(np.maximum(2.0 * p * q - a, 0.0) / np.maximum(a - 2.0, 1e-300))
    lam = np.where(low > 1.0, bb, low)
    inv = 1.0 / lam
    return inv, (p + lam) * inv, a


def single_precision(alpha: float, beta: float) -> bool:
    """Whether the draws of every posterior from this prior can be made with ``draws``.

    With both prior parameters in [1/2, 10**6], ``λ ≥ 1/2`` (``λ`` is ``min(p, q)`` or at
    least 1), so ``|V| ≤ 45.8`` and, with at most ``MAX_STEPS`` pulls, ``W = p e^V`` lies
    within ``[1e-20, 1e27]``: well inside single precision's range.
    """
    return 0.5 <= min(alpha, beta) and max(alpha, beta) <= 1e6


def margin(p: np.ndarray, q: np.ndarray, inv: np.ndarray, cinv: np.ndarray,
           a: np.ndarray) -> np.ndarray:
    r"""How far the single-precision test of ``attempt32`` can be from the double-precision one.

    Each single-precision operation errs by at most ``u = 2**-24`` relative (``exp`` and ``log``
    by under 3 units in the last place, counted as 4), and the errors add up through the test,
    scaled by the sizes of its terms: ``|logit| < 22.9``, ``|ln(4 u1² u2)| < 68`` and
    ``|ln(A / (q + W))| ≤ L = 22.9/λ + ln(A/q)``. Summed, the test errs by at most

    .. math:: u \big[A\,(246/\lambda + 14 + 14 L) + 292\,(p + \lambda)/\lambda + 620\big],

    which is doubled for safety. It is a worst case: fewer than 1% of attempts fall within it
    for most shapes, up to a third for very skewed ones (``p/q`` or ``q/p`` in the thousands),
    whose cells then draw in double precision.

    Returns:
        The margins, shaped like the arguments (float64).
    """
    log_ratio = np.log((a / q).astype(_F32))  # a bound needs no more digits
    # 2u [a (246/λ + 14 + 14 (22.9/λ + ln(a/q))) + 292 cinv + 620], terms gathered:
    bound = 566.6 * inv + 14.0 + 14.0 * log_ratio
    bound *= a
    bound += 292.0 * cinv + 620.0
    bound *= 2.0 * _U
    return bound


def uniforms(bits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""The part of an attempt that does not depend on the shapes, in double precision.

    ``u1 = h / 2**32`` and ``u2 = l / 2**32`` with ``h`` and ``l`` the high and the low
    32 bits of each draw plus 1/2, so that the logit is ``ln(h / (2**32 − h))`` and
    ``ln(4 u1² u2) = ln(h² l) + ln 4 − 96 ln 2``.

    Returns:
        ``(ln(u1 / (1 − u1)), ln(4 u1² u2))``, each shaped like ``bits``.
    """
    high = np.right_shift(bits, _U32).astype(np.uint32).astype(np.float64)
    high += 0.5
    low = bits.astype(np.uint32).astype(np.float64)  # the low 32 bits
    low += 0.5
    logit = 2.0**32 - high
    np.divide(high, logit, out=logit)
    np.log(logit, out=logit)
    high *= high
    high *= low
    log_z = np.log(high, out=high)
    log_z += _LOG_Z_SHIFT
    return logit, log_z


def attempt(logit, log_z, p, q, inv, cinv, a) -> tuple[np.ndarray, np.ndarray]:
    r"""One attempt in double precision: the candidates ``Y`` and whether each is accepted.

    ``logit`` and ``log_z`` come from ``uniforms``, ``inv``, ``cinv`` and ``a`` from
    ``constants``; the shapes broadcast against the draws.
    """
    v = logit * inv
    w = np.exp(v)
    w *= p
    t = q + w
    y = w / t
    bound = a / t
    np.log(bound, out=bound)
    bound *= a
    bound += logit * cinv
    return y, bound >= log_z


def uniforms32(bits: np.ndarray) -> np.ndarray:
    """``uniforms`` in single precision: ``[..., 2, n]`` rows logit and ``ln(4 u1² u2)``.

    ``h``, ``2**32 − h`` and ``l`` are rounded to single precision from their integer parts
    (the complement is formed exactly first, so that a logit near ``u1 = 1`` keeps its
    precision) and then have 1/2 added.
    """
    high = np.right_shift(bits, _U32).astype(np.uint32)
    h = high.astype(_F32)
    h += _F32(0.5)
    c = np.invert(high, out=high).astype(_F32)  # 2**32 - 1 - h
    c += _F32(0.5)
    low = bits.astype(np.uint32).astype(_F32)  # the low 32 bits
    low += _F32(0.5)
    out = np.empty((*bits.shape[:-1], 2, bits.shape[-1]), dtype=_F32)
    logit, log_z = out[..., 0, :], out[..., 1, :]
    np.divide(h, c, out=logit)
    np.log(logit, out=logit)
    h *= h
    h *= low
    h *= _F32(2.0**-94)  # 4 u1² u2
    np.log(h, out=log_z)
    return out


def _logit32(bits: np.ndarray) -> np.ndarray:
    """The logit row of ``uniforms32``, alone (the same operations, so the same numbers)."""
    high = np.right_shift(bits, _U32).astype(np.uint32)
    h = high.astype(_F32)
    h += _F32(0.5)
    c = np.invert(high, out=high).astype(_F32)
    c += _F32(0.5)
    np.divide(h, c, out=h)
    return np.log(h, out=h)


def attempt32(logit, log_z, p, q, inv, cinv, a) -> tuple[np.ndarray, np.ndarray]:
    """One attempt in single precision (all arguments float32).

    Returns:
        ``(W, test)``: the candidates' ``W`` (``Y = W/(q + W)``) and the acceptance test's
        left side minus its right side: the attempt is accepted for sure where
        ``test ≥ margin``, rejected for sure where ``test < −margin``.
    """
    w = logit * inv
    np.exp(w, out=w)
    w *= p
    test = q + w
    np.divide(a, test, out=test)
    np.log(test, out=test)
    test *= a
    test += logit * cinv
    test -= log_z
    return w, test


def draws(cells: np.ndarray, step: int, params: np.ndarray, single: np.ndarray,
          first: np.ndarray) -> np.ndarray:
    r"""One draw ``θ ~ Beta(p, q)`` at every cell, the first attempt in single precision.

    Written in numpy, one step of the algorithm at a time; a race makes the same draws with
    ``compiled_draws``.

    Draws: attempt ``j`` at cell (run, arm) takes draw ``j`` of the SAMPLE stream (``u1`` its
    high, ``u2`` its low 32 bits). Every cell makes attempt 0 in single precision, and most
    accept it for sure (its test clears the ``margin``). The other cells make their attempts
    again from attempt 0, decided in double precision, two and then four at a time, and take
    their first accepted one (``exact_draws``). A cell rejected ``ATTEMPTS`` times takes the
    posterior mean ``p / (p + q)``.

    Args:
        cells: ``[A, R]`` ``Noise.cells``.
        step: 0-based step index.
        params: ``[5, A·R]`` rows ``p``, ``q`` and ``constants(p, q)``, flat ``a · R + r``
            like ``cells.ravel()``, from a prior that passes ``single_precision``.
        single: ``[6, A·R]`` float32: the same rows in single precision, then ``margin``.
        first: ``[2, A·R]`` attempt 0's ``uniforms32`` at this step.

    Returns:
        ``[A·R]`` the draws, in (0, 1] (within ``1e-16`` of 1 they round to 1).
    """
    w, test = attempt32(*first, *single[:5])
    y = _candidates(w, params[1])
    todo = (test < single[5]).nonzero()[0]  # not accepted for sure
    counters = cells.reshape(-1) + _step_offset(Stream.SAMPLE, step)
    _attempt_exactly(y, todo, 0, counters, params, single=True, batch=2)
    return y


def exact_draws(cells: np.ndarray, step: int, params: np.ndarray, *, single: bool = False,
                ahead: np.ndarray | None = None) -> np.ndarray:
    """``draws`` with every attempt decided in double precision.

    Args:
        cells: ``[A, R]`` ``Noise.cells``.
        step: 0-based step index.
        params: As for ``draws``, from any prior (shapes as small as ``MIN_PRIOR``).
        single: Candidates with ``W`` in single precision, the same as ``draws`` (for a prior
            that passes ``single_precision``), instead of exact ones.
        ahead: Optionally ``[3, K, A·R]`` ``ahead_uniforms`` of this step's first ``K`` attempts.

    Returns:
        ``[A·R]`` the draws.
    """
    counters = cells.reshape(-1) + _step_offset(Stream.SAMPLE, step)
    y = np.empty(counters.size)
    if ahead is not None:  # the first attempts of every cell, made ahead
        tried = ahead.shape[1]
        value, accepted = attempt(ahead[0], ahead[1], *params)
        todo = _take_first_ahead(y, value, accepted, ahead[2], params, single)
    else:
        todo, tried = np.arange(counters.size), 0
    _attempt_compiled(y, todo, tried, counters, params, single, 2 if todo.size > 2048 else 4)
    return y


def _attempt_exactly(y, todo, tried, counters, params, single, batch) -> None:
    """The cells ``todo`` make attempts ``tried, tried + 1, ...`` decided in double precision.

    ``batch`` attempts at first, then four at a time, until each cell has accepted one, which it
    takes into ``y`` (see ``_take_first``). ``counters`` are attempt 0's counters before mixing,
    ``[A·R]``.
    """
    while todo.size and tried < ATTEMPTS:
        tries = min(batch, ATTEMPTS - tried)
        bits = _mix(counters[todo] + _DRAW_OFFSETS[tried: tried + tries, None])  # [J, n]
        value, accepted = attempt(*uniforms(bits), *params.take(todo, axis=1))
        todo = _take_first(y, todo, value, accepted, bits, params, single)
        tried, batch = tried + tries, 4
    if todo.size:  # all rejected (p < 1e-38): the posterior mean
        y[todo] = params[0, todo] / params[4, todo]


def ahead_uniforms(bits: np.ndarray) -> np.ndarray:
    """What ``exact_draws`` needs of attempts made ahead, from ``[..., K, n]`` draws.

    Returns:
        ``[..., 3, K, n]``: ``uniforms`` (logit and ``ln(4 u1² u2)``) and the single-precision
        logit of ``uniforms32`` (exact in double precision).
    """
    logit, log_z = uniforms(bits)
    return np.stack([logit, log_z, uniforms32(bits)[..., 0, :].astype(np.float64)], axis=-3)


def _take_first(y, todo, value, accepted, bits, params, single) -> np.ndarray:
    """Each cell of ``todo`` whose attempts (``[J, n]``) accepted one takes the first into ``y``.

    The candidate is ``value`` (exact), or with ``single`` made in single precision from the
    attempt's ``bits`` (``[J, n]``), as ``attempt32`` makes it. Returns the cells still to draw.
    """
    tries = accepted.shape[0]
    first_hit = tries - np.maximum.reduce(accepted.view(np.uint8) * _FIRST_WEIGHTS[-tries:],
                                          axis=0)
    missed = first_hit == tries
    hit = (~missed).nonzero()[0]
    cell = todo[hit]
    at = first_hit[hit].astype(np.intp)  # flat index of each first accepted attempt
    at *= accepted.shape[1]
    at += hit
    if single:
        w = _logit32(bits.reshape(-1)[at])
        w *= params[2].take(cell).astype(_F32)
        np.exp(w, out=w)
        w *= params[0].take(cell).astype(_F32)
        y[cell] = _candidates(w, params[1].take(cell))
    else:
        y[cell] = value.reshape(-1)[at]
    return todo[missed]


def _take_first_ahead(y, value, accepted, logit32, params, single) -> np.ndarray:
    """``_take_first`` with ``todo`` every cell: all cells take a candidate, then redraw some.

    A cell takes the candidate of its first accepted attempt, or of its last one if none was
    accepted (it is then drawn again). Picking along the attempts for every cell is cheaper
    than gathering the accepted ones.
    """
    tries = accepted.shape[0]
    first_hit = tries - np.maximum.reduce(accepted.view(np.uint8) * _FIRST_WEIGHTS[-tries:],
                                          axis=0)
    n = accepted.shape[1]
    at = np.minimum(first_hit, tries - 1).astype(np.intp)  # the picked attempt, then its
    at *= n                                                 # flat index
    at += np.arange(n)
    if single:
        w = logit32.reshape(-1)[at].astype(_F32)
        w *= params[2].astype(_F32)
        np.exp(w, out=w)
        w *= params[0].astype(_F32)
        y[:] = _candidates(w, params[1])
    else:
        y[:] = value.reshape(-1)[at]
    return (first_hit == tries).nonzero()[0]


_FIRST_WEIGHTS = np.arange(AHEAD, 0, -1, dtype=np.uint8)[:, None]  # [4, 1]: 4, 3, 2, 1


def _candidates(w: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``Y = W/(q + W)`` in double precision from single-precision ``W``."""
    y = w.astype(np.float64)
    y /= q + y
    return y


# ------------------------------------------------------------------------------ compiled stages
# The same draws as ``draws`` and ``_attempt_exactly``, with every operation that rounds exactly
# (integer hashing, +, −, ×, ÷, √, conversions) in compiled loops and the logarithms and
# exponentials in numpy between them: numpy's ``log`` and ``exp`` round differently from the
# C library a compiled loop calls, and the draws must be numpy's to the last bit.
def compiled_draws(cells: np.ndarray, step: int, params: np.ndarray,
                   single: np.ndarray) -> np.ndarray:
    """``draws`` in compiled stages: the same draws, bit for bit.

    Every attempt is first decided in single precision with the ``margin``, as ``draws``
    decides attempt 0: attempt 0 of every cell, then ``LATER32`` more of the cells that rejected
    it for sure. Only the cells left unsure, or rejected that many times, go on in double
    precision, from their first attempt not decided (``_attempt_compiled``). The margin makes
    every decision the double-precision one, so the draws are those of ``draws``.

    Args:
        cells: ``[A, R]`` ``Noise.cells``.
        step: 0-based step index.
        params: ``[5, A·R]`` as for ``draws``.
        single: ``[6, A·R]`` float32 as for ``draws``.

    Returns:
        ``[A·R]`` the draws.
    """
    counters = cells.reshape(-1) + _step_offset(Stream.SAMPLE, step)
    n = counters.size
    u = _ratios32(counters, np.empty((2, n), dtype=_F32))
    np.log(u, out=u)  # uniforms32: the logit and ln(4 u1² u2)
    w = np.multiply(u[0], single[2])  # V = logit / λ
    np.exp(w, out=w)
    t = _cheng_ratio32(w, single, np.empty_like(w))  # W = p e^V; A / (q + W)
    np.log(t, out=t)
    y = np.empty(n)
    todo, rejected = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    unsure, r = _decide32(u, w, t, single, params[1], y, todo, rejected)
    tried = np.zeros(n, dtype=np.int64)
    left = _attempt32_later(y, todo, tried, unsure, rejected[:r], counters, params, single)
    _attempt_compiled(y, todo[:left], tried[:left], counters, params, True, 4)
    return y


LATER32 = 2
"""Attempts after the first made in single precision at once by the cells that rejected
attempt 0 for sure (about one in eight): after two, about one in sixty of them is left."""


def _attempt32_later(y, todo, tried, start, rejected, counters, params, single) -> int:
    """Attempts ``1 .. LATER32`` in single precision of the cells ``rejected``.

    Those cells rejected attempt 0 for sure. A cell takes its candidate at the first attempt
    accepted for sure; it stops at the first attempt not decided for sure, or after all were
    rejected for sure, and is then written to ``todo[start:]`` with that next attempt in
    ``tried``.

    Returns:
        ``start`` plus the number of cells written.
    """
    m = rejected.size
    if not m:
        return start
    u = np.empty((2, LATER32, m), dtype=_F32)
    sub = _ratios32_at(counters, rejected, _DRAW_OFFSETS[1: 1 + LATER32], single, u,
                       np.empty((6, m), dtype=_F32))
    np.log(u, out=u)  # uniforms32 of those attempts
    w = np.multiply(u[0], sub[2])  # V = logit / λ
    np.exp(w, out=w)
    t = _cheng_ratio32_at(w, sub, np.empty_like(w))  # W = p e^V; A / (q + W)
    np.log(t, out=t)
    return _decide32_at(u, w, t, sub, params[1], y, rejected, todo, tried, start)


def _attempt_compiled(y, todo, tried, counters, params, single, batch) -> None:
    """``_attempt_exactly`` in compiled stages: the same attempts, decisions and candidates.

    ``tried`` is the number of attempts already made, one for all the cells ``todo`` or one
    per cell (``[n]`` int64, overwritten).
    """
    if np.ndim(tried) == 0:
        tried = np.full(todo.size, tried, dtype=np.int64)
    while todo.size:
        u = np.empty((2, batch, todo.size))
        sub = _ratios64(counters, todo, tried, params, u, np.empty((5, todo.size)))
        np.log(u, out=u)  # uniforms: the logit and ln(h² l)
        w = np.multiply(u[0], sub[2])  # V = logit / λ
        np.exp(w, out=w)
        bound = _cheng_ratio64(w, sub, np.empty_like(w))  # w becomes Y; bound A / (q + W)
        np.log(bound, out=bound)
        hits = np.empty(todo.size, dtype=np.int64)
        ratio = np.empty((2, todo.size), dtype=_F32)
        left, taken = _take_accepted(y, todo, tried, counters, u, w, bound, sub, single, hits,
                                     ratio, ATTEMPTS)
        if single and taken:  # the accepted candidates' W in single precision (``attempt32``)
            w32 = np.log(ratio[0, :taken])
            w32 *= ratio[1, :taken]  # 1/λ
            np.exp(w32, out=w32)
            _candidates32(y, hits[:taken], w32, params)
        todo, tried, batch = todo[:left], tried[:left], 4


@kernel
def _pair32(bits):
    """``uniforms32`` of one draw before its logarithms: ``h / (2**32 − h)`` and ``4 u1² u2``."""
    high = bits >> _U32
    h = np.float32(high) + np.float32(0.5)
    c = np.float32(high ^ _LOW32) + np.float32(0.5)
    low = np.float32(bits & _LOW32) + np.float32(0.5)
    return h / c, h * h * low * np.float32(2.0**-94)


@kernel
def _ratios32(counters, out):
    """``uniforms32`` before its logarithms (``_pair32``) of attempt 0 of every cell."""
    for i in range(counters.size):
        out[0, i], out[1, i] = _pair32(mix64(counters[i]))
    return out


@kernel
def _ratios32_at(counters, todo, offsets, single, out, sub):
    """``_pair32`` of attempts ``offsets`` of the cells ``todo`` into ``out[:, j, k]``.

    ``sub`` gets the single-precision rows of those cells. Returns ``sub``.
    """
    first = np.empty(todo.size, dtype=np.uint64)
    for k in range(todo.size):
        cell = todo[k]
        first[k] = counters[cell]
        for row in range(6):
            sub[row, k] = single[row, cell]
    for j in range(offsets.size):  # gathered first, so that this loop vectorises
        for k in range(todo.size):
            out[0, j, k], out[1, j, k] = _pair32(mix64(first[k] + offsets[j]))
    return sub


@kernel
def _cheng_ratio32(w, single, out):
    """``W = p e^V`` in place from ``e^V``, and ``A / (q + W)``, in single precision."""
    for i in range(w.size):
        w[i] *= single[0, i]
        out[i] = single[4, i] / (single[1, i] + w[i])
    return out


@kernel
def _cheng_ratio32_at(w, sub, out):
    """``_cheng_ratio32`` of ``[J, n]`` attempts, the cells' rows in ``sub``."""
    for j in range(w.shape[0]):
        for k in range(w.shape[1]):
            w[j, k] *= sub[0, k]
            out[j, k] = sub[4, k] / (sub[1, k] + w[j, k])
    return out


@kernel
def _decide32(u, w, log_ratio, single, q, y, unsure, rejected):
    """``attempt32``'s test from its logarithms; each cell takes its candidate ``Y``.

    The cells whose test is within the margin go into ``unsure``, those rejected for sure
    (test below minus the margin) into ``rejected``.

    Returns:
        How many of each.
    """
    for i in range(w.size):  # no branch: these loops vectorise
        wide = np.float64(w[i])
        y[i] = wide / (q[i] + wide)
    test = np.empty(w.size, dtype=np.float32)
    for i in range(w.size):
        test[i] = log_ratio[i] * single[4, i] + u[0, i] * single[3, i] - u[1, i]
    n = r = 0
    for i in range(w.size):
        if test[i] < -single[5, i]:
            rejected[r] = i
            r += 1
        elif not test[i] >= single[5, i]:
            unsure[n] = i
            n += 1
    return n, r


@kernel
def _decide32_at(u, w, log_ratio, sub, q, y, cells, todo, tried, start):
    """``_decide32`` for the attempts ``1, 2, ...`` of ``_attempt32_later``, in order.

    ``cells[k]`` takes the candidate of its first attempt accepted for sure; if an attempt
    before it is not decided for sure, or none is accepted, the cell goes to ``todo[start]``
    with its next attempt in ``tried[start]``. Returns the new ``start``.
    """
    for k in range(w.shape[1]):
        cell = cells[k]
        after = w.shape[0] + 1  # all rejected for sure
        for j in range(w.shape[0]):
            test = log_ratio[j, k] * sub[4, k] + u[0, j, k] * sub[3, k] - u[1, j, k]
            if test >= sub[5, k]:
                wide = np.float64(w[j, k])
                y[cell] = wide / (q[cell] + wide)
                after = -1
                break
            if not test < -sub[5, k]:
                after = j + 1
                break
        if after >= 0:
            todo[start], tried[start] = cell, after
            start += 1
    return start


@kernel
def _ratios64(counters, todo, tried, params, out, sub):
    """``uniforms`` before its logarithms for the next ``out.shape[1]`` attempts of ``todo``.

    Cell ``todo[k]`` makes attempts ``tried[k], tried[k] + 1, ...``:
    ``out[0, j, k] = h / (2**32 − h)`` and ``out[1, j, k] = h² l`` (``h``, ``l`` plus 1/2);
    ``sub`` gets the parameter rows of those cells. Returns ``sub``.
    """
    for k in range(todo.size):
        cell = todo[k]
        for row in range(5):
            sub[row, k] = params[row, cell]
        for j in range(out.shape[1]):
            bits = mix64(counters[cell] + np.uint64(tried[k] + j) * _GOLDEN)
            high = np.float64(bits >> _U32) + 0.5
            low = np.float64(bits & _LOW32) + 0.5
            out[0, j, k] = high / (2.0**32 - high)
            out[1, j, k] = high * high * low
    return sub


@kernel
def _cheng_ratio64(w, sub, out):
    """From ``e^V``: ``W = p e^V``, then ``w ← Y = W/(q + W)`` and ``out = A/(q + W)``."""
    for j in range(w.shape[0]):
        for k in range(w.shape[1]):
            big = w[j, k] * sub[0, k]
            t = sub[1, k] + big
            w[j, k] = big / t
            out[j, k] = sub[4, k] / t
    return out


@kernel
def _take_accepted(y, todo, tried, counters, u, value, bound, sub, single, hits, ratio, limit):
    """Each cell of ``todo`` takes its first accepted attempt (``attempt``'s test).

    Its candidate goes into ``y``, or with ``single`` the cell goes into ``hits``, the
    ``_logit32`` ratio of that attempt into ``ratio[0]`` and ``1/λ`` into ``ratio[1]``, both in
    single precision (its ``W`` is then made as ``attempt32`` makes it). A cell that has made
    ``limit`` attempts, all rejected, takes the posterior mean ``p / (p + q)``. The other cells
    with no accepted attempt are moved to the front of ``todo``, ``tried`` counting their
    attempts.

    Returns:
        ``(left, taken)``: how many cells are left, how many ``hits``.
    """
    left = taken = 0
    for k in range(todo.size):
        cell, hit = todo[k], -1
        tries = min(u.shape[1], limit - tried[k])
        for j in range(tries):
            log_z = u[1, j, k] + _LOG_Z_SHIFT
            if bound[j, k] * sub[4, k] + u[0, j, k] * sub[3, k] >= log_z:
                hit = j
                break
        if hit < 0:
            if tried[k] + tries < limit:
                todo[left], tried[left] = cell, tried[k] + tries
                left += 1
            else:
                y[cell] = sub[0, k] / sub[4, k]
        elif single:
            high = mix64(counters[cell] + np.uint64(tried[k] + hit) * _GOLDEN) >> _U32
            h = np.float32(high) + np.float32(0.5)
            ratio[0, taken] = h / (np.float32(high ^ _LOW32) + np.float32(0.5))
            ratio[1, taken] = sub[2, k]
            hits[taken] = cell
            taken += 1
        else:
            y[cell] = value[hit, k]
    return left, taken


@kernel
def _candidates32(y, cells, w, params):
    """``y[cell] = W/(q + W)`` in double precision from ``W = p e^V``, ``e^V`` in ``w``."""
    for k in range(cells.size):
        big = np.float64(w[k] * np.float32(params[0, cells[k]]))
        y[cells[k]] = big / (params[1, cells[k]] + big)


@kernel
def _count(params, cells, wins):
    """A win adds 1 to ``p``, a loss to ``q`` at each of ``cells``; Cheng's constants anew.

    The operations of ``constants``, one cell at a time.
    """
    for k in range(cells.size):
        i = cells[k]
        if wins[k]:
            params[0, i] += 1.0
        else:
            params[1, i] += 1.0
        p, q = params[0, i], params[1, i]
        a = p + q
        bb = math.sqrt(max(2.0 * p * q - a, 0.0) / max(a - 2.0, 1e-300))
        lam = bb if min(p, q) > 1.0 else min(p, q)
        inv = 1.0 / lam
        params[2, i], params[3, i], params[4, i] = inv, (p + lam) * inv, a


@kernel
def _single_rows(params, cells, rows32, ratio):
    """The cells' rows ``p, q, 1/λ, (p + λ)/λ, A`` in single precision into ``rows32``.

    Returns ``ratio`` holding each cell's ``A/q`` (``margin`` takes its logarithm).
    """
    for k in range(cells.size):
        i = cells[k]
        for row in range(5):
            rows32[row, i] = params[row, i]
        ratio[k] = params[4, i] / params[1, i]
    return ratio


@kernel
def _margins(params, cells, rows32, log_ratio):
    """``margin`` of each cell from ``ln(A/q)`` (single precision), into ``rows32[5]``."""
    for k in range(cells.size):
        i = cells[k]
        bound = 566.6 * params[2, i] + 14.0 + np.float64(np.float32(14.0) * log_ratio[k])
        bound *= params[4, i]
        bound += 292.0 * params[3, i] + 620.0
        rows32[5, i] = bound * (2.0 * _U)


class Posteriors:
    """``Beta(p, q)`` posteriors of the cells of a race, and their draws, step after step.

    The draws are the same whichever way they are made: with up to ``FEW_CELLS`` cells every
    attempt is decided in double precision, ``AHEAD`` of them made ahead (numpy's per-call cost
    outweighs the arithmetic); with more, as ``draws`` makes them, in compiled stages
    (``compiled_draws``). Candidates are made in single precision whenever the prior allows
    (``single_precision``).

    Args:
        cells: ``[A, R]`` ``Noise.cells``.
        alpha, beta: The prior.
        steps: The race's length (random numbers are made ahead, never beyond it).
    """

    def __init__(self, cells: np.ndarray, alpha: float, beta: float, *, steps: int):
        self.cells = cells
        self.params = params = np.empty((5, cells.size))
        params[0], params[1] = alpha, beta
        params[2:] = constants(params[0], params[1])
        self.single = single_precision(alpha, beta)
        self.ahead = self.rows32 = None
        if cells.size <= FEW_CELLS:
            self.ahead = Steps(cells.reshape(-1), Stream.SAMPLE,
                               lambda bits, first: ahead_uniforms(bits), end=steps, draws=AHEAD)
        elif self.single:  # p, q, inv, cinv, a in single precision, and the margin
            self.rows32 = np.empty((6, cells.size), dtype=_F32)
            self.rows32[:5], self.rows32[5] = params, margin(*params)

    def draw(self, step: int) -> np.ndarray:
        """``[A·R]`` one draw ``θ ~ Beta(p, q)`` of every cell at step ``step``."""
        if self.rows32 is not None:
            return compiled_draws(self.cells, step, self.params, self.rows32)
        ahead = None if self.ahead is None else self.ahead.at(step)
        return exact_draws(self.cells, step, self.params, single=self.single, ahead=ahead)

    def add(self, cells: np.ndarray, wins: np.ndarray) -> None:
        """A win at each of these cells (flat indices) adds 1 to its ``p``, a loss to its ``q``.

        Cheng's constants, and with single-precision draws the rows in single precision and the
        ``margin``, are made anew at those cells (the cells are distinct: one per run).
        """
        _count(self.params, cells, wins)
        if self.rows32 is not None:
            log_ratio = np.log(_single_rows(self.params, cells, self.rows32,
                                            np.empty(cells.size, dtype=_F32)))
            _margins(self.params, cells, self.rows32, log_ratio)


@on_warm_up
def _warm_up() -> None:
    """Compile (or load from disk) the stages for the argument types a race passes."""
    cells = Noise(0).cells(np.arange(2), np.arange(3)[:, None])
    posteriors = Posteriors(cells, 1.0, 1.0, steps=2)
    posteriors.rows32 = np.empty((6, cells.size), dtype=_F32)
    posteriors.rows32[:5], posteriors.rows32[5] = posteriors.params, margin(*posteriors.params)
    for single in (True, False):
        _attempt_compiled(np.empty(cells.size), np.arange(cells.size), 0,
                          cells.reshape(-1), posteriors.params, single, 4)
    _attempt32_later(np.empty(cells.size), np.empty(cells.size, dtype=np.int64),
                     np.zeros(cells.size, dtype=np.int64), 0, np.arange(cells.size),
                     cells.reshape(-1), posteriors.params, posteriors.rows32)
    posteriors.draw(0)
    posteriors.add(np.arange(2), np.array([True, False]))
