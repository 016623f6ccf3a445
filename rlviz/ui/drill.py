"""The interview drill's widgets: filters, the quiz card, the summary and the handout buttons.

The progress ("knew it" / "didn't") is kept only in the page's URL (``rlviz.drill`` encodes it),
so a reload or a bookmark brings it back and the server stores nothing. The filters and the
current question are in the URL too.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence

import pandas as pd
import streamlit as st

from rlviz import drill, interview
from rlviz.interview import DIFFICULTIES, TOPICS, Question
from rlviz.ui.chrome import PUBLIC_URL
from rlviz.ui.questions import answer_points, links_markdown, points_of

__all__ = ["KEY", "Quiz", "filters", "handout_buttons", "progress", "quiz", "summary"]

KEY = "drill"
"""Prefix of the drill's session-state keys."""


def _state(name: str) -> str:
    return f"{KEY}.{name}"


def _url_list(name: str, choices: Sequence[str]) -> list[str]:
    """A comma-separated list of indices into ``choices`` from the URL (bad entries dropped)."""
    out = []
    for part in str(st.query_params.get(name, "")).split(","):
        if part.strip().isdigit() and int(part) < len(choices):
            out.append(choices[int(part)])
    return out


def filters() -> tuple[list[str], list[int]]:
    """Topic and difficulty filters in the sidebar, started from the URL; empty means all."""
    topics_key, levels_key = _state("topics"), _state("levels")
    levels = list(DIFFICULTIES)
    if topics_key not in st.session_state:
        st.session_state[topics_key] = _url_list("topic", TOPICS)
    if levels_key not in st.session_state:
        raw = str(st.query_params.get("level", "")).split(",")
        st.session_state[levels_key] = [x for x in levels if str(x) in raw]
    with st.sidebar:
        st.markdown("**Which questions**")
        topics = st.multiselect("Topics", TOPICS, key=topics_key, placeholder="All topics")
        chosen = st.pills("Difficulty", levels, format_func=DIFFICULTIES.get,
                          selection_mode="multi", key=levels_key,
                          help="None selected: every difficulty.")
    _set_url("topic", ",".join(str(TOPICS.index(t)) for t in topics))
    _set_url("level", ",".join(str(level) for level in sorted(chosen)))
    return topics, sorted(chosen)


def _set_url(name: str, value: str) -> None:
    if value:
        if st.query_params.get(name) != value:
            st.query_params[name] = value
    elif name in st.query_params:
        del st.query_params[name]


def progress(questions: Sequence[Question]) -> drill.Progress:
    """The progress in the URL (the whole bank's, whatever the filters)."""
    params = {k: st.query_params.get(k, "") for k in ("known", "missed")}
    found, unknown = drill.decode(params, questions)
    if unknown:
        st.caption(f"{unknown} marked question(s) in this link are no longer in the bank and "
                   "were left out.")
    return found


def _save(found: drill.Progress, questions: Sequence[Question]) -> None:
    encoded = drill.encode(found, questions)
    for name in ("known", "missed"):
        _set_url(name, encoded.get(name, ""))


class Quiz:
    """One question at a time: commit an answer, reveal, mark it. Callbacks keep it in order."""

    def __init__(self, bank: Sequence[Question], chosen: Sequence[Question],
                 found: drill.Progress):
        self.bank, self.chosen, self.found = tuple(bank), tuple(chosen), found
        self.current = self._current()

    def _current(self) -> Question | None:
        by_id = {q.id: q for q in self.chosen}
        by_token = {drill.token(q.id): q for q in self.chosen}
        kept = st.session_state.get(_state("current"))
        if kept in by_id:
            return by_id[kept]
        linked = by_token.get(str(st.query_params.get("q", "")))
        return linked or drill.next_question(self.chosen, self.found)

    def _go(self, question: Question | None) -> None:
        st.session_state[_state("current")] = question.id if question else None
        st.session_state[_state("revealed")] = None
        _set_url("q", drill.token(question.id) if question else "")

    def reveal(self) -> None:
        st.session_state[_state("revealed")] = self.current.id

    def mark(self, knew: bool) -> None:
        qid = self.current.id
        self.found = self.found.mark(qid, knew=knew)
        _save(self.found, self.bank)
        self._go(drill.next_question(self.chosen, self.found, after=qid))

    def skip(self) -> None:
        ids = [q.id for q in self.chosen]
        nxt = self.chosen[(ids.index(self.current.id) + 1) % len(ids)]
        self._go(nxt)

    def restart(self) -> None:
        self.found = drill.Progress()
        _save(self.found, self.bank)
        self._go(drill.next_question(self.chosen, self.found))

    @property
    def revealed(self) -> bool:
        """Whether the current question's answer is shown."""
        return self.current is not None and (
            st.session_state.get(_state("revealed")) == self.current.id)


def quiz(bank: Sequence[Question], chosen: Sequence[Question], found: drill.Progress) -> Quiz:
    """The quiz card for the current question of the selection."""
    q = Quiz(bank, chosen, found)
    if not chosen:
        st.info("No question matches these filters.")
        return q
    marked = sum(x.id in found.marked for x in chosen)
    st.progress(marked / len(chosen),
                text=f"{marked} of {len(chosen)} questions in this selection marked")
    if q.current is None:
        st.success(f"Every question in this selection is marked: "
                   f"{sum(x.id in found.known for x in chosen)} knew it, "
                   f"{sum(x.id in found.missed for x in chosen)} didn't.",
                   icon=":material/celebration:")
        st.button("Start over", icon=":material/restart_alt:", key=_state("restart"),
                  on_click=q.restart)
        return q
    st.session_state[_state("current")] = q.current.id  # a reload comes back to it
    _set_url("q", drill.token(q.current.id))
    _card(q)
    return q


def _card(q: Quiz) -> None:
    item = q.current
    with st.container(border=True):
        position = [x.id for x in q.chosen].index(item.id) + 1
        st.caption(f"Question {position} of {len(q.chosen)} · {item.topic} · "
                   f"{DIFFICULTIES[item.difficulty]}")
        st.markdown(f"#### {item.question}")
        if item.prediction is not None:
            st.radio(item.prediction.prompt, item.prediction.options, index=None,
                     key=_state(f"choice.{item.id}"), disabled=q.revealed)
            committed = st.session_state.get(_state(f"choice.{item.id}")) is not None
        else:
            st.text_area("Your answer, in a few points (forgotten when you close the tab)",
                         key=_state(f"answer.{item.id}"), disabled=q.revealed, height=110)
            committed = True
        if not q.revealed:
            left, right = st.columns(2)
            left.button("Commit and reveal the answer", type="primary", icon=":material/lock:",
                        key=_state("reveal"), on_click=q.reveal, disabled=not committed,
                        width="stretch",
                        help=None if committed else "Pick an option first.")
            right.button("Skip for now", icon=":material/skip_next:", key=_state("skip"),
                         on_click=q.skip, width="stretch")
            return
    _reveal(q)


def _reveal(q: Quiz) -> None:
    item = q.current
    if item.prediction is not None:
        choice = st.session_state.get(_state(f"choice.{item.id}"))
        right = item.prediction.options[item.prediction.answer]
        if choice == right:
            st.success(f"Your prediction was right: {right}.", icon=":material/check_circle:")
        else:
            st.warning(f"You predicted {choice}; the answer is {right}.",
                       icon=":material/cancel:")
    with st.container(border=True):
        st.markdown("**The answer**")
        st.markdown("\n".join(f"- {p}" for p in answer_points(item)))
        st.markdown("**See it live:** " + links_markdown(item))
        code = drill.whiteboard_source(item)
        if code is not None:
            st.markdown("**At the whiteboard**")
            st.code(code, language="python")
    st.markdown("Did you know it?")
    left, right = st.columns(2)
    left.button("I knew it", type="primary", icon=":material/thumb_up:", key=_state("knew"),
                on_click=q.mark, args=(True,), width="stretch")
    right.button("I didn't", icon=":material/thumb_down:", key=_state("missed"),
                 on_click=q.mark, args=(False,), width="stretch")


def summary(chosen: Sequence[Question], found: drill.Progress) -> None:
    """The session so far, by topic."""
    rows = drill.summary(chosen, found)
    if not rows:
        return
    table = pd.DataFrame([{"topic": r.topic, "questions": r.questions, "knew it": r.known,
                           "didn't": r.missed, "not yet": r.unseen} for r in rows])
    st.dataframe(table, hide_index=True, width="stretch")
    missed = [q for q in chosen if q.id in found.missed]
    if missed:
        st.markdown("**To revise:**\n" + "\n".join(f"- {q.question}" for q in missed))


@functools.lru_cache(maxsize=64)
def _handout(ids: tuple[str, ...], kind: str, base_url: str) -> bytes:
    by_id = {q.id: q for q in interview.bank()}
    chosen = [by_id[i] for i in ids]
    make = drill.handout_html if kind == "html" else drill.handout_markdown
    return make(chosen, base_url=base_url, points=lambda q: points_of(q.id)).encode()


def handout_buttons(chosen: Sequence[Question]) -> None:
    """Download the selection as Markdown and as printable HTML (built when pressed)."""
    base = os.environ.get(PUBLIC_URL, "").strip() or (st.context.url or "").split("?")[0]
    base = base.rstrip("/").removesuffix("/drill")
    ids = tuple(q.id for q in chosen)
    left, right = st.columns(2)
    left.download_button("Handout (Markdown)", data=functools.partial(_handout, ids, "md", base),
                         file_name="rlviz-interview-drill.md", mime="text/markdown",
                         on_click="ignore", key=_state("handout.md"), disabled=not ids,
                         icon=":material/description:", width="stretch")
    right.download_button("Handout (HTML, prints well)",
                          data=functools.partial(_handout, ids, "html", base),
                          file_name="rlviz-interview-drill.html", mime="text/html",
                          on_click="ignore", key=_state("handout.html"), disabled=not ids,
                          icon=":material/print:", width="stretch")
    st.caption(f"The {len(ids)} questions of this selection with their answers, whiteboard code "
               "and live links; the first download computes every number and takes a few "
               "seconds.")
