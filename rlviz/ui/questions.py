"""Every algorithm page's "Interview questions on this page" panel, drawn by the chrome.

The chrome calls ``panel(slug, settings, box)`` after a page's body, with the box of its panel
while that is open, so no page file draws it; a page with no questions in the bank (home, the
drill) gets nothing.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping
from typing import Any

import numpy as np
import streamlit as st

from rlviz import drill, interview
from rlviz.errors import InputError
from rlviz.interview import DIFFICULTIES, Question, whiteboard

__all__ = ["LABEL", "answer_points", "check_line", "links_markdown", "panel", "points_of"]

LABEL = "Interview questions on this page"

log = logging.getLogger("rlviz.ui")


@functools.lru_cache(maxsize=1024)
def points_of(question_id: str) -> tuple[str, ...]:
    """A question's answer with its numbers filled in, once per process (no Streamlit calls)."""
    for q in interview.bank():
        if q.id == question_id:
            return tuple(q.answer_points())
    raise KeyError(question_id)


def answer_points(question: Question) -> tuple[str, ...]:
    """The answer with its numbers filled in by rlviz, computed once per process.

    The numbers are deterministic (fixed seeds), and some take a second or two to compute: a
    spinner shows where the answer will be if it takes more than half a second.
    """
    with st.spinner("Working out the answer's numbers…", show_time=True):
        return points_of(question.id)


def links_markdown(question: Question) -> str:
    """The question's live links as one line of markdown."""
    return " · ".join(f"[{link.shows or link.url}]({link.url})" for link in question.links)


def check_line(check: whiteboard.LiveCheck) -> str:
    """The one line that says whether the whiteboard version gives rlviz's numbers here."""
    diff = check.max_abs_diff
    line = (f"Whiteboard check on this view: {check.label} — max |whiteboard − rlviz| = "
            f"{diff:.1g}")
    if check.ok:
        return f"{line} :green[✓]"
    board = np.asarray(check.whiteboard, dtype=float).ravel()
    lib = np.asarray(check.library, dtype=float).ravel()
    if board.shape != lib.shape:
        where = f"{board.size} numbers on the whiteboard, {lib.size} from rlviz"
    else:
        with np.errstate(invalid="ignore"):
            gap = np.where(board == lib, 0.0, np.abs(board - lib))
        i = int(np.argmax(np.nan_to_num(gap, nan=np.inf)))
        where = f"entry {i}: whiteboard {board[i]:.6g}, rlviz {lib[i]:.6g}"
    return f"{line} :red[✗] (tolerance {check.tol:.0e}; {where})"


def _live_check(slug: str, settings: Mapping[str, Any] | None) -> None:
    try:
        check = whiteboard.live_check(slug, settings)
    except InputError as error:  # the view's inputs are not valid: the page says why
        st.caption(f"The whiteboard check needs valid inputs: {error}")
        return
    except Exception:  # an extra as well: log it, keep the questions
        log.exception("the whiteboard check of page %s failed", slug)
        st.caption("The whiteboard check could not run on this view. The problem has been logged.")
        return
    if check is not None:
        st.markdown(check_line(check))


def panel(slug: str, settings: Mapping[str, Any] | None = None, box: Any = None) -> None:
    """The page's questions, drawn into ``box``: the chrome's panel of them, while it is open.

    ``settings`` are the page's current control values: the whiteboard check at the top of the
    panel runs the family's whiteboard version and rlviz on a small instance of that view.
    """
    questions = interview.for_page(slug)
    if box is None or not questions:
        return
    try:
        with box:
            _live_check(slug, settings)
            _draw(questions)
    except Exception:  # the panel is an extra: a bug in it must not take the page down
        log.exception("the interview panel of page %s failed", slug)
        box.caption("These questions could not be shown. The problem has been logged.")


def _draw(questions: tuple[Question, ...]) -> None:
    st.caption(f"{len(questions)} questions a candidate may be asked about what this page "
               "shows, each with a short answer and the views that prove it. Quiz yourself on "
               "them in the [interview drill](/drill).")
    for q in questions:
        st.markdown(f"**{q.question}**  \n:gray[{q.topic} · {DIFFICULTIES[q.difficulty]}]")
        st.markdown("\n".join(f"- {p}" for p in answer_points(q)))
        st.markdown("Open: " + links_markdown(q))
        code = drill.whiteboard_source(q)
        if code:
            st.caption("At the whiteboard")
            st.code(code, language="python")
