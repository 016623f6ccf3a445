"""Plain loops compiled to machine code, and their warm-up before the first visitor.

Some algorithms are sequential at heart: an actor-critic's policy changes after every step, so
its steps cannot be batched, and the numpy call per step costs more than the arithmetic. Those
are written here as the book writes them, one run and one step at a time with plain floats,
and ``kernel`` compiles them with numba (``nopython``: no Python objects inside the loop).

* ``cache=True``: the machine code is kept on disk beside the module (``__pycache__``), so a
  restarted server loads it in milliseconds instead of compiling it again.
* ``nogil=True``: a compiled loop lets go of the interpreter lock, so two sessions training at
  once use both cores.
* ``error_model="numpy"``: a division by zero gives ``inf`` or ``nan`` as in numpy instead of
  raising, which spares a test before every division and lets loops of divisions vectorise.
* Random numbers come from the ``numpy.random.Generator`` passed in: numba draws from the same
  bit generator with the same algorithms, so a compiled loop reads exactly the numbers a numpy
  loop on that generator would.

Compilation happens on a kernel's first call with new argument types (about a second each).
A module registers a small call of its kernels with ``on_warm_up``; the server runs them all
(``warm_up``) before it takes its first visitor.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import numba

__all__ = ["is_kernel", "kernel", "on_warm_up", "warm_up"]

log = logging.getLogger(__name__)

_WARM_UPS: list[Callable[[], object]] = []


def kernel(fn: Callable) -> Callable:
    """Compile a plain numeric loop (numba ``njit``, cached on disk, releasing the GIL)."""
    return numba.njit(cache=True, nogil=True, error_model="numpy")(fn)


def is_kernel(obj: object) -> bool:
    """Whether ``obj`` is a compiled loop (its Python source is ``obj.py_func``)."""
    return isinstance(obj, numba.core.registry.CPUDispatcher)


def on_warm_up(fn: Callable[[], object]) -> Callable[[], object]:
    """Register a small call that compiles (or loads) a module's kernels; returns ``fn``."""
    _WARM_UPS.append(fn)
    return fn


def warm_up() -> None:
    """Run every registered warm-up; one that fails is logged and left to its page's run."""
    for fn in _WARM_UPS:
        try:
            fn()
        except Exception:
            log.exception("warming up the compiled loops of %s failed", fn.__module__)
