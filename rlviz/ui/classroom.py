"""The classroom on every page: teacher links, the presentation mode, the lesson builder.

Each ``Page`` holds a ``Classroom`` for its run. It reads the teacher settings of the link
(``rlviz.lessons.TeacherView``: hidden and locked controls, hidden text, presentation mode),
keeps them for the session by page, so that they survive reruns and a visit to another page,
and answers the chrome's questions: how to draw a control, whether to show the explanatory
text, where (and whether) to draw a figure. The lessons page (``pages/lessons.py``) is drawn by
``lessons_page``.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import os
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import plotly.graph_objects as go
import streamlit as st

from rlviz import lessons as core
from rlviz.errors import InputError
from rlviz.lessons import RESERVED, Lesson, Step, TeacherView
from rlviz.ui.catalog import LESSONS, ROOT, page_info

if TYPE_CHECKING:
    from rlviz.ui.chrome import Page
    from rlviz.ui.controls import Control

__all__ = ["RESERVED", "Classroom", "app_url", "lessons_page", "open_step"]

TEACHER = "_rlviz.teacher"
"""Session state: the teacher view of each page, by slug: ``{"view", "pins", "fresh"}``."""
DRAFTS = "_rlviz.teacher_drafts"
"""Session state: the teacher link being made on each page, by slug."""
MY_LESSON = "_rlviz.my_lesson"
"""Session state: the lesson this session is building."""
PLAYER = "_rlviz.player"
"""Session state: the lesson being played, its step, and the step opened from it."""
PRESENTATION_CSS = ROOT / "assets" / "presentation.css"
"""Large type for a projector; a file of the app, served with the page (nothing fetched)."""
SLIDE_HEIGHT = 480
"""A figure's height in presentation mode: what is left under the title at 1280×720."""
BANNER_HEIGHT = 130
"""What a lesson step's prompt takes above the figure in presentation mode."""
SLIDE_FONT = 16
"""Smallest font size of a figure in presentation mode."""


def app_url(path: str) -> str:
    """The address of ``path`` (``"cliff_td?eps=0.3"``) as others reach this app.

    The public address in ``RLVIZ_PUBLIC_URL`` when set, else the browser's, whose last part
    (the current page) is replaced by ``path``.
    """
    from rlviz.ui.chrome import PUBLIC_URL

    public = os.environ.get(PUBLIC_URL, "").strip()
    if public:
        return public.rstrip("/") + "/" + path
    here = (st.context.url or "").split("?")[0]
    if not here:
        return "/" + path
    root = here.rsplit("/", 1)[0] if here.count("/") > 2 else here
    return root.rstrip("/") + "/" + path


def _escape(text: str) -> str:
    from rlviz.ui.chrome import escape_markdown

    return escape_markdown(text)


# --------------------------------------------------------------------------- slides
_PROJECTED: collections.OrderedDict[tuple[int, int], tuple[Any, Any]] = collections.OrderedDict()
_PROJECTED_LOCK = threading.Lock()
PROJECTED_ENTRIES = 32


def projected(fig: Any, height: int = SLIDE_HEIGHT) -> Any:
    """A copy of ``fig`` sized for a projector: the slide's height, larger type.

    Copying a figure validates every trace again (a third of a second for the largest here),
    so the copy of each figure is kept while the figure lives in a page's figure cache: the
    same object, shared by every session, gets the same copy.
    """
    with _PROJECTED_LOCK:
        hit = _PROJECTED.get((id(fig), height))
        if hit is not None and hit[0] is fig:
            _PROJECTED.move_to_end((id(fig), height))
            return hit[1]
    copy = go.Figure(fig).update_layout(
        height=height, font_size=max(fig.layout.font.size or 0, SLIDE_FONT),
        legend_font_size=SLIDE_FONT - 1, title_font_size=SLIDE_FONT + 4,
    )
    for note in copy.layout.annotations:  # labels sized for a screen, a third larger
        if note.font.size and note.font.size < SLIDE_FONT:
            note.font.size = min(round(note.font.size * 4 / 3), SLIDE_FONT)
    with _PROJECTED_LOCK:
        _PROJECTED[(id(fig), height)] = (fig, copy)  # holding fig keeps its id from being reused
        while len(_PROJECTED) > PROJECTED_ENTRIES:
            _PROJECTED.popitem(last=False)
    return copy


# --------------------------------------------------------------------------- one page's run
class Classroom:
    """The teacher settings of one run of one page (see the module's docstring)."""

    def __init__(self, page: Page):
        self.page = page
        self.slug = page.slug
        self.notices: list[str] = []
        kept = st.session_state.setdefault(TEACHER, {})
        state = kept.setdefault(self.slug, {"view": TeacherView(), "pins": {}, "fresh": False})
        query = st.query_params.to_dict()
        state["fresh"] = False
        if RESERVED & query.keys():
            view, problems = TeacherView.from_query(query)
            if dataclasses.replace(view, slide=1) != dataclasses.replace(state["view"], slide=1):
                state.update(view=view, pins={}, fresh=True)
                self.notices += [
                    f"The teacher link's {_escape(p)} was ignored." for p in problems
                ]
            else:
                state["view"] = view
        self.state = state
        self.view: TeacherView = state["view"]
        self.slides = 0
        self.heading: str | None = None
        self._stage: Any = None
        self._bar: Any = None
        self._drawn_heading: str | None = None
        self._banner = False

    # ---- what the chrome asks
    @property
    def present(self) -> bool:
        return self.view.present

    @property
    def text(self) -> bool:
        """Whether the explanatory text shows."""
        return self.view.text

    def query(self) -> dict[str, str]:
        """The teacher parameters the page's URL carries."""
        return self.view.query()

    def title_row(self) -> None:
        """In the title's row: the place of the slide bar (filled once the figures are known)."""
        if self.present:
            self._bar = st.empty()

    def start(self) -> None:
        """Drawn right under the title: the lesson banner, then the presentation's stage."""
        self._banner = _lesson_banner(self.slug)
        if self.present:
            st.html(PRESENTATION_CSS)
            self._stage = st.container()

    def hides_all(self, controls: Iterable[Control]) -> bool:
        """Whether the teacher link hides every one of these controls (and so their section)."""
        names = [c.name for c in controls]
        return bool(names) and all(n in self.view.hide for n in names)

    def render(self, control: Control, key: str, value: Any = None) -> Any:
        """Draw a control as the teacher view says: as usual, disabled, or not at all.

        ``value`` is the widget's state when this run did not set it (``Control.render``).
        """
        name = control.name
        if name not in self.view.hide and name not in self.view.lock:
            return control.render(key, value)
        pins = self.state["pins"]
        if name not in pins:
            pins[name] = self._link_value(control)
        value = pins[name]
        if not self.page._valid(control, value):
            value = control.default
        st.session_state[key] = value
        if name in self.view.hide:
            return value
        return control.locked().render(key)

    @staticmethod
    def _link_value(control: Control) -> Any:
        raw = st.query_params.get(control.name)
        if raw is None:
            return control.default
        try:
            return control.parse(raw)
        except ValueError:  # the chrome's own notice says so
            return control.default

    def section(self, title: str) -> bool:
        """In presentation mode a sub-heading titles the figures after it; True if taken."""
        if not self.present:
            return False
        self.heading = title
        return True

    def chart(self, fig: Any, height: int | None) -> tuple[Any, Any] | None:
        """Where and what to draw of a figure in presentation mode.

        Returns:
            ``None`` outside presentation mode (draw it where it is), else the container to
            draw into (``None``: not this slide, skip it) and the figure sized for the screen.
        """
        if not self.present:
            return None
        self.slides += 1
        if self.slides != self.view.slide:
            return None, None
        fig = projected(fig, SLIDE_HEIGHT - (BANNER_HEIGHT if self._banner else 0))
        if self.heading and self.heading != self._drawn_heading:
            self._stage.subheader(self.heading, anchor=False)
            self._drawn_heading = self.heading
        return self._stage, fig

    def finish(self, controls: Mapping[str, Control]) -> None:
        """At the end of the run: the slide bar, and what the link named that is not here."""
        if self.state["fresh"]:
            unknown = [n for n in self.view.pinned if n not in controls]
            if unknown:
                names = ", ".join(f"`{_escape(n)[:24]}`" for n in unknown[:5])
                self.notices.append(f"The teacher link names controls this page does not "
                                    f"have ({names}); they were left as they are.")
        if self.present:
            if self.slides and self.view.slide > self.slides:
                _set_view(self.slug, self.view.at_slide(self.slides))
                st.rerun()
            self._slide_bar()

    def _slide_bar(self) -> None:
        if self._bar is None:
            return
        n, k = self.slides, min(self.view.slide, max(self.slides, 1))
        with self._bar.container(horizontal=True, vertical_alignment="center", gap="small",
                                 width="content"):
            st.button("Previous", icon=":material/arrow_back:", key=self.page.key("_slide.prev"),
                      disabled=k <= 1, on_click=_set_view,
                      args=(self.slug, self.view.at_slide(k - 1)))
            st.markdown(f"**{k} of {n}**" if n else "No figures", width="content")
            st.button("Next", icon=":material/arrow_forward:", key=self.page.key("_slide.next"),
                      disabled=k >= n, on_click=_set_view,
                      args=(self.slug, self.view.at_slide(k + 1)), type="primary")
            st.button("Leave presentation", icon=":material/close_fullscreen:",
                      key=self.page.key("_slide.leave"), type="tertiary", on_click=_set_view,
                      args=(self.slug, dataclasses.replace(self.view, present=False, slide=1)))

    # ---- the panels
    def share_box(self) -> None:
        """In the share box: the teacher link being made, if any."""
        draft = st.session_state.get(DRAFTS, {}).get(self.slug)
        if draft is not None and draft.active and draft != self.view:
            st.markdown("Your teacher link (from *Make a teacher link* below):")
            st.code(self.page.share_link(teacher=draft), language=None, wrap_lines=True)
        if self.view.active:
            st.caption("This view is shaped by a teacher link: "
                       + _describe(self.view, self.page._controls) + ".")

    def teacher_panel(self) -> None:
        """"Make a teacher link": hide or lock each control, hide the text, present."""
        box = self.page._panel("teacher")
        if box is None:
            return
        controls = self.page._controls
        drafts = st.session_state.setdefault(DRAFTS, {})
        draft = drafts.get(self.slug, self.view)
        key = self.page.key
        with box:
            st.caption("Choose what the class sees. The link keeps this view's values: a locked "
                       "control shows its value greyed out, a hidden one is not drawn but its "
                       "value still applies.")
            left, right = st.columns(2)
            left.markdown("**Hide**")
            right.markdown("**Lock at this value**")
            hide, lock = [], []
            for name, control in controls.items():
                label = control.label or name
                if left.checkbox(label, value=name in draft.hide, key=key(f"_teach.hide.{name}")):
                    hide.append(name)
                if right.checkbox(label, value=name in draft.lock, key=key(f"_teach.lock.{name}")):
                    lock.append(name)
            text = st.toggle("Show the explanatory text", value=draft.text,
                             key=key("_teach.text"))
            present = st.toggle("Presentation mode: large type, one figure at a time",
                                value=draft.present, key=key("_teach.present"))
            draft = TeacherView(hide=tuple(hide), lock=tuple(lock), text=text, present=present)
            drafts[self.slug] = draft
            st.markdown("**The teacher link**")
            st.code(self.page.share_link(teacher=draft), language=None, wrap_lines=True)
            with st.container(horizontal=True):
                st.button("Apply to this view", icon=":material/visibility:",
                          key=key("_teach.apply"), on_click=_set_view, args=(self.slug, draft),
                          disabled=draft == self.view)
                st.button("Back to the plain view", icon=":material/undo:",
                          key=key("_teach.clear"), on_click=_set_view,
                          args=(self.slug, TeacherView()), disabled=not self.view.active)
            st.divider()
            st.markdown("**Add this view to my lesson**")
            prompt = st.text_input("Prompt for the class", key=key("_teach.prompt"),
                                   placeholder="Predict: …", max_chars=core.MAX_TEXT)
            reveal = st.text_area("What to reveal after the class answered",
                                  key=key("_teach.reveal"), max_chars=core.MAX_TEXT, height=68)
            query = {**self.page._url_values(), **draft.query()}
            if st.button("Add this view to my lesson", icon=":material/playlist_add:",
                         key=key("_teach.add")):
                lesson = add_step(Step(slug=self.slug, query=tuple(query.items()),
                                       prompt=prompt, reveal=reveal))
                st.success(f"Step {len(lesson.steps)} of *{_escape(lesson.title)}* added. "
                           "Play, reorder and share it on the **Lessons** page.",
                           icon=":material/check:")
            else:
                n = len(my_lesson().steps)
                st.caption(f"Your lesson has {n} step{'s' if n != 1 else ''}; the **Lessons** "
                           "page plays, reorders and shares it.")


def _describe(view: TeacherView, controls: Mapping[str, Control]) -> str:
    def labels(names):
        return ", ".join(_escape(controls[n].label if n in controls else n) for n in names)

    parts = []
    if view.hide:
        parts.append(f"hidden: {labels(view.hide)}")
    if view.lock:
        parts.append(f"locked: {labels(n for n in view.lock if n not in view.hide)}")
    if not view.text:
        parts.append("explanations hidden")
    if view.present:
        parts.append("presentation mode")
    return "; ".join(parts) or "no change"


def _set_view(slug: str, view: TeacherView) -> None:
    """Switch a page's teacher view (a button's callback): session and URL together."""
    state = st.session_state.setdefault(TEACHER, {}).setdefault(
        slug, {"view": TeacherView(), "pins": {}, "fresh": False})
    same_pins = (dataclasses.replace(view, slide=1)
                 == dataclasses.replace(state["view"], slide=1))
    if not same_pins:
        # Pins are read from the widgets' current values, which the URL carries.
        state["pins"] = {}
    state["view"] = view
    for name in RESERVED:
        if name in st.query_params:
            del st.query_params[name]
    st.query_params.update(view.query())


# --------------------------------------------------------------------------- lessons
def my_lesson() -> Lesson:
    """The lesson this session is building."""
    return st.session_state.get(MY_LESSON) or Lesson(title="My lesson")


def _set_my_lesson(lesson: Lesson) -> None:
    st.session_state[MY_LESSON] = lesson
    player = st.session_state.setdefault(PLAYER, {})
    player["version"] = player.get("version", 0) + 1  # the builder's widgets start afresh


def add_step(step: Step) -> Lesson:
    lesson = my_lesson()
    if len(lesson.steps) >= core.MAX_STEPS:
        raise InputError(f"a lesson has at most {core.MAX_STEPS} steps")
    lesson = lesson.with_step(step)
    _set_my_lesson(lesson)
    return lesson


def _page_of(step: Step):
    """The written page of a step, or None."""
    try:
        info = page_info(step.slug)
    except KeyError:
        return None
    return info if info.exists else None


def open_step(lesson: Lesson, index: int) -> None:
    """Go to a step's view exactly as the lesson gives it (the page's kept values forgotten)."""
    step = lesson.steps[index]
    info = _page_of(step)
    if info is None:
        return
    from rlviz.ui.chrome import KEPT

    state = st.session_state
    state.get(KEPT, {}).pop(step.slug, None)
    state.get(TEACHER, {}).pop(step.slug, None)
    state.get(DRAFTS, {}).pop(step.slug, None)
    for key in [k for k in state if isinstance(k, str) and k.startswith(f"{step.slug}.")]:
        del state[key]
    player = state.setdefault(PLAYER, {})
    player["open"] = {"slug": step.slug, "lesson": lesson, "index": index}
    player["index"] = index
    st.switch_page(str(info.file), query_params=step.params)


def _lesson_banner(slug: str) -> bool:
    """On a page opened from a lesson: the step's prompt, its reveal, and the way on.

    Returns:
        Whether it was drawn.
    """
    player = st.session_state.get(PLAYER, {})
    opened = player.get("open")
    if not opened or opened.get("slug") != slug:
        return False
    lesson, index = opened["lesson"], opened["index"]
    step = lesson.steps[index]
    with st.container(border=True):
        with st.container(horizontal=True, vertical_alignment="center"):
            st.markdown(f":blue-badge[Step {index + 1} of {len(lesson.steps)}] "
                        f"**{_escape(step.prompt or 'Look at this view.')}**")
            shown = st.toggle("Reveal", key=f"{slug}._lesson.reveal.{index}",
                              disabled=not step.reveal)
            if st.button("Lesson", icon=":material/school:", key=f"{slug}._lesson.back",
                         type="tertiary"):
                player.pop("open", None)
                st.switch_page(str(LESSONS.file))
            if index + 1 < len(lesson.steps) and st.button(
                    "Next step", icon=":material/arrow_forward:", key=f"{slug}._lesson.next",
                    type="primary"):
                open_step(lesson, index + 1)
        if shown and step.reveal:
            st.success(_escape(step.reveal), icon=":material/lightbulb:")
    return True


def _ready() -> dict[str, Lesson]:
    return {f"ready:{item.id}": item for item in core.LESSONS}


def _choices(player: dict) -> dict[str, Lesson]:
    choices = _ready()
    choices["mine"] = my_lesson()
    if player.get("link") is not None:
        choices["link"] = player["link"]
    return choices


def _read_link(player: dict, notices: list[str]) -> None:
    """A ``lesson=`` parameter (a ready lesson's id, or an encoded lesson) and ``step=``."""
    raw = st.query_params.get("lesson")
    if raw is not None and raw != player.get("param"):
        player["param"] = raw
        if f"ready:{raw}" in _ready():
            player["choice"] = f"ready:{raw}"
        else:
            try:
                player["link"] = core.decode(raw)
                player["choice"] = "link"
            except InputError as err:
                notices.append(f"The link's lesson was ignored: {_escape(str(err))}.")
        step = st.query_params.get("step", "1")
        try:
            player["index"] = max(int(step) - 1, 0)
        except ValueError:
            player["index"] = 0
        st.session_state["lessons.choice"] = player.get("choice", "ready:" + core.LESSONS[0].id)


def _link_of(key: str, lesson: Lesson) -> str:
    word = key.removeprefix("ready:") if key.startswith("ready:") else core.encode(lesson)
    return app_url(f"{LESSONS.url_path}?lesson={word}")


def lessons_page(page: Page) -> None:
    """The lesson player, builder and sharing, on the lessons page."""
    player = st.session_state.setdefault(PLAYER, {})
    player.pop("open", None)  # back on the lessons page: no step page is open
    notices: list[str] = []
    _read_link(player, notices)
    for note in notices:
        st.warning(note, icon=":material/link_off:")
    choices = _choices(player)
    state = st.session_state
    if state.get("lessons.choice") not in choices:
        state["lessons.choice"] = player.get("choice") if player.get("choice") in choices \
            else next(iter(choices))

    def chose() -> None:
        player["choice"] = state["lessons.choice"]
        player["index"] = 0

    key = st.selectbox(
        "Lesson", list(choices), key="lessons.choice", on_change=chose,
        format_func=lambda k: (f"{choices[k].title} ({len(choices[k].steps)} steps)"
                               if k != "mine" else
                               f"My lesson: {choices[k].title} ({len(choices[k].steps)} steps)"),
    )
    player["choice"] = key
    lesson = choices[key]
    if lesson.summary:
        st.markdown(_escape(lesson.summary)
                    + (f" *About {lesson.minutes} minutes.*" if lesson.minutes else ""))
    play, build, share = st.tabs(["Play", "Build my lesson", "Share and import"])
    with play:
        _play(player, key, lesson)
    with build:
        _build(player)
    with share:
        _share(key, lesson)


def _play(player: dict, key: str, lesson: Lesson) -> None:
    n = len(lesson.steps)
    if not n:
        st.info("This lesson has no steps yet. On any page, open **Make a teacher link** and "
                "press **Add this view to my lesson**.", icon=":material/playlist_add:")
        return
    index = min(max(int(player.get("index", 0)), 0), n - 1)
    player["index"] = index
    st.query_params.update({"lesson": player.get("param") if key == "link" and player.get(
        "param") else (key.removeprefix("ready:") if key.startswith("ready:")
                       else core.encode(lesson)), "step": str(index + 1)})
    player["param"] = st.query_params.get("lesson")
    step = lesson.steps[index]
    info = _page_of(step)
    st.progress((index + 1) / n, text=f"Step {index + 1} of {n}"
                + (f" · {info.title}" if info else ""))
    st.subheader(_escape(step.prompt or "Look at this view."), anchor=False)
    with st.container(horizontal=True, vertical_alignment="center"):
        if st.button("Open this view", icon=":material/open_in_browser:", type="primary",
                     key="lessons.open", disabled=info is None):
            open_step(lesson, index)
        shown = st.toggle("Reveal", key=f"lessons.reveal.{key}.{index}",
                          disabled=not step.reveal)
    if info is None:
        st.warning(f"This step's page ({_escape(step.slug)}) is not in this version of the app.",
                   icon=":material/link_off:")
    if shown:
        st.success(_escape(step.reveal), icon=":material/lightbulb:")
    teacher = step.teacher
    if teacher.active and info is not None:
        st.caption("The view: " + _describe(teacher, {}) + ".")
    st.caption("Or open it in a new tab: " + _escape(app_url(step.path)))

    def go(to: int) -> None:
        player["index"] = to

    with st.container(horizontal=True):
        st.button("Previous step", icon=":material/arrow_back:", key="lessons.prev",
                  disabled=index == 0, on_click=go, args=(index - 1,))
        st.button("Next step", icon=":material/arrow_forward:", key="lessons.next",
                  disabled=index + 1 >= n, on_click=go, args=(index + 1,))


def _build(player: dict) -> None:
    lesson = my_lesson()
    version = player.get("version", 0)
    ready = _ready()
    chosen = player.get("choice", "")
    if chosen in ready:
        st.button(f"Copy “{ready[chosen].title}” into my lesson, to edit it",
                  icon=":material/content_copy:", key="lessons.copy",
                  on_click=lambda: _set_my_lesson(dataclasses.replace(ready[chosen], id="")))
    title = st.text_input("Title", value=lesson.title, key=f"lessons.v{version}.title",
                          max_chars=200)
    if title.strip() and title != lesson.title:
        lesson = dataclasses.replace(lesson, title=title)
        st.session_state[MY_LESSON] = lesson
    if not lesson.steps:
        st.info("No steps yet. On any page, open **Make a teacher link** at the bottom and press "
                "**Add this view to my lesson**.", icon=":material/playlist_add:")
        return
    for i, step in enumerate(lesson.steps):
        info = _page_of(step)
        with st.container(border=True):
            with st.container(horizontal=True, vertical_alignment="center"):
                st.markdown(f"**{i + 1}. {info.title if info else _escape(step.slug)}**")
                st.button("", icon=":material/arrow_upward:", key=f"lessons.v{version}.up.{i}",
                          help="Move up", disabled=i == 0, on_click=_edit, args=("up", i))
                st.button("", icon=":material/arrow_downward:",
                          key=f"lessons.v{version}.down.{i}", help="Move down",
                          disabled=i + 1 == len(lesson.steps), on_click=_edit, args=("down", i))
                st.button("", icon=":material/delete:", key=f"lessons.v{version}.del.{i}",
                          help="Delete this step", on_click=_edit, args=("delete", i))
            st.caption(_escape(step.path))
            prompt = st.text_input("Prompt", value=step.prompt, max_chars=core.MAX_TEXT,
                                   key=f"lessons.v{version}.prompt.{i}")
            reveal = st.text_area("Reveal", value=step.reveal, max_chars=core.MAX_TEXT,
                                  key=f"lessons.v{version}.reveal.{i}", height=68)
            if prompt != step.prompt or reveal != step.reveal:
                lesson = lesson.edited(i, prompt=prompt, reveal=reveal)
                st.session_state[MY_LESSON] = lesson
    if st.button("Play my lesson", icon=":material/play_arrow:", key="lessons.play_mine"):
        player["choice"], player["index"] = "mine", 0
        st.session_state.pop("lessons.choice", None)
        st.rerun()


def _edit(action: str, index: int) -> None:
    lesson = my_lesson()
    if action == "delete":
        lesson = lesson.without(index)
    else:
        lesson = lesson.moved(index, -1 if action == "up" else 1)
    _set_my_lesson(lesson)


def _share(key: str, lesson: Lesson) -> None:
    st.markdown("**A link to this lesson**: anyone who opens it gets the same steps.")
    st.code(_link_of(key, lesson), language=None, wrap_lines=True)
    st.download_button("lesson.json", data=lesson.to_json().encode(),
                       file_name=f"{_file_name(lesson.title)}.json", mime="application/json",
                       icon=":material/download:", key="lessons.download", on_click="ignore")
    st.divider()
    st.markdown("**Import a lesson** into *my lesson*: paste its JSON (from *lesson.json*) or "
                "its link.")
    text = st.text_area("Lesson JSON or link", key="lessons.import", height=120,
                        max_chars=core.MAX_JSON)
    if st.button("Load into my lesson", icon=":material/upload:", key="lessons.load",
                 disabled=not text.strip()):
        try:
            imported = _parse_import(text)
        except InputError as err:
            st.error(_escape(str(err)), icon=":material/error:")
        else:
            _set_my_lesson(imported)
            st.success(f"Loaded *{_escape(imported.title)}* ({len(imported.steps)} steps) into "
                       "my lesson.", icon=":material/check:")


def _parse_import(text: str) -> Lesson:
    text = text.strip()
    if text.startswith("{"):
        return Lesson.from_json(text)
    word = text.rsplit("lesson=", 1)[-1].split("&", 1)[0].strip()
    if f"ready:{word}" in _ready():
        return dataclasses.replace(core.lesson(word), id="")
    return core.decode(word)


def _file_name(title: str) -> str:
    name = "".join(ch if ch.isalnum() else "-" for ch in title.lower()).strip("-")
    return "-".join(filter(None, name.split("-")))[:60] or "lesson"


def lesson_json(lesson: Lesson) -> Any:
    """A lesson as plain data (for tests and export)."""
    return json.loads(lesson.to_json())


def css_is_local(path: Path = PRESENTATION_CSS) -> bool:
    """Whether a stylesheet only styles (it imports or fetches nothing)."""
    text = path.read_text(encoding="utf-8").lower()
    return "@import" not in text and "url(" not in text and "<" not in text
