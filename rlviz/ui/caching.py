"""How pages cache: computations by their inputs, figures built once and shared, both bounded.

``cached`` and ``cached_figures`` are Streamlit's caches with the app's policy, made once per
process (a page's decorators run again on every rerun). A shared figure is kept as a
``SentFigure``, ready to send; ``rlviz.ui.chrome.chart`` draws it.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import functools
import inspect
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import plotly.graph_objects as go
import streamlit as st

__all__ = ["RUN", "SentFigure", "cached", "cached_figures", "handover", "read_only"]


_WRAPPED: dict[tuple, Callable] = {}
"""Cached functions already made, by the code of the page function and the decorator's options.

A page script runs afresh on every rerun, so its decorators run again each time, and making a
Streamlit cached function reads and tokenises the function's source (about a third of a
millisecond each). The wrapper is made once per process instead; see ``_reused``."""
_WRAPPED_LOCK = threading.Lock()
_THIS_RUN = threading.local()
"""The page functions defined by the script run on this thread, by code object."""


def _reused(fn: Callable, options: tuple, make: Callable[[Callable], Callable]) -> Callable:
    """The cached wrapper of ``fn``, made by ``make`` on the first run and reused afterwards.

    The wrapper calls the function that this thread's run defined (its own globals and
    closure), so a rerun computes exactly what a fresh wrapper would; only the decorating is
    saved. The cache itself is Streamlit's, keyed by the function's source as always.
    """
    code = getattr(fn, "__code__", None)
    if code is None:
        return make(fn)
    current = _THIS_RUN.__dict__.setdefault("functions", {})
    current[code] = fn
    key = (code, *options)
    wrapped = _WRAPPED.get(key)
    if wrapped is None:
        first = fn

        @functools.wraps(fn)
        def latest(*args: Any, **kwargs: Any) -> Any:
            return getattr(_THIS_RUN, "functions", {}).get(code, first)(*args, **kwargs)

        with _WRAPPED_LOCK:
            wrapped = _WRAPPED.setdefault(key, make(latest))
    return wrapped


def cached(max_entries: int = 32, *, show_spinner: bool | str = "Computing…",
           copy: bool = False):
    """A page's compute, cached by its inputs with the app's bounded policy and shared.

    Arguments must be hashable primitives (or frozen dataclasses of them). Every caller, in
    every session, gets the one cached result (``st.cache_resource``) with its numpy arrays made
    read-only (``read_only``), so nobody can change it for the others; results are frozen
    dataclasses that pages only read. It is looked up in front of Streamlit's cache by its
    arguments (``_in_front``), which costs a rerun no hashing and no copy: a copy of a result
    of many megabytes, on every rerun, would cost milliseconds. While a value is computed (a
    cache miss that lasts longer than half a second) a spinner with the elapsed time shows
    where the call was made; the page also shows one right under the control that was just
    changed, where the user is looking.

    With ``copy=True`` each caller gets a copy of its own instead (``st.cache_data``): for
    results that cannot be made read-only, such as a pandas table.
    """
    label = show_spinner if isinstance(show_spinner, str) else "Computing…"

    def make(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def compute(*args: Any, **kwargs: Any) -> Any:
            if show_spinner is False:
                result = fn(*args, **kwargs)
            else:
                with _progress(label):
                    result = fn(*args, **kwargs)
            return result if copy else read_only(result)

        if copy:
            keep = st.cache_data(max_entries=max_entries, show_spinner=False, ttl=TTL)
            return _by_name(fn, keep(compute))
        keep = st.cache_resource(max_entries=max_entries, show_spinner=False, ttl=TTL)
        return _in_front(fn, _by_name(fn, keep(compute)), max_entries)

    def decorate(fn: Callable) -> Callable:
        return _reused(fn, ("data" if copy else "shared", max_entries, show_spinner), make)

    return decorate


def _names(fn: Callable) -> tuple[str, ...] | None:
    """``fn``'s parameter names, in order, when each may be passed by name (else None)."""
    params = list(inspect.signature(fn).parameters.values())
    if any(p.kind is not p.POSITIONAL_OR_KEYWORD for p in params):
        return None
    return tuple(p.name for p in params)


def _by_name(fn: Callable, cached_fn: Callable) -> Callable:
    """``cached_fn`` called with every argument by name, in ``fn``'s order: the same cache key.

    Streamlit looks up the name of each positional argument of a cached call in the function's
    signature, which it builds afresh for every argument of every call (``inspect.signature``
    through the decorators: a tenth of a millisecond each, several per call and several calls
    per rerun); named arguments need no lookup.
    """
    names = _names(fn)
    if names is None:
        return cached_fn

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        if len(args) > len(names):
            return cached_fn(*args, **kwargs)  # let Python report the wrong call
        return cached_fn(**dict(zip(names[:len(args)], args, strict=True)), **kwargs)

    return call


TTL = 6 * 3600
"""Seconds a cached value is kept (a day's class, then a fresh computation)."""


@st.cache_resource(show_spinner=False)
def _epoch() -> object:
    """A token that changes whenever Streamlit's shared caches are cleared."""
    return object()


def _current_epoch() -> object:
    """``_epoch()``, asked once per page run (every figure lookup of a run needs it)."""
    if getattr(RUN, "page", None) is None:
        return _epoch()
    epoch = getattr(RUN, "epoch", None)
    if epoch is None:
        epoch = RUN.epoch = _epoch()
    return epoch


def _typed(x: Any) -> Any:
    """An argument as part of a dict key: with its type, so that 1, 1.0 and True differ.

    Inside a frozen dataclass argument (a bandit agent, a testbed) the fields compare as
    Python compares them, so there 1 and 1.0 are one key: the same computation.
    """
    if isinstance(x, tuple):
        return (tuple, *(_typed(v) for v in x))
    return (type(x), x)


def _in_front(fn: Callable, cached_fn: Callable, max_entries: int) -> Callable:
    """``cached_fn`` with the values it shared kept in front of it, by their arguments.

    Streamlit's cache hashes every argument of every call (a few hundredths of a millisecond
    each, several lookups a rerun); the results and figures a page shares depend on primitive
    settings that Python hashes for nothing. So each value is also kept here, in a bounded,
    expiring dict keyed by the typed arguments (those named with a leading underscore left
    out, as Streamlit does); a call whose arguments Python cannot hash goes to Streamlit. A
    value is kept with the epoch of Streamlit's caches, so ``st.cache_resource.clear()`` also
    empties this.
    """
    names = _names(fn)
    if names is None:
        return cached_fn
    known = frozenset(names)
    kept: collections.OrderedDict[tuple, tuple[object, float, Any]] = collections.OrderedDict()
    lock = threading.Lock()

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        if len(args) > len(names) or not known.issuperset(kwargs):
            return cached_fn(*args, **kwargs)  # a wrong call: let Python report it
        try:
            given = dict(zip(names, args, strict=False), **kwargs)
            key = tuple((name, _typed(given[name])) for name in names
                        if name in given and not name.startswith("_"))
            hash(key)
        except TypeError:  # an argument Python cannot hash (or one given twice)
            return cached_fn(*args, **kwargs)
        epoch, now = _current_epoch(), time.monotonic()
        with lock:
            hit = kept.get(key)
            if hit is not None and hit[0] is epoch and now - hit[1] < TTL:
                kept.move_to_end(key)
                return hit[2]
        value = cached_fn(*args, **kwargs)
        with lock:
            kept[key] = (epoch, now, value)
            kept.move_to_end(key)
            while len(kept) > max_entries:
                kept.popitem(last=False)
        return value

    return call


def read_only(result: Any) -> Any:
    """``result`` with every numpy array in it made read-only, and returned.

    Arrays are found through dataclasses, tuples, lists and dicts; a caller sharing the result
    cannot change them for the others.
    """
    if isinstance(result, np.ndarray):
        result.setflags(write=False)
    elif dataclasses.is_dataclass(result) and not isinstance(result, type):
        for f in dataclasses.fields(result):
            read_only(getattr(result, f.name))
    elif isinstance(result, tuple | list):
        for x in result:
            read_only(x)
    elif isinstance(result, dict):
        for x in result.values():
            read_only(x)
    return result


RUN = threading.local()
"""What the script run on this thread is drawing: its ``Page`` and whether progress shows."""


@contextlib.contextmanager
def _progress(label: str):
    """A spinner where a computation was asked for (outermost cached call of a run only).

    Streamlit shows a spinner only after half a second, so fast computations show nothing.
    """
    if getattr(RUN, "page", None) is None or getattr(RUN, "busy", False):
        yield
        return
    RUN.busy = True
    try:
        with st.spinner(label, show_time=True):
            yield
    finally:
        RUN.busy = False


def cached_figures(max_entries: int = 32):
    """``st.cache_resource`` for functions that build figures from primitive settings.

    Building a plotly figure (validating every trace and frame) usually costs more than the rest
    of a rerun, and a figure depends only on the settings that produced it, so a page builds
    each view once and every session shares it. Shared means read-only: show the figure with
    ``ui.chart`` and never change it afterwards.
    """
    keep = st.cache_resource(max_entries=max_entries, show_spinner=False, ttl=TTL)

    def make(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def build(*args: Any, **kwargs: Any) -> Any:
            return _sendable(fn(*args, **kwargs))

        return _in_front(fn, _by_name(fn, keep(build)), max_entries)

    def decorate(fn: Callable) -> Callable:
        return _reused(fn, ("resource", max_entries), make)

    return decorate


class SentFigure(go.Figure):
    """A shared figure that also keeps what ``st.plotly_chart`` sends for it, made once.

    ``st.plotly_chart`` asks a figure for ``to_dict()``, which deep-copies every trace and
    walks them to base64-encode their arrays, and then turns that dict into JSON text: most of
    what charting costs a warm rerun. A shared figure never changes (``cached_figures``), so
    both are made once, when the figure is built (``_Sent``), and ``chart`` hands them over as
    they are; Streamlit only reads them. Anything else that asks this figure for ``to_dict()``
    (the HTML and PNG exports, a copy made to resize it) gets plotly's own fresh copy.
    """

    def __init__(self, fig: go.Figure):
        sent = fig.to_dict()  # what st.plotly_chart would send: arrays base64-encoded
        for trace in sent["data"]:  # plotly's to_json drops them from the dict it is given
            trace.pop("uid", None)
        super().__init__(sent)  # built from it (and leaving it as it was): arrays encoded too
        self._sent = _Sent(sent)


class _Sent(dict):
    """A figure's dict as ``st.plotly_chart`` sends it, with its JSON text made once.

    Streamlit turns the dict into text with ``plotly.io.to_json``, whose fast engine (orjson)
    first asks the object for ``to_plotly_json()``: this one answers with the text it made,
    as an ``orjson.Fragment`` that is written out as it is. The text is plotly's own, so the
    chart's JSON is the same to the byte; with plotly's other engine the dict is encoded as
    usual. The dict is never changed after the text is made (the figure is shared read-only).
    """

    def __init__(self, sent: dict):
        import orjson
        import plotly.io as pio

        super().__init__(sent)
        self._text = orjson.Fragment(pio.to_json(sent, validate=False))

    def to_plotly_json(self) -> Any:
        return self._text

    def __reduce__(self) -> tuple:  # a copy or a pickle of it is the plain dict
        return dict, (dict(self),)


class _Handover(go.Figure):
    """What ``chart`` gives ``st.plotly_chart`` for a ``SentFigure``: its kept dict.

    Streamlit takes a plotly figure's ``to_dict()`` and turns that into JSON without changing
    it; this figure answers with the dict already made. It is built for that one call and holds
    nothing else (no traces to validate), so it is no figure to draw or change.
    """

    def __init__(self, sent: dict):  # plotly's constructor is not called: nothing to validate
        object.__setattr__(self, "_sent", sent)

    def to_dict(self) -> dict:
        return self._sent


def handover(fig: Any) -> Any:
    """What to give ``st.plotly_chart`` for ``fig``: a ``SentFigure``'s kept dict, else ``fig``."""
    return _Handover(fig._sent) if isinstance(fig, SentFigure) else fig


def _sendable(result: Any) -> Any:
    """A builder's figures (alone, or in a tuple, list or dict) as ``SentFigure``s."""
    if isinstance(result, go.Figure):
        return SentFigure(result)
    if isinstance(result, tuple) and not hasattr(result, "_fields"):
        return tuple(_sendable(x) for x in result)
    if isinstance(result, list):
        return [_sendable(x) for x in result]
    if isinstance(result, dict):
        return {k: _sendable(v) for k, v in result.items()}
    return result
