r"""Counter-based random streams: every random number of a race is a pure function of its index.

See ``Noise``. A race and a per-run loop ask for the same numbers by index, so they agree draw
for draw.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

import numpy as np

from rlviz.compiled import kernel, on_warm_up
from rlviz.errors import InputError

MAX_ARMS = 256
MAX_RUNS = 1 << 20
MAX_STEPS = 1 << 22


class Stream(IntEnum):
    """What a random number is for; each purpose draws from its own independent stream."""

    MEANS = 1
    """True arm means of each run (drawn once, at step 0)."""
    REWARD = 2
    """Reward noise of pulling an arm: shared by every agent."""
    WALK = 3
    """Increments of the nonstationary random walk of the means."""
    EXPLORE = 4
    """ε-greedy's coin and its random arm."""
    TIE = 5
    """Breaking ties between equally valued arms."""
    SAMPLE = 6
    """Sampling an action (gradient bandit) or a posterior (Thompson sampling)."""


_GOLDEN_INT = 0x9E3779B97F4A7C15
_MASK64 = (1 << 64) - 1
_GOLDEN = np.uint64(_GOLDEN_INT)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_LOW32 = np.uint64(0xFFFFFFFF)
_RUN_SHIFT, _ARM_SHIFT = np.uint64(16), np.uint64(8)
_U30, _U27, _U31, _U32, _U11 = (np.uint64(s) for s in (30, 27, 31, 32, 11))


@dataclass(frozen=True)
class Noise:
    r"""Counter-based random numbers: each draw is a pure function of its index.

    The 64-bit index ``i`` packs ``stream`` (6 bits), ``step`` (22), ``run`` (20), ``arm`` (8)
    and ``draw`` (8). The output is SplitMix64 at that position of its sequence,

    .. math:: x = \operatorname{mix}\big((k + i\,\gamma) \bmod 2^{64}\big),

    with the key ``k`` made from the seed by ``np.random.SeedSequence``, ``γ`` the golden-ratio
    increment and ``mix`` Stafford's variant-13 finaliser. No state is carried, so the
    vectorised race computes only the numbers it needs (the reward of the arm actually pulled)
    and a per-run loop can ask for exactly the same ones.

    Source: Steele, Lea & Flood (2014), *Fast splittable pseudorandom number generators*;
    Salmon et al. (2011), *Parallel random numbers: as easy as 1, 2, 3*.

    Attributes:
        seed: A non-negative integer.
    """

    seed: int
    key: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.seed, bool) or not isinstance(self.seed, int | np.integer):
            raise InputError(f"the seed must be a whole number, not {self.seed!r}")
        if self.seed < 0:
            raise InputError(f"the seed must be 0 or more, not {self.seed}")
        state = np.random.SeedSequence(int(self.seed)).generate_state(1, dtype=np.uint64)
        object.__setattr__(self, "key", int(state[0]))

    def cells(self, run: Any, arm: Any = 0) -> np.ndarray:
        """The (run, arm) part of the counter, premultiplied: ``(k + (run, arm)·γ) mod 2**64``.

        A race computes these once; each step then costs one addition before the mix.

        Raises:
            ValueError: A run or arm index outside its field.
        """
        run, arm = np.asarray(run), np.asarray(arm)
        for name, x, top in (("run", run, MAX_RUNS), ("arm", arm, MAX_ARMS)):
            if x.size and (x.min() < 0 or x.max() >= top):
                raise ValueError(f"{name} indices must lie in [0, {top})")
        index = (run.astype(np.uint64) << _RUN_SHIFT) | (arm.astype(np.uint64) << _ARM_SHIFT)
        return np.add(np.multiply(index, _GOLDEN), np.uint64(self.key), dtype=np.uint64)

    @staticmethod
    def bits_at(cells: np.ndarray, stream: int, step: int, draw: Any = 0) -> np.ndarray:
        """64 random bits for each (run, arm) cell at the given stream, step and draw(s).

        ``draw`` may be an array; it broadcasts against ``cells``.

        Raises:
            ValueError: A stream, step or draw index outside its field.
        """
        if not (0 <= stream < 64 and 0 <= step < MAX_STEPS):
            raise ValueError("stream or step index out of range")
        cells = np.asarray(cells)
        base = ((int(stream) << 58) | (int(step) << 36)) * _GOLDEN_INT
        if isinstance(draw, int | np.integer):
            if not 0 <= draw < 256:
                raise ValueError("draw index out of range")
            offset = np.uint64((base + int(draw) * _GOLDEN_INT) & _MASK64)
            shape = cells.shape
        else:  # (base | draw)·γ = base·γ + draw·γ, as draw fits below bit 36
            draw = np.asarray(draw)
            if draw.size and (draw.min() < 0 or draw.max() > 255):
                raise ValueError("draw index out of range")
            offset = np.add(np.multiply(draw.astype(np.uint64), _GOLDEN), np.uint64(base & _MASK64))
            shape = np.broadcast_shapes(cells.shape, offset.shape)
        return _mix(np.add(cells, offset, out=np.empty(shape, np.uint64)))

    def bits(self, stream: int, step: int, run: Any, arm: Any = 0, draw: int = 0) -> np.ndarray:
        """64 random bits per (run, arm); ``run`` and ``arm`` broadcast.

        Args:
            stream: A ``Stream``.
            step: Step index in ``[0, 2**22)``.
            run: Run indices in ``[0, 2**20)``.
            arm: Arm indices in ``[0, 256)``.
            draw: Which of several numbers for the same (step, run, arm), in ``[0, 256)``.
        """
        return self.bits_at(self.cells(run, arm), stream, step, draw)

    def uniform(self, stream: int, step: int, run: Any, arm: Any = 0, draw: int = 0) -> np.ndarray:
        """Uniform numbers in the open interval (0, 1), 53 random bits each."""
        return unit(self.bits(stream, step, run, arm, draw))

    def normal(self, stream: int, step: int, run: Any, arm: Any = 0, draw: int = 0) -> np.ndarray:
        """Standard normal numbers (see ``gaussian``)."""
        return gaussian(self.bits(stream, step, run, arm, draw))


def _mix(z: np.ndarray) -> np.ndarray:
    """Stafford's variant-13 finaliser of SplitMix64 on a uint64 array (in place if contiguous).

    Returns the mixed array (``mix64`` of every element, a compiled loop).
    """
    z = z if z.flags.c_contiguous else z.copy(order="C")
    _mix_all(z.reshape(-1))
    return z


@kernel
def mix64(z):
    """``_mix`` of one uint64, for compiled loops (the same integer operations, the same bits)."""
    z = (z ^ (z >> _U30)) * _MIX1
    z = (z ^ (z >> _U27)) * _MIX2
    return z ^ (z >> _U31)


@kernel
def _mix_all(z):
    """``z[i] = mix64(z[i])`` for every element of a flat uint64 array."""
    for i in range(z.size):
        z[i] = mix64(z[i])


@kernel
def unit64(bits):
    """``unit`` of one uint64, for compiled loops: ``(b + 1/2) / 2**53`` of its top 53 bits."""
    return (np.float64(bits >> _U11) + 0.5) * 2.0**-53


def _step_offset(stream: int, step: int) -> np.uint64:
    """The (stream, step) part of the counter, times γ.

    ``Noise.bits_at`` without its checks is
    ``_mix(cells + _step_offset(stream, step) + _DRAW_OFFSETS[draw])``.
    """
    return np.uint64((((int(stream) << 58) | (int(step) << 36)) * _GOLDEN_INT) & _MASK64)


_DRAW_OFFSETS = np.multiply(np.arange(256, dtype=np.uint64), _GOLDEN)  # draw·γ mod 2**64


def unit(bits: np.ndarray) -> np.ndarray:
    """Uniform numbers in (0, 1) from the top 53 bits: ``(b + 1/2) / 2**53``."""
    u = np.right_shift(bits, _U11).view(np.int64).astype(np.float64)  # exact below 2**53
    u += 0.5
    u *= 2.0**-53
    return u


def gaussian(bits: np.ndarray) -> np.ndarray:
    r"""Standard normal numbers by the Box–Muller transform of one 64-bit draw.

    .. math:: z = \sqrt{-2 \ln u_1}\,\cos(2\pi u_2),

    ``u1`` from the high 32 bits (so ``|z| < 6.8``; the cut tail has probability ``1e-11``) and
    ``u2`` from the low 32 bits. The cosine is taken in single precision (error about
    ``1e-7``, far below any sampling error) because it is 30 times faster.
    """
    bits = bits if bits.flags.c_contiguous else bits.copy(order="C")
    z, angle = np.empty(bits.shape), np.empty(bits.shape, np.float32)
    _halves(bits.reshape(-1), z.reshape(-1), angle.reshape(-1))
    np.log(z, out=z)
    z *= -2.0
    np.sqrt(z, out=z)
    z *= np.cos(angle)
    return z


def gaussian_rows(bits: np.ndarray, rows: int) -> np.ndarray:
    r"""``rows`` rows of standard normals from ``ceil(rows / 2)`` rows of draws, two per draw.

    Row ``2k`` is :math:`\sqrt{-2 \ln u_1}\cos(2\pi u_2)` and row ``2k + 1`` is
    :math:`\sqrt{-2 \ln u_1}\sin(2\pi u_2)` of the draws in row ``k``: Box–Muller's two
    independent normals, with ``u1`` and ``u2`` as in ``gaussian``. These serve an algorithm's
    own sampling (posterior samples, the drift of the means), so they are computed in single
    precision: each is a normal rounded to about 7 significant digits (within ``2e-6``, and
    within ``4e-4`` for the one in 20 000 whose ``|z| < 0.01``), far below any sampling error,
    at half the cost.

    Args:
        bits: ``[..., ceil(rows / 2), R]`` draws.
        rows: The number of rows wanted.

    Returns:
        ``[..., rows, R]`` float32.
    """
    bits = bits if bits.flags.c_contiguous else bits.copy(order="C")
    u1, angle = np.empty(bits.shape, np.float32), np.empty(bits.shape, np.float32)
    _halves32(bits.reshape(-1), u1.reshape(-1), angle.reshape(-1))
    r = np.log(u1)
    r *= np.float32(-2.0)
    np.sqrt(r, out=r)
    half = rows // 2
    out = np.empty((*bits.shape[:-2], rows, bits.shape[-1]), dtype=np.float32)
    np.multiply(r, np.cos(angle), out=out[..., 0::2, :])
    np.multiply(r[..., :half, :], np.sin(angle[..., :half, :]), out=out[..., 1::2, :])
    return out


_TURN = 2.0 * np.pi * 2.0**-32
"""One step of the low 32 bits, in radians."""


@kernel
def _halves(bits, u1, angle):
    """``_halves32`` with ``u1`` kept in double precision (exact)."""
    for i in range(bits.size):
        u1[i] = (np.float64(bits[i] >> _U32) + 0.5) * 2.0**-32
        angle[i] = np.float32(np.float64(bits[i] & _LOW32) * _TURN)


@kernel
def _halves32(bits, u1, angle):
    """Box–Muller's inputs from flat uint64 ``bits``, in single precision.

    ``u1 = (h + 1/2) / 2**32`` of the high 32 bits ``h`` and ``angle = 2π l / 2**32`` of the
    low 32 bits ``l``, each computed in double precision, then rounded once.
    """
    for i in range(bits.size):
        u1[i] = np.float32((np.float64(bits[i] >> _U32) + 0.5) * 2.0**-32)
        angle[i] = np.float32(np.float64(bits[i] & _LOW32) * _TURN)


def _coin_below(bits: np.ndarray, p: float | np.ndarray) -> np.ndarray:
    """Whether the uniform ``h / 2**32`` of the high 32 bits ``h`` is below ``p``.

    Compared as integers: ``h / 2**32 < p`` exactly when ``h < ceil(p · 2**32)``.
    """
    top = np.ceil(np.multiply(p, 2.0**32)).astype(np.uint64)
    return np.right_shift(bits, _U32) < top


def _pick(bits: np.ndarray, n: int) -> np.ndarray:
    """A uniform integer in ``[0, n)`` from the low 32 bits (multiply-shift, bias < n/2**32)."""
    return (((bits & _LOW32) * np.uint64(n)) >> _U32).astype(np.int64)


class Steps:
    """One stream's random numbers at fixed cells, made for a block of steps at a time.

    ``at(step)`` is row ``step - first`` of ``make(bits, first)``, with ``bits`` the draws of
    ``stream`` at these cells for the steps of a block from ``first`` on (draw 0). Nothing here
    depends on the state of a race, so when there are few cells the numbers of the next steps
    are made together, ``BLOCK_CELLS`` (step, cell) pairs at once, which spares numpy's
    per-call cost at every step; as each number is a pure function of its index, the numbers
    are the same either way.

    Args:
        cells: ``[..., R]`` ``Noise.cells`` of the cells that draw.
        stream: A ``Stream``.
        make: What the bits become: ``make(bits, first)`` with ``bits`` ``[n, *cells.shape]``
            uint64 for steps ``first .. first + n − 1`` returns ``[n, ...]``.
        end: The first step that will never be asked for (the race's length).
        draws: With ``draws > 1``, draws ``0 .. draws − 1`` of each cell: ``bits`` is then
            ``[n, draws, *cells.shape]``.
    """

    def __init__(self, cells: np.ndarray, stream: int,
                 make: Callable[[np.ndarray, int], np.ndarray], *, end: int = MAX_STEPS,
                 draws: int = 1):
        self._cells = np.asarray(cells, dtype=np.uint64)
        if draws > 1:
            self._cells = np.add(self._cells, _DRAW_OFFSETS[:draws].reshape(
                (draws,) + (1,) * self._cells.ndim))
        self._stream, self._make, self._end = int(stream), make, min(int(end), MAX_STEPS)
        self._first, self._block = 0, None

    def at(self, step: int) -> np.ndarray:
        """The numbers of step ``step`` (0-based), shaped by ``make``."""
        i = step - self._first
        if self._block is None or not 0 <= i < len(self._block):
            count = max(1, min(BLOCK_CELLS // max(self._cells.size, 1), self._end - step))
            offsets = _step_offsets(self._stream, step, count).reshape(
                (count,) + (1,) * self._cells.ndim)
            self._block = self._make(_mix(np.add(self._cells, offsets)), step)
            self._first, i = step, 0
        return self._block[i]


BLOCK_CELLS = 1 << 15
"""``Steps`` makes at most this many (step, cell) numbers at once (and one step at least)."""
FEW_CELLS = 2048
"""A chunk of at most this many (run, arm) cells has numbers that are needed at only some cells
made ahead at every cell (tie-breaking keys, Beta attempts): numpy's per-call cost then
outweighs the extra numbers. Either way the numbers are the same."""


def _step_offsets(stream: int, first: int, count: int) -> np.ndarray:
    """``_step_offset(stream, t)`` for ``t = first .. first + count − 1``, ``[count]`` uint64."""
    if not (0 <= first and first + count <= MAX_STEPS):
        raise ValueError("step index out of range")
    steps = np.arange(count, dtype=np.uint64) << np.uint64(36)
    return np.add(np.multiply(steps, _GOLDEN), _step_offset(stream, first))


@on_warm_up
def _warm_up() -> None:
    """Compile (or load from disk) the loops for the argument types a race passes."""
    bits = _mix(np.arange(4, dtype=np.uint64))
    gaussian(bits)
    gaussian_rows(bits.reshape(1, 2, 2), 3)
