"""Proof that "The code that ran" is code that ran.

``unrun_shown_code(page_file)`` runs a page once with Streamlit's caches cleared and a profiler
recording every Python function entered (in all threads: AppTest runs the script in its own
thread), then returns the names of the objects the page's code panel showed that were never
entered. A class counts as run when any function defined in its body ran (its ``__init__``, a
method, a property). A compiled loop (``rlviz.compiled.kernel``) runs as machine code, which no
profiler sees: for the run, every kernel an ``rlviz`` module holds is replaced by a wrapper that
notes the call, and a kernel counts as run when its wrapper was called.
"""

from __future__ import annotations

import functools
import inspect
import sys
import threading
from pathlib import Path
from types import CodeType

import streamlit as st

from rlviz.compiled import is_kernel
from rlviz.ui.chrome import SHOWN
from tests.conftest import run_page

__all__ = ["shown_and_called", "unrun_shown_code"]


def _codes_of(obj) -> set[CodeType]:
    if inspect.isclass(obj):
        codes: set[CodeType] = set()
        for value in vars(obj).values():
            if isinstance(value, staticmethod | classmethod):
                value = value.__func__
            if isinstance(value, property):
                codes |= {f.__code__ for f in (value.fget, value.fset) if f is not None}
            elif inspect.isfunction(value):
                codes.add(value.__code__)
        return codes
    fn = inspect.unwrap(obj)
    return {fn.__code__} if hasattr(fn, "__code__") else set()


def _name(obj) -> str:
    fn = inspect.unwrap(obj)
    return f"{fn.__module__}.{fn.__qualname__}"


def _forget(value, depth: int = 0) -> None:
    """Drop what ``value`` memoised: an ``lru_cache``'s entries, an object's cached properties."""
    if hasattr(value, "cache_clear"):
        value.cache_clear()
    elif isinstance(value, dict | list | tuple) and depth == 0:
        for item in value.values() if isinstance(value, dict) else value:
            _forget(item, depth + 1)
    elif not inspect.isclass(value) and not inspect.ismodule(value):
        for name, attr in inspect.getmembers(type(value)):
            if isinstance(attr, functools.cached_property):
                getattr(value, "__dict__", {}).pop(name, None)


def _cold_process() -> None:
    """Forget every result ``rlviz`` memoised in this process, as if it had just started.

    Streamlit's caches are cleared separately; this covers module-level singletons (a game
    whose solution is a cached property) and ``functools`` caches, which earlier tests in the
    same process may have filled.
    """
    for name, module in list(sys.modules.items()):
        if name == "rlviz" or name.startswith("rlviz."):
            for value in list(vars(module).values()):
                _forget(value)


def shown_and_called(
    page_file: Path | str, slug: str, *, query: dict[str, str] | None = None
) -> tuple[tuple, set[CodeType]]:
    """Run the page once, from cold caches; return what it showed and every code object entered."""
    st.cache_data.clear()
    st.cache_resource.clear()
    _cold_process()
    SHOWN.pop(slug, None)
    called: set[CodeType] = set()

    def profile(frame, event, _arg):
        if event == "call":
            called.add(frame.f_code)

    threading.setprofile(profile)
    sys.setprofile(profile)
    restore = _note_kernel_calls(called)
    try:
        at = run_page(page_file, query=query, timeout=300)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
        restore()
    assert not at.exception, [e.message for e in at.exception]
    assert slug in SHOWN, f"page {slug} showed no code panel"
    return SHOWN[slug], called


def _note_kernel_calls(called: set[CodeType]):
    """Wrap every compiled loop held by an ``rlviz`` module so that a call adds its Python
    source's code object to ``called``; returns the function that puts the kernels back."""
    patched = []
    wrappers: dict[int, object] = {}
    for name, module in list(sys.modules.items()):
        if name != "rlviz" and not name.startswith("rlviz."):
            continue
        for attr, value in list(vars(module).items()):
            if not is_kernel(value):
                continue
            if id(value) not in wrappers:
                def noting(*args, _kernel=value, **kwargs):
                    called.add(_kernel.py_func.__code__)
                    return _kernel(*args, **kwargs)

                wrappers[id(value)] = functools.wraps(value)(noting)
            setattr(module, attr, wrappers[id(value)])
            patched.append((module, attr, value))

    def restore() -> None:
        for module, attr, value in patched:
            setattr(module, attr, value)

    return restore


def unrun_shown_code(
    page_file: Path | str, slug: str, *, query: dict[str, str] | None = None
) -> list[str]:
    """Names of the objects the page's code panel shows that its computation never entered."""
    shown, called = shown_and_called(page_file, slug, query=query)
    assert shown, f"page {slug}'s code panel shows nothing"
    return [_name(obj) for obj in shown if not (_codes_of(obj) & called)]
