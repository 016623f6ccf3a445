"""A page's cached results are shared by every session: no page may change one it was handed.

``ui.cached`` hands every caller the one result it keeps (its arrays made read-only). A page
that changed anything else in it (a dict, a list, a field of a mutable object) would change it
for everybody. Each page runs at its defaults, twice, with fresh caches; every shared result is
recorded the moment it is computed and again after both runs, and the two must be the same.
A result is what its dataclass fields hold, all the way down; a cached property (a value
derived from the fields once, on first use) is not part of it.
"""

from __future__ import annotations

import dataclasses
import pickle
from typing import Any

import numpy as np
import pytest
import streamlit as st

import rlviz.ui.caching as caching
from rlviz.ui.catalog import available_pages
from tests.conftest import run_page

PAGES = available_pages()


def contents(x: Any) -> Any:
    """What ``x`` holds, as plain comparable values (NaN equal to NaN, types kept)."""
    if isinstance(x, np.ndarray):
        return ("array", x.dtype.str, x.shape, x.tobytes())
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return (type(x).__qualname__,
                tuple((f.name, contents(getattr(x, f.name))) for f in dataclasses.fields(x)))
    if isinstance(x, dict):
        return ("dict", tuple((contents(k), contents(v)) for k, v in x.items()))
    if isinstance(x, list | tuple):
        return (type(x).__name__, tuple(contents(v) for v in x))
    return ("value", pickle.dumps(x))


@pytest.mark.slow
@pytest.mark.parametrize("info", PAGES, ids=[p.slug for p in PAGES])
def test_no_page_changes_a_result_it_shares(info, monkeypatch):
    computed: list[tuple[object, Any]] = []
    real = caching.read_only

    def keep(result):
        computed.append((result, contents(result)))
        return real(result)

    monkeypatch.setattr(caching, "read_only", keep)
    st.cache_resource.clear()
    st.cache_data.clear()
    at = run_page(info.file)
    assert not at.exception, at.exception
    at.run()
    assert not at.exception, at.exception
    assert computed, f"{info.slug} shares no result: nothing was checked"
    for result, before in computed:
        assert contents(result) == before, f"{info.slug} changed a shared {type(result)}"


@dataclasses.dataclass(frozen=True)
class _Result:
    curve: np.ndarray
    extra: dict
    rows: list


def test_the_record_sees_every_kind_of_change():
    """The comparison the page test relies on shows a change to a dict, a list or a value."""
    def fresh():
        return caching.read_only(_Result(np.array([0.0, np.nan]), {"a": 1}, [1.0]))

    assert contents(fresh()) == contents(fresh()), "NaN equals NaN"
    changed = fresh()
    changed.extra["a"] = 2
    assert contents(changed) != contents(fresh())
    changed = fresh()
    changed.rows.append(2.0)
    assert contents(changed) != contents(fresh())
    changed = fresh()
    changed.extra["a"] = 1.0  # the same number, another type
    assert contents(changed) != contents(fresh())
    assert contents(_Result(np.zeros(2), {}, [])) != contents(_Result(np.zeros(2, int), {}, []))
